//! The account page's REST (issue 35 point 3): the display name, a password change that needs
//! the current password and signs the other sessions out, the sessions listed and signed out,
//! and the tool catalog the agents page chooses from.

use serde_json::{Value, json};

use crate::client::Call;
use crate::helpers::{TestApp, error_body, session_cookie, spawn_app};

const PASSWORD: &str = "a long password";

/// Makes `username` with `PASSWORD` and signs in as them `n` times; their session cookies.
async fn user_with_sessions(app: &TestApp, username: &str, n: usize) -> Vec<String> {
    let made = app
        .auth()
        .create_user()
        .json(&json!({"username": username, "password": PASSWORD}))
        .call()
        .await;
    assert_eq!(made.status(), 201);
    let mut sessions = Vec::new();
    for i in 0..n {
        let login = app
            .as_anonymous()
            .auth()
            .login()
            .header("user-agent", format!("Browser {i}"))
            .json(&json!({"username": username, "password": PASSWORD}))
            .send()
            .await
            .unwrap();
        assert_eq!(login.status(), 200);
        sessions.push(session_cookie(&login).unwrap());
    }
    sessions
}

async fn status_of_me(app: &TestApp, session: &str) -> u16 {
    app.as_session(session)
        .auth()
        .me()
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

async fn login_status(app: &TestApp, username: &str, password: &str) -> u16 {
    app.as_anonymous()
        .auth()
        .login()
        .json(&json!({"username": username, "password": password}))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[actix_web::test]
async fn a_password_change_needs_the_current_password_and_signs_the_other_sessions_out() {
    let app = spawn_app().await;
    let sessions = user_with_sessions(&app, "carol", 2).await;
    let (here, elsewhere) = (&sessions[0], &sessions[1]);

    let wrong = app
        .as_browser(here)
        .auth()
        .change_password()
        .json(&json!({"current_password": "not it at all", "new_password": "a new long password"}))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 400);
    assert_eq!(error_body(wrong).await["code"], "wrong_password");
    assert_eq!(status_of_me(&app, elsewhere).await, 200, "nothing changed");

    let short = app
        .as_browser(here)
        .auth()
        .change_password()
        .json(&json!({"current_password": PASSWORD, "new_password": "short"}))
        .send()
        .await
        .unwrap();
    assert_eq!(short.status(), 400);

    let changed = app
        .as_browser(here)
        .auth()
        .change_password()
        .json(&json!({"current_password": PASSWORD, "new_password": "a new long password"}))
        .send()
        .await
        .unwrap();
    assert_eq!(changed.status(), 200);
    let body: Value = changed.json().await.unwrap();
    assert_eq!(body["signed_out_sessions"], 1);
    assert_eq!(
        status_of_me(&app, elsewhere).await,
        401,
        "the other session ended"
    );
    assert_eq!(status_of_me(&app, here).await, 200, "this one stays");
    assert_eq!(login_status(&app, "carol", PASSWORD).await, 401);
    assert_eq!(
        login_status(&app, "carol", "a new long password").await,
        200
    );
}

#[actix_web::test]
async fn sessions_are_listed_with_the_current_one_marked_and_one_can_be_signed_out() {
    let app = spawn_app().await;
    let sessions = user_with_sessions(&app, "dave", 2).await;
    let listed: Value = app
        .as_session(&sessions[0])
        .auth()
        .sessions()
        .read_json()
        .await;
    let data = listed["data"].as_array().unwrap();
    assert_eq!(data.len(), 2, "{listed}");
    let current: Vec<&Value> = data.iter().filter(|s| s["current"] == true).collect();
    assert_eq!(current.len(), 1);
    assert_eq!(current[0]["user_agent"], "Browser 0");
    let other = data.iter().find(|s| s["current"] == false).unwrap();
    assert_eq!(other["user_agent"], "Browser 1");
    let other_id = other["id"].as_str().unwrap();

    // Someone else cannot sign it out: it is not theirs.
    let stranger = app.auth().end_session(other_id).send().await.unwrap();
    assert_eq!(stranger.status(), 404);
    assert_eq!(status_of_me(&app, &sessions[1]).await, 200);

    let ended = app
        .as_browser(&sessions[0])
        .auth()
        .end_session(other_id)
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status(), 200);
    assert_eq!(status_of_me(&app, &sessions[1]).await, 401);
    assert_eq!(status_of_me(&app, &sessions[0]).await, 200);
    let again = app
        .as_browser(&sessions[0])
        .auth()
        .end_session(other_id)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 404);
}

#[actix_web::test]
async fn the_display_name_is_set_shown_and_checked() {
    let app = spawn_app().await;
    let sessions = user_with_sessions(&app, "erin", 1).await;
    let session = &sessions[0];
    let set = app
        .as_browser(session)
        .auth()
        .update_account()
        .json(&json!({"display_name": "  Erin Example "}))
        .send()
        .await
        .unwrap();
    assert_eq!(set.status(), 200);
    let me: Value = app.as_session(session).auth().me().read_json().await;
    assert_eq!(me["display_name"], "Erin Example");
    let account: Value = app.as_session(session).auth().account().read_json().await;
    assert_eq!(account["username"], "erin");
    assert_eq!(account["display_name"], "Erin Example");
    assert_eq!(account["has_password"], true);

    let long = app
        .as_browser(session)
        .auth()
        .update_account()
        .json(&json!({"display_name": "x".repeat(101)}))
        .send()
        .await
        .unwrap();
    assert_eq!(long.status(), 400);
    assert_eq!(error_body(long).await["code"], "invalid_display_name");
    let cleared = app
        .as_browser(session)
        .auth()
        .update_account()
        .json(&json!({"display_name": null}))
        .send()
        .await
        .unwrap();
    let cleared: Value = cleared.json().await.unwrap();
    assert_eq!(cleared["display_name"], Value::Null);
}

#[actix_web::test]
async fn the_tool_catalog_describes_every_tool_an_agent_may_name() {
    let app = spawn_app().await;
    let catalog: Value = app.api().tools().read_json().await;
    let tools = catalog["tools"].as_array().unwrap();
    let find = |name: &str| tools.iter().find(|t| t["name"] == name).cloned();
    let search = find("web_search").expect("web_search");
    assert_eq!(search["origin"], "research");
    assert!(!search["description"].as_str().unwrap().is_empty());
    assert_eq!(find("create_artifact").unwrap()["origin"], "chat");
    assert!(
        find("execute_sql").is_none(),
        "no database is declared here"
    );

    // Every name in it is one an agent may enable.
    let names: Vec<&Value> = tools.iter().map(|t| &t["name"]).collect();
    let made = app
        .api()
        .create_agent()
        .json(&json!({"name": "Everything", "enabled_tools": names}))
        .call()
        .await;
    assert_eq!(made.status(), 201, "{:?}", made.text().await);
    let anonymous = app.as_anonymous().api().tools().send().await.unwrap();
    assert_eq!(anonymous.status(), 401);
}
