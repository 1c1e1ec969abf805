//! Research tools end to end: fake search engines and fake web pages on 127.0.0.1, the real server,
//! and a scripted model: one that chains web_search → fetch_url → calculator, checked against the
//! spec's example stream (docs/spec.md#research-events), and one web_search call per provider
//! (DuckDuckGo, the default; SearXNG; Brave; none), each engine answering in its real response
//! shape, and told a request's `user_location` as it can be (Brave's country and headers,
//! SearXNG's `language` locale, DuckDuckGo's `kl` region).

use std::sync::{Arc, Mutex};

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, spawn_app_with};
use crate::sse::{Frame, content, read_all};

/// The Brave Search API key the fake Brave accepts.
const BRAVE_KEY: &str = "BSA-test-key";

/// Fake search engines on one server — SearXNG (`/search`), DuckDuckGo's Instant Answer API
/// (`/`) and HTML endpoint (`/html/`), Brave (`/res/v1/web/search`) — and the pages their
/// results point at (`/gold`, `/fx`).
pub(crate) struct FakeWeb {
    pub(crate) base: String,
    /// Each engine request: `METHOD path?query`, then the form body or Brave's token.
    searches: Arc<Mutex<Vec<String>>>,
}

impl FakeWeb {
    fn searches(&self) -> Vec<String> {
        self.searches.lock().unwrap().clone()
    }

    /// Where this server's address goes in the SSRF allow-list.
    pub(crate) fn site(&self) -> String {
        self.base.trim_start_matches("http://").to_string()
    }
}

type Seen = Arc<Mutex<Vec<String>>>;

fn base_of(req: &HttpRequest) -> String {
    format!("http://{}", req.connection_info().host())
}

fn record(seen: &Seen, req: &HttpRequest, extra: &str) {
    seen.lock().unwrap().push(format!(
        "{} {}?{} {extra}",
        req.method(),
        req.path(),
        req.query_string()
    ));
}

