//! tus PATCH and DELETE racing on one upload: every answer is 204, 404 or 409, exactly one of
//! them wins, and nothing is left half-written — no partial file, no document row or file
//! without the other.

use entities::ids::ChatId;
use std::collections::HashSet;
use std::time::Duration;

use bytes::Bytes;
use reqwest::Method;
use sea_orm::EntityTrait;

use crate::documents::{documents, metadata, offset, settled, tus};
use crate::helpers::{TestApp, error_body, eventually, spawn_app, spawn_app_with};

/// How long any single step may take before a test fails instead of hanging.
const STEP_TIMEOUT: Duration = Duration::from_secs(30);

async fn within<T>(step: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(STEP_TIMEOUT, step)
        .await
        .expect("step finished in time")
}

/// Creates an upload of `length` bytes; returns its location.
async fn create_upload(app: &TestApp, chat: &str, filename: &str, length: usize) -> String {
    let created = tus(app.chat_api().create_upload(chat))
        .header("Upload-Length", length.to_string())
        .header("Upload-Metadata", metadata(filename))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    created.headers()["location"].to_str().unwrap().to_string()
}

fn patch(app: &TestApp, location: &str, offset: u64) -> reqwest::RequestBuilder {
    tus(app.request(Method::PATCH, location))
        .header("Upload-Offset", offset.to_string())
        .header("Content-Type", "application/offset+octet-stream")
}

/// The names of the files in `dir` (none when it does not exist).
fn files_in(dir: &std::path::Path) -> HashSet<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Every stored document has its file, every file its document, and no partial file is left.
async fn assert_nothing_half_written(app: &TestApp, chat: &str) -> usize {
    let rows = entities::documents::Entity::find()
        .all(&app.db)
        .await
        .unwrap();
    let ids: HashSet<String> = rows.iter().map(|d| d.id.to_string()).collect();
    assert_eq!(
        files_in(&app.state.workspace().files_dir(&ChatId::from_string(chat))),
        ids,
        "stored files and document rows agree"
    );
    assert_eq!(
        files_in(&app.state.workspace().uploads_dir()),
        HashSet::new(),
        "no partial file is left"
    );
    for upload in entities::uploads::Entity::find()
        .all(&app.db)
        .await
        .unwrap()
    {
        let document = upload
            .document_id
            .as_ref()
            .filter(|id| ids.contains(id.as_str()));
        match upload.status.as_str() {
            "complete" => assert!(document.is_some(), "{upload:?}"),
            "terminated" => assert!(document.is_none(), "{upload:?}"),
            other => panic!("an upload left {other}: {upload:?}"),
        }
    }
    rows.len()
}

#[actix_web::test]
async fn a_delete_during_a_slow_patch_stops_the_patch_and_leaves_nothing_behind() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    let location = create_upload(&app, &chat, "slow.txt", 1_000).await;
    // A PATCH whose body arrives as the test sends it.
    let (sender, receiver) = tokio::sync::mpsc::channel::<Bytes>(4);
    let body = futures_util::stream::unfold(receiver, |mut receiver| async move {
        let chunk = receiver.recv().await?;
        Some((Ok::<_, std::io::Error>(chunk), receiver))
    });
    let slow = patch(&app, &location, 0)
        .body(reqwest::Body::wrap_stream(body))
        .send();
    let slow = actix_web::rt::spawn(slow);
    sender.send(Bytes::from(vec![b'a'; 100])).await.unwrap();
    eventually("the first bytes landing", STEP_TIMEOUT, || async {
        (offset(&app, &location).await >= 100).then_some(())
    })
    .await;

    let deleted = within(tus(app.request(Method::DELETE, &location)).send())
        .await
        .unwrap();
    // The rest of the body comes after the termination (or finds the request gone).
    let _ = sender.send(Bytes::from(vec![b'a'; 900])).await;
    drop(sender);
    let patched = within(slow).await.unwrap().unwrap();

    assert_eq!(deleted.status(), 204);
    assert_eq!(patched.status(), 409);
    assert_eq!(error_body(patched).await["code"], "conflict");
    let head = tus(app.request(Method::HEAD, &location))
        .send()
        .await
        .unwrap();
    assert_eq!(head.status(), 404);
    assert_eq!(documents(&app, &chat).await["total"], 0);
    assert_eq!(assert_nothing_half_written(&app, &chat).await, 0);
    let again = tus(app.request(Method::DELETE, &location))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 404);
    let late = patch(&app, &location, 100).body("b").send().await.unwrap();
    assert_eq!(late.status(), 404);
}

#[actix_web::test]
async fn patches_racing_deletes_get_204_404_or_409_and_exactly_one_wins() {
    let app = spawn_app_with(|config| config.documents.max_files_per_chat = 100).await;
    let chat = app.new_chat().await;
    let body = "racing bytes for a tus upload\n".repeat(4_000).into_bytes();
    let mut completed = 0;
    for round in 0..30 {
        let location = create_upload(&app, &chat, &format!("race-{round}.txt"), body.len()).await;
        let write = patch(&app, &location, 0).body(body.clone()).send();
        let end = tus(app.request(Method::DELETE, &location)).send();

        let (write, end) = within(async { futures_util::join!(write, end) }).await;

        let (write, end) = (write.unwrap().status(), end.unwrap().status());
        for status in [write, end] {
            assert!(
                matches!(status.as_u16(), 204 | 404 | 409),
                "round {round}: PATCH {write}, DELETE {end}"
            );
        }
        assert!(
            (write == 204) != (end == 204),
            "round {round}: exactly one wins, got PATCH {write}, DELETE {end}"
        );
        if write == 204 {
            completed += 1;
        }
    }
    let listed = settled(&app, &chat).await;
    assert_eq!(listed["total"], completed);
    assert_eq!(assert_nothing_half_written(&app, &chat).await, completed);
}
