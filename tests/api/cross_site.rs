//! A browser session changes data only from Colloquy's own pages; API keys and reads are
//! unaffected.

use reqwest::{Response, Url};
use serde_json::{Value, json};

use crate::client::Call;
use crate::helpers::{TestApp, error_body, session_cookie, spawn_app, spawn_app_with};

/// A page on another port of the same host: same-site, so SameSite=Lax lets the cookie through.
fn other_port_origin(app: &TestApp) -> String {
    let url = Url::parse(&app.address).unwrap();
    let port = url.port().unwrap();
    let other = if port == u16::MAX { port - 1 } else { port + 1 };
    format!("http://127.0.0.1:{other}")
}

async fn chat_count(app: &TestApp) -> usize {
    let body: Value = app.chat_api().list_chats().read_json().await;
    body["data"].as_array().unwrap().len()
}

async fn assert_cross_site_refusal(response: Response) {
    assert_eq!(response.status(), 403);
    let error = error_body(response).await;
    assert_eq!(error["code"], "cross_site_request");
    assert_eq!(error["type"], "permission_error");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("cross-site request refused"),
        "{error}"
    );
}

#[actix_web::test]
async fn a_session_request_from_another_port_is_refused_and_changes_nothing() {
    let app = spawn_app().await;
    let session = app.admin_session().await;
    let foreign = other_port_origin(&app);

    let create = app
        .as_session(&session)
        .chat_api()
        .create_chat()
        .header("origin", &foreign)
        .json(&json!({"title": "planted"}))
        .send()
        .await
        .unwrap();
    assert_cross_site_refusal(create).await;
    assert_eq!(chat_count(&app).await, 0, "no chat was created");

    let chat = app.create_chat("mine").await;
    let chat_id = chat["id"].as_str().unwrap();
    let delete = app
        .as_session(&session)
        .chat_api()
        .delete_chat(chat_id)
        .header("origin", &foreign)
        .send()
        .await
        .unwrap();
    assert_cross_site_refusal(delete).await;
    let still_there = app.chat_api().chat(chat_id).call().await;
    assert_eq!(still_there.status(), 200, "the chat was not deleted");
}

#[actix_web::test]
async fn a_session_request_from_our_own_origin_works() {
    let app = spawn_app().await;
    let session = app.admin_session().await;

    let create = app
        .as_browser(&session)
        .chat_api()
        .create_chat()
        .json(&json!({"title": "from the UI"}))
        .send()
        .await
        .unwrap();
    assert_eq!(create.status(), 201);
    let chat: Value = create.json().await.unwrap();
    let delete = app
        .as_browser(&session)
        .chat_api()
        .delete_chat(chat["id"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(delete.status(), 200);
    assert_eq!(chat_count(&app).await, 0);
}

#[actix_web::test]
async fn without_an_origin_sec_fetch_site_must_say_same_origin() {
    let app = spawn_app().await;
    let session = app.admin_session().await;

    let cross_site = app
        .as_session(&session)
        .chat_api()
        .create_chat()
        .header("sec-fetch-site", "cross-site")
        .json(&json!({"title": "planted"}))
        .send()
        .await
        .unwrap();
    assert_cross_site_refusal(cross_site).await;

    let same_site = app
        .as_session(&session)
        .chat_api()
        .create_chat()
        .header("sec-fetch-site", "same-site")
        .json(&json!({"title": "planted"}))
        .send()
        .await
        .unwrap();
    assert_cross_site_refusal(same_site).await;
    assert_eq!(chat_count(&app).await, 0);

    let same_origin = app
        .as_session(&session)
        .chat_api()
        .create_chat()
        .header("sec-fetch-site", "same-origin")
        .json(&json!({"title": "from the UI"}))
        .send()
        .await
        .unwrap();
    assert_eq!(same_origin.status(), 201);
}

#[actix_web::test]
async fn a_session_request_without_browser_headers_is_a_script_and_may_change_data() {
    // The spec's documents API examples: a script holding the session cookie, sending no Origin and
    // no Sec-Fetch-Site (which every browser page would send on these methods).
    let app = spawn_app().await;
    let session = app.admin_session().await;

    let response = app
        .as_session(&session)
        .chat_api()
        .create_chat()
        .json(&json!({"title": "from curl"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    assert_eq!(chat_count(&app).await, 1);
}

#[actix_web::test]
async fn a_second_origin_header_cannot_vouch_for_a_foreign_one() {
    let app = spawn_app().await;
    let session = app.admin_session().await;
    let response = app
        .as_session(&session)
        .chat_api()
        .create_chat()
        .header("origin", &app.address)
        .header("origin", other_port_origin(&app))
        .json(&json!({"title": "planted"}))
        .send()
        .await
        .unwrap();
    assert_cross_site_refusal(response).await;
    assert_eq!(chat_count(&app).await, 0);
}

#[actix_web::test]
async fn api_key_requests_from_any_origin_are_unaffected() {
    let app = spawn_app().await;
    let response = app
        .chat_api()
        .create_chat()
        .header("origin", other_port_origin(&app))
        .header("sec-fetch-site", "cross-site")
        .json(&json!({"title": "scripted"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
}

#[actix_web::test]
async fn reading_with_a_session_from_another_origin_still_works() {
    let app = spawn_app().await;
    let session = app.admin_session().await;
    let response = app
        .as_session(&session)
        .chat_api()
        .list_chats()
        .header("origin", other_port_origin(&app))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

#[actix_web::test]
async fn the_configured_public_url_is_our_origin_too() {
    let app =
        spawn_app_with(|config| config.public_url = Some("https://chat.example/".into())).await;
    let session = app.admin_session().await;
    let response = app
        .as_session(&session)
        .chat_api()
        .create_chat()
        .header("origin", "https://chat.example")
        .json(&json!({"title": "behind a proxy"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let plain_http = app
        .as_session(&session)
        .chat_api()
        .create_chat()
        .header("origin", "http://chat.example")
        .json(&json!({"title": "downgraded"}))
        .send()
        .await
        .unwrap();
    assert_cross_site_refusal(plain_http).await;
}

#[actix_web::test]
async fn password_login_from_another_origin_is_refused_but_clients_without_one_may_log_in() {
    let app = spawn_app().await;
    let created = app
        .auth()
        .create_user()
        .json(&json!({"username": "ada", "password": "analytical engine"}))
        .call()
        .await;
    assert_eq!(created.status(), 201);
    let credentials = json!({"username": "ada", "password": "analytical engine"});

    let forged = app
        .as_anonymous()
        .auth()
        .login()
        .header("origin", other_port_origin(&app))
        .json(&credentials)
        .send()
        .await
        .unwrap();
    assert!(session_cookie(&forged).is_none(), "no session was started");
    assert_cross_site_refusal(forged).await;

    for origin in [None, Some(app.address.clone())] {
        let mut request = app.as_anonymous().auth().login().json(&credentials);
        if let Some(origin) = &origin {
            request = request.header("origin", origin);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 200, "origin {origin:?}");
        assert!(session_cookie(&response).is_some());
    }
}
