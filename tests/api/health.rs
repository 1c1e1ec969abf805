use reqwest::Method;

use crate::helpers::spawn_app;

#[actix_web::test]
async fn health_answers_without_credentials_and_tags_the_request() {
    let app = spawn_app().await;
    let response = app.anonymous(Method::GET, "/health").send().await.unwrap();
    assert_eq!(response.status(), 200);
    let request_id = response.headers().get("x-request-id").cloned();
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["status"], "ok");
    let request_id = request_id.expect("x-request-id header");
    assert_eq!(request_id.to_str().unwrap().len(), 36, "a UUID");
}

#[actix_web::test]
async fn readiness_checks_the_database() {
    let app = spawn_app().await;
    let response = app
        .anonymous(Method::GET, "/health/ready")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["database"], "ok");
    // SQLite is one process: it owns every chat, with no leases to show.
    assert!(body.get("cluster").is_none(), "{body}");
}

#[actix_web::test]
async fn readiness_fails_when_the_database_is_gone() {
    let app = spawn_app().await;
    // Close the pool the server uses: the next readiness probe must fail, not hang or lie.
    app.close_database().await;
    let response = app
        .anonymous(Method::GET, "/health/ready")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 503);
    let live = app.anonymous(Method::GET, "/health").send().await.unwrap();
    assert_eq!(
        live.status(),
        200,
        "liveness does not depend on the database"
    );
}
