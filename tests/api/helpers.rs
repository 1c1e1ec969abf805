//! `spawn_app()`: the real application on 127.0.0.1:0 with a temporary data directory, a
//! fake upstream model, and an authenticated HTTP client — plus helpers for what many tests do
//! (make a chat, send a message, wait for a schedule's firings). Routes are called through the
//! typed client in `crate::client`.

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use colloquy::config::Config;
use colloquy::startup::Application;
use reqwest::{Method, RequestBuilder, Response};
use secrecy::SecretString;
use serde_json::Value;

use crate::client::Call;
use crate::fake_upstream::FakeUpstream;
use crate::subprocess::CLIENT_LIMIT;

/// The admin's API key in every test app.
pub const ADMIN_KEY: &str = "cq_test_admin_key_0123456789";

pub struct TestApp {
    pub address: String,
    pub http: reqwest::Client,
    pub api_key: String,
    pub upstream: FakeUpstream,
    pub config: Config,
    pub login_url: Option<String>,
    pub data_dir: Arc<tempfile::TempDir>,
    /// The server's own database pool, for arranging and inspecting state directly.
    pub db: sea_orm::DatabaseConnection,
    pub state: colloquy::state::AppState,
    handle: actix_web::dev::ServerHandle,
}

/// A port free on 127.0.0.1 now, for a server a test starts itself.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(|_| {}).await
}

/// Starts an app after letting the test adjust the configuration.
pub async fn spawn_app_with(adjust: impl FnOnce(&mut Config)) -> TestApp {
    // The production filter, so the captured log is what an operator would see; only warnings
    // and errors reach stderr, as before.
    colloquy::telemetry::init_with_writer(&colloquy::config::LogConfig::default(), CapturedLog);
    let upstream = FakeUpstream::start().await;
    let data_dir = Arc::new(tempfile::tempdir().expect("temp dir"));
    let mut config = test_config(&upstream, data_dir.path().to_path_buf());
    adjust(&mut config);
    start(config, upstream, data_dir).await
}

fn test_config(upstream: &FakeUpstream, data_dir: PathBuf) -> Config {
    let mut config = Config {
        bind: "127.0.0.1:0".into(),
        data_dir,
        shutdown_timeout_secs: 1,
        workers: Some(2),
        ..Config::default()
    };
    config.llm.base_url = upstream.base_url.clone();
    config.llm.model = "fake-model".into();
    config.llm.api_key = Some(SecretString::from("upstream-secret"));
    config.llm.max_retries = 2;
    config.llm.retry_initial_backoff_ms = 10;
    config.llm.retry_max_backoff_ms = 2_000;
    config.llm.read_timeout_secs = 5;
    config.llm.first_byte_timeout_secs = 5;
    config.auth.bootstrap_api_key = Some(SecretString::from(ADMIN_KEY));
    // web_search is offered on the defaults (DuckDuckGo): no test reaches the real one. A test
    // that searches points these at its fake engine; any other call fails fast (port 9,
    // discard, is closed).
    config.tools.duckduckgo_api_url = "http://127.0.0.1:9".into();
    config.tools.duckduckgo_html_url = "http://127.0.0.1:9".into();
    config
}

