//! Each action's variants (scroll, wait, screenshot, extract, back), its errors, and the
//! timeouts that bound an action and analyze_page on a page that does not answer.

use std::time::{Duration, Instant};

use serde_json::json;

use super::*;

/// A PNG's height in pixels, from its IHDR chunk (after the 8-byte signature, the chunk's
/// length and type, and the width).
fn png_height(png: &[u8]) -> u32 {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(&png[12..16], b"IHDR");
    u32::from_be_bytes(png[20..24].try_into().unwrap())
}

#[actix_web::test]
async fn scroll_wait_screenshot_extract_and_back_do_what_they_say() {
    let site = Site::start(None).await;
    let app = app_for(&site, |config| config.browser.max_wait_ms = 3_000).await;
    let chat = app.new_chat().await;
    let (act, _) = tools(&app, &chat);
    let session = session_of(
        &call(
            &act,
            json!({"action": "navigate", "url": site.url("/form")}),
        )
        .await,
    );
    let act_on = |arguments: serde_json::Value| {
        let mut arguments = arguments;
        arguments["sessionId"] = json!(session);
        call(&act, arguments)
    };
    let opened = act_on(json!({"action": "navigate", "url": site.url("/long")})).await;
    assert_eq!(opened["title"], "Long", "{opened}");
    // The page shows its scroll position from its scroll events, which Chromium dispatches
    // on a later frame: the readout is polled until it says what is expected (or 5 s pass).
    let position_until = |wanted: &'static str, holds: Box<dyn Fn(u64) -> bool>| {
        let act_on = &act_on;
        async move {
            let deadline = Instant::now() + Duration::from_secs(5);
            loop {
                let read = act_on(json!({"action": "extract", "selector": "#pos"})).await;
                let at: u64 = read["text"]
                    .as_str()
                    .and_then(|t| t.parse().ok())
                    .unwrap_or_else(|| panic!("{read}"));
                if holds(at) {
                    return at;
                }
                assert!(Instant::now() < deadline, "{wanted}: the page is at {at}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };

    let to_far = act_on(json!({"action": "scroll", "selector": "#far"})).await;
    assert_eq!(
        to_far["result"],
        format!(
            "scrolled #far into view; the page stayed at {}",
            site.url("/long")
        ),
        "{to_far}"
    );
    let middle = position_until("#far is deep in the page", Box::new(|at| at > 1_000)).await;
    act_on(json!({"action": "scroll", "direction": "up"})).await;
    position_until("scrolled up", Box::new(move |at| at < middle)).await;
    let bottom = act_on(json!({"action": "scroll", "direction": "bottom"})).await;
    assert!(
        bottom["result"]
            .as_str()
            .unwrap()
            .starts_with("scrolled to the bottom"),
        "{bottom}"
    );
    position_until("the bottom is past #far", Box::new(move |at| at > middle)).await;
    act_on(json!({"action": "scroll", "direction": "top"})).await;
    position_until("back at the top", Box::new(|at| at == 0)).await;

    // extract without a selector reads the whole page's text, cut at 10,000 characters.
    let everything = act_on(json!({"action": "extract"})).await;
    let text = everything["text"].as_str().expect("the page's text");
    assert_eq!(text.chars().count(), 10_000, "{everything}");
    assert!(text.contains("Paragraph 001 of the long page"));
    assert_eq!(everything["truncated"], true);

    // A full-page screenshot is taller than the viewport's.
    let png = |shot: serde_json::Value| {
        let id = shot["screenshot"]["id"]
            .as_str()
            .unwrap_or_else(|| panic!("{shot}"))
            .to_string();
        let path = app
            .data_dir
            .path()
            .join("screenshots")
            .join(&chat)
            .join(format!("{id}.png"));
        std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
    };
    let viewport = png(act_on(json!({"action": "screenshot"})).await);
    let full = png(act_on(json!({"action": "screenshot", "full_page": true})).await);
    assert_eq!(
        png_height(&viewport),
        800,
        "the configured viewport's height"
    );
    assert!(
        png_height(&full) > 3 * png_height(&viewport),
        "full page {} px, viewport {} px",
        png_height(&full),
        png_height(&viewport)
    );

    // A selector that is not CSS is an error that says so.
    let invalid = act_on(json!({"action": "click", "selector": "##not css"})).await;
    assert_eq!(invalid["code"], "INVALID_ARGUMENTS", "{invalid}");
    assert!(
        invalid["error"]
            .as_str()
            .unwrap()
            .contains("is not a valid CSS selector"),
        "{invalid}"
    );

    // back returns to the form, and says so.
    let back = act_on(json!({"action": "back"})).await;
    assert_eq!(back["url"], site.url("/form"), "{back}");
    assert_eq!(back["title"], "Order");
    assert_eq!(
        back["result"],
        format!(
            "went back; the page is now {} (\"Order\")",
            site.url("/form")
        )
    );

    // wait {selector} waits for an element a script adds 300 ms after the load.
    act_on(json!({"action": "navigate", "url": site.url("/later")})).await;
    let started = Instant::now();
    let waited = act_on(json!({"action": "wait", "selector": "#late"})).await;
    assert!(waited["error"].is_null(), "{waited}");
    assert!(
        waited["result"]
            .as_str()
            .unwrap()
            .starts_with("#late is on the page"),
        "{waited}"
    );
    assert!(started.elapsed() < Duration::from_secs(3), "{waited}");
    let late = act_on(json!({"action": "extract", "selector": "#late"})).await;
    assert_eq!(late["text"], "arrived");
}

#[actix_web::test]
async fn an_action_and_analyze_page_on_a_page_that_does_not_answer_time_out() {
    let site = Site::start(None).await;
    let app = app_for(&site, |config| config.browser.action_timeout_secs = 1).await;
    let chat = app.new_chat().await;
    let (act, analyze) = tools(&app, &chat);
    let session = session_of(
        &call(
            &act,
            json!({"action": "navigate", "url": site.url("/busy")}),
        )
        .await,
    );

    // The click starts a script that holds the page's thread for 6 s.
    let started = Instant::now();
    let clicked = call(
        &act,
        json!({"sessionId": session, "action": "click", "selector": "#spin"}),
    )
    .await;
    assert_eq!(clicked["code"], "timeout", "{clicked}");
    assert!(
        clicked["error"]
            .as_str()
            .unwrap()
            .contains("longer than 1 seconds"),
        "{clicked}"
    );
    assert!(started.elapsed() < Duration::from_secs(3), "bounded");

    let started = Instant::now();
    let analyzed = call(&analyze, json!({"sessionId": session})).await;
    assert_eq!(analyzed["code"], "timeout", "{analyzed}");
    assert!(started.elapsed() < Duration::from_secs(3), "bounded");
}
