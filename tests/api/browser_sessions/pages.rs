//! A form filled and submitted with the selectors analyze_page lists, read back with extract.

use serde_json::json;

use super::*;

#[actix_web::test]
async fn a_form_is_filled_and_submitted_with_the_selectors_analyze_page_lists() {
    let site = Site::start(None).await;
    let app = app_for(&site, |_| {}).await;
    let chat = app.new_chat().await;
    let (act, analyze) = tools(&app, &chat);

    let opened = call(
        &act,
        json!({"action": "navigate", "url": site.url("/form")}),
    )
    .await;
    let session = session_of(&opened);
    assert_eq!(opened["title"], "Order", "{opened}");
    assert_eq!(opened["url"], site.url("/form"));

    let page = call(&analyze, json!({"sessionId": session})).await;
    assert_eq!(page["title"], "Order", "{page}");
    assert!(
        page["text"].as_str().unwrap().contains("Place an order"),
        "{page}"
    );
    assert_eq!(page["headings"][0]["text"], "Place an order");
    let fields = page["forms"][0]["fields"]
        .as_array()
        .expect("the form's fields");
    let field = |name: &str| {
        fields
            .iter()
            .find(|f| f["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {fields:?}"))
    };
    assert_eq!(field("name")["label"], "Your name");
    assert_eq!(field("name")["required"], true);
    assert_eq!(field("colour")["options"][1]["text"], "green");
    let button = fields
        .iter()
        .find(|f| f["tag"] == "button")
        .expect("the submit button");

    let typed = call(
        &act,
        json!({"sessionId": session, "action": "type", "selector": field("name")["selector"], "text": "Ada"}),
    )
    .await;
    assert!(
        typed["result"]
            .as_str()
            .unwrap()
            .starts_with("typed 3 characters"),
        "{typed}"
    );
    let selected = call(
        &act,
        json!({"sessionId": session, "action": "select", "selector": field("colour")["selector"], "value": "green"}),
    )
    .await;
    assert!(selected["error"].is_null(), "{selected}");
    let clicked = call(
        &act,
        json!({"sessionId": session, "action": "click", "selector": button["selector"]}),
    )
    .await;
    assert_eq!(clicked["url"], site.url("/submit"), "{clicked}");
    assert_eq!(clicked["title"], "Thanks");
    assert!(
        clicked["result"]
            .as_str()
            .unwrap()
            .contains("the page is now"),
        "{clicked}"
    );

    let read = call(
        &act,
        json!({"sessionId": session, "action": "extract", "selector": "#done"}),
    )
    .await;
    assert_eq!(read["text"], "Thanks Ada, you chose g.", "{read}");
    assert_eq!(site.hits("/submit"), 1);

    let missing = call(
        &act,
        json!({"sessionId": session, "action": "click", "selector": "#nowhere"}),
    )
    .await;
    assert_eq!(missing["code"], "no_match", "{missing}");
    assert!(
        missing["error"].as_str().unwrap().contains("#nowhere"),
        "{missing}"
    );
    let back = call(&act, json!({"sessionId": session, "action": "back"})).await;
    assert_eq!(back["url"], site.url("/form"), "{back}");
}

#[actix_web::test]
async fn analyze_page_names_the_url_the_first_50_links_and_interactive_selectors_that_click() {
    let site = Site::start(None).await;
    let app = app_for(&site, |_| {}).await;
    let chat = app.new_chat().await;
    let (act, analyze) = tools(&app, &chat);
    let session = session_of(
        &call(
            &act,
            json!({"action": "navigate", "url": site.url("/links")}),
        )
        .await,
    );

    let page = call(&analyze, json!({"sessionId": session})).await;
    assert_eq!(page["url"], site.url("/links"), "{page}");
    let links = page["links"].as_array().expect("the links");
    assert_eq!(links.len(), 50, "the first 50 of {LINK_COUNT}: {links:?}");
    assert_eq!(links[0]["url"], site.url("/to/1"));
    assert_eq!(links[0]["text"], "Link 1");
    assert_eq!(links[49]["url"], site.url("/to/50"));

    let interactive = page["interactive"].as_array().expect("the elements");
    assert!(
        interactive.iter().any(|e| e["tag"] == "a"),
        "links are interactive: {interactive:?}"
    );
    let button = interactive
        .iter()
        .find(|e| e["tag"] == "button" && e["text"] == "Reveal")
        .unwrap_or_else(|| panic!("the button in {interactive:?}"));
    let clicked = call(
        &act,
        json!({"sessionId": session, "action": "click", "selector": button["selector"]}),
    )
    .await;
    assert!(clicked["error"].is_null(), "{clicked}");
    let read = call(
        &act,
        json!({"sessionId": session, "action": "extract", "selector": "#revealed"}),
    )
    .await;
    assert_eq!(
        read["text"], "revealed",
        "the listed selector found the button"
    );
}
