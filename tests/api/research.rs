//! Research tools end to end: a fake SearXNG and fake web pages on 127.0.0.1, the real server,
//! and a scripted model that chains web_search → fetch_url → calculator, checked against seed
//! 000's "Example SSE Stream".

use std::sync::{Arc, Mutex};

use actix_web::{App, HttpResponse, HttpServer, web};
use serde_json::{Value, json};

use crate::fake_upstream::Reply;
use crate::helpers::spawn_app_with;
use crate::sse::{Frame, content, read_all};

/// A fake SearXNG (`/search`) and the pages its results point at (`/gold`, `/fx`).
struct FakeWeb {
    base: String,
    searches: Arc<Mutex<Vec<String>>>,
}

async fn start_fake_web() -> FakeWeb {
    let searches = Arc::new(Mutex::new(Vec::new()));
    let seen = searches.clone();
    let server = HttpServer::new(move || {
        let seen = seen.clone();
        App::new()
            .route(
                "/search",
                web::get().to(move |req: actix_web::HttpRequest| {
                    let seen = seen.clone();
                    async move {
                        let base = format!("http://{}", req.connection_info().host());
                        seen.lock().unwrap().push(req.query_string().to_string());
                        HttpResponse::Ok().json(json!({
                            "query": "gold price",
                            "number_of_results": 2,
                            "answers": ["Gold trades near $2,400 per ounce."],
                            "infoboxes": [{"infobox": "Gold", "content": "Gold is a chemical element."}],
                            "results": [
                                {"url": format!("{base}/gold"), "title": "Gold price today", "content": "Spot gold at $2,400/oz", "engine": "fake"},
                                {"url": format!("{base}/fx"), "title": "EUR/USD", "content": "1 USD = 0.92 EUR", "engine": "fake"},
                                {"url": format!("{base}/third"), "title": "Third", "content": "not fetched", "engine": "fake"}
                            ]
                        }))
                    }
                }),
            )
            .route(
                "/gold",
                web::get().to(|| async {
                    HttpResponse::Ok().content_type("text/html").body(
                        "<html><head><script>tracking()</script></head><body><nav>Menu</nav>\
                         <h1>Gold</h1><p>Spot gold is $2,400 per troy ounce.</p></body></html>",
                    )
                }),
            )
            .route(
                "/fx",
                web::get().to(|| async {
                    HttpResponse::Ok()
                        .content_type("text/html")
                        .body("<html><body><p>1 USD = 0.92 EUR today.</p></body></html>")
                }),
            )
    })
    .workers(1)
    .bind("127.0.0.1:0")
    .unwrap();
    let address = server.addrs()[0];
    actix_web::rt::spawn(server.run());
    FakeWeb {
        base: format!("http://{address}"),
        searches,
    }
}

