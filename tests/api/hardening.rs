//! Hostile input against the real server: pages and uploads nested thousands deep (which
//! once overflowed a worker's stack and aborted the process, at every restart for an upload),
//! work that keeps being cut off at start-up, and answers cut off by SIGKILL.

use entities::ids::{AskId, ChatId, DocumentId, RunId, UserId};
use std::time::{Duration, Instant};

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use chrono::Utc;
use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, Set};
use serde_json::{Value, json};

use crate::client::{Call, Client};
use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, spawn_app, spawn_app_with};
use crate::sse::read_all;

/// The depth that aborted the server before: 5,000 nested elements (about 30 KB).
const DEPTH: usize = 5_000;

fn nested_page(open: &str, close: &str, depth: usize) -> String {
    format!(
        "<!doctype html><html><body><p>Nested page marker.</p>{}deep text{}</body></html>",
        open.repeat(depth),
        close.repeat(depth)
    )
}

/// A fake web: a SearXNG-shaped `/search` pointing at `/deep`, the deep pages themselves, and
/// `/slow-to-parse` (100,000 nested divs: html5ever needs over a minute for it).
async fn start_hostile_web() -> String {
    let server = HttpServer::new(|| {
        App::new()
            .route(
                "/search",
                web::get().to(|req: HttpRequest| async move {
                    let base = format!("http://{}", req.connection_info().host());
                    HttpResponse::Ok().json(json!({
                        "query": "deep",
                        "number_of_results": 1,
                        "results": [{"url": format!("{base}/deep/span"), "title": "Deep",
                                     "content": "a deep page", "engine": "fake"}]
                    }))
                }),
            )
            .route(
                "/deep/{kind}",
                web::get().to(|path: web::Path<String>| async move {
                    let (open, close) = match path.as_str() {
                        "div" => ("<div>", "</div>"),
                        "table" => ("<table><tr><td>", "</td></tr></table>"),
                        _ => ("<span>", "</span>"),
                    };
                    HttpResponse::Ok()
                        .content_type("text/html")
                        .body(nested_page(open, close, DEPTH))
                }),
            )
            .route(
                "/slow-to-parse",
                web::get().to(|| async {
                    HttpResponse::Ok()
                        .content_type("text/html")
                        .body("<div>".repeat(100_000))
                }),
            )
    })
    .workers(1)
    .bind("127.0.0.1:0")
    .unwrap();
    let address = server.addrs()[0];
    actix_web::rt::spawn(server.run());
    format!("http://{address}")
}

async fn hostile_app(web: &str) -> TestApp {
    let allowed = web.trim_start_matches("http://").to_string();
    let search = web.to_string();
    spawn_app_with(move |config| {
        config.tools.ssrf_allow_list = vec![allowed];
        config.tools.web_search_url = Some(search);
        // 5,000 nested divs take html5ever about 1.2 s here (its tree builder scans the
        // open elements at every start tag); the 100,000-deep page takes minutes.
        config.tools.fetch_extraction_budget_secs = 4;
    })
    .await
}

/// Runs one `/v1` turn in which the model calls `tool` with `arguments`; returns the tool
/// message the model was sent back.
async fn tool_result(app: &TestApp, tool: &str, arguments: Value) -> String {
    app.upstream.script([
        Reply::tool_call("call_1", tool, arguments),
        Reply::text("Read it."),
    ]);
    let before = app.upstream.received().len();
    let response = app
        .openai()
        .chat_completions()
        .json(&json!({"model": "fake-model",
                    "messages": [{"role": "user", "content": "Read the page."}],
                    "web_search_options": {"x_tools": [tool]}}))
        .call()
        .await;
    assert_eq!(response.status(), 200, "{:?}", response.text().await);
    let received = app.upstream.received();
    let second = &received[before + 1].body;
    let message = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .unwrap_or_else(|| panic!("no tool message in {second}"))
        .clone();
    message["content"].as_str().unwrap().to_string()
}

async fn assert_alive(app: &TestApp) {
    let health = app.get("/health").await;
    assert_eq!(health.status(), 200, "the server must still answer");
}

#[actix_web::test]
async fn pages_nested_5000_deep_are_read_by_fetch_url_and_the_server_lives() {
    let web = start_hostile_web().await;
    let app = hostile_app(&web).await;
    for kind in ["span", "div", "table"] {
        let result = tool_result(
            &app,
            "fetch_url",
            json!({"url": format!("{web}/deep/{kind}")}),
        )
        .await;
        let text = result;
        assert!(text.contains("deep text"), "{kind}: {text:.500}");
        assert!(text.contains("Nested page marker"), "{kind}: {text:.500}");
        assert_alive(&app).await;
    }
}

