//! Export and import of chats (issue 35 point 6): a chat's JSON export carries every branch,
//! its artifacts and metadata, and imports back as a new chat with the same tree; its
//! Markdown is the visible branch; an account's chats come as one zip; a bad import is refused
//! with a stable code and stores nothing.

use std::io::Read;

use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, error_body, spawn_app};
use crate::sse::read_all;

/// A chat with two answers to one question (a regeneration) and an artifact made by the
/// first; returns its id.
async fn chat_with_branches_and_an_artifact(app: &TestApp) -> String {
    let chat = app.create_chat("Trip plans").await["id"]
        .as_str()
        .unwrap()
        .to_string();
    app.upstream.script([
        Reply::tool_call(
            "call_1",
            "create_artifact",
            json!({"identifier": "packing-list", "title": "Packing list",
                   "type": "text/markdown", "content": "- socks\n- map\n"}),
        ),
        Reply::text("Lisbon, and here is a packing list."),
        Reply::text("Porto, for the wine."),
    ]);
    app.send_text(&chat, "Where should I go?").await;
    let path: Value = app.chat_api().messages(&chat).read_json().await;
    let answer = path["data"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "assistant")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let regen = app
        .chat_api()
        .regenerate(&chat, &answer)
        .send()
        .await
        .unwrap();
    assert_eq!(regen.status(), 200);
    read_all(regen).await;
    chat
}

/// The tree as shape: each message's role, text and parent's position, in order, with which
/// are on the active branch — ids left out, since an import makes new ones.
async fn shape(app: &TestApp, chat: &str) -> Vec<Value> {
    let tree: Value = app.chat_api().tree(chat).read_json().await;
    let nodes = tree["data"].as_array().unwrap().clone();
    let position = |id: &Value| nodes.iter().position(|n| &n["id"] == id);
    nodes
        .iter()
        .map(|n| {
            json!({"role": n["role"], "content": n["content"], "model": n["model"],
                   "parent": position(&n["parent_id"]), "active": n["on_active_branch"],
                   "artifacts": n["parts"].as_array().map(|p| p.iter()
                       .filter(|p| p["type"] == "artifact")
                       .map(|p| p["identifier"].clone()).collect::<Vec<_>>())})
        })
        .collect()
}

#[actix_web::test]
async fn a_chat_exported_as_json_imports_back_as_a_new_chat_with_the_same_tree() {
    let app = spawn_app().await;
    let chat = chat_with_branches_and_an_artifact(&app).await;

    let picked = app
        .chat_api()
        .update_chat(&chat)
        .json(&json!({"model": "fake-model"}))
        .send()
        .await
        .unwrap();
    assert_eq!(picked.status(), 200);

    let response = app
        .chat_api()
        .export(&chat)
        .with_query("format=json")
        .call()
        .await;
    assert_eq!(response.status(), 200);
    let disposition = response.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        disposition.starts_with("attachment; filename=\"trip-plans-"),
        "{disposition}"
    );
    let export: Value = response.json().await.unwrap();
    assert_eq!(export["format"], "colloquy.chat");
    let writers: Vec<&Value> = export["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant" && m["content"].is_string())
        .map(|m| &m["model"])
        .collect();
    assert!(
        !writers.is_empty() && writers.iter().all(|model| model.is_string()),
        "each answer names the model that wrote it: {writers:?}"
    );
    assert_eq!(export["version"], 1);
    assert_eq!(export["chat"]["title"], "Trip plans");
    let answers: Vec<&str> = export["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(answers.contains(&"Lisbon, and here is a packing list."));
    assert!(answers.contains(&"Porto, for the wine."), "both branches");
    let artifact = &export["artifacts"][0];
    assert_eq!(artifact["identifier"], "packing-list");
    assert_eq!(artifact["versions"][0]["content"], "- socks\n- map\n");
    assert!(export["runs"].as_array().unwrap().len() >= 2, "runs' usage");

    let imported = app.chat_api().import().json(&export).call().await;
    assert_eq!(imported.status(), 201);
    let imported: Value = imported.json().await.unwrap();
    let copy = imported["id"].as_str().unwrap();
    assert_ne!(copy, chat);
    assert_eq!(
        imported["title"], "Trip plans (imported)",
        "titled apart from the original, so the chat list does not show two of one title"
    );
    assert_eq!(export["chat"]["model"], "fake-model");
    assert_eq!(
        imported["model"], "fake-model",
        "the picker's choice comes along"
    );
    assert_eq!(imported["imported"]["artifacts"], 1);

    assert_eq!(shape(&app, copy).await, shape(&app, &chat).await);
    let listed: Value = app.chat_api().artifacts(copy).read_json().await;
    let text = listed.to_string();
    assert!(text.contains("packing-list"), "{text}");

    // The copy is a chat like any other: it answers, after its imported history.
    app.upstream.script([Reply::text("Pack light.")]);
    app.send_text(copy, "Anything else?").await;
    let sent = app.upstream.received().last().unwrap().body.clone();
    assert!(
        sent["messages"]
            .to_string()
            .contains("Porto, for the wine."),
        "the active branch is the copy's history: {sent}"
    );
}

