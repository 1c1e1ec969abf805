//! A run that fails by Colloquy's own fault is reported as such: on non-streaming `/v1` a 500
//! with its own code, never the model server's `502 upstream_error`.

use std::time::Duration;

use serde_json::json;

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::{error_body, spawn_app};

#[actix_web::test]
async fn a_pause_that_cannot_be_saved_is_a_500_pause_failed_not_an_upstream_error() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    // The model asks the user; by the time it does, the database is gone, so the question
    // cannot be saved for the run to pause on.
    app.upstream.script([Reply::tool_call(
        "ask_1",
        "ask_user",
        json!({"question": "Which city?"}),
    )
    .delay(Duration::from_millis(1500))]);
    let body = json!({"model": "fake-model", "x_chat_id": chat,
                      "messages": [{"role": "user", "content": "weather?"}]});
    let request = app.openai().chat_completions().json(&body).call();
    let closing = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        app.close_database().await;
    };
    let (response, ()) = tokio::join!(request, closing);
    assert_eq!(response.status(), 500);
    let error = error_body(response).await;
    assert_eq!(error["code"], "pause_failed", "{error}");
    assert_eq!(error["type"], "server_error", "{error}");
}
