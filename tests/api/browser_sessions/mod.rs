//! browser_action and analyze_page in a real headless Chromium (`$CHROMIUM`, else Debian's)
//! against pages this test serves on loopback: a site named in `ssrf_allow_list`, and a
//! "private" server on a port that is not, which counts every request it gets (it must get
//! none). The tools are driven directly, as the loop calls them, in chats of a real app; the
//! screenshot tests go through the chat API with the fake upstream (and the UI). Here: the
//! served pages and the helpers; beside: `pages` (forms, analyze_page), `actions` (each
//! action's variants, timeouts), `guard` (the SSRF guard, downloads), `screenshots` (storage,
//! the model's context, the UI's card), `lifecycle` (caps, ownership, idle close, a dead
//! Chromium, no Chromium), `limits` (a page past the memory bound, a navigation that never
//! ends), `orphans` (Chromium dies with a server killed with `kill -9`).

mod actions;
mod guard;
mod lifecycle;
mod limits;
mod orphans;
mod pages;
mod screenshots;
mod teardown;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use colloquy::tools::Tool;
use colloquy::tools::browser::{AnalyzePage, BrowserAction, BrowserSessionId};
use entities::ids::ChatId;
use serde_json::Value;

use crate::helpers::{TestApp, eventually, spawn_app_with};

/// Longest a step here may take before the test fails instead of hanging.
const STEP: Duration = Duration::from_secs(60);

/// A server on 127.0.0.1:0 counting the requests to each path.
struct Site {
    port: u16,
    hits: Arc<Mutex<HashMap<String, usize>>>,
}

/// The other server's port, for the pages that reach for it.
#[derive(Clone, Copy)]
struct Private(u16);

impl Site {
    async fn start(private: Option<u16>) -> Self {
        let hits = Arc::new(Mutex::new(HashMap::new()));
        let data = web::Data::from(Arc::clone(&hits));
        let private = web::Data::new(Private(private.unwrap_or(9)));
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .app_data(private.clone())
                .default_service(web::to(serve))
        })
        .workers(1)
        .bind("127.0.0.1:0")
        .expect("bind a site");
        let port = server.addrs()[0].port();
        actix_web::rt::spawn(server.run());
        Self { port, hits }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn hits(&self, path: &str) -> usize {
        self.hits.lock().unwrap().get(path).copied().unwrap_or(0)
    }

    fn total_hits(&self) -> usize {
        self.hits.lock().unwrap().values().sum()
    }
}

const FORM: &str = r#"<!doctype html><html><head><title>Order</title></head><body>
<h1>Place an order</h1>
<form method="post" action="/submit">
  <label for="who">Your name</label> <input id="who" name="name" required>
  <label>Colour <select name="colour"><option value="r">red</option><option value="g">green</option></select></label>
  <button type="submit">Send</button>
</form></body></html>"#;

