//! Screenshots: stored, served as PNG to the chat's owner only, a placeholder (and, for a
//! model that reads images, the image) in the model's context, and the UI's tool card.

use serde_json::json;

use super::*;
use crate::fake_upstream::{Reply, image_urls};

#[actix_web::test]
async fn a_screenshot_is_stored_served_as_png_and_the_model_reads_the_placeholder() {
    let site = Site::start(None).await;
    // screenshots_to_model unset: per model, and this one reads images.
    let app = app_for(&site, |_| {}).await;
    let chat = app.new_chat().await;
    let (act, _) = tools(&app, &chat);
    let opened = call(
        &act,
        json!({"action": "navigate", "url": site.url("/form")}),
    )
    .await;
    let session = session_of(&opened);

    app.upstream.script([
        Reply::tool_call(
            "s1",
            "browser_action",
            json!({"sessionId": session, "action": "screenshot"}),
        ),
        Reply::text("It shows an order form."),
    ]);
    let frames = app
        .send(
            &chat,
            json!({"content": "What does the page look like?",
                   "web_search_options": {"x_tools": ["browser_action"]}}),
        )
        .await;
    let offered = &app.upstream.received()[0].body["tools"];
    let names: Vec<&str> = offered
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(
        names.contains(&"browser_action") && names.contains(&"analyze_page"),
        "{names:?}"
    );
    let result = frames
        .iter()
        .map(|f| f.json())
        .find(|event| event["type"] == "tool_result")
        .expect("a tool_result event");
    assert_eq!(result["success"], true, "{result}");
    let url = result["result"]["screenshot"]["url"]
        .as_str()
        .expect("a screenshot URL");
    assert!(
        url.starts_with(&format!("/chat/api/{chat}/screenshots/shot_")),
        "{url}"
    );
    assert_eq!(result["result"]["url"], site.url("/form"));

    let image = app.get(url).await;
    assert_eq!(image.status(), 200);
    assert_eq!(image.headers()["content-type"], "image/png");
    let bytes = image.bytes().await.unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let other = app.create_user_with_key("mallory").await;
    let stolen = app
        .http
        .get(app.url(url))
        .bearer_auth(other)
        .send()
        .await
        .unwrap();
    assert_eq!(
        stolen.status(),
        404,
        "another user's screenshot is not found"
    );

    let second = &app.upstream.received()[1].body["messages"];
    let tool_message = second
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("the tool result in the model's context");
    let content = tool_message["content"].as_str().unwrap();
    assert!(content.contains("[image displayed above]"), "{content}");
    assert!(
        !content.contains("iVBOR"),
        "no image bytes in the context: {content}"
    );

    // This model reads images: it is shown the screenshot after the result that took it.
    let after = second
        .as_array()
        .unwrap()
        .iter()
        .skip_while(|m| m["role"] != "tool")
        .nth(1)
        .expect("a message after the tool result");
    assert_eq!(after["role"], "user", "{after}");
    let image = after["content"][1]["image_url"]["url"]
        .as_str()
        .unwrap_or_default();
    assert!(image.starts_with("data:image/png;base64,iVBOR"), "{after}");

    // A request that names neither browser tool is not offered them.
    app.upstream.script([Reply::text("Hello.")]);
    app.send(
        &chat,
        json!({"content": "Hi", "web_search_options": {"x_tools": ["calculator"]}}),
    )
    .await;
    let offered = app.upstream.received()[2].body["tools"].to_string();
    assert!(!offered.contains("browser_action"), "{offered}");
}

