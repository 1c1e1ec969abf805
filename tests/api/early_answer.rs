//! Streams start before the turn is stored, safely (issue 48, point 3): a streamed turn is
//! answered once its chat's session has taken it, so its first bytes never wait on the write
//! (nor on other chats' writes batched with it), but its run's `run.started` comes only once
//! the turn is durable, and a turn taken but never stored ends its stream with
//! `persistence_failed` and leaves nothing behind.

use std::time::Duration;

use futures_util::StreamExt;
use sea_orm::{ConnectionTrait, Statement, TransactionTrait};
use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, spawn_app};
use crate::sse::{Frame, drain_frames};

/// How many rows of `table` match `condition`.
async fn count(app: &TestApp, table: &str, condition: &str) -> i64 {
    let row = app
        .db
        .query_one_raw(Statement::from_string(
            app.db.get_database_backend(),
            format!("SELECT COUNT(*) AS n FROM {table} WHERE {condition}"),
        ))
        .await
        .unwrap()
        .unwrap();
    row.try_get::<i64>("", "n").unwrap()
}

/// The frames of a stream's remaining bytes, `buffer` holding what was read before.
async fn rest(
    mut body: impl futures_util::Stream<Item = reqwest::Result<bytes::Bytes>> + Unpin,
    mut buffer: String,
) -> Vec<Frame> {
    while let Some(bytes) = body.next().await {
        buffer.push_str(&String::from_utf8_lossy(&bytes.unwrap()));
    }
    drain_frames(&mut buffer)
}

/// Has the database refuse any message saying "cannot be stored", as a full disk would.
async fn refuse_cannot_be_stored(app: &TestApp) {
    app.db
        .execute_unprepared(
            "CREATE TRIGGER refuse_one BEFORE INSERT ON messages \
             WHEN NEW.content = 'cannot be stored' \
             BEGIN SELECT RAISE(ABORT, 'the disk said no'); END",
        )
        .await
        .unwrap();
}

fn kinds(frames: &[Frame]) -> Vec<String> {
    frames.iter().map(Frame::kind).collect()
}

/// The error a stream ended with, if any.
fn error_of(frames: &[Frame]) -> Option<Value> {
    frames
        .iter()
        .map(Frame::json)
        .find(|json| json["type"] == "error")
        .map(|json| json["error"].clone())
}

#[actix_web::test]
async fn a_stream_is_answered_while_its_turn_waits_to_be_written_and_told_started_once_stored() {
    let app = spawn_app().await;
    app.upstream.script([Reply::text("stored, then answered")]);
    let chat = app.new_chat().await;
    // Another connection holds SQLite's write lock: no turn can be written until it lets go.
    let holder = app.db.begin().await.unwrap();
    holder
        .execute_unprepared("CREATE TABLE holds_the_writer (x INTEGER)")
        .await
        .unwrap();

    let response = tokio::time::timeout(
        Duration::from_secs(3),
        app.chat_api()
            .send_message(&chat)
            .json(&json!({"content": "written later"}))
            .call(),
    )
    .await
    .expect("the stream is answered while the write waits");
    assert_eq!(response.status(), 200);
    let run_id = response.headers()["x-run-id"].clone();
    let mut body = response.bytes_stream();
    let first = tokio::time::timeout(Duration::from_secs(3), body.next())
        .await
        .expect("the stream's first bytes come while the write waits")
        .unwrap()
        .unwrap();
    let mut buffer = String::from_utf8_lossy(&first).into_owned();
    assert!(buffer.starts_with(": accepted"), "{buffer:?}");
    // Nothing is told (comments aside: keep-alives), and nothing is asked of the model,
    // before the turn is stored.
    let waited = tokio::time::Instant::now() + Duration::from_millis(500);
    while let Ok(Some(bytes)) = tokio::time::timeout_at(waited, body.next()).await {
        buffer.push_str(&String::from_utf8_lossy(&bytes.unwrap()));
    }
    let told = drain_frames(&mut buffer);
    assert!(
        told.is_empty(),
        "nothing is told before the turn is written: {told:?}"
    );
    assert!(app.upstream.received().is_empty());
    assert_eq!(
        count(&app, "messages", "content = 'written later'").await,
        0
    );
    // Its run is listed already, so a page reloaded now re-attaches to it.
    let run_id = run_id.to_str().unwrap().to_string();
    let view: Value = app.chat_api().chat(&chat).read_json().await;
    assert_eq!(view["running_runs"][0]["id"], run_id.as_str(), "{view}");
    let waiting_for = view["running_runs"][0]["user_message_id"].clone();
    assert!(waiting_for.is_string(), "{view}");

    holder.rollback().await.unwrap();
    let frames = rest(body, buffer).await;
    let kinds = kinds(&frames);
    assert_eq!(
        kinds.first().map(String::as_str),
        Some("run.started"),
        "{kinds:?}"
    );
    assert!(kinds.contains(&"content".to_string()), "{kinds:?}");
    assert_eq!(kinds.last().map(String::as_str), Some("[DONE]"));
    assert!(error_of(&frames).is_none(), "{frames:?}");
    // What `run.started` named was stored before it was told.
    let started = frames[0].json();
    let user_message = started["user_message_id"].as_str().unwrap();
    assert_eq!(started["user_message_id"], waiting_for);
    assert_eq!(
        count(
            &app,
            "messages",
            &format!("id = '{user_message}' AND content = 'written later'")
        )
        .await,
        1
    );
}

