//! Caps, ownership by chat, separate profiles, idle close, a deleted chat, a killed Chromium,
//! and a server without Chromium.

use std::path::Path;

use entities::ids::ChatId;
use sea_orm::{ActiveModelTrait, EntityTrait, IntoActiveModel, Set};
use serde_json::{Value, json};

use super::*;
use crate::client::Call;
use crate::fake_upstream::Reply;

#[actix_web::test]
async fn caps_refuse_the_next_session_another_chats_session_is_refused_and_no_cookie_is_shared() {
    let site = Site::start(None).await;
    let app = app_for(&site, |config| {
        config.browser.max_sessions_per_chat = 1;
        config.browser.max_sessions = 2;
        config.browser.max_screenshot_bytes = 100;
        config.browser.max_wait_ms = 500;
    })
    .await;
    let (first, second, third) = (
        app.new_chat().await,
        app.new_chat().await,
        app.new_chat().await,
    );
    let (act_1, analyze_1) = tools(&app, &first);
    let (act_2, _) = tools(&app, &second);
    let (act_3, _) = tools(&app, &third);
    let navigate = json!({"action": "navigate", "url": site.url("/form")});

    let session = session_of(&call(&act_1, navigate.clone()).await);
    let again = call(&act_1, navigate.clone()).await;
    assert_eq!(again["code"], "too_many_sessions_in_chat", "{again}");
    session_of(&call(&act_2, navigate.clone()).await);
    let full = call(&act_3, navigate.clone()).await;
    assert_eq!(full["code"], "too_many_sessions", "{full}");

    let foreign = call(&act_2, json!({"sessionId": session, "action": "extract"})).await;
    assert_eq!(foreign["code"], "unknown_session", "{foreign}");
    let (_, analyze_2) = tools(&app, &second);
    let foreign = call(&analyze_2, json!({"sessionId": session})).await;
    assert_eq!(foreign["code"], "unknown_session", "{foreign}");
    let own = call(&analyze_1, json!({"sessionId": session})).await;
    assert_eq!(own["title"], "Order", "{own}");

    // Each session has its own profile: a cookie one chat's page was given is not another's.
    let second_session = app
        .state
        .launcher
        .browsers
        .sessions_of(&ChatId::from_string(&second));
    let second_session = second_session[0].to_string();
    call(
        &act_1,
        json!({"sessionId": session, "action": "navigate", "url": site.url("/set-cookie")}),
    )
    .await;
    let read =
        |id: &str| json!({"sessionId": id, "action": "navigate", "url": site.url("/cookie")});
    call(&act_1, read(&session)).await;
    let own = call(
        &act_1,
        json!({"sessionId": session, "action": "extract", "selector": "#cookie"}),
    )
    .await;
    assert_eq!(own["text"], "who=first-chat", "{own}");
    call(&act_2, read(&second_session)).await;
    let other = call(
        &act_2,
        json!({"sessionId": second_session, "action": "extract", "selector": "#cookie"}),
    )
    .await;
    assert_eq!(other["text"], "none", "{other}");
    call(
        &act_1,
        json!({"sessionId": session, "action": "navigate", "url": site.url("/form")}),
    )
    .await;

    // Every limit is an error result that says what it is.
    let shot = call(
        &act_1,
        json!({"sessionId": session, "action": "screenshot"}),
    )
    .await;
    assert_eq!(shot["code"], "screenshot_too_large", "{shot}");
    let long = call(
        &act_1,
        json!({"sessionId": session, "action": "wait", "ms": 501}),
    )
    .await;
    assert_eq!(long["code"], "INVALID_ARGUMENTS", "{long}");
    assert!(
        long["error"].as_str().unwrap().contains("at most 500 ms"),
        "{long}"
    );
    let absent = call(
        &act_1,
        json!({"sessionId": session, "action": "wait", "selector": "#never"}),
    )
    .await;
    assert_eq!(absent["code"], "no_match", "{absent}");
    let unknown = call(&act_1, json!({"sessionId": session, "action": "fly"})).await;
    assert_eq!(unknown["code"], "INVALID_ARGUMENTS", "{unknown}");
    let scrolled = call(
        &act_1,
        json!({"sessionId": session, "action": "scroll", "direction": "down"}),
    )
    .await;
    assert_eq!(
        scrolled["result"],
        format!("scrolled down; the page stayed at {}", site.url("/form"))
    );
    call(
        &act_1,
        json!({"sessionId": session, "action": "type", "selector": "#who", "text": "Bo"}),
    )
    .await;
    let pressed = call(
        &act_1,
        json!({"sessionId": session, "action": "press", "key": "Enter"}),
    )
    .await;
    assert_eq!(
        pressed["url"],
        site.url("/submit"),
        "Enter submits the form: {pressed}"
    );
}