async fn start(
    config: Config,
    upstream: FakeUpstream,
    data_dir: Arc<tempfile::TempDir>,
) -> TestApp {
    let app = Application::build_with_tools(config.clone(), crate::test_tools::all())
        .await
        .expect("application starts");
    let state = app.state().clone();
    let address = format!("http://{}", app.address());
    let login_url = app.login_url().map(str::to_string);
    let handle = app.handle();
    let db = app.state().db().clone();
    actix_web::rt::spawn(app.run_until_stopped());
    TestApp {
        address,
        http: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client"),
        api_key: ADMIN_KEY.to_string(),
        upstream,
        config,
        login_url,
        data_dir,
        db,
        state,
        handle,
    }
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.address, path)
    }

    /// A request authenticated with this app's admin API key. Routes of the typed client
    /// (`crate::client`) go through it; this is for other paths (`/health`, `/metrics`, the UI,
    /// unknown or malformed paths).
    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.http
            .request(method, self.url(path))
            .bearer_auth(&self.api_key)
    }

    /// Spends the first-start login link and returns the admin's session cookie value.
    pub async fn admin_session(&self) -> String {
        let link = self.login_url.as_deref().expect("first start made a link");
        let path = &link[link.find("/login?").expect("a login link")..];
        let response = self
            .anonymous(Method::GET, path)
            .send()
            .await
            .expect("redeem link");
        assert_eq!(response.status(), 303);
        session_cookie(&response).expect("session cookie")
    }

    /// A request with no credentials at all.
    pub fn anonymous(&self, method: Method, path: &str) -> RequestBuilder {
        self.http.request(method, self.url(path))
    }

    pub async fn get(&self, path: &str) -> Response {
        self.request(Method::GET, path).send().await.expect("GET")
    }

    pub async fn create_chat(&self, title: &str) -> Value {
        let response = self
            .chat_api()
            .create_chat()
            .json(&serde_json::json!({"title": title}))
            .call()
            .await;
        assert_eq!(response.status(), 201);
        response.json().await.expect("chat JSON")
    }

    /// A new chat's id.
    pub async fn new_chat(&self) -> String {
        self.create_chat("Chat").await["id"]
            .as_str()
            .expect("a chat id")
            .to_string()
    }

    /// Sends `body` as a message to `chat` through the chat API and reads the whole stream;
    /// the request must be accepted.
    pub async fn send(&self, chat: &str, body: Value) -> Vec<crate::sse::Frame> {
        let response = self.chat_api().send_message(chat).json(&body).call().await;
        assert_eq!(response.status(), 200, "{:?}", response.text().await);
        crate::sse::read_all(response).await
    }

    /// `send` of a message with just `text`.
    pub async fn send_text(&self, chat: &str, text: &str) -> Vec<crate::sse::Frame> {
        self.send(chat, serde_json::json!({"content": text})).await
    }

    /// Polls the schedule `id` until at least `succeeded` of its last runs succeeded (20 s at
    /// most), and returns its view.
    pub async fn wait_for_firings(&self, id: &str, succeeded: usize) -> Value {
        let what = format!("{succeeded} successful firing(s) of schedule {id}");
        eventually(&what, std::time::Duration::from_secs(20), || async {
            let view: Value = self.api().schedule(id).read_json().await;
            let ok = view["last_runs"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["status"] == "succeeded")
                .count();
            (ok >= succeeded).then_some(view)
        })
        .await
    }

    /// Polls the workflow `id`'s runs until the latest has `status` (10 s at most), and returns
    /// the list.
    pub async fn wait_for_workflow_run(&self, id: &str, status: &str) -> Value {
        let what = format!("a {status} run of workflow {id}");
        eventually(&what, std::time::Duration::from_secs(10), || async {
            let runs: Value = self.api().workflow_runs(id).read_json().await;
            (runs["runs"][0]["status"] == status).then_some(runs)
        })
        .await
    }

    /// Creates another user and returns an API key for them.
    pub async fn create_user_with_key(&self, username: &str) -> String {
        let response = self
            .auth()
            .create_user()
            .json(&serde_json::json!({"username": username, "password": "a long password"}))
            .call()
            .await;
        assert_eq!(response.status(), 201, "{:?}", response.text().await);
        let login = self
            .as_anonymous()
            .auth()
            .login()
            .json(&serde_json::json!({"username": username, "password": "a long password"}))
            .send()
            .await
            .expect("login");
        assert_eq!(login.status(), 200);
        let cookie = session_cookie(&login).expect("session cookie");
        let key = self
            .as_browser(&cookie)
            .auth()
            .create_api_key()
            .json(&serde_json::json!({"name": "tests"}))
            .send()
            .await
            .expect("create key");
        assert_eq!(key.status(), 201);
        let body: Value = key.json().await.expect("key JSON");
        body["key"].as_str().expect("key").to_string()
    }

    /// Stops this app gracefully and starts a new one on the same data directory.
    pub async fn restart(self) -> TestApp {
        self.handle.stop(true).await;
        let mut config = self.config.clone();
        config.bind = "127.0.0.1:0".into();
        start(config, self.upstream.clone(), self.data_dir.clone()).await
    }

    /// Restarts with a changed configuration (same data directory and upstream).
    pub async fn restart_with_config(self, mut config: Config) -> TestApp {
        self.handle.stop(true).await;
        config.bind = "127.0.0.1:0".into();
        start(config, self.upstream.clone(), self.data_dir.clone()).await
    }

    /// Closes the server's database pool, as if the database went away.
    pub async fn close_database(&self) {
        self.db.close_by_ref().await.expect("close pool");
    }
}

/// Stops `app` and starts it again on the same data with `config`.
pub async fn restart_with(app: TestApp, config: Config) -> TestApp {
    app.restart_with_config(config).await
}

/// The value of the `session` cookie a response sets.
pub fn session_cookie(response: &Response) -> Option<String> {
    response
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|v| v.strip_prefix("session="))
        .map(|v| v.split(';').next().unwrap_or_default().to_string())
}

