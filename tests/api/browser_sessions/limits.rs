//! A page past `browser.max_memory_mb` is closed with `page_crashed` (whether V8's heap or
//! memory outside it grew), and a navigation that never ends closes its session at once, so
//! pages that never answer cannot hold every session of the server.

use std::time::{Duration, Instant};

use serde_json::json;

use super::*;

#[actix_web::test]
async fn a_page_past_the_memory_bound_crashes_and_the_next_browse_works() {
    let site = Site::start(None).await;
    let app = app_for(&site, |config| config.browser.max_memory_mb = 256).await;
    let chat = app.new_chat().await;
    let (act, _) = tools(&app, &chat);
    let browsers = &app.state.launcher.browsers;

    for hog in ["/hog", "/hog-buffers"] {
        let started = Instant::now();
        let crashed = call(&act, json!({"action": "navigate", "url": site.url(hog)})).await;
        assert_eq!(crashed["code"], "page_crashed", "{hog}: {crashed}");
        assert!(
            crashed["error"].as_str().unwrap().contains("closed"),
            "{crashed}"
        );
        // Well within the action's 30 s: the bound ended it, not the timeout.
        assert!(
            started.elapsed() < Duration::from_secs(25),
            "{hog}: {:?}",
            started.elapsed()
        );
        assert!(
            browsers.sessions_of(&ChatId::from_string(&chat)).is_empty(),
            "{hog}: the crashed session is closed"
        );

        let next = call(
            &act,
            json!({"action": "navigate", "url": site.url("/form")}),
        )
        .await;
        assert_eq!(next["title"], "Order", "{hog}: {next}");
        let session = session_of(&next);
        let read = call(&act, json!({"sessionId": session, "action": "extract"})).await;
        assert!(
            read["text"].as_str().unwrap().contains("Place an order"),
            "{read}"
        );
        browsers
            .close(&BrowserSessionId::parse(&session).unwrap())
            .await;
    }
    // The server is fine.
    let health = app.http.get(format!("{}/health", app.address)).send().await;
    assert!(health.unwrap().status().is_success());
}

#[actix_web::test]
async fn a_navigation_that_times_out_closes_its_session_and_frees_its_place() {
    let site = Site::start(None).await;
    let app = app_for(&site, |config| {
        config.browser.max_sessions = 2;
        config.browser.max_sessions_per_chat = 2;
        config.browser.action_timeout_secs = 3;
    })
    .await;
    let chat = app.new_chat().await;
    let (act, _) = tools(&app, &chat);

    // As many navigations as the server has sessions, each to a page that never answers.
    for _ in 0..2 {
        let stuck = call(
            &act,
            json!({"action": "navigate", "url": site.url("/hang")}),
        )
        .await;
        assert_eq!(stuck["code"], "navigation_timeout", "{stuck}");
        let said = stuck["error"].as_str().unwrap();
        assert!(
            said.contains("did not load within 3 seconds") && said.contains("was closed"),
            "{stuck}"
        );
        assert!(
            app.state
                .launcher
                .browsers
                .sessions_of(&ChatId::from_string(&chat))
                .is_empty(),
            "the timed-out session's place is freed at once"
        );
    }
    assert!(site.hits("/hang") >= 2);

    let opened = call(
        &act,
        json!({"action": "navigate", "url": site.url("/form")}),
    )
    .await;
    assert_eq!(opened["title"], "Order", "{opened}");
}