#[actix_web::test]
async fn idle_sessions_and_a_deleted_chats_sessions_close_with_their_profiles_and_screenshots() {
    let site = Site::start(None).await;
    let app = app_for(&site, |config| config.browser.idle_timeout_secs = 2).await;
    let browsers = app.state.launcher.browsers.clone();
    let chat = app.new_chat().await;
    let (act, _) = tools(&app, &chat);
    let session = session_of(
        &call(
            &act,
            json!({"action": "navigate", "url": site.url("/form")}),
        )
        .await,
    );
    let profile = profile_of(&app, &session);
    assert!(profile.is_dir(), "its own profile");
    let chat_id = ChatId::from_string(&chat);
    eventually("the idle session closes", STEP, || {
        let open = browsers.sessions_of(&chat_id);
        async move { open.is_empty().then_some(()) }
    })
    .await;
    eventually("its profile is deleted", STEP, || {
        let gone = !Path::new(&profile).exists();
        async move { gone.then_some(()) }
    })
    .await;
    let reopened = call(
        &act,
        json!({"sessionId": session, "action": "navigate", "url": site.url("/form")}),
    )
    .await;
    assert_ne!(
        session_of(&reopened),
        session,
        "a navigate opens a new session"
    );
    let reopened_profile = profile_of(&app, &session_of(&reopened));
    assert!(reopened_profile.is_dir(), "its own profile");
    let shot = call(
        &act,
        json!({"sessionId": session_of(&reopened), "action": "screenshot"}),
    )
    .await;
    let shots = app.data_dir.path().join("screenshots").join(&chat);
    assert!(shots.is_dir(), "{shot}");

    let deleted = app.chat_api().delete_chat(&chat).send().await.unwrap();
    assert!(deleted.status().is_success(), "{}", deleted.status());
    assert!(
        browsers.sessions_of(&chat_id).is_empty(),
        "closed with its chat"
    );
    assert!(!reopened_profile.exists(), "its profile went with it");
    assert!(!shots.exists(), "its screenshots went with it");
    // Screenshots of a chat that is gone however it went (swept past its retention) are swept.
    let orphan = app.data_dir.path().join("screenshots").join(&chat);
    std::fs::create_dir_all(&orphan).unwrap();
    std::fs::write(orphan.join("shot_0.png"), b"left behind").unwrap();
    browsers.sweep(&app.db).await;
    assert!(!orphan.exists(), "a gone chat's screenshots are swept");
}

#[actix_web::test]
async fn killing_chromium_is_an_error_result_and_the_next_navigate_opens_a_fresh_session() {
    let site = Site::start(None).await;
    let app = app_for(&site, |_| {}).await;
    let chat = app.new_chat().await;
    let (act, _) = tools(&app, &chat);
    let session = session_of(
        &call(
            &act,
            json!({"action": "navigate", "url": site.url("/form")}),
        )
        .await,
    );
    let id = BrowserSessionId::parse(&session).unwrap();
    let pid = app
        .state
        .launcher
        .browsers
        .pid_of(&id)
        .expect("its Chromium");
    // SAFETY: kill has no memory effects; the pid is the test's own Chromium.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGKILL) }, 0);

    let profile = profile_of(&app, &session);
    assert!(profile.is_dir(), "its own profile");
    let failed = call(&act, json!({"sessionId": session, "action": "extract"})).await;
    assert_eq!(failed["code"], "session_ended", "{failed}");
    assert!(!profile.exists(), "the dead session's profile is deleted");
    let fresh = call(
        &act,
        json!({"sessionId": session, "action": "navigate", "url": site.url("/form")}),
    )
    .await;
    let new = session_of(&fresh);
    assert_ne!(new, session);
    assert_eq!(fresh["title"], "Order", "{fresh}");
}

