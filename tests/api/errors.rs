use serde_json::json;

use crate::client::Call;
use crate::helpers::{error_body, spawn_app, spawn_app_with};

#[actix_web::test]
async fn malformed_json_is_a_400_that_says_what_is_wrong() {
    let app = spawn_app().await;
    let response = app
        .chat_api()
        .create_chat()
        .header("content-type", "application/json")
        .body("{\"title\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let error = error_body(response).await;
    assert_eq!(error["code"], "invalid_json");
    assert_eq!(error["type"], "invalid_request_error");
    assert!(
        error["message"].as_str().unwrap().contains("EOF"),
        "{error}"
    );
}

#[actix_web::test]
async fn wrong_types_and_unknown_fields_are_named_in_the_error() {
    let app = spawn_app().await;
    let response = app
        .chat_api()
        .create_chat()
        .json(&json!({"title": 42}))
        .call()
        .await;
    assert_eq!(response.status(), 400);
    let error = error_body(response).await;
    assert!(
        error["message"].as_str().unwrap().contains("invalid type"),
        "{error}"
    );

    let response = app
        .chat_api()
        .create_chat()
        .json(&json!({"titel": "typo"}))
        .call()
        .await;
    assert_eq!(response.status(), 400);
    let error = error_body(response).await;
    assert!(
        error["message"].as_str().unwrap().contains("titel"),
        "{error}"
    );
}

#[actix_web::test]
async fn oversize_bodies_are_a_413_and_wrong_content_types_a_415() {
    let app = spawn_app_with(|config| config.http.max_json_body_bytes = 1024).await;
    let big = json!({"title": "x".repeat(4096)});
    let response = app.chat_api().create_chat().json(&big).call().await;
    assert_eq!(response.status(), 413);
    assert_eq!(error_body(response).await["code"], "payload_too_large");

    let response = app
        .chat_api()
        .create_chat()
        .header("content-type", "text/plain")
        .body("{\"title\": \"x\"}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 415);
    assert_eq!(error_body(response).await["code"], "unsupported_media_type");
}

#[actix_web::test]
async fn unknown_routes_are_json_404s() {
    let app = spawn_app().await;
    let response = app.get("/no/such/route").await;
    assert_eq!(response.status(), 404);
    assert_eq!(error_body(response).await["code"], "not_found");
}

#[actix_web::test]
async fn an_unreachable_upstream_is_a_502_not_a_500() {
    let app = spawn_app().await;
    app.upstream.stop().await;
    let response = app.openai().models().call().await;
    assert_eq!(response.status(), 502);
    let error = error_body(response).await;
    assert_eq!(error["code"], "upstream_unreachable");
    assert_eq!(error["type"], "upstream_error");
}

/// An upstream base URL whose port nothing listens on (bound, then released).
fn closed_upstream() -> (String, String) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    drop(listener);
    (format!("http://{address}/v1"), address)
}

/// The `error` frame of a streamed run.
fn error_frame(frames: &[crate::sse::Frame]) -> serde_json::Value {
    frames
        .iter()
        .map(crate::sse::Frame::json)
        .find(|j| j["type"] == "error")
        .expect("an error event")
}

#[actix_web::test]
async fn a_user_is_told_the_model_server_is_unreachable_but_not_where_it_is() {
    let (base_url, address) = closed_upstream();
    let app = spawn_app_with(move |config| config.llm.base_url = base_url).await;
    let key = app.create_user_with_key("bob").await;
    let as_bob = app.as_key(&key);
    let ask = json!({"messages": [{"role": "user", "content": "Hello?"}]});

    let plain = as_bob
        .openai()
        .chat_completions()
        .json(&ask)
        .send()
        .await
        .unwrap();
    assert_eq!(plain.status(), 502);
    let body = plain.text().await.unwrap();
    assert!(!body.contains(&address), "{body}");
    let error: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["error"]["code"], "upstream_unreachable");
    assert_eq!(
        error["error"]["message"],
        "could not reach the model server"
    );

    let streamed = as_bob
        .openai()
        .chat_completions()
        .json(&json!({"messages": ask["messages"], "stream": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(streamed.status(), 200);
    let frames = crate::sse::read_all(streamed).await;
    assert!(
        frames.iter().all(|f| !f.data.contains(&address)),
        "{frames:?}"
    );
    let error = error_frame(&frames)["error"].clone();
    assert_eq!(error["code"], "upstream_unreachable");
    assert_eq!(error["message"], "could not reach the model server");

    let responses = as_bob
        .openai()
        .create_response()
        .json(&json!({"input": "Hello?"}))
        .send()
        .await
        .unwrap();
    assert_eq!(responses.status(), 502);
    let body = responses.text().await.unwrap();
    assert!(!body.contains(&address), "{body}");

    let models = as_bob.openai().models().send().await.unwrap();
    assert_eq!(models.status(), 502);
    let body = models.text().await.unwrap();
    assert!(!body.contains(&address), "{body}");
    assert!(body.contains("upstream_unreachable"), "{body}");

    // A chat turn: the stream, and the run's stored error, say the same without the address.
    let chat_id = as_bob.new_chat_with(&json!({"title": "Offline"})).await;
    let sent = as_bob
        .chat_api()
        .send_message(&chat_id)
        .json(&json!({"content": "Hello?"}))
        .send()
        .await
        .unwrap();
    let frames = crate::sse::read_all(sent).await;
    assert!(
        frames.iter().all(|f| !f.data.contains(&address)),
        "{frames:?}"
    );
    assert_eq!(
        error_frame(&frames)["error"]["code"],
        "upstream_unreachable"
    );
    use sea_orm::EntityTrait;
    let runs = entities::runs::Entity::find().all(&app.db).await.unwrap();
    assert!(!runs.is_empty());
    for run in runs {
        let stored = run.error.unwrap_or_default();
        assert!(!stored.contains(&address), "{stored}");
        assert_eq!(stored, "could not reach the model server");
    }
}

#[actix_web::test]
async fn an_admin_sees_which_model_server_could_not_be_reached() {
    let (base_url, address) = closed_upstream();
    let app = spawn_app_with(move |config| config.llm.base_url = base_url).await;

    let plain = app
        .openai()
        .chat_completions()
        .json(&json!({"messages": [{"role": "user", "content": "Hello?"}]}))
        .call()
        .await;
    assert_eq!(plain.status(), 502);
    let error = error_body(plain).await;
    assert_eq!(error["code"], "upstream_unreachable");
    assert!(
        error["message"].as_str().unwrap().contains(&address),
        "{error}"
    );

    let streamed = app
        .openai()
        .chat_completions()
        .json(&json!({"messages": [{"role": "user", "content": "Hello?"}], "stream": true}))
        .call()
        .await;
    let frames = crate::sse::read_all(streamed).await;
    let error = error_frame(&frames)["error"].clone();
    assert!(
        error["message"].as_str().unwrap().contains(&address),
        "{error}"
    );
}

#[actix_web::test]
async fn a_stream_cut_off_before_any_answer_is_a_truncation_said_once() {
    let app = spawn_app_with(|config| config.llm.max_retries = 0).await;
    app.upstream
        .script([crate::fake_upstream::Reply::text("one two three four").cut_after(0)]);
    let response = app
        .openai()
        .chat_completions()
        .json(&json!({"model": "fake-model", "messages": [{"role": "user", "content": "count"}]}))
        .call()
        .await;
    assert_eq!(response.status(), 502);
    let error = error_body(response).await;
    assert_eq!(error["code"], "upstream_stream_truncated", "{error}");
    let message = error["message"].as_str().unwrap();
    assert_eq!(
        message.matches("cut off").count(),
        1,
        "the cause is said once: {message}"
    );
}
