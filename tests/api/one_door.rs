//! One door for a turn: a refused request writes nothing, on every surface that begins a turn.
//! Each refusal kind (a model no server serves, a `tool_choice` naming a tool not offered, no
//! iterations) is sent on the chat API, `/v1/chat/completions` without and with `x_chat_id`,
//! and `/v1/responses` as a new chain, with `previous_response_id`, `conversation` and
//! `x_chat_id`, each carrying an inline image and earlier turns where the surface takes them.
//! Then every table's rows and every file of the data directory are as they were: no chat,
//! message, attachment, run or response was made, and the existing conversation is unchanged.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use sea_orm::{ConnectionTrait, Statement};
use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, error_body, spawn_app_with, table_names};
use crate::images::png_data_url;
use crate::providers::provider;

/// What a request could have written: each table's row count, and the data directory's files
/// (the database's own files aside).
#[derive(Debug, PartialEq, Eq)]
struct Written {
    rows: BTreeMap<String, i64>,
    files: BTreeSet<String>,
}

async fn written(app: &TestApp) -> Written {
    let backend = app.db.get_database_backend();
    let mut rows = BTreeMap::new();
    for name in table_names(app).await {
        let count = app
            .db
            .query_one_raw(Statement::from_string(
                backend,
                format!("SELECT COUNT(*) AS n FROM \"{name}\""),
            ))
            .await
            .unwrap()
            .unwrap();
        rows.insert(name, count.try_get::<i64>("", "n").unwrap());
    }
    let mut files = BTreeSet::new();
    files_under(app.data_dir.path(), app.data_dir.path(), &mut files);
    Written { rows, files }
}

fn files_under(root: &Path, dir: &Path, found: &mut BTreeSet<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = path.to_string_lossy().to_string();
        // The chat search index is written by its indexer, off any request's path, from the
        // messages earlier requests stored: a refused request stores none, so tells it nothing.
        if name.contains(".db") || name.contains("sqlite") || path.ends_with("chat_search") {
            continue;
        }
        if path.is_dir() {
            found.insert(format!("{}/", path.strip_prefix(root).unwrap().display()));
            files_under(root, &path, found);
        } else {
            found.insert(path.strip_prefix(root).unwrap().display().to_string());
        }
    }
}

/// A user message with text and an inline image, as Chat Completions sends it.
fn user_with_image(text: &str) -> Value {
    json!({"role": "user", "content": [
        {"type": "text", "text": text},
        {"type": "image_url", "image_url": {"url": png_data_url()}},
    ]})
}

/// The same, as a Responses input item.
fn input_with_image(text: &str) -> Value {
    json!({"role": "user", "content": [
        {"type": "input_text", "text": text},
        {"type": "input_image", "image_url": png_data_url()},
    ]})
}

/// How a request is refused: fields added to it, and the error code it gets.
struct Refusal {
    fields: Value,
    code: &'static str,
}

fn completions_refusals() -> Vec<Refusal> {
    vec![
        Refusal {
            fields: json!({"model": "no-such-model"}),
            code: "model_not_found",
        },
        Refusal {
            fields: json!({"model": "fake-model",
                "tool_choice": {"type": "function", "function": {"name": "calculator"}}}),
            code: "invalid_request",
        },
        Refusal {
            fields: json!({"model": "fake-model",
                "web_search_options": {"max_iterations": 0}}),
            code: "invalid_request",
        },
    ]
}

fn responses_refusals() -> Vec<Refusal> {
    vec![
        Refusal {
            fields: json!({"model": "no-such-model"}),
            code: "model_not_found",
        },
        Refusal {
            fields: json!({"model": "fake-model",
                "tool_choice": {"type": "function", "name": "calculator"}}),
            code: "invalid_request",
        },
    ]
}

fn with(mut body: Value, fields: &Value) -> Value {
    for (key, value) in fields.as_object().unwrap() {
        body[key] = value.clone();
    }
    body
}

/// The two `/v1` routes that begin a turn.
#[derive(Clone, Copy)]
enum Surface {
    ChatCompletions,
    Responses,
}

/// Sends `body` to `surface`, expects a 400 with `code`, and proves nothing was written.
async fn refused_writes_nothing(app: &TestApp, surface: Surface, body: Value, code: &str) {
    let before = written(app).await;
    let request = match surface {
        Surface::ChatCompletions => app.openai().chat_completions(),
        Surface::Responses => app.openai().create_response(),
    };
    let what = request.describe();
    let response = request.json(&body).call().await;
    assert_eq!(response.status(), 400, "{what} {body}");
    let error = error_body(response).await;
    assert_eq!(error["code"], code, "{what} {body}: {error}");
    let after = written(app).await;
    assert_eq!(before, after, "{what} {body} wrote something");
}