async fn searxng(req: HttpRequest, seen: web::Data<Seen>) -> HttpResponse {
    record(&seen, &req, "");
    let base = base_of(&req);
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

/// DuckDuckGo's Instant Answer API, as `api.duckduckgo.com/?q=…&format=json` answers.
async fn duckduckgo_instant_answer(req: HttpRequest, seen: web::Data<Seen>) -> HttpResponse {
    record(&seen, &req, "");
    let known = !req.query_string().contains("bots");
    let body = if known {
        json!({
            "Abstract": "", "AbstractSource": "Wikipedia",
            "AbstractText": "Gold is a chemical element with the symbol Au.",
            "AbstractURL": "https://en.wikipedia.org/wiki/Gold",
            "Answer": "Gold trades near $2,400 per ounce.", "AnswerType": "",
            "Definition": "", "Entity": "chemical element", "Heading": "Gold",
            "Image": "/i/gold.png", "Infobox": "", "Redirect": "",
            "RelatedTopics": [
                {"FirstURL": "https://duckduckgo.com/Silver", "Icon": {"Height": "", "URL": "", "Width": ""},
                 "Result": "<a href=\"https://duckduckgo.com/Silver\">Silver</a> A chemical element.",
                 "Text": "Silver - A chemical element with the symbol Ag."}
            ],
            "Results": [], "Type": "A", "meta": {"id": "wikipedia_fathead"}
        })
    } else {
        json!({"Abstract": "", "AbstractText": "", "AbstractURL": "", "Answer": "", "Definition": "",
               "Heading": "", "RelatedTopics": [], "Results": [], "Type": ""})
    };
    // DuckDuckGo labels its JSON as JavaScript.
    HttpResponse::Ok()
        .content_type("application/x-javascript")
        .body(body.to_string())
}

/// A redirect link as DuckDuckGo's results page writes them.
fn duckduckgo_redirect(target: &str) -> String {
    let encoded: String = url::form_urlencoded::byte_serialize(target.as_bytes()).collect();
    format!("//duckduckgo.com/l/?uddg={encoded}&amp;rut=8c1e5a0f")
}

/// DuckDuckGo's HTML endpoint: an ad, then results through its redirects; the anti-bot
/// challenge (HTTP 202) for queries about bots.
async fn duckduckgo_html(req: HttpRequest, form: String, seen: web::Data<Seen>) -> HttpResponse {
    record(&seen, &req, &form);
    if form.contains("bots") {
        return HttpResponse::Accepted().content_type("text/html").body(
            "<html><body><form id=\"challenge-form\" action=\"//duckduckgo.com/anomaly.js?sv=html&amp;cc=sre\" \
             method=\"POST\"><div class=\"anomaly-modal__modal\">Unfortunately, bots use DuckDuckGo too.</div>\
             </form></body></html>",
        );
    }
    let base = base_of(&req);
    let result = |target: &str, title: &str, snippet: &str| {
        let href = duckduckgo_redirect(target);
        format!(
            "<div class=\"result results_links results_links_deep web-result \">\
             <div class=\"links_main links_deep result__body\"><h2 class=\"result__title\">\
             <a rel=\"nofollow\" class=\"result__a\" href=\"{href}\">{title}</a></h2>\
             <div class=\"result__extras\"><a class=\"result__url\" href=\"{href}\">{target}</a></div>\
             <a class=\"result__snippet\" href=\"{href}\">{snippet}</a></div></div>"
        )
    };
    let page = format!(
        "<!DOCTYPE html><html><head><title>gold price at DuckDuckGo</title></head><body>\
         <div id=\"links\" class=\"results\">\
         <div class=\"result results_links results_links_deep result--ad \"><div class=\"links_main links_deep result__body\">\
         <h2 class=\"result__title\"><a class=\"result__a\" href=\"https://duckduckgo.com/y.js?ad_domain=bullion.example&amp;u3=x\">Buy Gold Bars</a></h2>\
         <a class=\"result__snippet\" href=\"https://duckduckgo.com/y.js?ad_domain=bullion.example\">Sponsored</a></div></div>\
         {}{}{}</div></body></html>",
        result(
            &format!("{base}/gold"),
            "Gold Price Today &amp; Charts",
            "Spot <b>gold</b> at $2,400/oz"
        ),
        result(&format!("{base}/fx"), "EUR/USD", "1 USD = 0.92 EUR"),
        result(&format!("{base}/third?a=1&b=2"), "Third", "not fetched"),
    );
    HttpResponse::Ok()
        .content_type("text/html; charset=UTF-8")
        .body(page)
}

/// Brave's `/res/v1/web/search`; a wrong token gets what Brave answers one (422,
/// `SUBSCRIPTION_TOKEN_INVALID`).
async fn brave(req: HttpRequest, seen: web::Data<Seen>) -> HttpResponse {
    let token = req
        .headers()
        .get("x-subscription-token")
        .and_then(|t| t.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let accept = req
        .headers()
        .get("accept")
        .and_then(|t| t.to_str().ok())
        .unwrap_or_default()
        .to_string();
    // A user's city, when a request told it (`user_location`).
    let city = req
        .headers()
        .get("x-loc-city")
        .and_then(|t| t.to_str().ok())
        .map(|city| format!(" city={city}"))
        .unwrap_or_default();
    record(&seen, &req, &format!("token={token} accept={accept}{city}"));
    if token != BRAVE_KEY {
        return HttpResponse::UnprocessableEntity().json(json!({
            "type": "ErrorResponse",
            "error": {"id": "0c4a1b7e-5f2d-4e0a-9a51-3f1c2d9e8b70", "status": 422,
                      "code": "SUBSCRIPTION_TOKEN_INVALID",
                      "detail": "The provided subscription token is invalid.",
                      "meta": {"component": "authentication"}},
            "time": 1754364294
        }));
    }
    let base = base_of(&req);
    HttpResponse::Ok().json(json!({
        "query": {"original": "gold price", "more_results_available": true},
        "mixed": {"type": "mixed", "main": [{"type": "web", "index": 0, "all": false}]},
        "type": "search",
        "web": {"type": "search", "family_friendly": true, "results": [
            {"title": "<strong>Gold</strong> Price Today", "url": format!("{base}/gold"),
             "description": "Spot <strong>gold</strong> trades at $2,400/oz &amp; rising.",
             "type": "search_result", "subtype": "generic", "language": "en", "family_friendly": true,
             "meta_url": {"scheme": "http", "netloc": "127.0.0.1", "path": "› gold"}, "age": "1 hour ago"},
            {"title": "EUR/USD", "url": format!("{base}/fx"), "description": "1 USD = 0.92 EUR",
             "type": "search_result"}
        ]},
        "infobox": {"type": "graph", "results": [
            {"type": "infobox", "title": "Gold", "description": "Chemical element",
             "long_desc": "Gold is a <strong>chemical element</strong> with the symbol Au.",
             "url": "https://en.wikipedia.org/wiki/Gold"}
        ]}
    }))
}

pub(crate) async fn start_fake_web() -> FakeWeb {
    let searches: Seen = Arc::new(Mutex::new(Vec::new()));
    let seen = web::Data::new(searches.clone());
    let server = HttpServer::new(move || {
        App::new()
            .app_data(seen.clone())
            .route("/search", web::get().to(searxng))
            .route("/", web::get().to(duckduckgo_instant_answer))
            .route("/html/", web::post().to(duckduckgo_html))
            .route("/res/v1/web/search", web::get().to(brave))
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
    let site = web.site();
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
        .openai()
        .chat_completions()
        .json(&json!({"model": "fake-model", "stream": true,
                    "messages": [{"role": "user", "content": "Gold price for 3.5 oz in EUR?"}],
                    "web_search_options": {"search_context_size": "medium", "max_iterations": 6,
                                           "x_tools": ["web_search", "fetch_url", "calculator"]}}))
        .call()
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
    // A single page comes back as its text itself (docs/spec.md#fetch_url), not JSON.
    let page = received[2].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(page.starts_with("Gold"), "{page}");
    assert!(page.contains("Spot gold is $2,400"), "{page}");
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
    let searches = web.searches();
    assert_eq!(searches.len(), 1, "{searches:?}");
    assert!(searches[0].starts_with("GET /search?"), "{searches:?}");
    assert!(searches[0].contains("format=json"));
}

/// The tool names the upstream was offered in its first request.
fn offered(app: &TestApp) -> Vec<String> {
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
    bare.openai().chat_completions().json(&json!({"messages": [{"role": "user", "content": "hi"}], "store": false,
                "web_search_options": {"x_tools": ["code_search", "gitlab_code_search", "web_search"]}})).call()
    .await;
    assert_eq!(
        offered(&bare),
        ["web_search", "fetch_url", "calculator"],
        "nothing unconfigured is offered; web_search always is (DuckDuckGo by default)"
    );

    let configured = spawn_app_with(|config| {
        config.tools.github_token = Some(secrecy::SecretString::from("ghp_test"));
        config.tools.gitlab_api_url = Some("http://127.0.0.1:9/api/v4".into());
    })
    .await;
    configured.upstream.script([Reply::text("ok")]);
    configured
        .openai()
        .chat_completions()
        .json(
            &json!({"messages": [{"role": "user", "content": "hi"}], "store": false,
                    "web_search_options": {"x_tools": ["code_search", "gitlab_code_search"]}}),
        )
        .call()
        .await;
    assert_eq!(
        offered(&configured),
        ["code_search", "gitlab_code_search", "calculator"]
    );
}

/// Runs one `/v1` turn in which the model calls web_search for `query`; returns the tool
/// result the model was sent in its next request.
async fn web_search_result(app: &TestApp, query: &str) -> Value {
    web_search_result_with(app, query, json!({"x_tools": ["web_search"]})).await
}

/// `web_search_result` with the request's `web_search_options` given.
async fn web_search_result_with(app: &TestApp, query: &str, options: Value) -> Value {
    app.upstream.script([
        Reply::tool_call("call_1", "web_search", json!({"query": query})),
        Reply::text("Done."),
    ]);
    let before = app.upstream.received().len();
    let response = app
        .openai()
        .chat_completions()
        .json(&json!({"model": "fake-model",
                    "messages": [{"role": "user", "content": "Search, please."}],
                    "web_search_options": options}))
        .call()
        .await;
    assert_eq!(response.status(), 200, "{:?}", response.text().await);
    let received = app.upstream.received();
    let next = &received[before + 1].body;
    let tool = next["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == "call_1")
        .unwrap_or_else(|| panic!("no web_search result in {next}"));
    serde_json::from_str(tool["content"].as_str().unwrap()).unwrap()
}

/// The `(title, url, snippet)` of a web_search result's results.
fn results_of(result: &Value) -> Vec<(String, String, String)> {
    result["results"]
        .as_array()
        .unwrap_or_else(|| panic!("no results in {result}"))
        .iter()
        .map(|r| {
            let field = |name: &str| r[name].as_str().unwrap().to_string();
            (field("title"), field("url"), field("snippet"))
        })
        .collect()
}

fn triple(title: &str, url: String, snippet: &str) -> (String, String, String) {
    (title.to_string(), url, snippet.to_string())
}

/// An app whose DuckDuckGo endpoints are `web`'s, on the default provider.
async fn duckduckgo_app(web: &FakeWeb) -> TestApp {
    let (base, site) = (web.base.clone(), web.site());
    spawn_app_with(move |config| {
        config.tools.duckduckgo_api_url = base.clone();
        config.tools.duckduckgo_html_url = base;
        config.tools.ssrf_allow_list = vec![site];
    })
    .await
}

#[actix_web::test]
async fn duckduckgo_on_the_defaults_gives_results_from_its_page_and_the_answer_from_its_api() {
    let web = start_fake_web().await;
    let app = duckduckgo_app(&web).await;
    assert!(
        app.config.tools.web_search_provider.is_none(),
        "no provider named"
    );
    let result = web_search_result(&app, "gold price per ounce").await;
    assert_eq!(
        results_of(&result),
        [
            triple(
                "Gold Price Today & Charts",
                format!("{}/gold", web.base),
                "Spot gold at $2,400/oz"
            ),
            triple("EUR/USD", format!("{}/fx", web.base), "1 USD = 0.92 EUR"),
            triple(
                "Third",
                format!("{}/third?a=1&b=2", web.base),
                "not fetched"
            ),
        ],
        "redirects decoded, the ad left out"
    );
    assert_eq!(result["answer"], "Gold trades near $2,400 per ounce.");
    assert_eq!(
        result["abstract"],
        "Gold is a chemical element with the symbol Au."
    );
    let fetched = result["fetched_pages"].as_array().unwrap();
    assert_eq!(fetched.len(), 2, "the top 2 results are fetched: {result}");
    assert_eq!(fetched[0]["url"], format!("{}/gold", web.base));
    assert!(
        fetched[0]["content"]
            .as_str()
            .unwrap()
            .contains("$2,400 per troy ounce")
    );
    let mut searches = web.searches();
    searches.sort();
    assert_eq!(searches.len(), 2, "both endpoints asked once: {searches:?}");
    assert!(
        searches[0]
            .starts_with("GET /?q=gold+price+per+ounce&format=json&no_html=1&skip_disambig=1"),
        "{searches:?}"
    );
    assert_eq!(searches[1], "POST /html/? q=gold+price+per+ounce");
}

#[actix_web::test]
async fn a_duckduckgo_anti_bot_challenge_is_a_rate_limited_error_not_empty_results() {
    let web = start_fake_web().await;
    let app = duckduckgo_app(&web).await;
    let result = web_search_result(&app, "are there bots").await;
    assert_eq!(result["code"], "rate_limited", "{result}");
    assert!(
        result["error"]
            .as_str()
            .unwrap()
            .contains("anti-bot challenge"),
        "{result}"
    );
    assert!(result.get("results").is_none(), "{result}");
}

#[actix_web::test]
async fn brave_search_is_asked_with_its_key_and_its_results_reach_the_model_as_plain_text() {
    let web = start_fake_web().await;
    let (base, site) = (web.base.clone(), web.site());
    let app = spawn_app_with(move |config| {
        config.tools.web_search_provider = Some(colloquy::config::WebSearchProvider::Brave);
        config.tools.brave_api_url = base;
        config.tools.brave_api_key = Some(secrecy::SecretString::from(BRAVE_KEY));
        config.tools.ssrf_allow_list = vec![site];
    })
    .await;
    let result = web_search_result(&app, "gold price").await;
    assert_eq!(
        results_of(&result),
        [
            triple(
                "Gold Price Today",
                format!("{}/gold", web.base),
                "Spot gold trades at $2,400/oz & rising."
            ),
            triple("EUR/USD", format!("{}/fx", web.base), "1 USD = 0.92 EUR"),
        ]
    );
    assert_eq!(
        result["abstract"],
        "Gold is a chemical element with the symbol Au."
    );
    assert_eq!(result["answer"], "");
    assert_eq!(result["fetched_pages"].as_array().unwrap().len(), 2);
    assert_eq!(
        web.searches(),
        [format!(
            "GET /res/v1/web/search?q=gold+price&count=10 token={BRAVE_KEY} accept=application/json"
        )]
    );
}

#[actix_web::test]
async fn a_responses_user_location_is_told_to_brave_and_a_bad_one_is_refused() {
    let web = start_fake_web().await;
    let (base, site) = (web.base.clone(), web.site());
    let app = spawn_app_with(move |config| {
        config.tools.web_search_provider = Some(colloquy::config::WebSearchProvider::Brave);
        config.tools.brave_api_url = base;
        config.tools.brave_api_key = Some(secrecy::SecretString::from(BRAVE_KEY));
        config.tools.ssrf_allow_list = vec![site];
    })
    .await;
    app.upstream.script([
        Reply::tool_call("call_1", "web_search", json!({"query": "weather"})),
        Reply::text("Rainy."),
    ]);
    let tool = |location: Value| {
        json!({"model": "fake-model", "input": "Weather here?", "tools": [
            {"type": "web_search_preview", "x_tools": ["web_search"], "user_location": location}]})
    };
    let response = app
        .openai()
        .create_response()
        .json(&tool(
            json!({"type": "approximate", "country": "gb", "city": "London"}),
        ))
        .call()
        .await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["output"][0]["type"], "web_search_call");
    assert_eq!(
        web.searches(),
        [format!(
            "GET /res/v1/web/search?q=weather&count=10&country=GB token={BRAVE_KEY} \
             accept=application/json city=London"
        )]
    );
    let refused = app
        .openai()
        .create_response()
        .json(&tool(json!({"type": "approximate", "country": "Britain"})))
        .call()
        .await;
    assert_eq!(refused.status(), 400);
    let error: Value = refused.json().await.unwrap();
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("two-letter"),
        "{error}"
    );
}

#[actix_web::test]
async fn a_responses_user_location_is_searxng_language_locale_of_its_country() {
    let web = start_fake_web().await;
    let (base, site) = (web.base.clone(), web.site());
    let app = spawn_app_with(move |config| {
        config.tools.web_search_url = Some(base);
        config.tools.ssrf_allow_list = vec![site];
    })
    .await;
    let search = |location: Option<Value>| {
        let mut tool = json!({"type": "web_search_preview", "x_tools": ["web_search"]});
        if let Some(location) = location {
            tool["user_location"] = location;
        }
        app.upstream.script([
            Reply::tool_call("call_1", "web_search", json!({"query": "weather"})),
            Reply::text("Rainy."),
        ]);
        app.openai()
            .create_response()
            .json(&json!({"model": "fake-model", "input": "Weather here?", "tools": [tool]}))
            .call()
    };
    for location in [
        Some(
            json!({"type": "approximate", "country": "GB", "city": "London",
                    "region": "England", "timezone": "Europe/London"}),
        ),
        Some(json!({"type": "approximate", "country": "ch"})),
        // A country the table does not know, and a location without a country: advisory.
        Some(json!({"type": "approximate", "country": "ZZ"})),
        Some(json!({"type": "approximate", "city": "Paris"})),
        None,
    ] {
        let response = search(location.clone()).await;
        assert_eq!(response.status(), 200, "{location:?}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["output"][0]["type"], "web_search_call", "{body}");
    }
    assert_eq!(
        web.searches(),
        [
            "GET /search?q=weather&format=json&language=en-GB ",
            "GET /search?q=weather&format=json&language=de-CH ",
            "GET /search?q=weather&format=json ",
            "GET /search?q=weather&format=json ",
            "GET /search?q=weather&format=json ",
        ],
        "city, region and time zone are not SearXNG parameters"
    );
}

#[actix_web::test]
async fn a_chat_user_location_is_duckduckgo_kl_region_of_its_country() {
    let web = start_fake_web().await;
    let app = duckduckgo_app(&web).await;
    let options = |location: Value| json!({"x_tools": ["web_search"], "user_location": location});
    for (location, region) in [
        // Chat Completions' nested form, and the flat one.
        (
            json!({"type": "approximate", "approximate": {"country": "GB", "city": "London"}}),
            "&kl=uk-en",
        ),
        (json!({"type": "approximate", "country": "CH"}), "&kl=ch-de"),
        (json!({"type": "approximate", "country": "JP"}), "&kl=jp-jp"),
        // Iceland is in the table, not on DuckDuckGo's list of regions; ZZ is nowhere.
        (json!({"type": "approximate", "country": "IS"}), ""),
        (json!({"type": "approximate", "country": "ZZ"}), ""),
    ] {
        let before = web.searches().len();
        let result =
            web_search_result_with(&app, "gold price per ounce", options(location.clone())).await;
        assert_eq!(results_of(&result).len(), 3, "{location}: {result}");
        let mut searches = web.searches()[before..].to_vec();
        searches.sort();
        assert_eq!(
            searches,
            [
                "GET /?q=gold+price+per+ounce&format=json&no_html=1&skip_disambig=1 ".to_string(),
                format!("POST /html/? q=gold+price+per+ounce{region}"),
            ],
            "{location}: the region goes to the results page"
        );
    }
    let before = web.searches().len();
    web_search_result(&app, "gold price per ounce").await;
    assert!(
        web.searches()[before..].contains(&"POST /html/? q=gold+price+per+ounce".to_string()),
        "no location, no kl: {:?}",
        web.searches()
    );
}

#[actix_web::test]
async fn a_brave_key_the_api_refuses_is_said_so_in_the_tool_result() {
    let web = start_fake_web().await;
    let base = web.base.clone();
    let app = spawn_app_with(move |config| {
        config.tools.web_search_provider = Some(colloquy::config::WebSearchProvider::Brave);
        config.tools.brave_api_url = base;
        config.tools.brave_api_key = Some(secrecy::SecretString::from("BSA-revoked"));
    })
    .await;
    let result = web_search_result(&app, "gold price").await;
    assert_eq!(result["code"], "search_key_refused", "{result}");
    assert!(
        result["error"]
            .as_str()
            .unwrap()
            .contains("Brave Search refused this server's API key"),
        "{result}"
    );
    assert!(
        !result.to_string().contains("BSA-revoked"),
        "the key never reaches the model"
    );
}

#[actix_web::test]
async fn with_provider_none_a_requested_web_search_is_offered_and_says_search_is_not_configured() {
    let app = spawn_app_with(|config| {
        config.tools.web_search_provider = Some(colloquy::config::WebSearchProvider::Disabled);
    })
    .await;
    let result = web_search_result(&app, "gold price").await;
    assert_eq!(
        offered(&app)[..3],
        ["web_search", "fetch_url", "calculator"],
        "never dropped in silence (the chat's own tools follow)"
    );
    assert_eq!(
        result,
        json!({"error": "web search is not configured on this server",
               "code": "search_unavailable",
               "suggestion": "Use fetch_url on a URL you know, or answer from what you know and say that you could not search the web."})
    );
}
