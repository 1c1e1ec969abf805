//! fetch_url and the Fetcher against a fake web site: a real HTTP server on 127.0.0.1:0 serving
//! HTML with links, a PDF, an image, huge and slow bodies and redirects, counting every request.
//! The site is reachable only through `ssrf_allow_list` naming its `127.0.0.1:port`; with it
//! empty, or naming other hosts or ports, the SSRF refusals are shown against the same server.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use bytes::Bytes;
use colloquy::config::ToolsConfig;
use colloquy::tools::Tool;
use colloquy::tools::fetch::{FetchError, Fetcher, HostResolver};
use colloquy::tools::fetch_url::FetchUrl;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};

/// The page cache's lifetime in these tests: longer than any test.
const CACHE_TTL: Duration = Duration::from_secs(300);
/// The size cap used here, so "huge" bodies stay small enough to serve quickly.
const MAX_BYTES: usize = 64 * 1024;
/// How long any single step may take before a test fails instead of hanging.
const STEP_TIMEOUT: Duration = Duration::from_secs(30);

/// A fake web site recording how often each path was requested.
struct FakeSite {
    port: u16,
    hits: Arc<Mutex<HashMap<String, usize>>>,
    handle: actix_web::dev::ServerHandle,
}

impl FakeSite {
    async fn start() -> Self {
        let hits = Arc::new(Mutex::new(HashMap::new()));
        let data = web::Data::from(Arc::clone(&hits));
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .default_service(web::to(serve))
        })
        .workers(1)
        .bind("127.0.0.1:0")
        .expect("bind fake site");
        let port = server.addrs()[0].port();
        let server = server.run();
        let handle = server.handle();
        actix_web::rt::spawn(server);
        Self { port, hits, handle }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address())
    }

    /// `127.0.0.1:port`, as an `ssrf_allow_list` entry names it.
    fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn hits(&self, path: &str) -> usize {
        self.hits.lock().unwrap().get(path).copied().unwrap_or(0)
    }

    fn total_hits(&self) -> usize {
        self.hits.lock().unwrap().values().sum()
    }

    async fn stop(&self) {
        self.handle.stop(false).await;
    }
}

const HOME: &str = r#"<!doctype html><html><head><title>Home</title>
<script>var tracking = "do-not-show";</script><style>p { color: red }</style></head><body>
<nav><a href="/page/1">Page one</a> <a href="/page/2">Page two</a></nav>
<main><h1>Welcome home</h1><p>Start   here.</p>
<ul><li><a href="/page/3">Page three</a></li><li><a href="page/4#part">Page four</a></li>
<li><a href="/page/1">Page one again</a></li></ul>
<p><a href="http://other.test/elsewhere">Elsewhere</a></p></main>
<footer>Footer text</footer></body></html>"#;

async fn serve(req: HttpRequest, hits: web::Data<Mutex<HashMap<String, usize>>>) -> HttpResponse {
    let path = req.path().to_string();
    *hits.lock().unwrap().entry(path.clone()).or_default() += 1;
    let html = |body: String| {
        HttpResponse::Ok()
            .content_type("text/html; charset=utf-8")
            .body(body)
    };
    let redirect = |to: &str| {
        HttpResponse::Found()
            .insert_header(("Location", to.to_string()))
            .finish()
    };
    match path.as_str() {
        "/" => html(HOME.into()),
        "/report.pdf" => HttpResponse::Ok()
            .content_type("application/pdf")
            .body(&include_bytes!("../fixtures/fetch/report.pdf")[..]),
        "/image.png" => HttpResponse::Ok()
            .content_type("image/png")
            .body(&b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"[..]),
        "/plain" => HttpResponse::Ok()
            .content_type("text/plain")
            .body("Just text."),
        "/huge" => HttpResponse::Ok()
            .content_type("text/plain")
            .body("a".repeat(4 * MAX_BYTES)),
        "/huge-stream" => {
            let chunks = (0..64).map(|_| Ok::<_, io::Error>(Bytes::from(vec![b'a'; 16 * 1024])));
            HttpResponse::Ok()
                .content_type("text/plain")
                .streaming(futures_util::stream::iter(chunks))
        }
        "/slow" => {
            let ms = req
                .query_string()
                .trim_start_matches("ms=")
                .parse()
                .unwrap_or(5_000);
            actix_web::rt::time::sleep(Duration::from_millis(ms)).await;
            html("<p>finally</p>".into())
        }
        "/redirect" => redirect("/page/1"),
        "/loop" => redirect("/loop"),
        "/to" => redirect(req.query_string().trim_start_matches("to=")),
        "/secret" => HttpResponse::Ok().body("the secret"),
        _ if path.starts_with("/page/") => {
            let n: u32 = path["/page/".len()..].parse().unwrap_or(0);
            html(format!(
                "<html><body><h1>Page {n}</h1><p>Body of page {n}.</p>\
                 <a href=\"/page/{}\">Next</a></body></html>",
                n + 1
            ))
        }
        _ if path.starts_with("/long/") => {
            let words = format!("{} ", &path["/long/".len()..]).repeat(2_000);
            HttpResponse::Ok().content_type("text/plain").body(words)
        }
        _ => HttpResponse::NotFound().body("no such page"),
    }
}

/// Resolves names from a fixed table, as a DNS server under the test's control would.
struct MapResolver(HashMap<String, Vec<IpAddr>>);

impl HostResolver for MapResolver {
    fn resolve(&self, host: &str) -> BoxFuture<'static, io::Result<Vec<IpAddr>>> {
        let found = self.0.get(host).cloned();
        let host = host.to_string();
        Box::pin(async move {
            found.ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("no host {host}")))
        })
    }
}