/// An app whose one model server declares `fake-model`, so that another model is refused.
async fn one_model_server() -> TestApp {
    spawn_app_with(|config| {
        config.llm.providers = vec![provider("main", &config.llm.base_url, &["fake-model"])];
    })
    .await
}

/// A stored chat with one exchange in it, and the user's default agent made.
async fn chat_with_a_turn(app: &TestApp) -> String {
    let chat = app.new_chat().await;
    app.upstream.script([Reply::text("first answer")]);
    let first = app
        .openai()
        .chat_completions()
        .json(&json!({"model": "fake-model", "x_chat_id": chat,
            "messages": [{"role": "user", "content": "first"}]}))
        .call()
        .await;
    assert_eq!(first.status(), 200);
    chat
}

#[actix_web::test]
async fn a_refused_chat_api_turn_writes_nothing() {
    let app = one_model_server().await;
    let chat = chat_with_a_turn(&app).await;
    let before = written(&app).await;
    let response = app
        .chat_api()
        .send_message(&chat)
        .json(&json!({"content": "refused", "web_search_options": {"max_iterations": 0}}))
        .call()
        .await;
    assert_eq!(response.status(), 400);
    assert_eq!(before, written(&app).await, "a refused chat API turn wrote");
}

#[actix_web::test]
async fn a_refused_chat_completion_writes_nothing_in_a_new_chat_or_in_x_chat_id() {
    let app = one_model_server().await;
    let chat = chat_with_a_turn(&app).await;
    for refusal in completions_refusals() {
        let messages = json!([
            {"role": "system", "content": "Be brief."},
            user_with_image("an earlier question"),
            {"role": "assistant", "content": "an earlier answer"},
            user_with_image("the refused question"),
        ]);
        // A new chat with history (store unset counts as stored).
        let new_chat = with(json!({"messages": messages}), &refusal.fields);
        refused_writes_nothing(&app, Surface::ChatCompletions, new_chat, refusal.code).await;
        // The same, stored explicitly.
        let stored = with(
            json!({"messages": messages, "store": true}),
            &refusal.fields,
        );
        refused_writes_nothing(&app, Surface::ChatCompletions, stored, refusal.code).await;
        // A turn of an existing chat.
        let in_chat = with(
            json!({"x_chat_id": chat, "messages": [user_with_image("refused")]}),
            &refusal.fields,
        );
        refused_writes_nothing(&app, Surface::ChatCompletions, in_chat, refusal.code).await;
    }
}

#[actix_web::test]
async fn a_refused_response_writes_nothing_in_a_new_chain_a_previous_response_a_conversation_or_x_chat_id()
 {
    let app = one_model_server().await;
    let chat = chat_with_a_turn(&app).await;
    app.upstream.script([Reply::text("a stored answer")]);
    let previous: Value = app
        .openai()
        .create_response()
        .json(&json!({"model": "fake-model", "input": "start a chain"}))
        .read_json()
        .await;
    let previous_id = previous["id"].as_str().expect("a response id").to_string();
    let earlier_and_last = json!([
        input_with_image("an earlier question"),
        {"role": "assistant", "content": "an earlier answer"},
        input_with_image("the refused question"),
    ]);
    for refusal in responses_refusals() {
        let new_chain = with(
            json!({"input": earlier_and_last, "instructions": "Be brief."}),
            &refusal.fields,
        );
        refused_writes_nothing(&app, Surface::Responses, new_chain, refusal.code).await;
        let continued = with(
            json!({"previous_response_id": previous_id,
                "input": [input_with_image("refused")]}),
            &refusal.fields,
        );
        refused_writes_nothing(&app, Surface::Responses, continued, refusal.code).await;
        // The earlier items would be imported into the existing conversation.
        let conversation = with(
            json!({"conversation": chat, "input": earlier_and_last}),
            &refusal.fields,
        );
        refused_writes_nothing(&app, Surface::Responses, conversation, refusal.code).await;
        let x_chat_id = with(
            json!({"x_chat_id": chat, "input": earlier_and_last}),
            &refusal.fields,
        );
        refused_writes_nothing(&app, Surface::Responses, x_chat_id, refusal.code).await;
    }
}

#[actix_web::test]
async fn a_conversation_the_database_cannot_read_is_a_500_not_a_404() {
    let app = one_model_server().await;
    let chat = chat_with_a_turn(&app).await;
    app.close_database().await;
    let response = app
        .openai()
        .create_response()
        .json(&json!({"model": "fake-model", "conversation": chat, "input": "hello"}))
        .call()
        .await;
    assert_eq!(response.status(), 500, "a database failure is not a 404");
    let conversation = app.openai().conversation(&chat).call().await;
    assert_eq!(
        conversation.status(),
        500,
        "a database failure is not a 404"
    );
}