async fn serve(
    req: HttpRequest,
    body: web::Bytes,
    hits: web::Data<Mutex<HashMap<String, usize>>>,
    private: web::Data<Private>,
) -> HttpResponse {
    let path = req.path().to_string();
    *hits.lock().unwrap().entry(path.clone()).or_default() += 1;
    let html = |text: String| HttpResponse::Ok().content_type("text/html").body(text);
    let other = private.0;
    match path.as_str() {
        "/form" => html(FORM.into()),
        "/submit" => {
            let form: HashMap<String, String> =
                serde_urlencoded_pairs(&String::from_utf8_lossy(&body));
            html(format!(
                "<!doctype html><title>Thanks</title><p id=done>Thanks {}, you chose {}.</p>",
                form.get("name").cloned().unwrap_or_default(),
                form.get("colour").cloned().unwrap_or_default()
            ))
        }
        // Its script writes what became of each reach for the private server into the page,
        // so a test can tell "refused" from "never tried".
        "/leaky" => html(format!(
            r#"<!doctype html><title>Leaky</title><p>Hello</p>
            <img src="/own.png"><img src="http://127.0.0.1:{other}/image.png">
            <iframe src="http://127.0.0.1:{other}/frame"></iframe>
            <ul><li id=fetch>fetch: pending</li><li id=xhr>xhr: pending</li><li id=ws>ws: pending</li></ul>
            <script>
              const say = (id, text) => {{
                const item = document.getElementById(id);
                item.textContent = text;
                item.className = "done";
                if (document.querySelectorAll("li.done").length === 3) {{
                  document.body.insertAdjacentHTML("beforeend", "<p id=attempted>all attempted</p>");
                }}
              }};
              fetch("http://127.0.0.1:{other}/fetch").then(() => say("fetch", "fetch: loaded"),
                () => say("fetch", "fetch: failed"));
              const x = new XMLHttpRequest();
              x.onload = () => say("xhr", "xhr: loaded");
              x.onerror = () => say("xhr", "xhr: failed");
              x.open("GET", "http://127.0.0.1:{other}/xhr"); x.send();
              try {{
                const ws = new WebSocket("ws://127.0.0.1:{other}/socket");
                ws.onopen = () => say("ws", "ws: open");
                ws.onerror = () => say("ws", "ws: error");
              }} catch (e) {{ say("ws", "ws: threw " + e.name); }}
            </script>"#
        )),
        "/links" => html(LINKS.clone()),
        "/long" => html(LONG.clone()),
        // The element appears 300 ms after the page has loaded.
        "/later" => html(
            r#"<!doctype html><title>Later</title><p>waiting</p>
            <script>setTimeout(() => document.body.insertAdjacentHTML("beforeend",
              "<p id=late>arrived</p>"), 300);</script>"#
                .into(),
        ),
        // A click on its button keeps the page's only thread busy for 6 s.
        "/busy" => html(
            r#"<!doctype html><title>Busy</title><button id=spin>Spin</button>
            <script>document.getElementById("spin").addEventListener("click", () => {
              const end = Date.now() + 6000; while (Date.now() < end) {} });</script>"#
                .into(),
        ),
        "/redirect" => HttpResponse::Found()
            .insert_header(("location", format!("http://127.0.0.1:{other}/target")))
            .finish(),
        "/download" => HttpResponse::Ok()
            .content_type("application/octet-stream")
            .insert_header((
                "content-disposition",
                "attachment; filename=\"colloquy-browser-download-test.bin\"",
            ))
            .body("not for saving"),
        "/set-cookie" => HttpResponse::Ok()
            .content_type("text/html")
            .insert_header(("set-cookie", "who=first-chat; Path=/"))
            .body("<!doctype html><title>Set</title><p>set</p>"),
        "/cookie" => {
            let cookie = req
                .headers()
                .get("cookie")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("none")
                .to_string();
            html(format!(
                "<!doctype html><title>Cookie</title><p id=cookie>{cookie}</p>"
            ))
        }
        // Never answered (within the hour a test may last).
        "/hang" => {
            actix_web::rt::time::sleep(Duration::from_secs(3600)).await;
            html("too late".into())
        }
        // Its script allocates JavaScript arrays (V8's heap) without end.
        "/hog" => html(
            r#"<!doctype html><title>Hog</title><script>
            const hoard = []; for (;;) { hoard.push(new Array(1 << 20).fill(Math.random())); }
            </script>"#
                .into(),
        ),
        // Its script allocates typed arrays (memory outside V8's heap) without end.
        "/hog-buffers" => html(
            r#"<!doctype html><title>Buffers</title><script>
            const hoard = []; for (;;) { hoard.push(new Uint8Array(16 << 20).fill(7)); }
            </script>"#
                .into(),
        ),
        // A page that reaches out every way a page can: a frame, a popup, a service worker, a
        // dedicated worker, a prefetch, a preconnect, a DNS prefetch, a beacon, images; and a
        // link to a new window (`#away`).
        "/everything" => html(format!(
            r#"<!doctype html><title>Everything</title>
            <link rel="prefetch" href="/prefetched"><link rel="preconnect" href="http://{host}">
            <link rel="dns-prefetch" href="http://colloquy-test.invalid">
            <img src="/own.png"><iframe src="/framed"></iframe>
            <a id=away href="/popup" target="_blank">away</a>
            <script>
              if (navigator.serviceWorker) {{ navigator.serviceWorker.register("/sw.js").catch(() => {{}}); }}
              window.open("/popup");
              new Worker("/worker.js");
              navigator.sendBeacon("/beacon", "x");
            </script>"#,
            host = req.connection_info().host()
        )),
        "/framed" => html(r#"<!doctype html><title>Framed</title><img src="/framed.png">"#.into()),
        "/popup" => html(r#"<!doctype html><title>Popup</title><img src="/popup.png">"#.into()),
        "/worker.js" => HttpResponse::Ok()
            .content_type("application/javascript")
            .body(r#"fetch("/from-worker");"#),
        "/sw.js" => HttpResponse::Ok()
            .content_type("application/javascript")
            .body(r#"self.addEventListener("install", (e) => e.waitUntil(fetch("/from-sw")));"#),
        "/own.png" => HttpResponse::Ok()
            .content_type("image/png")
            .body(Vec::<u8>::new()),
        _ => html("<!doctype html><title>Anything</title><p>here</p>".into()),
    }
}

/// Links `/links` lists, more than analyze_page's 50.
const LINK_COUNT: usize = 60;

/// A page of `LINK_COUNT` links and a button with no id, deep in the page, that says when it
/// was clicked.
static LINKS: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let links: String = (1..=LINK_COUNT)
        .map(|n| format!(r#"<li><a href="/to/{n}">Link {n}</a></li>"#))
        .collect();
    format!(
        r#"<!doctype html><title>Links</title><h1>Many links</h1><ul>{links}</ul>
        <div><div><button>Reveal</button></div></div><p id=revealed>hidden</p>
        <script>document.querySelector("button").addEventListener("click", () =>
          document.getElementById("revealed").textContent = "revealed");</script>"#
    )
});

/// A page far taller than the viewport, with more than 10,000 characters of text, a target
/// near its end, and the scroll position shown in a fixed element.
static LONG: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let paragraphs: String = (1..=200)
        .map(|n| format!("<p>Paragraph {n:03} of the long page, here to make it tall.</p>"))
        .collect();
    format!(
        r#"<!doctype html><title>Long</title>
        <div id=pos style="position:fixed;top:0;right:0">0</div>{paragraphs}
        <p id=far>The far paragraph.</p>{paragraphs}
        <script>addEventListener("scroll", () =>
          document.getElementById("pos").textContent = String(Math.round(scrollY)));</script>"#
    )
});

/// Whether a file named `name` is anywhere under `dir`.
fn find_file(dir: &Path, name: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let path = entry.path();
        path.file_name().is_some_and(|n| n == name) || (path.is_dir() && find_file(&path, name))
    })
}