#[actix_web::test]
async fn the_ui_tool_card_shows_the_page_visited_and_the_screenshot_thumbnail() {
    let site = Site::start(None).await;
    let port = site.port;
    let app = crate::browser::browser_app(move |config| {
        config.tools.ssrf_allow_list = vec![format!("127.0.0.1:{port}")];
        config.browser.chromium_path = Some(crate::browser::chromium());
        config.browser.screenshots_to_model = Some(false);
    })
    .await;
    let chat = app.new_chat().await;
    let (act, _) = tools(&app, &chat);
    let session = session_of(
        &call(
            &act,
            json!({"action": "navigate", "url": site.url("/form")}),
        )
        .await,
    );
    app.upstream.script([
        Reply::tool_call(
            "s1",
            "browser_action",
            json!({"sessionId": session, "action": "screenshot"}),
        ),
        Reply::text("It shows an order form."),
    ]);
    app.send(
        &chat,
        json!({"content": "What does the page look like?",
               "web_search_options": {"x_tools": ["browser_action"]}}),
    )
    .await;
    let context = app.upstream.received()[1].body["messages"].to_string();
    assert!(
        !context.contains("image_url"),
        "screenshots_to_model = false shows the model none: {context}"
    );
    crate::browser::run_scenario(
        &app,
        "browser_tools",
        &[("CHAT_ID", chat), ("PAGE_URL", site.url("/form"))],
    )
    .await;
}

#[actix_web::test]
async fn a_model_that_cannot_read_images_is_shown_no_screenshot_and_its_run_goes_on() {
    let site = Site::start(None).await;
    let app = app_for(&site, |_| {}).await;
    app.upstream.refuse_images();
    let chat = app.new_chat().await;
    let (act, _) = tools(&app, &chat);
    let session = session_of(
        &call(
            &act,
            json!({"action": "navigate", "url": site.url("/form")}),
        )
        .await,
    );
    let screenshot = |id: &str| {
        Reply::tool_call(
            id,
            "browser_action",
            json!({"sessionId": session, "action": "screenshot"}),
        )
    };
    let ask = json!({"content": "What does the page look like?",
                     "web_search_options": {"x_tools": ["browser_action"]}});

    app.upstream
        .script([screenshot("s1"), Reply::text("It shows an order form.")]);
    let frames = app.send(&chat, ask.clone()).await;
    assert_eq!(crate::sse::content(&frames), "It shows an order form.");
    let received = app.upstream.received();
    assert!(
        received.iter().any(|r| !image_urls(&r.body).is_empty()),
        "it was shown the screenshot first, and refused it"
    );
    let answered = &received.last().unwrap().body;
    assert!(image_urls(answered).is_empty(), "{answered}");
    let context = answered["messages"].to_string();
    assert!(context.contains("[image displayed above]"), "{context}");
    assert!(
        context.contains("this model does not read images"),
        "{context}"
    );

    // Known now: the next screenshot is not shown to it at all, and nothing is refused.
    let before = received.len();
    app.upstream
        .script([screenshot("s2"), Reply::text("Still a form.")]);
    let frames = app.send(&chat, ask).await;
    assert_eq!(crate::sse::content(&frames), "Still a form.");
    let later = &app.upstream.received()[before..];
    assert_eq!(later.len(), 2, "no call was refused and made again");
    assert!(later.iter().all(|r| image_urls(&r.body).is_empty()));
}

#[actix_web::test]
async fn screenshots_to_model_true_shows_every_model_the_screenshot_even_one_that_refuses() {
    let site = Site::start(None).await;
    let app = app_for(&site, |config| {
        config.browser.screenshots_to_model = Some(true);
    })
    .await;
    app.upstream.refuse_images();
    let chat = app.new_chat().await;
    let (act, _) = tools(&app, &chat);
    let session = session_of(
        &call(
            &act,
            json!({"action": "navigate", "url": site.url("/form")}),
        )
        .await,
    );
    app.upstream.script([
        Reply::tool_call(
            "s1",
            "browser_action",
            json!({"sessionId": session, "action": "screenshot"}),
        ),
        Reply::text("Not reached."),
    ]);
    let frames = app
        .send(
            &chat,
            json!({"content": "What does the page look like?",
                   "web_search_options": {"x_tools": ["browser_action"]}}),
        )
        .await;
    let error = frames
        .iter()
        .find(|f| f.kind() == "error")
        .expect("an error event: the override is not taken back")
        .json();
    assert_eq!(
        error["error"]["code"], "model_cannot_read_images",
        "{error}"
    );
    let received = app.upstream.received();
    let last = &received.last().unwrap().body;
    assert!(!image_urls(last).is_empty(), "it was shown the screenshot");
}