#[actix_web::test]
async fn a_page_that_takes_too_long_to_parse_is_an_extraction_error_within_its_budget() {
    let web = start_hostile_web().await;
    let app = hostile_app(&web).await;
    let started = Instant::now();
    let result = tool_result(
        &app,
        "fetch_url",
        json!({"url": format!("{web}/slow-to-parse")}),
    )
    .await;
    let text = result;
    assert!(text.contains("extraction_failed"), "{text}");
    assert!(text.contains("budget"), "{text}");
    // Unbounded, this page holds a CPU for over a minute.
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_alive(&app).await;
}

#[actix_web::test]
async fn web_search_auto_fetches_a_page_nested_5000_deep_and_the_server_lives() {
    let web = start_hostile_web().await;
    let app = hostile_app(&web).await;
    let text = tool_result(&app, "web_search", json!({"query": "deep"})).await;
    assert!(text.contains("deep text"), "{text:.1000}");
    assert_alive(&app).await;
}

/// Uploads a file and checks it was accepted.
async fn upload(app: &TestApp, chat: &str, filename: &str, bytes: Vec<u8>) {
    let response = crate::documents::upload(app, chat, filename, bytes).await;
    assert!(response.status().is_success(), "{:?}", response.status());
}

/// The chat's documents once none is uploading or processing.
async fn settled(app: &TestApp, chat: &str) -> Vec<Value> {
    crate::documents::settled(app, chat).await["documents"]
        .as_array()
        .unwrap()
        .clone()
}

#[actix_web::test]
async fn an_uploaded_page_nested_5000_deep_is_processed_and_a_restart_is_clean() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    upload(
        &app,
        &chat,
        "deep.html",
        nested_page("<span>", "</span>", DEPTH).into_bytes(),
    )
    .await;
    upload(
        &app,
        &chat,
        "deeper.html",
        nested_page("<table><tr><td>", "</td></tr></table>", 20_000).into_bytes(),
    )
    .await;
    let documents = settled(&app, &chat).await;
    for document in &documents {
        assert_eq!(document["status"], "processed", "{document}");
        assert_eq!(document["searchable"], true, "{document}");
    }
    let app = app.restart().await;
    assert_alive(&app).await;
    let documents = settled(&app, &chat).await;
    assert_eq!(documents.len(), 2);
    assert!(documents.iter().all(|d| d["status"] == "processed"));
}

#[actix_web::test]
async fn every_hostile_sample_uploaded_as_a_document_ends_processed_or_in_error() {
    let app = spawn_app_with(|config| config.documents.extraction_budget_secs = 2).await;
    let chat = app.new_chat().await;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name.ends_with(".py") {
            continue;
        }
        upload(&app, &chat, &name, std::fs::read(&path).unwrap()).await;
        names.push(name);
    }
    let documents = settled(&app, &chat).await;
    assert_eq!(documents.len(), names.len());
    for document in &documents {
        match document["status"].as_str() {
            Some("processed") => {}
            Some("error") => assert!(
                document["error"].as_str().is_some_and(|e| !e.is_empty()),
                "an error says why: {document}"
            ),
            other => panic!("unexpected status {other:?}: {document}"),
        }
    }
    let by_name = |name: &str| documents.iter().find(|d| d["filename"] == name).unwrap();
    assert_eq!(by_name("deep-span.html")["status"], "processed");
    assert_eq!(by_name("pdf-form-draws-itself.pdf")["status"], "error");
    assert_eq!(by_name("pdf-parent-loop.pdf")["status"], "error");
    assert_alive(&app).await;
}

/// Puts a document back in `processing` as a process cut off mid-way would leave it.
async fn cut_off(app: &TestApp, document_id: &str, attempts: i32) {
    let mut row: entities::documents::ActiveModel =
        entities::documents::Entity::find_by_id(DocumentId::from_string(document_id))
            .one(&app.db)
            .await
            .unwrap()
            .unwrap()
            .into();
    row.status = Set(entities::documents::DocumentStatus::Processing);
    row.processing_attempts = Set(attempts);
    row.update(&app.db).await.unwrap();
}