fn allowing(entries: &[&str]) -> ToolsConfig {
    ToolsConfig {
        ssrf_allow_list: entries.iter().map(|e| e.to_string()).collect(),
        fetch_max_response_bytes: MAX_BYTES,
        fetch_timeout_secs: 1,
        ..ToolsConfig::default()
    }
}

fn fetcher(config: &ToolsConfig) -> Arc<Fetcher> {
    Arc::new(Fetcher::new(config, CACHE_TTL).expect("fetcher"))
}

fn fetcher_resolving(config: &ToolsConfig, names: &[(&str, &str)]) -> Arc<Fetcher> {
    let table = names
        .iter()
        .map(|(name, ip)| (name.to_string(), vec![ip.parse().unwrap()]))
        .collect();
    Arc::new(
        Fetcher::with_resolver(config, CACHE_TTL, Arc::new(MapResolver(table))).expect("fetcher"),
    )
}

/// The tool over a fetcher that may reach the fake site.
fn tool_for_site(config: &ToolsConfig) -> FetchUrl {
    FetchUrl::new(fetcher(config), config)
}

async fn within<T>(step: impl Future<Output = T>) -> T {
    tokio::time::timeout(STEP_TIMEOUT, step)
        .await
        .expect("step finished in time")
}

async fn run(tool: &FetchUrl, arguments: Value) -> Result<Value, colloquy::tools::ToolError> {
    within(tool.run(arguments)).await
}

fn refusal(result: Result<colloquy::tools::fetch::Page, FetchError>) -> String {
    match result {
        Err(err @ FetchError::Refused(_)) => err.to_string(),
        other => panic!("expected an SSRF refusal, got {other:?}"),
    }
}

#[actix_web::test]
async fn a_single_url_returns_its_readable_text_and_nothing_else() {
    let site = FakeSite::start().await;
    let tool = tool_for_site(&allowing(&[&site.address()]));

    let result = run(&tool, json!({"url": site.url("/")})).await.unwrap();

    // The single-URL mode returns the page's plain text itself (docs/spec.md#fetch_url).
    let content = result.as_str().expect("the page's text itself");
    assert!(
        content.starts_with("Welcome home\n\nStart here."),
        "{content}"
    );
    for chrome in ["do-not-show", "color", "Footer", "Page two"] {
        assert!(!content.contains(chrome), "{chrome} in {content}");
    }
    site.stop().await;
}

#[actix_web::test]
async fn url_and_urls_are_merged_deduplicated_and_returned_as_pages() {
    let site = FakeSite::start().await;
    let tool = tool_for_site(&allowing(&[&site.address()]));

    let result = run(
        &tool,
        json!({"url": site.url("/page/1"), "urls": [site.url("/page/1"), site.url("/page/2#top")]}),
    )
    .await
    .unwrap();

    assert_eq!(result["discover_links_enabled"], false);
    assert_eq!(result["total_pages"], 2);
    let pages = result["pages"].as_array().unwrap();
    assert_eq!(pages[0]["url"], site.url("/page/1"));
    assert_eq!(pages[0]["error"], false);
    assert!(
        pages[0]["content"]
            .as_str()
            .unwrap()
            .contains("Body of page 1.")
    );
    assert!(
        pages[1]["content"]
            .as_str()
            .unwrap()
            .contains("Body of page 2.")
    );
    assert!(pages[0].get("discovered_links").is_none());
    assert_eq!(site.hits("/page/1"), 1, "the duplicate was fetched once");
    site.stop().await;
}

