//! Browser scenarios of the app around the chat (issue 35): the admin page (with a real MCP
//! server), and the model picker over two model servers (and a third that is down). Driven
//! like `browser`'s.

use serde_json::{Value, json};

use crate::browser::{browser_app, run_scenario};
use crate::client::Call;
use crate::fake_upstream::{FakeUpstream, Reply};
use crate::providers::provider;

#[actix_web::test]
async fn an_admin_creates_a_user_who_signs_in_with_the_link_and_gets_no_admin_page() {
    let python = crate::mcp::python().await;
    let app = browser_app(|config| {
        config.mcp.servers = vec![crate::mcp::stdio_server(&python, "local", "stdio")];
    })
    .await;
    crate::mcp::connected(&app, "local").await;
    let made = app
        .auth()
        .create_user()
        .json(&json!({"username": "dan", "password": "dan password 1"}))
        .call()
        .await;
    assert_eq!(made.status(), 201);
    run_scenario(
        &app,
        "admin",
        &[("VERSION", env!("CARGO_PKG_VERSION").to_string())],
    )
    .await;
    let users = app.admin().users().read_json::<Value>().await;
    let users = users["data"].as_array().unwrap();
    assert_eq!(users.len(), 2, "carol was deleted: {users:?}");
    let dan = users.iter().find(|u| u["username"] == "dan").unwrap();
    assert_eq!(dan["disabled"], true, "{dan}");
}

#[actix_web::test]
async fn the_picked_model_answers_the_next_turn_from_its_own_server() {
    let b = FakeUpstream::start().await;
    let b_url = b.base_url.clone();
    let app = browser_app(|config| {
        config.llm.model = "alpha".into();
        config.llm.providers = vec![
            provider("a", &config.llm.base_url, &["alpha"]),
            // Enough models that the picker opens with a search field.
            provider(
                "b",
                &b_url,
                &["beta", "b-2", "b-3", "b-4", "b-5", "b-6", "b-7", "b-8"],
            ),
            // Nothing listens on port 9 (discard): a server that is down.
            provider("c", "http://127.0.0.1:9/v1", &["gamma"]),
        ];
    })
    .await;
    app.upstream.script([Reply::text("From A.")]);
    b.script([Reply::text("From B."), Reply::text("From B, by default.")]);
    run_scenario(&app, "model_picker", &[]).await;
    let models_sent = |received: Vec<crate::fake_upstream::Recorded>| -> Vec<Value> {
        received
            .into_iter()
            .filter(|r| r.path == "/v1/chat/completions")
            .map(|r| r.body["model"].clone())
            .collect()
    };
    assert_eq!(models_sent(app.upstream.received()), ["alpha"]);
    assert_eq!(
        models_sent(b.received()),
        ["beta", "beta"],
        "the picked model, then the new chat's default set on /settings"
    );
}
