//! One teardown for a chat: whichever surface deletes it (the chat API, a `/v1` conversation, a
//! vector store, a knowledge base, an admin deleting its user, the retention sweep), nothing of
//! the chat remains — no row of any table names it, no file or folder of the data directory
//! does, and its Chromium is gone at once, with its profile and screenshots.

use std::path::Path;

use sea_orm::{ConnectionTrait, Statement};
use serde_json::{Value, json};

use super::{Site, app_for, call, profile_of, session_of, tools};
use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, table_names};
use crate::images::png_data_url;

/// Gives `chat` (owned by `key`'s user) something of every kind: a turn with an inline image
/// (an attachment), a document, a browser session and a screenshot. Returns the session's
/// profile folder.
async fn fill(app: &TestApp, site: &Site, key: &str, chat: &str) -> std::path::PathBuf {
    app.upstream.script([Reply::text("an answer")]);
    let turn = app
        .as_key(key)
        .openai()
        .chat_completions()
        .json(
            &json!({"model": "fake-model", "x_chat_id": chat, "messages": [
            {"role": "user", "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": png_data_url()}}]}]}),
        )
        .call()
        .await;
    assert_eq!(turn.status(), 200, "{:?}", turn.text().await);
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(b"Colloquy keeps documents.".to_vec())
            .file_name("notes.txt"),
    );
    let upload = app
        .as_key(key)
        .chat_api()
        .upload_document(chat)
        .multipart(form)
        .call()
        .await;
    assert!(upload.status().is_success(), "{:?}", upload.text().await);
    let (act, _) = tools(app, chat);
    let opened = call(
        &act,
        json!({"action": "navigate", "url": site.url("/form")}),
    )
    .await;
    let session = session_of(&opened);
    let shot = call(&act, json!({"sessionId": session, "action": "screenshot"})).await;
    assert!(
        app.data_dir.path().join("screenshots").join(chat).is_dir(),
        "{shot}"
    );
    let profile = profile_of(app, &session);
    assert!(profile.is_dir());
    assert!(
        !leftovers(app, chat).await.is_empty(),
        "the chat has rows and files before it is deleted"
    );
    profile
}

/// Every row (`table: count`) and every path of the data directory that names `chat`.
async fn leftovers(app: &TestApp, chat: &str) -> Vec<String> {
    let backend = app.db.get_database_backend();
    let mut found = Vec::new();
    for name in table_names(app).await {
        let columns = app
            .db
            .query_all_raw(Statement::from_string(
                backend,
                format!("SELECT name FROM pragma_table_info('{name}')"),
            ))
            .await
            .unwrap();
        for column in columns {
            let column: String = column.try_get("", "name").unwrap();
            if column != "chat_id" && !(name == "chats" && column == "id") {
                continue;
            }
            let count = app
                .db
                .query_one_raw(Statement::from_sql_and_values(
                    backend,
                    format!("SELECT COUNT(*) AS n FROM \"{name}\" WHERE \"{column}\" = ?"),
                    [chat.into()],
                ))
                .await
                .unwrap()
                .unwrap()
                .try_get::<i64>("", "n")
                .unwrap();
            if count > 0 {
                found.push(format!("{name}.{column}: {count} rows"));
            }
        }
    }
    paths_naming(app.data_dir.path(), chat, &mut found);
    found
}

fn paths_naming(dir: &Path, chat: &str, found: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.to_string_lossy().contains(chat) {
            found.push(path.display().to_string());
        }
        if path.is_dir() {
            paths_naming(&path, chat, found);
        }
    }
}

/// Checks that nothing of `chat` is left: at once for its browser sessions and profile, and
/// everywhere else.
async fn assert_gone(app: &TestApp, chat: &str, profile: &Path) {
    let chat_id = entities::ids::ChatId::from_string(chat);
    assert!(
        app.state.launcher.browsers.sessions_of(&chat_id).is_empty(),
        "its browser sessions closed at once"
    );
    assert!(!profile.exists(), "its Chromium profile is deleted");
    let left = leftovers(app, chat).await;
    assert!(left.is_empty(), "left of the chat: {left:?}");
}