#[actix_web::test]
async fn more_than_five_urls_are_refused_without_fetching_any() {
    let site = FakeSite::start().await;
    let tool = tool_for_site(&allowing(&[&site.address()]));
    let urls: Vec<String> = (1..=6).map(|n| site.url(&format!("/page/{n}"))).collect();

    let err = run(&tool, json!({"urls": urls})).await.unwrap_err();

    assert_eq!(err.code, "too_many_urls");
    assert!(!err.suggestion.is_empty());
    assert_eq!(site.total_hits(), 0);
    site.stop().await;
}

#[actix_web::test]
async fn one_bad_url_does_not_fail_the_others() {
    let site = FakeSite::start().await;
    let tool = tool_for_site(&allowing(&[&site.address()]));

    let result = run(
        &tool,
        json!({"urls": [site.url("/page/1"), site.url("/image.png"), site.url("/missing"), "ftp://example.com/x"]}),
    )
    .await
    .unwrap();

    let pages = result["pages"].as_array().unwrap();
    assert_eq!(pages[0]["error"], false);
    assert_eq!(pages[1]["error"], true);
    assert_eq!(pages[1]["code"], "unsupported_content_type");
    assert_eq!(
        pages[1]["error_message"],
        "unsupported content type image/png"
    );
    assert_eq!(pages[2]["code"], "fetch_failed");
    assert_eq!(pages[3]["code"], "invalid_url");
    site.stop().await;
}

#[actix_web::test]
async fn discover_links_lists_each_pages_absolute_links_with_their_text() {
    let site = FakeSite::start().await;
    let tool = tool_for_site(&allowing(&[&site.address()]));

    let result = run(&tool, json!({"url": site.url("/"), "discover_links": true}))
        .await
        .unwrap();

    assert_eq!(result["discover_links_enabled"], true);
    assert_eq!(result["total_pages"], 1);
    let links = &result["pages"][0]["discovered_links"];
    assert_eq!(
        links,
        &json!([
            {"url": site.url("/page/1"), "text": "Page one"},
            {"url": site.url("/page/2"), "text": "Page two"},
            {"url": site.url("/page/3"), "text": "Page three"},
            {"url": site.url("/page/4"), "text": "Page four"},
            {"url": "http://other.test/elsewhere", "text": "Elsewhere"},
        ])
    );
    assert_eq!(
        site.total_hits(),
        1,
        "nothing is followed without max_follow"
    );
    site.stop().await;
}

#[actix_web::test]
async fn max_follow_fetches_unfetched_same_site_links_and_marks_them() {
    let site = FakeSite::start().await;
    let tool = tool_for_site(&allowing(&[&site.address()]));

    let result = run(
        &tool,
        json!({"urls": [site.url("/"), site.url("/page/1")], "discover_links": true, "max_follow": 2}),
    )
    .await
    .unwrap();

    let pages = result["pages"].as_array().unwrap();
    let urls: Vec<&str> = pages.iter().map(|p| p["url"].as_str().unwrap()).collect();
    assert_eq!(
        urls,
        [
            site.url("/"),
            site.url("/page/1"),
            site.url("/page/2"),
            site.url("/page/3")
        ]
    );
    assert_eq!(result["total_pages"], 4);
    for followed in &pages[2..] {
        assert_eq!(followed["followed_from_discovery"], true);
        assert_eq!(followed["error"], false);
        assert!(followed.get("discovered_links").is_none());
    }
    for given in &pages[..2] {
        assert!(given.get("followed_from_discovery").is_none());
        assert!(given["discovered_links"].is_array());
    }
    assert_eq!(
        site.hits("/page/1"),
        1,
        "an already fetched page is not followed"
    );
    site.stop().await;
}

#[actix_web::test]
async fn a_call_never_fetches_more_than_eight_pages() {
    let site = FakeSite::start().await;
    let config = ToolsConfig {
        fetch_max_follow: 10,
        ..allowing(&[&site.address()])
    };
    let tool = tool_for_site(&config);
    // 4 same-site links on the home page and 1 on each other page: 8 to follow, room for 3.
    let urls: Vec<String> = ["/", "/page/10", "/page/20", "/page/30", "/page/40"]
        .iter()
        .map(|path| site.url(path))
        .collect();

    let result = run(
        &tool,
        json!({"urls": urls, "discover_links": true, "max_follow": 10}),
    )
    .await
    .unwrap();

    assert_eq!(result["total_pages"], 8);
    assert_eq!(result["pages"].as_array().unwrap().len(), 8);
    assert_eq!(site.total_hits(), 8);
    site.stop().await;
}