#[actix_web::test]
async fn a_turn_taken_but_not_stored_ends_its_stream_with_persistence_failed_and_leaves_nothing() {
    let app = spawn_app().await;
    app.upstream
        .script([Reply::text("first answer"), Reply::text("second answer")]);
    let chat = app.new_chat().await;
    app.send_text(&chat, "a first turn").await;
    let chats_before = count(&app, "chats", "1 = 1").await;
    let runs_before = count(&app, "runs", "1 = 1").await;
    let asked_before = app.upstream.received().len();
    // The database refuses this one message, as a full disk would: after the chat took it.
    refuse_cannot_be_stored(&app).await;

    // The chat API: answered, then told the turn could not be saved.
    let response = app
        .chat_api()
        .send_message(&chat)
        .json(&json!({"content": "cannot be stored"}))
        .call()
        .await;
    assert_eq!(response.status(), 200);
    let frames = crate::sse::read_all(response).await;
    let kinds = kinds(&frames);
    assert!(!kinds.contains(&"run.started".to_string()), "{kinds:?}");
    let error = error_of(&frames).expect("the stream says why it ended");
    assert_eq!(error["code"], "persistence_failed", "{error}");
    assert_eq!(kinds.last().map(String::as_str), Some("[DONE]"));

    // `/v1` in a new chat: the same, and the chat made for it is gone with its turn.
    let response = app
        .openai()
        .chat_completions()
        .json(&json!({"model": "fake-model", "stream": true,
            "messages": [{"role": "user", "content": "cannot be stored"}]}))
        .call()
        .await;
    assert_eq!(response.status(), 200);
    let new_chat = response
        .headers()
        .get("x-chat-id")
        .map(|v| v.to_str().unwrap().to_string())
        .expect("a new chat's id");
    let frames = crate::sse::read_all(response).await;
    let error = error_of(&frames).expect("the stream says why it ended");
    assert_eq!(error["code"], "persistence_failed", "{error}");
    assert_eq!(
        frames.last().map(|f| f.data.as_str()),
        Some("[DONE]"),
        "{frames:?}"
    );

    // Nothing was written or asked of the model for either.
    assert_eq!(
        count(&app, "messages", "content = 'cannot be stored'").await,
        0
    );
    assert_eq!(count(&app, "runs", "1 = 1").await, runs_before);
    assert_eq!(count(&app, "chats", "1 = 1").await, chats_before);
    assert_eq!(count(&app, "chats", &format!("id = '{new_chat}'")).await, 0);
    assert_eq!(app.upstream.received().len(), asked_before);

    // The chat goes on as if the refused turn had never been asked.
    let frames = app.send_text(&chat, "a second turn").await;
    assert!(error_of(&frames).is_none(), "{frames:?}");
    let sent = app.upstream.received().last().unwrap().body.clone();
    let said: Vec<String> = sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect();
    assert!(said.contains(&"a first turn".to_string()), "{said:?}");
    assert!(said.contains(&"a second turn".to_string()), "{said:?}");
    assert!(!said.contains(&"cannot be stored".to_string()), "{said:?}");
}

