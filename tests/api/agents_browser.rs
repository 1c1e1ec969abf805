//! Issue 50, point 2: the tool catalog says what each tool needs, whether this server has it
//! and whether a chat may turn it on; the agent form picks its model from the model servers'
//! list and the chat's header names its agent; a chat turns the browser on in its settings and
//! the browser call's page and screenshot show without unfolding the answer's tool calls (in a
//! real Chromium, with the fake upstream scripting the call).

use std::time::Duration;

use actix_web::{App, HttpResponse, HttpServer, web};
use colloquy::tools::Tool;
use colloquy::tools::browser::BrowserAction;
use entities::ids::ChatId;
use serde_json::{Value, json};

use crate::client::Call;

use crate::browser::{browser_app, chromium, run_scenario};
use crate::fake_upstream::Reply;
use crate::helpers::spawn_app_with;

/// Longest the browser's first navigation may take before the test fails instead of hanging.
const STEP: Duration = Duration::from_secs(60);

/// The catalog's entry named `name` in `list` (`tools` or `unavailable`).
fn entry<'a>(catalog: &'a Value, list: &str, name: &str) -> Option<&'a Value> {
    catalog[list]
        .as_array()
        .expect("a list of tools")
        .iter()
        .find(|tool| tool["name"] == name)
}