#[actix_web::test]
async fn the_character_budget_is_shared_equally_by_the_pages_fetched() {
    let site = FakeSite::start().await;
    let tool = tool_for_site(&allowing(&[&site.address()]));

    let result = run(
        &tool,
        json!({"urls": [site.url("/long/alpha"), site.url("/long/beta"), site.url("/long/gamma"), site.url("/missing")]}),
    )
    .await
    .unwrap();

    let pages = result["pages"].as_array().unwrap();
    for page in &pages[..3] {
        let content = page["content"].as_str().unwrap();
        assert_eq!(content.chars().count(), 8_000, "24,000 / 3 fetched pages");
        assert!(content.contains("[truncated:"), "{}", &content[7_900..]);
    }
    assert_eq!(pages[3]["error"], true);
    site.stop().await;
}

#[actix_web::test]
async fn a_pdf_is_read_as_text() {
    let site = FakeSite::start().await;
    let tool = tool_for_site(&allowing(&[&site.address()]));

    let result = run(&tool, json!({"url": site.url("/report.pdf")}))
        .await
        .unwrap();

    let content = result.as_str().unwrap();
    assert!(content.contains("Quarterly report"), "{content}");
    assert!(content.contains("Revenue grew by 12 percent."), "{content}");
    site.stop().await;
}

#[actix_web::test]
async fn an_image_is_refused_as_an_unsupported_content_type() {
    let site = FakeSite::start().await;
    let tool = tool_for_site(&allowing(&[&site.address()]));

    let err = run(&tool, json!({"url": site.url("/image.png")}))
        .await
        .unwrap_err();

    assert_eq!(err.code, "unsupported_content_type");
    assert_eq!(err.message, "unsupported content type image/png");
    assert!(!err.suggestion.is_empty());
    site.stop().await;
}

#[actix_web::test]
async fn bodies_over_the_size_cap_are_refused_whether_announced_or_streamed() {
    let site = FakeSite::start().await;
    let fetcher = fetcher(&allowing(&[&site.address()]));

    for path in ["/huge", "/huge-stream"] {
        let result = within(fetcher.fetch_page(&site.url(path))).await;
        assert_eq!(
            result,
            Err(FetchError::TooLarge { limit: MAX_BYTES }),
            "{path}"
        );
    }
    let plain = within(fetcher.fetch_page(&site.url("/plain")))
        .await
        .unwrap();
    assert_eq!(plain.text, "Just text.");
    assert_eq!(plain.content_type, "text/plain");
    site.stop().await;
}

#[actix_web::test]
async fn a_slow_page_times_out() {
    let site = FakeSite::start().await;
    let tool = tool_for_site(&allowing(&[&site.address()]));
    let started = Instant::now();

    let err = run(&tool, json!({"url": site.url("/slow")}))
        .await
        .unwrap_err();

    assert_eq!(err.code, "timeout");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    site.stop().await;
}

#[actix_web::test]
async fn redirects_are_followed_but_not_forever() {
    let site = FakeSite::start().await;
    let fetcher = fetcher(&allowing(&[&site.address()]));

    let page = within(fetcher.fetch_page(&site.url("/redirect")))
        .await
        .unwrap();
    let looping = within(fetcher.fetch_page(&site.url("/loop"))).await;

    assert_eq!(page.url, site.url("/page/1"));
    assert!(page.text.contains("Body of page 1."));
    assert_eq!(looping, Err(FetchError::TooManyRedirects));
    assert_eq!(
        site.hits("/loop"),
        6,
        "the first request and five redirects"
    );
    site.stop().await;
}

#[actix_web::test]
async fn a_page_fetched_once_is_served_from_the_cache_to_every_tool() {
    let site = FakeSite::start().await;
    let config = allowing(&[&site.address()]);
    let shared = fetcher(&config);
    let tool = FetchUrl::new(Arc::clone(&shared), &config);
    assert_eq!(shared.cached(&site.url("/page/7")).await, None);

    // As web_search's auto-fetch would, through the same fetcher.
    let first = within(shared.fetch_page(&site.url("/page/7")))
        .await
        .unwrap();
    let again = within(shared.fetch_page(&site.url("/page/7#again")))
        .await
        .unwrap();
    let through_tool = run(&tool, json!({"url": site.url("/page/7")}))
        .await
        .unwrap();

    assert_eq!(site.hits("/page/7"), 1);
    assert_eq!(first, again);
    assert_eq!(
        shared.cached(&site.url("/page/7")).await,
        Some(first.clone())
    );
    assert_eq!(through_tool, first.text);
    site.stop().await;
}

