use serde_json::{Value, json};

use crate::client::Call;
use crate::helpers::{error_body, spawn_app};

#[actix_web::test]
async fn chats_can_be_created_listed_renamed_and_deleted() {
    let app = spawn_app().await;
    let first = app.create_chat("First").await;
    let second = app.create_chat("Second").await;
    let untitled = app.chat_api().create_chat().json(&json!({})).call().await;
    assert_eq!(untitled.status(), 201);
    let untitled: Value = untitled.json().await.unwrap();
    assert_eq!(untitled["title"], "New chat");

    let listed: Value = app.chat_api().list_chats().read_json().await;
    assert_eq!(listed["data"].as_array().unwrap().len(), 3);

    let id = first["id"].as_str().unwrap();
    let renamed = app
        .chat_api()
        .update_chat(id)
        .json(&json!({"title": "  Renamed  "}))
        .send()
        .await
        .unwrap();
    assert_eq!(renamed.status(), 200);
    let fetched: Value = app.chat_api().chat(id).read_json().await;
    assert_eq!(fetched["title"], "Renamed");

    let deleted = app.chat_api().delete_chat(id).send().await.unwrap();
    assert_eq!(deleted.status(), 200);
    let gone = app.chat_api().chat(id).call().await;
    assert_eq!(gone.status(), 404);
    let listed: Value = app.chat_api().list_chats().read_json().await;
    let ids: Vec<&str> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&second["id"].as_str().unwrap()));
    assert!(!ids.contains(&id));
}

#[actix_web::test]
async fn another_users_chat_is_a_404_for_every_verb() {
    let app = spawn_app().await;
    let chat = app.create_chat("Private").await;
    let id = chat["id"].as_str().unwrap();
    let eve = app.create_user_with_key("eve").await;
    let as_eve = app.as_key(&eve).chat_api();
    for request in [
        as_eve.chat(id),
        as_eve.update_chat(id),
        as_eve.delete_chat(id),
    ] {
        let what = request.describe();
        let response = request
            .json(&json!({"title": "pwned"}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 404, "{what}");
        assert_eq!(error_body(response).await["code"], "not_found");
    }
    let eves: Value = app.as_key(&eve).chat_api().list_chats().read_json().await;
    assert_eq!(eves["data"], json!([]));
    let still_there: Value = app.chat_api().chat(id).read_json().await;
    assert_eq!(still_there["title"], "Private");
}

#[actix_web::test]
async fn malformed_chat_ids_and_titles_are_client_errors() {
    let app = spawn_app().await;
    let response = app.chat_api().chat("not-a-uuid").call().await;
    assert_eq!(response.status(), 404);
    let long_title = "x".repeat(201);
    let response = app
        .chat_api()
        .create_chat()
        .json(&json!({"title": long_title}))
        .call()
        .await;
    assert_eq!(response.status(), 400);
    let response = app
        .chat_api()
        .create_chat()
        .json(&json!({"title": "   "}))
        .call()
        .await;
    assert_eq!(response.status(), 400);
}

#[actix_web::test]
async fn a_chat_lists_its_running_runs_so_a_reloaded_page_can_reattach() {
    let app = spawn_app().await;
    let chat = app.create_chat("Slow").await;
    let id = chat["id"].as_str().unwrap();
    app.upstream
        .script([crate::fake_upstream::Reply::text("one two three four")
            .event_gap(std::time::Duration::from_millis(300))]);
    let stream = app
        .chat_api()
        .send_message(id)
        .json(&json!({"content": "Count"}))
        .call()
        .await;
    let run_id = stream.headers()["x-run-id"].to_str().unwrap().to_string();
    let view: Value = app.chat_api().chat(id).read_json().await;
    let running = view["running_runs"].as_array().unwrap();
    assert_eq!(running.len(), 1, "{view}");
    assert_eq!(running[0]["id"], run_id.as_str());
    assert!(running[0]["user_message_id"].is_string());
    stream.text().await.unwrap();
    let after: Value = app.chat_api().chat(id).read_json().await;
    assert_eq!(after["running_runs"], json!([]));
}

#[actix_web::test]
async fn a_chats_context_strategy_is_set_at_creation_or_later_and_checked() {
    let app = spawn_app().await;
    let plain = app.create_chat("Plain").await;
    assert_eq!(plain["context_strategy"], "drop", "the server's default");
    let created = app
        .chat_api()
        .create_chat()
        .json(&json!({"title": "Long", "context_strategy": "summarize"}))
        .call()
        .await;
    assert_eq!(created.status(), 201);
    let created: Value = created.json().await.unwrap();
    assert_eq!(created["context_strategy"], "summarize");

    let id = plain["id"].as_str().unwrap();
    let changed = app
        .chat_api()
        .update_chat(id)
        .json(&json!({"context_strategy": "summarize"}))
        .send()
        .await
        .unwrap();
    assert_eq!(changed.status(), 200);
    let fetched: Value = app.chat_api().chat(id).read_json().await;
    assert_eq!(fetched["context_strategy"], "summarize");
    assert_eq!(fetched["title"], "Plain", "the title is left as it was");

    for (bad, code, says) in [
        (
            json!({"context_strategy": "forget"}),
            "invalid_json",
            "summarize",
        ),
        (json!({}), "invalid_request", "context_strategy"),
    ] {
        let refused = app
            .chat_api()
            .update_chat(id)
            .json(&bad)
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 400, "{bad}");
        let body = error_body(refused).await;
        assert_eq!(body["code"], code, "{body}");
        let message = body["message"].as_str().unwrap();
        assert!(message.contains(says), "{message}");
    }
    let fetched: Value = app.chat_api().chat(id).read_json().await;
    assert_eq!(fetched["context_strategy"], "summarize");
}
