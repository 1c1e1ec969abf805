//! The SSRF guard on every request a page makes; navigations, redirects and downloads refused.

use std::path::Path;

use serde_json::json;

use super::*;

#[actix_web::test]
async fn a_page_gets_nothing_from_a_private_address_and_navigations_there_are_refused() {
    let private = Site::start(None).await;
    let site = Site::start(Some(private.port)).await;
    let app = app_for(&site, |_| {}).await;
    let chat = app.new_chat().await;
    let (act, _) = tools(&app, &chat);

    let opened = call(
        &act,
        json!({"action": "navigate", "url": site.url("/leaky")}),
    )
    .await;
    let session = session_of(&opened);
    assert_eq!(opened["title"], "Leaky", "{opened}");
    // The page's own image came through the guard, so the page did load its resources.
    assert_eq!(site.hits("/own.png"), 1);
    // The page's script tried all three and saw each fail; the zero hits below are the guard's
    // doing, not a script that never ran.
    let attempted = call(
        &act,
        json!({"sessionId": session, "action": "wait", "selector": "#attempted"}),
    )
    .await;
    assert!(attempted["error"].is_null(), "{attempted}");
    for (id, outcome) in [
        ("#fetch", "fetch: failed"),
        ("#xhr", "xhr: failed"),
        ("#ws", "ws: error"),
    ] {
        let read = call(
            &act,
            json!({"sessionId": session, "action": "extract", "selector": id}),
        )
        .await;
        assert_eq!(read["text"], outcome, "{read}");
    }
    // The guard names what it refused (a WebSocket never reaches the Fetch domain: Chromium's
    // own network, a proxy that does not exist, fails it).
    let blocked: Vec<String> = [&opened["blocked"], &attempted["blocked"]]
        .iter()
        .filter_map(|list| list.as_array())
        .flatten()
        .filter_map(|url| url.as_str().map(str::to_string))
        .collect();
    for path in ["/frame", "/image.png", "/fetch", "/xhr"] {
        assert!(
            blocked.contains(&private.url(path)),
            "{path} in {blocked:?}: {opened}"
        );
    }

    let direct = call(
        &act,
        json!({"sessionId": session, "action": "navigate", "url": private.url("/secret")}),
    )
    .await;
    assert_eq!(direct["code"], "refused", "{direct}");
    let redirected = call(
        &act,
        json!({"sessionId": session, "action": "navigate", "url": site.url("/redirect")}),
    )
    .await;
    assert_eq!(redirected["code"], "refused", "{redirected}");
    assert!(
        redirected["error"].as_str().unwrap().contains("/target"),
        "{redirected}"
    );
    assert_eq!(site.hits("/redirect"), 1, "the redirect itself was allowed");
    for url in [
        "file:///etc/passwd",
        "data:text/html,<p>hi</p>",
        "chrome://version",
    ] {
        let refused = call(
            &act,
            json!({"sessionId": session, "action": "navigate", "url": url}),
        )
        .await;
        assert_eq!(refused["code"], "refused", "{url}: {refused}");
    }
    let download = call(
        &act,
        json!({"sessionId": session, "action": "navigate", "url": site.url("/download")}),
    )
    .await;
    assert_eq!(site.hits("/download"), 1, "{download}");
    assert_eq!(download["code"], "refused", "{download}");
    assert!(
        download["error"]
            .as_str()
            .unwrap()
            .contains("downloads are refused"),
        "{download}"
    );
    let home = std::env::var("HOME").unwrap_or_default();
    let saved = Path::new(&home).join("Downloads/colloquy-browser-download-test.bin");
    assert!(!saved.exists(), "downloads are refused: {download}");
    let profile = profile_of(&app, &session);
    assert!(
        !find_file(&profile, "colloquy-browser-download-test.bin"),
        "nothing saved in the profile"
    );
    assert_eq!(
        private.total_hits(),
        0,
        "the private server saw {:?}",
        private.hits.lock().unwrap()
    );
}

#[actix_web::test]
async fn no_request_of_a_page_goes_round_the_interception() {
    let site = Site::start(None).await;
    let app = app_for(&site, |_| {}).await;
    let chat = app.new_chat().await;
    let (act, _) = tools(&app, &chat);

    let opened = call(
        &act,
        json!({"action": "navigate", "url": site.url("/everything")}),
    )
    .await;
    let session = session_of(&opened);
    // Time for the frame, the popup, the workers and the prefetch to make their requests.
    let waited = call(
        &act,
        json!({"sessionId": session, "action": "wait", "ms": 3000}),
    )
    .await;
    assert!(waited["error"].is_null(), "{waited}");
    // The page, its frame and its worker did load, through the interception.
    assert_eq!(site.hits("/own.png"), 1);
    assert_eq!(site.hits("/framed.png"), 1);
    assert_eq!(site.hits("/from-worker"), 1);
    // A link to a new window opens in the page, through the interception.
    let away = call(
        &act,
        json!({"sessionId": session, "action": "click", "selector": "#away"}),
    )
    .await;
    assert_eq!(away["title"], "Popup", "{away}");
    assert_eq!(site.hits("/popup.png"), 1);
    // Nothing reached Chromium's own network (its proxy, the session's sink): not the pages'
    // requests, and not what Chromium asks of its vendor by itself (sent nowhere).
    let bypassed = app.state.launcher.browsers.bypassed();
    assert!(
        bypassed.is_empty(),
        "requests went round the interception: {bypassed:#?} (site hits: {:?})",
        site.hits.lock().unwrap()
    );
}