#[actix_web::test]
async fn urls_are_fetched_in_parallel() {
    let site = FakeSite::start().await;
    let tool = tool_for_site(&ToolsConfig {
        fetch_timeout_secs: 10,
        ..allowing(&[&site.address()])
    });
    let started = Instant::now();

    let result = run(
        &tool,
        json!({"urls": [site.url("/slow?ms=2000"), site.url("/slow?ms=2001"), site.url("/slow?ms=2002")]}),
    )
    .await
    .unwrap();

    assert_eq!(result["total_pages"], 3);
    assert_eq!(site.hits("/slow"), 3);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "three 2-second pages took {:?}",
        started.elapsed()
    );
    site.stop().await;
}

#[actix_web::test]
async fn without_the_allow_list_the_local_site_is_refused() {
    let site = FakeSite::start().await;
    let tool = tool_for_site(&allowing(&[]));

    let err = run(&tool, json!({"url": site.url("/")})).await.unwrap_err();

    assert_eq!(err.code, "ssrf_refused");
    assert_eq!(err.message, "refused: 127.0.0.1 is a loopback address");
    assert_eq!(site.total_hits(), 0);
    site.stop().await;
}

#[actix_web::test]
async fn an_allow_list_entry_opens_one_port_not_the_whole_host() {
    let site = FakeSite::start().await;
    let other = FakeSite::start().await;
    let fetcher = fetcher(&allowing(&[&site.address()]));

    let allowed = within(fetcher.fetch_page(&site.url("/plain"))).await;
    let refused = within(fetcher.fetch_page(&other.url("/plain"))).await;

    assert_eq!(allowed.unwrap().text, "Just text.");
    assert_eq!(refusal(refused), "refused: 127.0.0.1 is a loopback address");
    assert_eq!(other.total_hits(), 0);
    site.stop().await;
    other.stop().await;
}

#[actix_web::test]
async fn an_allow_list_entry_without_a_port_stops_the_server_from_starting() {
    let data_dir = tempfile::tempdir().unwrap();
    let mut config = colloquy::config::Config {
        bind: "127.0.0.1:0".into(),
        data_dir: data_dir.path().to_path_buf(),
        ..Default::default()
    };
    config.tools.ssrf_allow_list = vec!["127.0.0.1".into()];

    let started = colloquy::startup::Application::build(config).await;

    let Err(err) = started else {
        panic!("an allow-list entry without a port was accepted")
    };
    assert!(
        err.to_string()
            .contains("ssrf_allow_list entry \"127.0.0.1\" has no port"),
        "{err:#}"
    );
    assert!(
        Fetcher::new(&allowing(&["127.0.0.1"]), CACHE_TTL).is_err(),
        "a fetcher is not built with one either"
    );
}

#[actix_web::test]
async fn a_redirect_from_an_allowed_host_to_loopback_is_refused() {
    let site = FakeSite::start().await;
    let fetcher = fetcher_resolving(
        &allowing(&[&format!("public.test:{}", site.port)]),
        &[("public.test", "127.0.0.1")],
    );
    let secret = site.url("/secret");
    let start = format!("http://public.test:{}/to?to={secret}", site.port);

    let result = within(fetcher.fetch_page(&start)).await;

    assert_eq!(refusal(result), "refused: 127.0.0.1 is a loopback address");
    assert_eq!(site.hits("/to"), 1, "the allowed host was reached");
    assert_eq!(site.hits("/secret"), 0, "the redirect target was not");
    site.stop().await;
}

#[actix_web::test]
async fn a_name_resolving_to_a_private_address_is_refused() {
    let fetcher = fetcher_resolving(&allowing(&[]), &[("internal.test", "10.0.0.5")]);

    let result = within(fetcher.fetch_page("http://internal.test/admin")).await;

    assert_eq!(
        refusal(result),
        "refused: internal.test resolves to 10.0.0.5, which is a private address"
    );
}

#[actix_web::test]
async fn internal_addresses_are_refused_in_every_spelling() {
    let fetcher = fetcher(&allowing(&[]));

    for url in [
        "http://2130706433/",
        "http://0x7f.1/",
        "http://0177.0.0.1/",
        "http://127.1/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::1]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://0.0.0.0/",
        "http://100.64.0.1/",
        "http://[fc00::1]/",
        "http://[fe80::1]/",
        "http://localhost/",
    ] {
        let message = refusal(within(fetcher.fetch_page(url)).await);
        assert!(message.starts_with("refused: "), "{url}: {message}");
    }
    let cloud_metadata = refusal(within(fetcher.fetch_page("http://169.254.169.254/")).await);
    assert_eq!(
        cloud_metadata,
        "refused: 169.254.169.254 is a link-local address"
    );
}
