//! browser_action and analyze_page in a real headless Chromium (Debian's, /usr/bin/chromium)
//! against pages this test serves on loopback: a site named in `ssrf_allow_list`, and a
//! "private" server on a port that is not, which counts every request it gets (it must get
//! none). The tools are driven directly, as the loop calls them, in chats of a real app; the
//! screenshot test goes through the chat API with the fake upstream.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use colloquy::tools::Tool;
use colloquy::tools::browser::{AnalyzePage, BrowserAction, BrowserSessionId};
use entities::ids::ChatId;
use reqwest::Method;
use serde_json::{Value, json};

use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, eventually, spawn_app_with};

const CHROMIUM: &str = "/usr/bin/chromium";
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
        "/leaky" => html(format!(
            r#"<!doctype html><title>Leaky</title><p>Hello</p>
            <img src="/own.png"><img src="http://127.0.0.1:{other}/image.png">
            <iframe src="http://127.0.0.1:{other}/frame"></iframe>
            <script>
              fetch("http://127.0.0.1:{other}/xhr").catch(() => {{}});
              const x = new XMLHttpRequest(); x.open("GET", "http://127.0.0.1:{other}/xhr2"); x.send();
              try {{ new WebSocket("ws://127.0.0.1:{other}/socket"); }} catch (e) {{}}
            </script>"#
        )),
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
        "/own.png" => HttpResponse::Ok()
            .content_type("image/png")
            .body(Vec::<u8>::new()),
        _ => html("<!doctype html><title>Anything</title><p>here</p>".into()),
    }
}

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
        config.browser.chromium_path = Some(CHROMIUM.into());
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