#[actix_web::test]
async fn a_chat_exported_as_markdown_is_its_visible_branch() {
    let app = spawn_app().await;
    let chat = chat_with_branches_and_an_artifact(&app).await;
    let response = app
        .chat_api()
        .export(&chat)
        .with_query("format=markdown")
        .call()
        .await;
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/markdown")
    );
    let markdown = response.text().await.unwrap();
    assert!(markdown.starts_with("# Trip plans\n"), "{markdown}");
    let question = markdown.find("Where should I go?").unwrap();
    let answer = markdown.find("Porto, for the wine.").unwrap();
    assert!(question < answer, "{markdown}");
    assert!(
        !markdown.contains("Lisbon"),
        "the other branch is not shown: {markdown}"
    );
}

#[actix_web::test]
async fn all_of_an_accounts_chats_export_as_one_zip_that_imports_back() {
    let app = spawn_app().await;
    app.create_chat("First").await;
    app.create_chat("Second").await;

    let response = app.chat_api().export_all().call().await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/zip");
    let bytes = response.bytes().await.unwrap();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes.to_vec())).unwrap();
    let mut names: Vec<String> = zip
        .file_names()
        .map(|name| name.unwrap().to_string())
        .collect();
    names.sort();
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(names.iter().all(|n| n.starts_with("colloquy-chats/")));
    let json_name = names
        .iter()
        .find(|n| n.contains("/first-") && n.ends_with(".json"))
        .unwrap()
        .clone();
    let mut text = String::new();
    zip.by_name(&json_name)
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    let export: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(export["chat"]["title"], "First");
    let imported = app.chat_api().import().json(&export).call().await;
    assert_eq!(imported.status(), 201);
}

#[actix_web::test]
async fn each_import_of_a_chat_gets_a_title_of_its_own() {
    let app = spawn_app().await;
    let original = app.create_chat("Weekly notes").await;
    let export: Value = app
        .chat_api()
        .export(original["id"].as_str().unwrap())
        .with_query("format=json")
        .read_json()
        .await;
    let mut titles = Vec::new();
    for _ in 0..3 {
        let imported = app.chat_api().import().json(&export).call().await;
        assert_eq!(imported.status(), 201);
        let imported: Value = imported.json().await.unwrap();
        titles.push(imported["title"].as_str().unwrap().to_string());
    }
    assert_eq!(
        titles,
        [
            "Weekly notes (imported)",
            "Weekly notes (imported 2)",
            "Weekly notes (imported 3)"
        ]
    );
    let listed: Value = app.chat_api().list_chats().read_json().await;
    let mut listed: Vec<&str> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|chat| chat["title"].as_str().unwrap())
        .collect();
    listed.sort_unstable();
    let before = listed.len();
    listed.dedup();
    assert_eq!(
        listed.len(),
        before,
        "no two chats share a title: {listed:?}"
    );

    // Another user's chat of the same title does not count: theirs is not in the importer's list.
    let eve = app.create_user_with_key("eve").await;
    let theirs = app
        .as_key(&eve)
        .chat_api()
        .import()
        .json(&export)
        .call()
        .await;
    assert_eq!(theirs.status(), 201);
    let theirs: Value = theirs.json().await.unwrap();
    assert_eq!(theirs["title"], "Weekly notes");
}