#[actix_web::test]
async fn the_tool_catalog_says_what_each_tool_needs_whether_it_is_here_and_whether_a_chat_may_turn_it_on()
 {
    let app = spawn_app_with(|config| {
        config.browser.chromium_path = Some("/nonexistent/chromium".into());
    })
    .await;
    let catalog: Value = app.api().tools().read_json().await;

    let search = entry(&catalog, "tools", "web_search").expect("web_search");
    assert_eq!(search["needs"], "a search engine", "{search}");
    assert_eq!(search["available"], true);
    assert_eq!(search["opt_in"], true, "a chat may turn it on");
    assert!(
        search["summary"].as_str().unwrap().len() < search["description"].as_str().unwrap().len(),
        "a short summary beside the model's description: {search}"
    );
    let artifact = entry(&catalog, "tools", "create_artifact").expect("create_artifact");
    assert_eq!(artifact["opt_in"], false, "every chat has it: {artifact}");
    assert_eq!(artifact["needs"], Value::Null);
    for tool in catalog["tools"].as_array().unwrap() {
        assert!(
            !tool["summary"].as_str().unwrap_or_default().is_empty(),
            "{tool}"
        );
    }

    // The browser without Chromium: listed as unavailable, saying what it needs and why; its
    // first tool is the one a chat turns it on by.
    assert!(entry(&catalog, "tools", "browser_action").is_none());
    let browser = entry(&catalog, "unavailable", "browser_action").expect("the browser");
    assert_eq!(browser["available"], false);
    assert_eq!(browser["needs"], "Chromium");
    assert_eq!(browser["opt_in"], true);
    assert_eq!(browser["origin"], "platform");
    assert!(
        browser["reason"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/chromium"),
        "{browser}"
    );
    assert_eq!(
        entry(&catalog, "unavailable", "analyze_page").unwrap()["opt_in"],
        false,
        "turned on with browser_action"
    );
    // Email without SMTP, SQL without a database: what they need, in a person's words and
    // in the configuration's.
    let email = entry(&catalog, "unavailable", "send_email").expect("send_email");
    assert_eq!(email["needs"], "SMTP");
    assert!(
        email["reason"].as_str().unwrap().contains("[email]"),
        "{email}"
    );
    let sql = entry(&catalog, "unavailable", "execute_sql").expect("execute_sql");
    assert_eq!(sql["needs"], "a database");

    // No name in `unavailable` may be named by an agent, and none is also in `tools`.
    for tool in catalog["unavailable"].as_array().unwrap() {
        let name = tool["name"].as_str().unwrap();
        assert!(entry(&catalog, "tools", name).is_none(), "{name}");
        let refused = app
            .api()
            .create_agent()
            .json(&json!({"name": format!("With {name}"), "enabled_tools": [name]}))
            .call()
            .await;
        assert_eq!(refused.status(), 400, "{name}");
    }
}

#[actix_web::test]
async fn with_chromium_the_browser_is_available_and_with_no_search_engine_web_search_is_not() {
    let app = spawn_app_with(|config| {
        config.browser.chromium_path = Some(chromium());
        config.tools.web_search_provider = Some(colloquy::config::WebSearchProvider::Disabled);
    })
    .await;
    let catalog: Value = app.api().tools().read_json().await;
    let browser = entry(&catalog, "tools", "browser_action").expect("the browser");
    assert_eq!(browser["available"], true, "{browser}");
    assert_eq!(browser["needs"], "Chromium");
    assert!(entry(&catalog, "unavailable", "browser_action").is_none());

    let search = entry(&catalog, "tools", "web_search").expect("web_search");
    assert_eq!(search["available"], false, "{search}");
    assert!(
        search["reason"].as_str().unwrap().contains("none"),
        "{search}"
    );
}

#[actix_web::test]
async fn an_agent_made_with_a_model_picked_from_the_list_answers_with_it_and_the_header_names_it() {
    let app = browser_app(|config| {
        config.llm.model = "fake-model".into();
        config.llm.providers = vec![crate::providers::provider(
            "a",
            &config.llm.base_url,
            &["fake-model", "writer-model"],
        )];
    })
    .await;
    app.upstream.script([Reply::text("Written by the writer.")]);
    run_scenario(&app, "agent_model", &[]).await;

    let agents: Value = app.api().agents().read_json().await;
    let writer = agents["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|agent| agent["name"] == "Writer")
        .expect("the agent made in the UI");
    assert_eq!(writer["model"], "writer-model", "{writer}");
    let asked: Vec<Value> = app
        .upstream
        .received()
        .into_iter()
        .filter(|r| r.path == "/v1/chat/completions")
        .map(|r| r.body["model"].clone())
        .collect();
    assert_eq!(
        asked,
        ["writer-model"],
        "the agent's chat asks for its model"
    );
}

/// A page for the browser to visit, on 127.0.0.1:0.
async fn serve_page() -> u16 {
    let server = HttpServer::new(|| {
        App::new().default_service(web::to(|| async {
            HttpResponse::Ok().content_type("text/html").body(
                "<!doctype html><html><head><title>Menu</title></head>\
                 <body><h1>Today's menu</h1><p>Soup, bread and cheese.</p></body></html>",
            )
        }))
    })
    .workers(1)
    .bind("127.0.0.1:0")
    .expect("bind a page");
    let port = server.addrs()[0].port();
    actix_web::rt::spawn(server.run());
    port
}

#[actix_web::test]
async fn a_chat_turns_the_browser_on_in_its_settings_and_the_call_s_page_shows_unfolded() {
    let port = serve_page().await;
    let page_url = format!("http://127.0.0.1:{port}/menu");
    let app = browser_app(move |config| {
        config.tools.ssrf_allow_list = vec![format!("127.0.0.1:{port}")];
        config.browser.chromium_path = Some(chromium());
        config.browser.screenshots_to_model = Some(false);
    })
    .await;
    let chat = app.new_chat().await;
    // The chat's browser session, at the page: the scripted call takes its screenshot.
    let act = BrowserAction::new(
        app.state.launcher.browsers.clone(),
        ChatId::from_string(&chat),
    );
    let opened = tokio::time::timeout(
        STEP,
        act.run(json!({"action": "navigate", "url": page_url})),
    )
    .await
    .expect("the page opens in time")
    .expect("the page opens");
    let session = opened["sessionId"].as_str().expect("a session").to_string();
    app.upstream.script([
        Reply::tool_call(
            "b1",
            "browser_action",
            json!({"sessionId": session, "action": "screenshot"}),
        ),
        Reply::text("The menu has soup."),
    ]);

    run_scenario(
        &app,
        "chat_browser",
        &[("CHAT_ID", chat), ("PAGE_URL", page_url)],
    )
    .await;

    let first = app
        .upstream
        .received()
        .into_iter()
        .find(|r| r.path == "/v1/chat/completions")
        .expect("the chat's request");
    let offered: Vec<&str> = first.body["tools"]
        .as_array()
        .expect("tools offered")
        .iter()
        .filter_map(|tool| tool["function"]["name"].as_str())
        .collect();
    assert!(
        offered.contains(&"browser_action") && offered.contains(&"analyze_page"),
        "the browser, turned on in the chat's settings: {offered:?}"
    );
}