fn session_of(result: &Value) -> String {
    let id = result["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("{result}"));
    assert!(id.starts_with("bs_"), "{id}");
    id.to_string()
}

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

#[actix_web::test]
async fn a_screenshot_is_stored_served_as_png_and_the_model_reads_the_placeholder() {
    let site = Site::start(None).await;
    let app = app_for(&site, |config| config.browser.screenshots_to_model = true).await;
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
async fn caps_refuse_the_next_session_another_chats_session_is_refused_and_no_cookie_is_shared() {
    let site = Site::start(None).await;
    let app = app_for(&site, |config| {
        config.browser.max_sessions_per_chat = 1;
        config.browser.max_sessions = 2;
        config.browser.max_screenshot_bytes = 100;
        config.browser.max_wait_ms = 500;
    })
    .await;
    let (first, second, third) = (
        app.new_chat().await,
        app.new_chat().await,
        app.new_chat().await,
    );
    let (act_1, analyze_1) = tools(&app, &first);
    let (act_2, _) = tools(&app, &second);
    let (act_3, _) = tools(&app, &third);
    let navigate = json!({"action": "navigate", "url": site.url("/form")});

    let session = session_of(&call(&act_1, navigate.clone()).await);
    let again = call(&act_1, navigate.clone()).await;
    assert_eq!(again["code"], "too_many_sessions_in_chat", "{again}");
    session_of(&call(&act_2, navigate.clone()).await);
    let full = call(&act_3, navigate.clone()).await;
    assert_eq!(full["code"], "too_many_sessions", "{full}");

    let foreign = call(&act_2, json!({"sessionId": session, "action": "extract"})).await;
    assert_eq!(foreign["code"], "unknown_session", "{foreign}");
    let (_, analyze_2) = tools(&app, &second);
    let foreign = call(&analyze_2, json!({"sessionId": session})).await;
    assert_eq!(foreign["code"], "unknown_session", "{foreign}");
    let own = call(&analyze_1, json!({"sessionId": session})).await;
    assert_eq!(own["title"], "Order", "{own}");

    // Each session has its own profile: a cookie one chat's page was given is not another's.
    let second_session = app
        .state
        .launcher
        .browsers
        .sessions_of(&ChatId::from_string(&second));
    let second_session = second_session[0].to_string();
    call(
        &act_1,
        json!({"sessionId": session, "action": "navigate", "url": site.url("/set-cookie")}),
    )
    .await;
    let read =
        |id: &str| json!({"sessionId": id, "action": "navigate", "url": site.url("/cookie")});
    call(&act_1, read(&session)).await;
    let own = call(
        &act_1,
        json!({"sessionId": session, "action": "extract", "selector": "#cookie"}),
    )
    .await;
    assert_eq!(own["text"], "who=first-chat", "{own}");
    call(&act_2, read(&second_session)).await;
    let other = call(
        &act_2,
        json!({"sessionId": second_session, "action": "extract", "selector": "#cookie"}),
    )
    .await;
    assert_eq!(other["text"], "none", "{other}");
    call(
        &act_1,
        json!({"sessionId": session, "action": "navigate", "url": site.url("/form")}),
    )
    .await;

    // Every limit is an error result that says what it is.
    let shot = call(
        &act_1,
        json!({"sessionId": session, "action": "screenshot"}),
    )
    .await;
    assert_eq!(shot["code"], "screenshot_too_large", "{shot}");
    let long = call(
        &act_1,
        json!({"sessionId": session, "action": "wait", "ms": 501}),
    )
    .await;
    assert_eq!(long["code"], "INVALID_ARGUMENTS", "{long}");
    assert!(
        long["error"].as_str().unwrap().contains("at most 500 ms"),
        "{long}"
    );
    let absent = call(
        &act_1,
        json!({"sessionId": session, "action": "wait", "selector": "#never"}),
    )
    .await;
    assert_eq!(absent["code"], "no_match", "{absent}");
    let unknown = call(&act_1, json!({"sessionId": session, "action": "fly"})).await;
    assert_eq!(unknown["code"], "INVALID_ARGUMENTS", "{unknown}");
    let scrolled = call(
        &act_1,
        json!({"sessionId": session, "action": "scroll", "direction": "down"}),
    )
    .await;
    assert_eq!(
        scrolled["result"],
        format!("scrolled down; the page stayed at {}", site.url("/form"))
    );
    call(
        &act_1,
        json!({"sessionId": session, "action": "type", "selector": "#who", "text": "Bo"}),
    )
    .await;
    let pressed = call(
        &act_1,
        json!({"sessionId": session, "action": "press", "key": "Enter"}),
    )
    .await;
    assert_eq!(
        pressed["url"],
        site.url("/submit"),
        "Enter submits the form: {pressed}"
    );
}

#[actix_web::test]
async fn idle_sessions_and_a_deleted_chats_sessions_close_with_their_profiles_and_screenshots() {
    let site = Site::start(None).await;
    let app = app_for(&site, |config| config.browser.idle_timeout_secs = 2).await;
    let browsers = app.state.launcher.browsers.clone();
    let chat = app.new_chat().await;
    let (act, _) = tools(&app, &chat);
    let session = session_of(
        &call(
            &act,
            json!({"action": "navigate", "url": site.url("/form")}),
        )
        .await,
    );
    let profile = app.data_dir.path().join("browser").join(&session);
    assert!(profile.is_dir(), "its own profile");
    let chat_id = ChatId::from_string(&chat);
    eventually("the idle session closes", STEP, || {
        let open = browsers.sessions_of(&chat_id);
        async move { open.is_empty().then_some(()) }
    })
    .await;
    eventually("its profile is deleted", STEP, || {
        let gone = !Path::new(&profile).exists();
        async move { gone.then_some(()) }
    })
    .await;
    let reopened = call(
        &act,
        json!({"sessionId": session, "action": "navigate", "url": site.url("/form")}),
    )
    .await;
    assert_ne!(
        session_of(&reopened),
        session,
        "a navigate opens a new session"
    );
    let shot = call(
        &act,
        json!({"sessionId": session_of(&reopened), "action": "screenshot"}),
    )
    .await;
    let shots = app.data_dir.path().join("screenshots").join(&chat);
    assert!(shots.is_dir(), "{shot}");

    let deleted = app
        .request(Method::DELETE, &format!("/chat/api/chats/{chat}"))
        .send()
        .await
        .unwrap();
    assert!(deleted.status().is_success(), "{}", deleted.status());
    assert!(
        browsers.sessions_of(&chat_id).is_empty(),
        "closed with its chat"
    );
    assert!(!shots.exists(), "its screenshots went with it");
    // Screenshots of a chat that is gone however it went (swept past its retention) are swept.
    let orphan = app.data_dir.path().join("screenshots").join(&chat);
    std::fs::create_dir_all(&orphan).unwrap();
    std::fs::write(orphan.join("shot_0.png"), b"left behind").unwrap();
    browsers.sweep(&app.db).await;
    assert!(!orphan.exists(), "a gone chat's screenshots are swept");
}

#[actix_web::test]
async fn killing_chromium_is_an_error_result_and_the_next_navigate_opens_a_fresh_session() {
    let site = Site::start(None).await;
    let app = app_for(&site, |_| {}).await;
    let chat = app.new_chat().await;
    let (act, _) = tools(&app, &chat);
    let session = session_of(
        &call(
            &act,
            json!({"action": "navigate", "url": site.url("/form")}),
        )
        .await,
    );
    let id = BrowserSessionId::parse(&session).unwrap();
    let pid = app
        .state
        .launcher
        .browsers
        .pid_of(&id)
        .expect("its Chromium");
    // SAFETY: kill has no memory effects; the pid is the test's own Chromium.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGKILL) }, 0);

    let failed = call(&act, json!({"sessionId": session, "action": "extract"})).await;
    assert_eq!(failed["code"], "session_ended", "{failed}");
    let fresh = call(
        &act,
        json!({"sessionId": session, "action": "navigate", "url": site.url("/form")}),
    )
    .await;
    let new = session_of(&fresh);
    assert_ne!(new, session);
    assert_eq!(fresh["title"], "Order", "{fresh}");
}

#[actix_web::test]
async fn without_chromium_the_tools_are_not_offered_and_the_tool_list_says_why() {
    let app = spawn_app_with(|config| {
        config.browser.chromium_path = Some("/nonexistent/chromium".into());
    })
    .await;
    let refused = app
        .post_json(
            "/api/agents",
            &json!({"name": "Surfer", "enabled_tools": ["browser_action"]}),
        )
        .await;
    assert_eq!(refused.status(), 400);
    let body: Value = refused.json().await.unwrap();
    assert!(
        body.to_string()
            .contains("browser_action is not configured on this server (it needs Chromium"),
        "{body}"
    );

    let agent: Value = app
        .post_json("/api/agents", &json!({"name": "Reader"}))
        .await
        .json()
        .await
        .unwrap();
    let listed: Value = app
        .get(&format!(
            "/api/agents/{}/chat/tools",
            agent["id"].as_str().unwrap()
        ))
        .await
        .json()
        .await
        .unwrap();
    let unavailable = listed["unavailable"]
        .as_array()
        .expect("what is not offered");
    assert_eq!(unavailable[0]["name"], "browser_action", "{listed}");
    assert!(
        unavailable[0]["reason"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/chromium"),
        "{listed}"
    );
}

#[actix_web::test]
async fn the_ui_tool_card_shows_the_page_visited_and_the_screenshot_thumbnail() {
    let site = Site::start(None).await;
    let port = site.port;
    let app = crate::browser::browser_app(move |config| {
        config.tools.ssrf_allow_list = vec![format!("127.0.0.1:{port}")];
        config.browser.chromium_path = Some(CHROMIUM.into());
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
        "screenshots go to the model only when configured: {context}"
    );
    crate::browser::run_scenario(
        &app,
        "browser_tools",
        &[("CHAT_ID", chat), ("PAGE_URL", site.url("/form"))],
    )
    .await;
}