#[actix_web::test]
async fn a_document_cut_off_twice_is_failed_at_start_up_not_retried() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    upload(&app, &chat, "once.txt", b"cut off once".to_vec()).await;
    upload(&app, &chat, "twice.txt", b"cut off twice".to_vec()).await;
    let documents = settled(&app, &chat).await;
    let id_of = |name: &str| {
        entities::documents::Entity::find()
            .filter(entities::documents::Column::Filename.eq(name.to_string()))
            .filter(entities::documents::Column::ChatId.eq(chat.clone()))
            .one(&app.db)
    };
    assert_eq!(documents.len(), 2);
    let once = id_of("once.txt").await.unwrap().unwrap();
    assert_eq!(once.processing_attempts, 1, "the attempt is recorded");
    let twice = id_of("twice.txt").await.unwrap().unwrap();
    cut_off(&app, once.id.as_str(), 1).await;
    cut_off(&app, twice.id.as_str(), 2).await;

    let app = app.restart().await;
    let documents = settled(&app, &chat).await;
    let by_name = |name: &str| {
        documents
            .iter()
            .find(|d| d["filename"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(
        by_name("once.txt")["status"],
        "processed",
        "one cut-off is retried"
    );
    let failed = by_name("twice.txt");
    assert_eq!(failed["status"], "error", "{failed}");
    assert!(
        failed["error"]
            .as_str()
            .unwrap()
            .contains("cut off 2 times"),
        "{failed}"
    );
}

#[actix_web::test]
async fn an_answered_question_whose_continuation_keeps_being_cut_off_is_failed() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    let me: Value = app.auth().me().read_json().await;
    let user_id = UserId::from_string(me["id"].as_str().unwrap());
    let chat_id = ChatId::from_string(chat.clone());
    let run_id = RunId::generate();
    entities::runs::ActiveModel {
        id: Set(run_id.clone()),
        chat_id: Set(chat_id.clone()),
        user_id: Set(user_id.clone()),
        status: Set(entities::runs::RunStatus::Running),
        iterations: Set(1),
        input_tokens: Set(0),
        output_tokens: Set(0),
        created_at: Set(Utc::now()),
        ..Default::default()
    }
    .insert(&app.db)
    .await
    .unwrap();
    let correlation_id = format!("ask_{}", uuid::Uuid::now_v7().simple());
    entities::pending_asks::ActiveModel {
        id: Set(AskId::generate()),
        correlation_id: Set(entities::ids::AskCorrelationId::from_string(
            &correlation_id,
        )),
        chat_id: Set(chat_id),
        run_id: Set(run_id.clone()),
        user_id: Set(user_id),
        tool_call_id: Set("call_1".into()),
        question: Set(json!({"question": "Which one?"})),
        // Never read: the ask is failed before its checkpoint is used.
        checkpoint: Set(json!({})),
        status: Set(entities::pending_asks::AskStatus::Answered),
        answer: Set(Some(json!({"text": "The first"}))),
        created_at: Set(Utc::now()),
        expires_at: Set(Utc::now() + chrono::Duration::hours(1)),
        answered_at: Set(Some(Utc::now())),
        // Cut off once when answered, once more after the previous start.
        resume_attempts: Set(1),
        kind: Set(entities::pending_asks::AskKind::AskUser),
    }
    .insert(&app.db)
    .await
    .unwrap();

    let app = app.restart().await;
    let ask = entities::pending_asks::Entity::find()
        .filter(entities::pending_asks::Column::CorrelationId.eq(correlation_id))
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(sea_orm::ActiveEnum::to_value(&ask.status), "failed");
    let run = entities::runs::Entity::find_by_id(run_id)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(run.status.as_str(), "failed");
    assert!(
        run.error.unwrap_or_default().contains("cut off 2 times"),
        "the reason is recorded"
    );
    assert_alive(&app).await;
}

/// The real binary, started on `data` against `upstream`, killable with SIGKILL.
struct Binary {
    child: std::process::Child,
    url: String,
    http: reqwest::Client,
}

impl Binary {
    async fn start(data: &std::path::Path, upstream: &str) -> Binary {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let bind = format!("127.0.0.1:{port}");
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_colloquy"))
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("COLLOQUY_DATA_DIR", data)
            .env("COLLOQUY_BIND", &bind)
            .env("COLLOQUY_LOG__FILTER", "warn")
            .env("COLLOQUY_LLM__BASE_URL", upstream)
            .env("COLLOQUY_LLM__MODEL", "fake-model")
            .env(
                "COLLOQUY_AUTH__BOOTSTRAP_API_KEY",
                crate::helpers::ADMIN_KEY,
            )
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut binary = Binary {
            child,
            url: format!("http://{bind}"),
            http: reqwest::Client::new(),
        };
        let client = reqwest::Client::new();
        let health = format!("{}/health", binary.url);
        crate::helpers::eventually("the server coming up", Duration::from_secs(30), || {
            assert!(binary.child.try_wait().unwrap().is_none(), "it exited");
            let request = client.get(&health).send();
            async move { request.await.ok().map(|_| ()) }
        })
        .await;
        binary
    }

    /// The typed client for this server, with the admin's key.
    fn as_admin(&self) -> Client<'_> {
        Client::with_key(&self.http, &self.url, crate::helpers::ADMIN_KEY)
    }

    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Binary {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[actix_web::test]
async fn an_answer_cut_off_by_sigkill_keeps_its_text_marked_interrupted() {
    let upstream = crate::fake_upstream::FakeUpstream::start().await;
    let words: Vec<String> = (0..400).map(|i| format!("word{i} ")).collect();
    let full: String = words.concat();
    upstream.script([Reply::text(&full).event_gap(Duration::from_millis(25))]);
    let data = tempfile::tempdir().unwrap();
    let server = Binary::start(data.path(), &upstream.base_url).await;
    let chat = server
        .as_admin()
        .new_chat_with(&json!({"title": "Killed"}))
        .await;
    let response = server
        .as_admin()
        .chat_api()
        .send_message(&chat)
        .json(&json!({"content": "Count for me."}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let run_id = response.headers()["x-run-id"].to_str().unwrap().to_string();
    // About three seconds of streaming, then the process dies without warning.
    let mut received = 0;
    crate::sse::read_until(response, |frame| {
        if frame.kind() == "content" {
            received += 1;
        }
        received >= 120
    })
    .await;
    server.kill();

    let server = Binary::start(data.path(), &upstream.base_url).await;
    let messages: Value = server
        .as_admin()
        .chat_api()
        .messages(&chat)
        .read_json()
        .await;
    let messages = messages["data"].as_array().unwrap().clone();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "assistant", "{messages:?}");
    assert_eq!(last["stop_reason"], "interrupted");
    assert_eq!(last["interrupted"], true);
    let kept = last["content"].as_str().unwrap();
    assert!(
        full.starts_with(kept),
        "the draft is the answer's beginning"
    );
    // Saved at least once a second: of ~3 s streamed, well over a third is kept.
    let kept_words = kept.split_whitespace().count();
    assert!(kept_words >= 40, "only {kept_words} words kept");

    let replay = server
        .as_admin()
        .chat_api()
        .run_events(&chat, &run_id)
        .send()
        .await
        .unwrap();
    assert_eq!(replay.status(), 200, "a finished run can be re-attached");
    let frames = read_all(replay).await;
    assert_eq!(crate::sse::content(&frames), kept);
    let finished = crate::sse::finished(&frames);
    assert_eq!(finished["stop_reason"], "interrupted", "{finished}");
}

#[actix_web::test]
async fn json_nested_100000_deep_is_refused_as_a_request_and_as_tool_arguments() {
    let app = spawn_app().await;
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let body = format!(
        r#"{{"model": "fake-model", "messages": [{{"role": "user", "content": {deep}}}]}}"#
    );
    let refused = app
        .openai()
        .chat_completions()
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
    let error = crate::helpers::error_body(refused).await;
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("recursion limit"),
        "{error}"
    );

    // The model's own arguments, nested as deep: an error result, and the run goes on.
    app.upstream.script([
        Reply {
            tool_calls: vec![("call_1".into(), "calculator".into(), deep.clone())],
            usage: (20, 8),
            fragment_chars: 4096,
            ..Reply::default()
        },
        Reply::text("I could not calculate that."),
    ]);
    let response = app
        .openai()
        .chat_completions()
        .json(&json!({"model": "fake-model",
                    "messages": [{"role": "user", "content": "Compute."}],
                    "web_search_options": {"x_tools": ["calculator"]}}))
        .call()
        .await;
    assert_eq!(response.status(), 200);
    let answer: Value = response.json().await.unwrap();
    assert_eq!(
        answer["choices"][0]["message"]["content"],
        "I could not calculate that."
    );
    let received = app.upstream.received();
    let tool_message = received.last().unwrap().body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap();
    assert!(
        tool_message["content"].as_str().unwrap().contains("error"),
        "{tool_message}"
    );
    assert_alive(&app).await;
}
