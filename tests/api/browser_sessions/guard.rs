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
    let blocked = opened["blocked"].to_string();
    assert!(
        blocked.contains("/frame") && blocked.contains("/image.png"),
        "{opened}"
    );
    let waited = call(
        &act,
        json!({"sessionId": session, "action": "wait", "ms": 1000}),
    )
    .await;
    assert!(waited["error"].is_null(), "{waited}");

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
    let profile = app.data_dir.path().join("browser").join(&session);
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
