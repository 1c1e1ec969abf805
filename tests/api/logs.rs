//! The server's log, as captured from every app in this test binary, never holds a credential.

use reqwest::Method;
use serde_json::{Value, json};

use crate::client::Call;
use crate::helpers::{ADMIN_KEY, captured_log, session_cookie, spawn_app};

#[actix_web::test]
async fn request_logs_show_paths_but_never_tokens_cookies_keys_or_passwords() {
    let app = spawn_app().await;
    let link = app.login_url.clone().expect("first start made a link");
    let link_path = link.strip_prefix(&app.address).unwrap().to_string();
    let link_token = link_path.split("token=").nth(1).unwrap().to_string();

    // A one-time link, spent (an INFO line inside the request's span) and spent again (a 410).
    let admin_session = app.admin_session().await;
    let again = app.anonymous(Method::GET, &link_path).send().await.unwrap();
    assert_eq!(again.status(), 410);

    // Password logins, wrong and right.
    let password = format!("pw-{}", uuid::Uuid::new_v4());
    let wrong_password = format!("wrong-{}", uuid::Uuid::new_v4());
    let created = app
        .auth()
        .create_user()
        .json(&json!({"username": "logged", "password": password}))
        .call()
        .await;
    assert_eq!(created.status(), 201);
    let wrong = app
        .as_anonymous()
        .auth()
        .login()
        .json(&json!({"username": "logged", "password": wrong_password}))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    let login = app
        .as_anonymous()
        .auth()
        .login()
        .json(&json!({"username": "logged", "password": password}))
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), 200);
    let user_session = session_cookie(&login).unwrap();

    // Cookie requests that fail (logged as warnings with their span) and one that works.
    let missing = app
        .as_browser(&user_session)
        .chat_api()
        .chat("no-such-chat")
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    let cross_site = app
        .as_session(&admin_session)
        .chat_api()
        .create_chat()
        .header("origin", "http://127.0.0.1:1")
        .json(&json!({"title": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(cross_site.status(), 403);
    let key = app
        .as_browser(&user_session)
        .auth()
        .create_api_key()
        .json(&json!({"name": "logs"}))
        .send()
        .await
        .unwrap();
    assert_eq!(key.status(), 201);
    let api_key = key.json::<Value>().await.unwrap()["key"]
        .as_str()
        .unwrap()
        .to_string();

    // API-key requests, one in the query string where it does not belong, and one that reaches
    // the upstream with its own key.
    let bad_key = app
        .as_anonymous()
        .openai()
        .models()
        .with_query(&format!("api_key={api_key}"))
        .send()
        .await
        .unwrap();
    assert_eq!(bad_key.status(), 401);
    let models = app.as_key(&api_key).openai().models().send().await.unwrap();
    assert_eq!(models.status(), 200);
    let admin_missing = app.chat_api().chat("also-missing").call().await;
    assert_eq!(admin_missing.status(), 404);

    let log = captured_log();
    for (what, secret) in [
        ("login link token", link_token.as_str()),
        ("admin session cookie", admin_session.as_str()),
        ("user session cookie", user_session.as_str()),
        ("password", password.as_str()),
        ("wrong password", wrong_password.as_str()),
        ("new API key", api_key.as_str()),
        ("bootstrap API key", ADMIN_KEY),
        ("upstream key", "upstream-secret"),
    ] {
        assert!(!log.contains(secret), "the {what} is in the log");
    }
    assert!(
        log.contains("http.target=/login?token=REDACTED"),
        "the link's request is logged, with its token redacted"
    );
    assert!(log.contains("http.target=/v1/models?api_key=REDACTED"));
    assert!(log.contains("http.target=/chat/api/chats/no-such-chat"));
}