/// A `/v1` request in a new chat, without `stream`, asking `content`.
fn whole_answer(app: &TestApp, content: &str) -> reqwest::RequestBuilder {
    app.openai()
        .chat_completions()
        .json(&json!({"model": "fake-model",
        "messages": [{"role": "user", "content": content}]}))
}

/// A whole answer (a `/v1` request without `stream`) is answered once its turn is stored, so
/// its model call goes out while the turn is written; nothing of the run is stored or told
/// before the turn is durable, and the answer comes once it is.
#[actix_web::test]
async fn a_whole_answers_model_call_goes_out_while_its_turn_is_written() {
    let app = spawn_app().await;
    app.upstream.script([
        Reply::text("a first answer"),
        Reply::text("asked early, stored after"),
    ]);
    // A first request: what a turn reads before it is written is read and kept.
    let first = whole_answer(&app, "a first question").call().await;
    assert_eq!(first.status(), 200);
    // Another connection holds SQLite's write lock: no turn can be written until it lets go.
    let holder = app.db.begin().await.unwrap();
    holder
        .execute_unprepared("CREATE TABLE holds_the_writer (x INTEGER)")
        .await
        .unwrap();
    let request = whole_answer(&app, "answer me whole").call();
    let answered = tokio::spawn(request);
    let asked = tokio::time::Instant::now() + Duration::from_secs(5);
    while app.upstream.received().len() < 2 {
        assert!(
            tokio::time::Instant::now() < asked,
            "the model is asked while the turn waits to be written"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let sent = app.upstream.received()[1].body.clone();
    assert_eq!(sent["messages"][0]["content"], "answer me whole", "{sent}");
    // Nothing is stored yet: neither the turn nor the answer.
    assert_eq!(
        count(&app, "messages", "content = 'answer me whole'").await,
        0
    );
    assert!(
        !answered.is_finished(),
        "answered before the turn was stored"
    );
    holder.rollback().await.unwrap();
    let response = answered.await.unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(
        body["choices"][0]["message"]["content"], "asked early, stored after",
        "{body}"
    );
    assert_eq!(
        count(&app, "messages", "content = 'answer me whole'").await,
        1
    );
    assert_eq!(
        count(&app, "messages", "content = 'asked early, stored after'").await,
        1
    );
    assert_eq!(count(&app, "runs", "status = 'completed'").await, 2);
}

/// A whole answer whose turn cannot be written (after its model call went out) is refused as
/// the database's failure, and leaves nothing: no chat, message or run, nothing of the
/// model's answer.
#[actix_web::test]
async fn a_whole_answer_whose_turn_cannot_be_written_is_refused_and_leaves_nothing() {
    let app = spawn_app().await;
    app.upstream
        .script([Reply::text("never stored"), Reply::text("stored")]);
    refuse_cannot_be_stored(&app).await;
    let chats_before = count(&app, "chats", "1 = 1").await;
    let response = whole_answer(&app, "cannot be stored").call().await;
    assert_eq!(response.status(), 500);
    let body: Value = response.json().await.unwrap();
    assert!(body["error"]["message"].is_string(), "{body}");
    assert_eq!(count(&app, "chats", "1 = 1").await, chats_before);
    assert_eq!(count(&app, "messages", "1 = 1").await, 0);
    assert_eq!(count(&app, "runs", "1 = 1").await, 0);

    // The next request goes on as if the refused one had never been asked.
    let response = whole_answer(&app, "this one is").call().await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    let answer = body["choices"][0]["message"]["content"].as_str().unwrap();
    assert_eq!(count(&app, "messages", "1 = 1").await, 2);
    assert_eq!(
        count(&app, "messages", &format!("content = '{answer}'")).await,
        1
    );
}