/// The body of an error response, checked to be in OpenAI's shape.
/// The names of the app's tables (SQLite's own aside).
pub async fn table_names(app: &TestApp) -> Vec<String> {
    use sea_orm::{ConnectionTrait, Statement};
    let backend = app.db.get_database_backend();
    app.db
        .query_all_raw(Statement::from_string(
            backend,
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
        ))
        .await
        .expect("the tables")
        .into_iter()
        .map(|row| row.try_get("", "name").expect("a table's name"))
        .collect()
}

pub async fn error_body(response: Response) -> Value {
    let body: Value = response.json().await.expect("error body is JSON");
    assert!(body["error"]["message"].is_string(), "{body}");
    assert!(body["error"]["type"].is_string(), "{body}");
    assert!(body["error"]["code"].is_string(), "{body}");
    body["error"].clone()
}

/// Everything every test app in this binary logged, as formatted text lines.
static LOG: Mutex<Vec<u8>> = Mutex::new(Vec::new());

/// The log written so far by every app this test binary started (tests run concurrently, so
/// it holds their lines too).
pub fn captured_log() -> String {
    String::from_utf8_lossy(&LOG.lock().unwrap_or_else(|p| p.into_inner())).into_owned()
}

/// The test binary's log writer: keeps every line in `LOG` and copies warnings and errors to
/// stderr.
#[derive(Clone, Copy)]
struct CapturedLog;

struct CapturedLine {
    to_stderr: bool,
}

impl Write for CapturedLine {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        LOG.lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(bytes);
        if self.to_stderr {
            std::io::stderr().write_all(bytes)?;
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for CapturedLog {
    type Writer = CapturedLine;

    fn make_writer(&'a self) -> Self::Writer {
        CapturedLine { to_stderr: true }
    }

    fn make_writer_for(&'a self, meta: &tracing::Metadata<'_>) -> Self::Writer {
        CapturedLine {
            to_stderr: *meta.level() <= tracing::Level::WARN,
        }
    }
}

/// Runs a client program (an SDK script) against `app` with `COLLOQUY_URL` and `COLLOQUY_KEY`
/// set, and returns the one JSON line it prints; fails with its output if it exits non-zero.
pub async fn run_client(app: &TestApp, mut command: std::process::Command) -> Value {
    command
        .env("COLLOQUY_URL", &app.address)
        .env("COLLOQUY_KEY", &app.api_key);
    let output = actix_web::rt::task::spawn_blocking(move || {
        crate::subprocess::output_within(command, "the client program", CLIENT_LIMIT)
    })
    .await
    .expect("the client's thread");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "client failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.trim()).expect("one JSON line")
}

/// Polls `check` every 20 ms until it gives `Some`, and returns that; fails the test, naming
/// `what`, if `within` passes first. The one way tests wait for something to happen.
pub async fn eventually<T, F, Fut>(what: &str, within: std::time::Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if let Some(found) = check().await {
            return found;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what} did not happen within {within:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Requests racing for a per-user cap's last places (enough to have overshot it before creates
/// counted and inserted under the user's lock).
pub const RACERS: usize = 80;

/// Sends `RACERS` create requests at once (`request(i)` builds the `i`th) and checks that
/// exactly `cap` were created (201) and every other was refused with 409 and `code`.
pub async fn race_to_the_cap(cap: usize, code: &str, request: impl Fn(usize) -> RequestBuilder) {
    let racing = (0..RACERS).map(|i| request(i).call());
    let responses = futures_util::future::join_all(racing).await;
    let mut created = 0;
    for response in responses {
        match response.status().as_u16() {
            201 => created += 1,
            409 => assert_eq!(error_body(response).await["code"], code),
            other => panic!("{other}: {:?}", response.text().await),
        }
    }
    assert_eq!(created, cap, "creates that passed the cap of {cap}");
}

/// Reads a per-user list (`list()` builds its request; `key` names the array in its answer)
/// two items a page, checking the paging fields, and returns the ids of every item, in order.
pub async fn read_every_page(list: impl Fn() -> RequestBuilder, key: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let mut offset = 0;
    loop {
        let page: Value = list()
            .with_query(&format!("limit=2&offset={offset}"))
            .read_json()
            .await;
        let items = page[key].as_array().unwrap_or_else(|| panic!("{page}"));
        assert!(items.len() <= 2, "{page}");
        ids.extend(items.iter().map(|i| i["id"].as_str().unwrap().to_string()));
        let total = page["total"].as_u64().unwrap();
        if !page["has_more"].as_bool().unwrap() {
            assert!(page["next_offset"].is_null(), "{page}");
            assert_eq!(ids.len() as u64, total, "{page}");
            return ids;
        }
        assert_eq!(page["next_offset"], offset + items.len() as u64, "{page}");
        offset = page["next_offset"].as_u64().unwrap();
    }
}
