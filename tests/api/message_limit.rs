//! One limit on a message's length, `http.max_message_chars` (200,000 characters by default),
//! by every route a message enters — the chat API's send and edit, Chat Completions and
//! Responses in each of their modes, ask_user answers — refused with one code, nothing stored.

use sea_orm::{EntityTrait, PaginatorTrait};
use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, error_body, spawn_app, spawn_app_with};
use crate::sse::read_all;

/// The default `http.max_message_chars`.
const LIMIT: usize = 200_000;

fn too_long() -> String {
    "a".repeat(LIMIT + 1)
}

/// Asserts a response is the message-length refusal, naming the length and the limit.
async fn assert_too_long(response: reqwest::Response, what: &str) {
    assert_eq!(response.status(), 413, "{what}");
    let error = error_body(response).await;
    assert_eq!(error["code"], "message_too_long", "{what}: {error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("has {} characters", LIMIT + 1))
            && message.contains(&format!("at most {LIMIT}")),
        "{what}: {message}"
    );
}

async fn stored_messages(app: &TestApp) -> u64 {
    entities::messages::Entity::find()
        .count(&app.db)
        .await
        .unwrap()
}

async fn stored_chats(app: &TestApp) -> u64 {
    entities::chats::Entity::find()
        .count(&app.db)
        .await
        .unwrap()
}

#[actix_web::test]
async fn the_chat_api_refuses_a_message_over_the_limit_and_accepts_one_at_it() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;

    let refused = app
        .chat_api()
        .send_message(&chat)
        .json(&json!({"content": too_long()}))
        .call()
        .await;
    assert_too_long(refused, "send").await;
    assert_eq!(stored_messages(&app).await, 0);

    app.upstream.script([Reply::text("A long one.")]);
    let accepted = app
        .chat_api()
        .send_message(&chat)
        .json(&json!({"content": "a".repeat(LIMIT)}))
        .call()
        .await;
    assert_eq!(accepted.status(), 200);
    read_all(accepted).await;
    assert_eq!(stored_messages(&app).await, 2);
}

#[actix_web::test]
async fn an_edit_over_the_limit_is_refused() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    app.upstream.script([Reply::text("Hello.")]);
    let sent = app
        .chat_api()
        .send_message(&chat)
        .json(&json!({"content": "Hi"}))
        .call()
        .await;
    read_all(sent).await;
    let messages: Value = app.chat_api().messages(&chat).read_json().await;
    let user_message = messages["data"][0]["id"].as_str().unwrap();

    let refused = app
        .chat_api()
        .edit_message(&chat, user_message)
        .json(&json!({"content": too_long()}))
        .call()
        .await;

    assert_too_long(refused, "edit").await;
    assert_eq!(stored_messages(&app).await, 2);
}

#[actix_web::test]
async fn chat_completions_refuse_a_message_over_the_limit_in_every_mode() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    let user = |content: String| json!([{"role": "user", "content": content}]);
    let long_history = json!([
        {"role": "user", "content": too_long()},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "And now?"},
    ]);
    let parts = json!([{"role": "user", "content": [{"type": "text", "text": too_long()}]}]);
    for (what, body) in [
        ("ephemeral", json!({"messages": user(too_long())})),
        (
            "streamed",
            json!({"messages": user(too_long()), "stream": true}),
        ),
        ("content parts", json!({"messages": parts})),
        (
            "stored",
            json!({"messages": user(too_long()), "store": true}),
        ),
        (
            "stored history",
            json!({"messages": long_history, "store": true}),
        ),
        (
            "in a chat",
            json!({"messages": user(too_long()), "x_chat_id": chat}),
        ),
    ] {
        let response = app.openai().chat_completions().json(&body).call().await;
        assert_too_long(response, what).await;
    }
    assert_eq!(stored_messages(&app).await, 0);
    assert_eq!(
        stored_chats(&app).await,
        1,
        "no chat was made by store: true"
    );
    assert!(app.upstream.received().is_empty());
}

#[actix_web::test]
async fn responses_refuse_a_message_over_the_limit_in_every_mode() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    for (what, body) in [
        ("text input", json!({"input": too_long()})),
        ("streamed", json!({"input": too_long(), "stream": true})),
        (
            "input items",
            json!({"input": [{"role": "user", "content": [{"type": "input_text", "text": too_long()}]}]}),
        ),
        (
            "instructions",
            json!({"input": "Hi", "instructions": too_long()}),
        ),
        ("in a chat", json!({"input": too_long(), "x_chat_id": chat})),
    ] {
        let response = app.openai().create_response().json(&body).call().await;
        assert_too_long(response, what).await;
    }
    assert_eq!(stored_messages(&app).await, 0);
    assert!(app.upstream.received().is_empty());
}

#[actix_web::test]
async fn the_configured_limit_applies_to_ask_user_answers_too() {
    let app = spawn_app_with(|config| config.http.max_message_chars = 10).await;
    let chat = app.new_chat().await;
    app.upstream.script([
        Reply::tool_call("ask_1", "ask_user", json!({"question": "Your name?"})),
        Reply::text("Hello, Ada."),
    ]);
    let sent = app
        .chat_api()
        .send_message(&chat)
        .json(&json!({"content": "Greet me"}))
        .call()
        .await;
    let frames = read_all(sent).await;
    let question = frames
        .iter()
        .map(|f| f.json())
        .find(|j| j["type"] == "x_ask_user.question")
        .expect("a question");
    let correlation_id = question["correlation_id"].as_str().unwrap();

    let refused = app
        .chat_api()
        .answer_ask(&chat, correlation_id)
        .json(&json!({"answer": "Ada Lovelace"}))
        .call()
        .await;
    assert_eq!(refused.status(), 413);
    let error = error_body(refused).await;
    assert_eq!(error["code"], "message_too_long");
    assert!(
        error["message"].as_str().unwrap().contains("at most 10"),
        "{error}"
    );
    let refused = app
        .openai()
        .chat_completions()
        .json(&json!({"messages": [{"role": "user", "content": "Ada Lovelace"}]}))
        .call()
        .await;
    assert_eq!(error_body(refused).await["code"], "message_too_long");

    let answered = app
        .chat_api()
        .answer_ask(&chat, correlation_id)
        .json(&json!({"answer": "Ada"}))
        .call()
        .await;
    assert_eq!(answered.status(), 200);
    read_all(answered).await;
}
