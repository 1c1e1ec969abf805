//! Committing an upload (`documents::commit`): a failed move leaves no document `uploading` nor
//! spends the chat's place, and start-up repairs what a crash left between the steps.

use entities::documents::DocumentStatus;
use entities::ids::ChatId;
use reqwest::Method;
use serde_json::Value;

use crate::documents::{documents, metadata, settled, tus, upload};
use crate::helpers::{TestApp, spawn_app_with};

fn by_name<'a>(list: &'a Value, filename: &str) -> &'a Value {
    list["documents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["filename"] == filename)
        .unwrap_or_else(|| panic!("{filename} is listed: {list}"))
}

/// Creates a tus upload of `length` bytes; returns its location.
async fn tus_upload(app: &TestApp, chat: &str, filename: &str, length: usize) -> String {
    let created = tus(app.chat_api().create_upload(chat))
        .header("Upload-Length", length.to_string())
        .header("Upload-Metadata", metadata(filename))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    created.headers()["location"].to_str().unwrap().to_string()
}

#[actix_web::test]
async fn a_failed_move_marks_the_upload_error_and_frees_its_place() {
    let app = spawn_app_with(|config| config.documents.max_files_per_chat = 1).await;
    let chat = app.new_chat().await;
    // The chat's files directory cannot be made: a file stands where it goes.
    let blocker = app.data_dir.path().join("documents").join(&chat);
    std::fs::create_dir_all(blocker.parent().unwrap()).unwrap();
    std::fs::write(&blocker, b"in the way").unwrap();

    let location = tus_upload(&app, &chat, "tus.txt", 5).await;
    // On its own connection: the server may close a connection after a 500, and the next
    // request sent on it before the client notices would be reset.
    let patched = tus(app.request(Method::PATCH, &location))
        .header("Upload-Offset", "0")
        .header("Content-Type", "application/offset+octet-stream")
        .header("Connection", "close")
        .body("hello")
        .send()
        .await
        .unwrap();
    assert_eq!(patched.status(), 500);

    let refused = upload(&app, &chat, "multipart.txt", b"hello again".to_vec()).await;
    assert_eq!(
        refused.status(),
        500,
        "the chat's one place was not spent by the failed tus upload"
    );

    let list = documents(&app, &chat).await;
    for name in ["tus.txt", "multipart.txt"] {
        let doc = by_name(&list, name);
        assert_eq!(doc["status"], "error", "{doc}");
        assert!(
            doc["error"]
                .as_str()
                .unwrap()
                .contains("could not be stored"),
            "{doc}"
        );
    }
    let chat_id = ChatId::from_string(chat.clone());
    assert_eq!(app.state.workspace().count(&chat_id).await.unwrap(), 0);
    let parts = std::fs::read_dir(app.data_dir.path().join("uploads"))
        .unwrap()
        .count();
    assert_eq!(parts, 0, "no partial file is left behind");

    std::fs::remove_file(&blocker).unwrap();
    let stored = upload(&app, &chat, "after.txt", b"stored at last".to_vec()).await;
    assert_eq!(stored.status(), 201);
    let list = settled(&app, &chat).await;
    assert_eq!(by_name(&list, "after.txt")["status"], "processed");
}

#[actix_web::test]
async fn start_up_repairs_uploads_a_crash_left_half_committed() {
    let app = spawn_app_with(|config| config.documents.max_files_per_chat = 10).await;
    let chat = app.new_chat().await;
    let chat_id = ChatId::from_string(chat.clone());
    let workspace = &app.state.workspace();
    let uploads_dir = workspace.uploads_dir();
    std::fs::create_dir_all(&uploads_dir).unwrap();

    // Moved, not recorded: the bytes are at their final place, the row points at the `.part`.
    let moved_text = b"the lighthouse keeper logs every passing ship";
    let moved_part = uploads_dir.join("moved.part");
    let moved = workspace
        .create(
            &chat_id,
            "moved.txt",
            moved_text.len() as u64,
            &moved_part,
            DocumentStatus::Uploading,
        )
        .await
        .unwrap();
    let target = workspace.files_dir(&chat_id).join(moved.id.as_str());
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    std::fs::write(&target, moved_text).unwrap();

    // Cut off before the move: the row points at a `.part` that is gone.
    workspace
        .create(
            &chat_id,
            "lost.txt",
            10,
            &uploads_dir.join("lost.part"),
            DocumentStatus::Uploading,
        )
        .await
        .unwrap();

    // A tus upload whose PATCH wrote every byte, then the process died before committing.
    let whole = b"whole tus bytes";
    let location = tus_upload(&app, &chat, "whole.txt", whole.len()).await;
    let upload_id = location.rsplit('/').next().unwrap().to_string();
    std::fs::write(uploads_dir.join(format!("{upload_id}.part")), whole).unwrap();

    // A tus upload half sent: still resumable after the restart.
    let half = tus_upload(&app, &chat, "half.txt", 10).await;
    let half_id = half.rsplit('/').next().unwrap().to_string();
    std::fs::write(uploads_dir.join(format!("{half_id}.part")), b"12345").unwrap();

    let app = app.restart().await;
    let list = settled_except(&app, &chat, "half.txt").await;
    let moved = by_name(&list, "moved.txt");
    assert_eq!(moved["status"], "processed", "{moved}");
    assert_eq!(moved["searchable"], true, "{moved}");
    assert_eq!(moved["type"], "text/plain", "{moved}");
    let whole_doc = by_name(&list, "whole.txt");
    assert_eq!(whole_doc["status"], "processed", "{whole_doc}");
    let lost = by_name(&list, "lost.txt");
    assert_eq!(lost["status"], "error", "{lost}");
    assert!(
        lost["error"].as_str().unwrap().contains("cut off"),
        "{lost}"
    );
    assert_eq!(by_name(&list, "half.txt")["status"], "uploading");
    assert_eq!(
        app.state.workspace().count(&chat_id).await.unwrap(),
        3,
        "the lost upload does not count"
    );
    assert_eq!(crate::documents::offset(&app, &half).await, 5);
    let finished = tus(app.request(Method::PATCH, &half))
        .header("Upload-Offset", "5")
        .header("Content-Type", "application/offset+octet-stream")
        .body("67890")
        .send()
        .await
        .unwrap();
    assert_eq!(finished.status(), 204);
    let list = settled(&app, &chat).await;
    assert_eq!(by_name(&list, "half.txt")["status"], "processed");
}

/// Waits until every document but `pending` is settled.
async fn settled_except(app: &TestApp, chat: &str, pending: &str) -> Value {
    crate::helpers::eventually(
        "processing finishing",
        std::time::Duration::from_secs(90),
        || async {
            let list = documents(app, chat).await;
            let busy = list["documents"].as_array().unwrap().iter().any(|d| {
                d["filename"] != pending
                    && (d["status"] == "processing" || d["status"] == "uploading")
            });
            (!busy).then_some(list)
        },
    )
    .await
}