#[actix_web::test]
async fn a_model_chains_web_search_fetch_url_and_calculator_as_the_seed_example_shows() {
    let web = start_fake_web().await;
    let search_url = web.base.clone();
    let site = web.base.trim_start_matches("http://").to_string();
    let app = spawn_app_with(move |config| {
        config.tools.web_search_url = Some(search_url);
        config.tools.ssrf_allow_list = vec![site];
    })
    .await;
    let gold = format!("{}/gold", web.base);
    app.upstream.script([
        Reply::tool_call(
            "call_1",
            "web_search",
            json!({"query": "gold price per ounce"}),
        ),
        Reply::tool_call("call_2", "fetch_url", json!({"url": gold})),
        Reply::tool_call(
            "call_3",
            "calculator",
            json!({"expression": "3.5 * 2400 * 0.92"}),
        ),
        Reply::text("3.5 troy ounces cost about 7,728 EUR."),
    ]);
    let response = app
        .post_json(
            "/v1/chat/completions",
            &json!({"model": "fake-model", "stream": true,
                    "messages": [{"role": "user", "content": "Gold price for 3.5 oz in EUR?"}],
                    "web_search_options": {"search_context_size": "medium", "max_iterations": 6,
                                           "x_tools": ["web_search", "fetch_url", "calculator"]}}),
        )
        .await;
    assert_eq!(response.status(), 200);
    let frames = read_all(response).await;
    let typed: Vec<Value> = frames
        .iter()
        .map(Frame::json)
        .filter(|j| {
            j["type"]
                .as_str()
                .is_some_and(|t| t.starts_with("x_research."))
        })
        .collect();
    let sequence: Vec<(&str, &str)> = typed
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap(),
                e["name"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        sequence,
        [
            ("x_research.searching", "web_search"),
            ("x_research.result", "web_search"),
            ("x_research.reading", "fetch_url"),
            ("x_research.result", "fetch_url"),
            ("x_research.calculating", "calculator"),
            ("x_research.result", "calculator"),
            ("x_research.complete", ""),
        ]
    );
    assert_eq!(
        typed[0]["arguments"],
        "{\"query\":\"gold price per ounce\"}"
    );
    assert_eq!(typed[1]["tool_call_id"], "call_1");
    assert_eq!(typed[3]["tool_call_id"], "call_2");
    assert_eq!(typed[5]["tool_call_id"], "call_3");
    let complete = &typed[6];
    assert_eq!(complete["iterations"], 4);
    for field in ["elapsed_ms", "input_tokens", "output_tokens", "sources"] {
        assert!(complete[field].is_u64(), "{field} in {complete}");
    }
    let kinds: Vec<String> = frames.iter().map(Frame::kind).collect();
    let complete_at = kinds
        .iter()
        .position(|k| k == "x_research.complete")
        .unwrap();
    let first_content = kinds.iter().position(|k| k == "content").unwrap();
    assert!(complete_at < first_content, "{kinds:?}");
    assert_eq!(kinds.last().unwrap(), "[DONE]");
    assert_eq!(content(&frames), "3.5 troy ounces cost about 7,728 EUR.");

    // What the model was given for each step.
    let received = app.upstream.received();
    let search_result: Value = serde_json::from_str(
        received[1].body["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["content"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        search_result["answer"],
        "Gold trades near $2,400 per ounce."
    );
    assert_eq!(search_result["abstract"], "Gold is a chemical element.");
    assert_eq!(search_result["results"].as_array().unwrap().len(), 3);
    let fetched = search_result["fetched_pages"].as_array().unwrap();
    assert_eq!(fetched.len(), 2, "the top 2 results are fetched");
    assert!(
        fetched[0]["content"]
            .as_str()
            .unwrap()
            .contains("$2,400 per troy ounce")
    );
    assert!(!fetched[0]["content"].as_str().unwrap().contains("tracking"));
    let page: Value = serde_json::from_str(
        received[2].body["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["content"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert!(
        page["content"]
            .as_str()
            .unwrap()
            .contains("Spot gold is $2,400"),
        "{page}"
    );
    let calc: Value = serde_json::from_str(
        received[3].body["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["content"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(calc["result"], 7728.0);
    assert_eq!(web.searches.lock().unwrap().len(), 1);
    assert!(web.searches.lock().unwrap()[0].contains("format=json"));
}

/// The tool names the upstream was offered in its first request.
fn offered(app: &crate::helpers::TestApp) -> Vec<String> {
    app.upstream.received()[0].body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[actix_web::test]
async fn code_search_tools_are_offered_only_where_configured() {
    let bare = spawn_app_with(|_| {}).await;
    bare.upstream.script([Reply::text("ok")]);
    bare.post_json(
        "/v1/chat/completions",
        &json!({"messages": [{"role": "user", "content": "hi"}], "store": false,
                "web_search_options": {"x_tools": ["code_search", "gitlab_code_search", "web_search"]}}),
    )
    .await;
    assert_eq!(
        offered(&bare),
        ["fetch_url", "calculator"],
        "nothing unconfigured is offered"
    );

    let configured = spawn_app_with(|config| {
        config.tools.github_token = Some(secrecy::SecretString::from("ghp_test"));
        config.tools.gitlab_api_url = Some("http://127.0.0.1:9/api/v4".into());
    })
    .await;
    configured.upstream.script([Reply::text("ok")]);
    configured
        .post_json(
            "/v1/chat/completions",
            &json!({"messages": [{"role": "user", "content": "hi"}], "store": false,
                    "web_search_options": {"x_tools": ["code_search", "gitlab_code_search"]}}),
        )
        .await;
    assert_eq!(
        offered(&configured),
        ["code_search", "gitlab_code_search", "calculator"]
    );
}
