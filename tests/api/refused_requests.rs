//! A request refused at launch (a `tool_choice` naming a tool not offered, a client tool named
//! like a server tool, Deep Think with client tools) leaves its chat as it was: no message, no
//! run row, and a session that still passivates.

use std::time::Duration;

use entities::ids::ChatId;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, error_body, eventually, spawn_app_with};

fn client_tool(name: &str) -> Value {
    json!({"type": "function", "function": {"name": name, "description": "A client's tool",
        "parameters": {"type": "object", "properties": {}}}})
}

async fn message_count(app: &TestApp, chat: &str) -> usize {
    let messages: Value = app.chat_api().messages(chat).read_json().await;
    messages["data"].as_array().unwrap().len()
}

/// Sends `refused` (extra fields of a /v1 request in `chat`), expects a 400 saying `says`, and
/// proves the chat unchanged: its messages, its runs, the next request's model input, and its
/// session passivating once idle.
async fn refused_leaves_the_chat_unchanged(refused: Value, says: &str) {
    let app = spawn_app_with(|c| c.agent.chat_idle_secs = 1).await;
    let chat = app.new_chat().await;
    app.upstream
        .script([Reply::text("first answer"), Reply::text("after answer")]);
    let ask = |content: &str, extra: &Value| {
        let mut body = json!({"model": "fake-model", "x_chat_id": chat,
            "messages": [{"role": "user", "content": content}]});
        for (key, value) in extra.as_object().unwrap() {
            body[key] = value.clone();
        }
        body
    };
    let first = app
        .openai()
        .chat_completions()
        .json(&ask("first", &json!({})))
        .call()
        .await;
    assert_eq!(first.status(), 200);
    let before = message_count(&app, &chat).await;

    let response = app
        .openai()
        .chat_completions()
        .json(&ask("refused message", &refused))
        .call()
        .await;
    assert_eq!(response.status(), 400);
    let error = error_body(response).await;
    assert!(error["message"].as_str().unwrap().contains(says), "{error}");

    assert_eq!(
        message_count(&app, &chat).await,
        before,
        "no message stored"
    );
    let runs = entities::runs::Entity::find()
        .filter(entities::runs::Column::ChatId.eq(ChatId::from_string(chat.clone())))
        .all(&app.db)
        .await
        .unwrap();
    assert_eq!(runs.len(), 1, "only the first request's run: {runs:?}");
    assert!(
        runs.iter().all(|r| r.status.as_str() != "running"),
        "{runs:?}"
    );
    let chat_id = ChatId::from_string(chat.clone());
    eventually(
        "passivating the chat after the refused request",
        Duration::from_secs(10),
        || async { (!app.state.sessions().is_active(&chat_id)).then_some(()) },
    )
    .await;

    let after = app
        .openai()
        .chat_completions()
        .json(&ask("after", &json!({})))
        .call()
        .await;
    assert_eq!(after.status(), 200);
    let received = app.upstream.received();
    assert_eq!(received.len(), 2, "nothing refused reached the model");
    let input = received[1].body["messages"].to_string();
    assert!(!input.contains("refused message"), "{input}");
    assert!(input.contains("first answer"), "{input}");
}

#[actix_web::test]
async fn a_tool_choice_naming_a_tool_not_offered_stores_nothing() {
    refused_leaves_the_chat_unchanged(
        json!({"tool_choice": {"type": "function", "function": {"name": "web_search"}},
               "web_search_options": {"x_tools": ["calculator"]}}),
        "not among this request's tools",
    )
    .await;
}

#[actix_web::test]
async fn a_client_tool_named_like_a_server_tool_stores_nothing() {
    refused_leaves_the_chat_unchanged(
        json!({"tools": [client_tool("create_artifact")]}),
        "has the name of one of Colloquy's server-side tools",
    )
    .await;
}

#[actix_web::test]
async fn deep_think_with_client_tools_stores_nothing() {
    refused_leaves_the_chat_unchanged(
        json!({"tools": [client_tool("get_weather")],
               "web_search_options": {"x_deep_think": true}}),
        "x_deep_think cannot be combined with client tools",
    )
    .await;
}