/// `a=b&c=d` as pairs (the test's own small form decoder).
fn serde_urlencoded_pairs(body: &str) -> HashMap<String, String> {
    url::form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect()
}

/// An app whose browser reaches `site` only, with `adjust` applied.
async fn app_for(site: &Site, adjust: impl FnOnce(&mut colloquy::config::Config)) -> TestApp {
    let port = site.port;
    spawn_app_with(move |config| {
        config.tools.ssrf_allow_list = vec![format!("127.0.0.1:{port}")];
        config.browser.chromium_path = Some(crate::browser::chromium());
        config.browser.action_timeout_secs = 30;
        adjust(config);
    })
    .await
}

fn tools(app: &TestApp, chat: &str) -> (BrowserAction, AnalyzePage) {
    let browsers = app.state.launcher.browsers.clone();
    let chat = ChatId::from_string(chat);
    (
        BrowserAction::new(browsers.clone(), chat.clone()),
        AnalyzePage::new(browsers, chat),
    )
}

/// Runs a call; its result or its error result, as the model sees it.
async fn call(tool: &dyn Tool, arguments: Value) -> Value {
    let run = tool.run(arguments);
    match tokio::time::timeout(STEP, run)
        .await
        .expect("the call ends")
    {
        Ok(value) => value,
        Err(err) => err.to_result(),
    }
}

/// Where session `id`'s profile is (this process's folder under `<data_dir>/browser`).
fn profile_of(app: &TestApp, id: &str) -> std::path::PathBuf {
    let browsers = &app.state.launcher.browsers;
    let folder = browsers.profiles().expect("sessions can be opened");
    assert!(folder.starts_with(app.data_dir.path().join("browser")));
    folder.join(id)
}

fn session_of(result: &Value) -> String {
    let id = result["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("{result}"));
    assert!(id.starts_with("bs_"), "{id}");
    id.to_string()
}
