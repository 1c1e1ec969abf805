use reqwest::Method;
use serde_json::json;

use crate::helpers::{error_body, spawn_app, spawn_app_with};

#[actix_web::test]
async fn malformed_json_is_a_400_that_says_what_is_wrong() {
    let app = spawn_app().await;
    let response = app
        .request(Method::POST, "/chat/api/chats")
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
        .post_json("/chat/api/chats", &json!({"title": 42}))
        .await;
    assert_eq!(response.status(), 400);
    let error = error_body(response).await;
    assert!(
        error["message"].as_str().unwrap().contains("invalid type"),
        "{error}"
    );

    let response = app
        .post_json("/chat/api/chats", &json!({"titel": "typo"}))
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
    let response = app.post_json("/chat/api/chats", &big).await;
    assert_eq!(response.status(), 413);
    assert_eq!(error_body(response).await["code"], "payload_too_large");

    let response = app
        .request(Method::POST, "/chat/api/chats")
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
    let response = app.get("/v1/models").await;
    assert_eq!(response.status(), 502);
    let error = error_body(response).await;
    assert_eq!(error["code"], "upstream_unreachable");
    assert_eq!(error["type"], "upstream_error");
}