fn chat_of(id: &str) -> String {
    id.trim_start_matches("vs_")
        .trim_start_matches("kb_")
        .to_string()
}

#[actix_web::test]
async fn a_chat_deleted_through_any_surface_leaves_nothing_behind() {
    let site = Site::start(None).await;
    let app = app_for(&site, |_| {}).await;
    let key = app.api_key.clone();

    // The chat API.
    let chat = app.new_chat().await;
    let profile = fill(&app, &site, &key, &chat).await;
    let deleted = app.chat_api().delete_chat(&chat).call().await;
    assert_eq!(deleted.status(), 200);
    assert_gone(&app, &chat, &profile).await;

    // A /v1 conversation.
    let conversation: Value = app
        .openai()
        .create_conversation()
        .json(&json!({}))
        .read_json()
        .await;
    let chat = conversation["id"].as_str().unwrap().to_string();
    let profile = fill(&app, &site, &key, &chat).await;
    let deleted = app.openai().delete_conversation(&chat).call().await;
    assert_eq!(deleted.status(), 200);
    assert_gone(&app, &chat, &profile).await;

    // A vector store.
    let store: Value = app
        .openai()
        .create_vector_store()
        .json(&json!({"name": "store"}))
        .read_json()
        .await;
    let store_id = store["id"].as_str().unwrap().to_string();
    let chat = chat_of(&store_id);
    let profile = fill(&app, &site, &key, &chat).await;
    let deleted = app.openai().delete_vector_store(&store_id).call().await;
    assert_eq!(deleted.status(), 200);
    assert_gone(&app, &chat, &profile).await;

    // A knowledge base.
    let base: Value = app
        .api()
        .create_knowledge_base()
        .json(&json!({"name": "base"}))
        .read_json()
        .await;
    let base_id = base["id"].as_str().unwrap().to_string();
    let chat = chat_of(&base_id);
    let profile = fill(&app, &site, &key, &chat).await;
    let deleted = app.api().delete_knowledge_base(&base_id).call().await;
    assert!(deleted.status().is_success(), "{}", deleted.status());
    assert_gone(&app, &chat, &profile).await;

    // The retention sweep: a /v1 chat nobody opened, past its retention.
    app.upstream.script([Reply::text("kept for a while")]);
    let made = app
        .openai()
        .chat_completions()
        .json(&json!({"model": "fake-model", "messages": [{"role": "user", "content": "hi"}]}))
        .call()
        .await;
    assert_eq!(made.status(), 200);
    let made: Value = made.json().await.unwrap();
    let chat = made["x_chat_id"].as_str().unwrap().to_string();
    let profile = fill(&app, &site, &key, &chat).await;
    let mut past = app.state.clone();
    let mut config = (*past.launcher.config).clone();
    config.http.v1_chat_retention_days = 0;
    past.launcher.config = std::sync::Arc::new(config);
    let swept = colloquy::startup::sweep_api_chats(&past).await.unwrap();
    assert!(swept >= 1, "the chat is swept");
    assert_gone(&app, &chat, &profile).await;
}

#[actix_web::test]
async fn an_admin_deleting_a_user_ends_their_chromium_at_once_and_leaves_nothing_of_their_chats() {
    let site = Site::start(None).await;
    let app = app_for(&site, |_| {}).await;
    let key = app.create_user_with_key("leaving").await;
    let chat = app
        .as_key(&key)
        .new_chat_with(&json!({"title": "theirs"}))
        .await;
    let profile = fill(&app, &site, &key, &chat).await;
    let users: Value = app.admin().users().read_json().await;
    let user = users["users"]
        .as_array()
        .or_else(|| users["data"].as_array())
        .unwrap_or_else(|| panic!("{users}"))
        .iter()
        .find(|u| u["username"] == "leaving")
        .unwrap_or_else(|| panic!("{users}"))["id"]
        .as_str()
        .unwrap()
        .to_string();
    let deleted = app
        .admin()
        .delete_user(&user)
        .json(&json!({"confirm": "leaving"}))
        .call()
        .await;
    assert_eq!(deleted.status(), 200, "{:?}", deleted.text().await);
    assert_gone(&app, &chat, &profile).await;
}