#[actix_web::test]
async fn another_users_chat_cannot_be_exported() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    let key = app.create_user_with_key("eve").await;
    let response = app
        .as_key(&key)
        .chat_api()
        .export(&chat)
        .with_query("format=json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    let archive = app
        .as_key(&key)
        .chat_api()
        .export_all()
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let zip = zip::ZipArchive::new(std::io::Cursor::new(archive.to_vec())).unwrap();
    assert_eq!(
        zip.len(),
        0,
        "eve's archive holds none of the admin's chats"
    );
    let anonymous = app
        .as_anonymous()
        .chat_api()
        .export_all()
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
}

fn minimal_export(messages: Value) -> Value {
    json!({
        "format": "colloquy.chat", "version": 1, "exported_at": "2026-11-25T00:00:00Z",
        "chat": {"id": "c", "title": "Imported", "created_at": "2026-11-25T00:00:00Z",
                 "updated_at": "2026-11-25T00:00:00Z"},
        "messages": messages,
    })
}

fn message(id: &str, parent: Option<&str>, seq: i64) -> Value {
    json!({"id": id, "parent_id": parent, "role": "user", "content": "hi", "seq": seq,
           "created_at": "2026-11-25T00:00:00Z"})
}

async fn chat_count(app: &TestApp) -> usize {
    let list: Value = app.chat_api().list_chats().read_json().await;
    list["data"].as_array().unwrap().len()
}

#[actix_web::test]
async fn an_import_that_breaks_a_rule_is_refused_with_its_code_and_stores_nothing() {
    let app = spawn_app().await;
    let before = chat_count(&app).await;

    let mut wrong_format = minimal_export(json!([]));
    wrong_format["format"] = json!("something.else");
    let mut deep = json!("leaf");
    for _ in 0..40 {
        deep = json!([deep]);
    }
    let mut deep_parts = message("a", None, 1);
    deep_parts["parts"] = deep;
    let many: Vec<Value> = (0..10_001)
        .map(|i| message(&format!("m{i}"), None, i))
        .collect();
    let cases = [
        (wrong_format, 400, "unsupported_export"),
        (
            minimal_export(json!([message("a", Some("nowhere"), 1)])),
            400,
            "invalid_export",
        ),
        (
            minimal_export(json!([message("a", None, 2), message("b", Some("a"), 1)])),
            400,
            "invalid_export",
        ),
        (
            minimal_export(json!([message("a", None, 1), message("a", None, 2)])),
            400,
            "invalid_export",
        ),
        (minimal_export(json!([deep_parts])), 400, "invalid_export"),
        (minimal_export(json!(many)), 413, "import_too_large"),
    ];
    for (body, status, code) in cases {
        let response = app.chat_api().import().json(&body).call().await;
        assert_eq!(response.status(), status, "{code}");
        let error = error_body(response).await;
        assert_eq!(error["code"], code, "{error}");
    }
    let not_json = app
        .chat_api()
        .import()
        .header("content-type", "application/json")
        .body("{\"format\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(not_json.status(), 400);
    assert_eq!(chat_count(&app).await, before, "nothing was stored");

    let fine = app
        .chat_api()
        .import()
        .json(&minimal_export(json!([message("a", None, 1)])))
        .call()
        .await;
    assert_eq!(fine.status(), 201);
    assert_eq!(chat_count(&app).await, before + 1);
}