#[actix_web::test]
async fn without_chromium_the_tools_are_not_offered_and_the_tool_list_says_why() {
    let app = spawn_app_with(|config| {
        config.browser.chromium_path = Some("/nonexistent/chromium".into());
    })
    .await;
    let refused = app
        .api()
        .create_agent()
        .json(&json!({"name": "Surfer", "enabled_tools": ["browser_action"]}))
        .call()
        .await;
    assert_eq!(refused.status(), 400);
    let body: Value = refused.json().await.unwrap();
    assert!(
        body.to_string()
            .contains("browser_action is not configured on this server (it needs Chromium"),
        "{body}"
    );

    let agent: Value = app
        .api()
        .create_agent()
        .json(&json!({"name": "Reader"}))
        .read_json()
        .await;
    let listed: Value = app
        .api()
        .agent_tools(agent["id"].as_str().unwrap())
        .read_json()
        .await;
    let unavailable = listed["unavailable"]
        .as_array()
        .expect("what is not offered");
    let names: Vec<&str> = unavailable
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert_eq!(names, ["browser_action", "analyze_page"], "{listed}");
    for tool in unavailable {
        assert!(
            tool["reason"]
                .as_str()
                .unwrap()
                .contains("/nonexistent/chromium"),
            "{listed}"
        );
    }
    let listed_tools = listed["tools"].to_string();
    assert!(!listed_tools.contains("browser_action"), "{listed}");

    // A request naming both is answered without them: the model is not offered either.
    let chat = app.new_chat().await;
    app.upstream.script([Reply::text("No browser here.")]);
    app.send(
        &chat,
        json!({"content": "Open a page",
               "web_search_options": {"x_tools": ["browser_action", "analyze_page", "calculator"]}}),
    )
    .await;
    let offered: Vec<String> = app.upstream.received()[0].body["tools"]
        .as_array()
        .expect("the tools offered")
        .iter()
        .filter_map(|tool| tool["function"]["name"].as_str().map(str::to_string))
        .collect();
    assert!(offered.contains(&"calculator".to_string()), "{offered:?}");
    assert!(
        !offered
            .iter()
            .any(|name| name == "browser_action" || name == "analyze_page"),
        "{offered:?}"
    );
}

#[actix_web::test]
async fn the_v1_retention_sweep_closes_a_swept_chats_session_and_removes_its_screenshots() {
    let site = Site::start(None).await;
    let app = app_for(&site, |_| {}).await;
    app.upstream.script([Reply::text("ok")]);
    let made: Value = app
        .openai()
        .chat_completions()
        .json(&json!({"messages": [{"role": "user", "content": "Hello"}]}))
        .read_json()
        .await;
    let chat = made["x_chat_id"]
        .as_str()
        .expect("a stored chat")
        .to_string();
    let (act, _) = tools(&app, &chat);
    let session = session_of(
        &call(
            &act,
            json!({"action": "navigate", "url": site.url("/form")}),
        )
        .await,
    );
    let shot = call(&act, json!({"sessionId": session, "action": "screenshot"})).await;
    let shots = app.data_dir.path().join("screenshots").join(&chat);
    assert!(shots.is_dir(), "{shot}");
    let profile = profile_of(&app, &session);
    assert!(profile.is_dir());

    // Past its retention, unopened in the UI.
    let chat_id = ChatId::from_string(&chat);
    let stored = entities::chats::Entity::find_by_id(chat_id.clone())
        .one(&app.db)
        .await
        .unwrap()
        .expect("the chat");
    let mut old = stored.into_active_model();
    old.updated_at = Set(chrono::Utc::now() - chrono::Duration::days(31));
    old.update(&app.db).await.unwrap();
    let swept = colloquy::startup::sweep_api_chats(&app.state)
        .await
        .unwrap();

    assert_eq!(swept, 1);
    let browsers = &app.state.launcher.browsers;
    assert!(
        browsers.sessions_of(&chat_id).is_empty(),
        "its session is closed"
    );
    assert!(!profile.exists(), "its profile is deleted");
    assert!(!shots.exists(), "its screenshots are removed");
    let gone = call(&act, json!({"sessionId": session, "action": "extract"})).await;
    assert_eq!(gone["code"], "unknown_session", "{gone}");
}
