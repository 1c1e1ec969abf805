//! Back-pressure: past `http.max_in_flight` requests (a streamed answer counting until it
//! ends), the next is a `503 overloaded` with `Retry-After`, answered before any handler, so
//! nothing of it is stored; the probes still answer, and once a stream ends its place is free.

use std::time::Duration;

use entities::ids::ChatId;
use futures_util::StreamExt;
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
use serde_json::json;

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::{error_body, eventually, spawn_app_with};

#[actix_web::test]
async fn a_request_past_the_in_flight_limit_is_refused_with_retry_after_and_stores_nothing() {
    let app = spawn_app_with(|c| {
        c.http.max_in_flight = 2;
        c.http.retry_after_secs = 7;
    })
    .await;
    let (first, second) = (app.new_chat().await, app.new_chat().await);
    // Two answers that stream slowly hold both places.
    app.upstream.script([
        Reply::text("one two three four five six").event_gap(Duration::from_millis(400)),
        Reply::text("seven eight nine ten eleven").event_gap(Duration::from_millis(400)),
        Reply::text("after the streams"),
    ]);
    let body = |chat: &str| {
        json!({"model": "fake-model", "x_chat_id": chat, "stream": true,
            "messages": [{"role": "user", "content": "a slow one"}]})
    };
    let (first_body, second_body) = (body(&first), body(&second));
    let (one, two) = futures_util::join!(
        app.openai().chat_completions().json(&first_body).call(),
        app.openai().chat_completions().json(&second_body).call()
    );
    assert_eq!((one.status().as_u16(), two.status().as_u16()), (200, 200));
    // A stream is answered before its turn is stored: its first chunk comes once it is.
    let (mut one, mut two) = (one.bytes_stream(), two.bytes_stream());
    for stream in [&mut one, &mut two] {
        let mut seen = String::new();
        while !seen.contains("data:") {
            let chunk = stream.next().await.expect("a first chunk").unwrap();
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    let messages_before = entities::messages::Entity::find()
        .filter(entities::messages::Column::ChatId.eq(ChatId::from_string(first.clone())))
        .count(&app.db)
        .await
        .unwrap();
    let refused = app
        .openai()
        .chat_completions()
        .json(&json!({"model": "fake-model", "x_chat_id": first,
                "messages": [{"role": "user", "content": "one too many"}]}))
        .call()
        .await;
    assert_eq!(refused.status(), 503);
    assert_eq!(refused.headers()["retry-after"], "7");
    let error = error_body(refused).await;
    assert_eq!(error["code"], "overloaded", "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("retry in 7"),
        "{error}"
    );
    // The chat API is held to the same limit; the probes and metrics are not.
    assert_eq!(app.chat_api().list_chats().call().await.status(), 503);
    assert_eq!(app.get("/health").await.status(), 200);
    assert_eq!(app.get("/metrics").await.status(), 200);
    let messages_after = entities::messages::Entity::find()
        .filter(entities::messages::Column::ChatId.eq(ChatId::from_string(first.clone())))
        .count(&app.db)
        .await
        .unwrap();
    assert_eq!(
        messages_after, messages_before,
        "the refused request stored nothing"
    );

    // Reading both streams to their end gives their places back.
    for mut body in [one, two] {
        while let Some(chunk) = body.next().await {
            chunk.unwrap();
        }
    }
    let answer = eventually(
        "a place after the streams ended",
        Duration::from_secs(10),
        || async {
            let response = app
                .openai()
                .chat_completions()
                .json(&json!({"model": "fake-model",
                        "messages": [{"role": "user", "content": "now there is room"}]}))
                .call()
                .await;
            (response.status() == 200).then_some(response)
        },
    )
    .await;
    let body: serde_json::Value = answer.json().await.unwrap();
    assert_eq!(
        body["choices"][0]["message"]["content"],
        "after the streams"
    );
}

#[actix_web::test]
async fn a_client_that_goes_away_mid_stream_gives_its_place_back() {
    let app = spawn_app_with(|c| c.http.max_in_flight = 1).await;
    app.upstream.script([
        Reply::text("a b c d e f g h i j k l m n o p").event_gap(Duration::from_millis(300)),
        Reply::text("the next one"),
    ]);
    let response = app
        .openai()
        .chat_completions()
        .json(&json!({"model": "fake-model", "stream": true,
                "messages": [{"role": "user", "content": "slow"}]}))
        .call()
        .await;
    assert_eq!(response.status(), 200);
    assert_eq!(app.chat_api().list_chats().call().await.status(), 503);
    drop(response);
    eventually(
        "the place of a dropped stream",
        Duration::from_secs(10),
        || async { (app.chat_api().list_chats().call().await.status() == 200).then_some(()) },
    )
    .await;
}
