//! The browser UI end to end: a real headless Chromium (Debian's `chromium`, driven by npm's
//! `playwright-core`, both installed by `.ci/run`) against the real server and the fake
//! upstream. Each test scripts the upstream, then runs one scenario from `tests/browser/`
//! (one per numbered point of the UI's issue); screenshots land in
//! `target/browser-screenshots/`. Set `COLLOQUY_TEST_STATIC_DIR` to a `node static/build.mjs`
//! output to try UI changes without rebuilding the server.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, spawn_app_with};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The Chromium the tests drive: `$CHROMIUM`, else Debian's. Shared with `browser_sessions`.
pub(crate) fn chromium() -> PathBuf {
    if let Some(path) = std::env::var_os("CHROMIUM") {
        return PathBuf::from(path);
    }
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|path| path.exists())
        .expect("the browser tests need Chromium: `apt install chromium` (.ci/run installs it)")
}

pub(crate) async fn browser_app(adjust: impl FnOnce(&mut colloquy::config::Config)) -> TestApp {
    spawn_app_with(|config| {
        if let Some(dir) = std::env::var_os("COLLOQUY_TEST_STATIC_DIR") {
            config.static_dir = Some(PathBuf::from(dir));
        }
        adjust(config);
    })
    .await
}

/// One browser at a time: two cores cannot run several Chromiums and the server's tests
/// beside them without every timing stretching.
static ONE_BROWSER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Runs `tests/browser/<scenario>.mjs` against `app`; fails the test with its output.
pub(crate) async fn run_scenario(app: &TestApp, scenario: &str, extra: &[(&str, String)]) {
    let _turn = ONE_BROWSER.lock().await;
    let mut command = Command::new("node");
    command
        .arg(root().join(format!("tests/browser/{scenario}.mjs")))
        .current_dir(root())
        .env("SCENARIO", scenario)
        .env("COLLOQUY_URL", &app.address)
        .env(
            "COLLOQUY_LOGIN_URL",
            app.login_url.clone().expect("a first-start login link"),
        )
        .env("CHROMIUM", chromium())
        .env("SCREENSHOT_DIR", root().join("target/browser-screenshots"));
    for (key, value) in extra {
        command.env(key, value);
    }
    let what = format!("browser scenario {scenario}");
    let output = actix_web::rt::task::spawn_blocking(move || {
        crate::subprocess::output_within(command, &what, crate::subprocess::CLIENT_LIMIT)
    })
    .await
    .expect("the scenario's thread");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "browser scenario {scenario} failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
}

#[test]
fn the_uis_stream_decoding_and_rendering_helpers_pass_their_unit_tests() {
    let mut command = Command::new("node");
    command
        .args(["--test", "static/tests/"])
        .current_dir(root());
    let output = crate::subprocess::output_within(
        command,
        "node --test static/tests/",
        crate::subprocess::CLIENT_LIMIT,
    );
    assert!(
        output.status.success(),
        "node --test static/tests/ failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn text(reply: &str) -> Reply {
    Reply::text(reply)
}

#[actix_web::test]
async fn the_ui_is_served_to_a_signed_out_visitor_as_a_sign_in_page_under_a_strict_csp() {
    let app = browser_app(|_| {}).await;
    let page = app.anonymous(Method::GET, "/").send().await.unwrap();
    assert_eq!(page.status(), 200);
    let csp = page.headers()["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"),
        "{csp}"
    );
    assert!(
        page.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    let html = page.text().await.unwrap();
    let script = html
        .split('"')
        .find(|piece| piece.starts_with("/assets/app-") && piece.ends_with(".js"))
        .expect("the page loads the app's bundle");
    let compressed = app
        .anonymous(Method::GET, script)
        .header("accept-encoding", "br, gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(compressed.headers()["content-encoding"], "br");
    if std::env::var_os("COLLOQUY_TEST_STATIC_DIR").is_none() {
        // Served from a directory while working on the UI, nothing is cached.
        assert!(
            compressed.headers()["cache-control"]
                .to_str()
                .unwrap()
                .contains("immutable")
        );
    }
    let missing = app
        .anonymous(Method::GET, "/assets/nope.js")
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    run_scenario(&app, "serving", &[]).await;
}

#[actix_web::test]
async fn people_sign_in_with_the_link_or_a_password_and_an_expired_session_keeps_the_draft() {
    let app = browser_app(|_| {}).await;
    let created = app
        .auth()
        .create_user()
        .json(&json!({"username": "ada", "password": "analytical engine"}))
        .call()
        .await;
    assert_eq!(created.status(), 201);
    // A link for an account disabled after the link was made.
    let made: Value = app
        .admin()
        .create_user()
        .json(&json!({"username": "eve"}))
        .call()
        .await
        .json()
        .await
        .unwrap();
    let disabled = app
        .admin()
        .update_user(made["user"]["id"].as_str().unwrap())
        .json(&json!({"disabled": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(disabled.status(), 200);
    let disabled_link = made["login_url"].as_str().unwrap().to_string();
    run_scenario(&app, "sign_in", &[("DISABLED_LINK", disabled_link)]).await;
}

#[actix_web::test]
async fn chats_are_listed_newest_first_renamed_searched_deleted_and_each_has_its_own_url() {
    let app = browser_app(|_| {}).await;
    app.upstream.script([
        text("First answer about apples."),
        text("Second answer about pears."),
    ]);
    run_scenario(&app, "chats", &[]).await;
}

#[actix_web::test]
async fn a_reply_streams_as_sanitised_markdown_with_code_math_and_prices_left_alone() {
    let app = browser_app(|_| {}).await;
    let answer = "# Plan\n\nHere is a list:\n\n- one\n- **two**\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n\
        ```rust\nfn main() { println!(\"hi\"); }\n```\n\nEuler: $e^{i\\pi} + 1 = 0$ and \\(a^2\\).\n\n\
        It costs $5 and $10 today.\n\n<img src=x onerror=\"window.pwned=1\"><script>window.pwned=2</script>\n";
    app.upstream.script([
        Reply {
            pieces: answer
                .split_inclusive(['\n', ' '])
                .map(str::to_string)
                .collect(),
            ..text("")
        }
        .event_gap(Duration::from_millis(15)),
        text("Second line received."),
    ]);
    run_scenario(&app, "markdown", &[]).await;
    let sent = app.upstream.received();
    let last_user = sent
        .last()
        .and_then(|r| r.body["messages"].as_array().cloned())
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user").cloned())
        .expect("a user message");
    assert_eq!(
        last_user["content"], "line one\nline two",
        "Shift+Enter adds a line; Enter sends"
    );
}

#[actix_web::test]
async fn stop_keeps_the_partial_answer_and_a_reload_mid_reply_reattaches_without_loss_or_doubling()
{
    let app = browser_app(|_| {}).await;
    // One word per paragraph, so the answer is tall enough to scroll.
    let long: String = (1..=60).map(|i| format!("w{i} \n\n")).collect();
    app.upstream.script([
        text(&long).event_gap(Duration::from_millis(60)),
        text(&long).event_gap(Duration::from_millis(150)),
    ]);
    run_scenario(
        &app,
        "stream_control",
        &[("EXPECTED", long.trim().to_string())],
    )
    .await;
}

#[actix_web::test]
async fn an_image_pasted_into_the_composer_is_sent_and_its_thumbnail_stays_after_a_reload() {
    let app = browser_app(|config| config.attachments.max_image_bytes = 2_000).await;
    app.upstream.script([
        text("Hello! Send me a picture."),
        text("A single transparent pixel."),
        text("Another pixel."),
    ]);
    run_scenario(&app, "images", &[]).await;
    let asked: Vec<Value> = app
        .upstream
        .received()
        .into_iter()
        .filter(|r| r.path.ends_with("/chat/completions"))
        .map(|r| r.body)
        .collect();
    assert_eq!(asked.len(), 3);
    let expected = format!(
        "data:image/png;base64,{}",
        base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            crate::images::PNG
        )
    );
    let images = crate::fake_upstream::image_urls(&asked[1]);
    assert_eq!(
        images.len(),
        1,
        "the pasted image only, not the removed one"
    );
    assert_eq!(images[0].1, expected, "the model got the pasted bytes");
    let question = &asked[1]["messages"][images[0].0]["content"];
    assert_eq!(question[0]["text"], "What is in this picture?");
    let first = &asked[2]["messages"];
    assert_eq!(
        first[first.as_array().unwrap().len() - 1]["content"],
        json!([{"type": "image_url", "image_url": {"url": expected}}]),
        "a new chat's first message, an image alone"
    );
}

#[actix_web::test]
async fn an_unreachable_model_server_gets_a_banner_naming_it() {
    let app = browser_app(|config| {
        config.llm.base_url = "http://127.0.0.1:9/v1".into();
        config.llm.max_retries = 0;
    })
    .await;
    run_scenario(&app, "unreachable", &[]).await;
}

#[actix_web::test]
async fn editing_and_regenerating_make_branches_and_the_chosen_one_survives_a_reload() {
    let app = browser_app(|_| {}).await;
    app.upstream.script([
        text("Answer to the first question."),
        text("Answer to the edited question."),
        text("A regenerated answer."),
    ]);
    run_scenario(&app, "branches", &[]).await;
}

#[actix_web::test]
async fn tools_are_switched_on_in_settings_and_their_progress_and_calls_are_shown() {
    let app = browser_app(|_| {}).await;
    app.upstream.script([
        Reply::tool_call("call_1", "calculator", json!({"expression": "2^10"}))
            .delay(Duration::from_millis(300)),
        Reply::tool_call("call_2", "calculator", json!({"expression": "1/0"}))
            .delay(Duration::from_millis(800)),
        text("2^10 is 1024.").event_gap(Duration::from_millis(20)),
        text("With tools at 1 round, here is my answer."),
    ]);
    run_scenario(&app, "tools", &[]).await;
    // The model picker lists the server's models too: only the completions matter here.
    let requests: Vec<_> = app
        .upstream
        .received()
        .into_iter()
        .filter(|r| r.path == "/v1/chat/completions")
        .collect();
    let names = |body: &Value| -> Vec<String> {
        body["tools"]
            .as_array()
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    assert!(
        names(&requests[0].body).contains(&"calculator".to_string()),
        "the Tools switch offered the calculator: {:?}",
        names(&requests[0].body)
    );
}

#[actix_web::test]
async fn deep_think_is_switched_on_in_settings_and_shows_its_plan_sub_tasks_and_report() {
    let app = browser_app(|_| {}).await;
    let plan = json!({"title": "Rust web servers", "subtasks": [
        {"id": "1", "query": "actix-web performance", "tools": ["web_search"]},
        {"id": "2", "query": "axum ergonomics", "tools": ["web_search"]},
        {"id": "3", "query": "deployment stories", "tools": ["fetch_url"]},
    ]});
    // The sub-tasks take a moment, so the scenario sees the plan while the research runs.
    // The script is in request order: sub-tasks run one after another.
    let research = Duration::from_millis(700);
    app.upstream.script([
        Reply::text(&plan.to_string()),
        text("Findings one: actix is fast.").delay(research),
        text("Findings two: axum is ergonomic.").delay(research),
        // One attempt and two retries (the tests' `max_retries`): the third sub-task fails.
        Reply::status(500, "exploded"),
        Reply::status(500, "exploded"),
        Reply::status(500, "exploded"),
        text("# Rust web servers\n\nActix is fast [1]. Axum is ergonomic.")
            .event_gap(Duration::from_millis(40)),
    ]);
    run_scenario(&app, "deep_think", &[]).await;
    let completions = app
        .upstream
        .received()
        .iter()
        .filter(|r| r.path == "/v1/chat/completions")
        .count();
    assert!(
        completions >= 7,
        "the plan, three sub-tasks (the last tried three times) and the synthesis: {completions}"
    );
    let chats: Value = app.chat_api().list_chats().read_json().await;
    let chat = chats["data"][0]["id"]
        .as_str()
        .expect("the scenario's chat");
    let artifacts: Value = app.chat_api().artifacts(chat).read_json().await;
    assert!(
        artifacts["artifacts"]
            .as_array()
            .is_some_and(|all| all.iter().any(|a| a["identifier"]
                .as_str()
                .is_some_and(|id| id.starts_with("deep-think-")))),
        "the report was saved as an artifact: {artifacts}"
    );
}

#[actix_web::test]
async fn a_chat_set_to_summarize_says_when_older_messages_were_summarised() {
    let app = browser_app(|_| {}).await;
    app.upstream.context_length(4_096);
    app.upstream.summarize(true);
    app.upstream
        .script((0..4).map(|turn| text(&format!("answer {turn}."))));
    run_scenario(&app, "long_chat", &[]).await;
    let listed: Value = app.chat_api().list_chats().read_json().await;
    let chat = &listed["data"][0];
    assert_eq!(
        chat["context_strategy"], "drop",
        "changed back after the reload"
    );
    let summaries = app
        .upstream
        .received()
        .iter()
        .filter(|r| r.path == "/v1/chat/completions" && r.body["stream"] != true)
        .count();
    assert!(summaries >= 1, "the model was asked for a summary");
}

#[actix_web::test]
async fn ask_user_cards_of_every_style_take_answers_and_survive_a_reload() {
    let app = browser_app(|_| {}).await;
    app.upstream.script([
        Reply::tool_call(
            "ask_1",
            "ask_user",
            json!({"question": "Which language?", "options": ["Python", "Rust"], "allow_free_text": true}),
        ),
        text("Rust it is."),
        Reply::tool_call(
            "ask_2",
            "ask_user",
            json!({"question": "Overwrite the file?", "style": "confirm"}),
        ),
        text("Overwritten."),
        Reply::tool_call(
            "ask_3",
            "ask_user",
            json!({"question": "How was it?", "style": "rating"}),
        ),
        text("Thanks for rating."),
        Reply::tool_call(
            "ask_4",
            "ask_user",
            json!({"question": "Connection details?", "style": "form", "fields": [
                {"label": "Host", "key": "host", "placeholder": "localhost", "required": true},
                {"label": "Port", "key": "port", "placeholder": "5432"}]}),
        ),
        text("Connecting to db.example."),
        Reply::tool_call(
            "ask_5",
            "ask_user",
            json!({"question": "Which toppings?", "options": ["Cheese", "Olives", "Basil"],
                   "multi_select": true, "allow_free_text": false}),
        ),
        text("Never mind the toppings."),
    ]);
    run_scenario(&app, "ask_user", &[]).await;
    let requests = app.upstream.received();
    let tool_results: Vec<String> = requests
        .iter()
        .filter_map(|r| r.body["messages"].as_array().cloned())
        .filter_map(|m| m.last().cloned())
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect();
    assert_eq!(
        tool_results,
        vec![
            r#"{"answer":"Rust"}"#.to_string(),
            r#"{"answer":"Yes"}"#.to_string(),
            r#"{"answer":4}"#.to_string(),
            r#"{"answer":{"host":"db.example"}}"#.to_string(),
        ],
        "each card sent its answer"
    );
}

#[actix_web::test]
async fn a_question_that_expired_unanswered_says_so() {
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, sea_query::Expr};
    let app = browser_app(|_| {}).await;
    let chat = app.create_chat("Ports").await["id"]
        .as_str()
        .unwrap()
        .to_string();
    app.upstream.script([Reply::tool_call(
        "ask_1",
        "ask_user",
        json!({"question": "Which port?", "options": ["8080", "9090"]}),
    )]);
    let paused = app
        .chat_api()
        .send_message(&chat)
        .json(&json!({"content": "Serve it"}))
        .call()
        .await;
    crate::sse::read_all(paused).await;
    let expired = entities::pending_asks::Entity::update_many()
        .col_expr(
            entities::pending_asks::Column::ExpiresAt,
            Expr::value(chrono::Utc::now() - chrono::Duration::hours(1)),
        )
        .filter(entities::pending_asks::Column::ChatId.eq(chat.as_str()))
        .exec(&app.db)
        .await
        .unwrap();
    assert_eq!(expired.rows_affected, 1, "the question was stored");
    run_scenario(&app, "ask_expired", &[("CHAT_ID", chat)]).await;
}

#[actix_web::test]
async fn the_screens_are_accessible_usable_at_375_px_themed_and_light_to_load() {
    let app = browser_app(|_| {}).await;
    app.upstream.script([text("A short answer with `code`.")]);
    run_scenario(&app, "quality", &[]).await;
}

#[actix_web::test]
async fn documents_upload_with_progress_resume_after_a_dropped_connection_badge_and_failures() {
    let app = browser_app(|config| {
        // Small limits, so the scenario meets both refusals and the truncation warning.
        config.documents.max_file_bytes = 6 * 1024 * 1024;
        config.documents.max_files_per_chat = 2;
        config.documents.max_text_chars = 20_000;
    })
    .await;
    app.upstream.script([text("Ready for your files.")]);
    run_scenario(&app, "documents", &[]).await;
    let chats: Value = app.chat_api().list_chats().read_json().await;
    let chat = chats["data"][0]["id"]
        .as_str()
        .expect("the scenario's chat");
    let listed: Value = app.chat_api().documents(chat).read_json().await;
    let documents = listed["documents"].as_array().expect("a list");
    let names: Vec<&str> = documents
        .iter()
        .filter_map(|d| d["filename"].as_str())
        .collect();
    assert_eq!(
        names,
        ["big.txt", "notes.txt"],
        "the failed PDF was deleted, the cancelled upload terminated, the refused ones never made"
    );
    let big = &documents[0];
    assert_eq!(
        big["size"],
        4 * 1024 * 1024,
        "every byte arrived once: {big}"
    );
    assert_eq!(big["status"], "processed", "{big}");
    assert!(big["warning"].is_string(), "cut at the text limit: {big}");
}

#[actix_web::test]
async fn memories_are_listed_added_edited_deleted_and_a_model_save_appears_live() {
    let app = browser_app(|_| {}).await;
    app.upstream.script([
        text("Hello there."),
        Reply::tool_call(
            "call_m",
            "save_memory",
            json!({"content": "The user writes code in Rust.", "category": "fact"}),
        ),
        // The answer waits, so the scenario sees the saved memory while the run goes on.
        text("Saved.").delay(Duration::from_millis(2500)),
    ]);
    run_scenario(&app, "memory", &[]).await;
    let chats: Value = app.chat_api().list_chats().read_json().await;
    let chat = chats["data"][0]["id"]
        .as_str()
        .expect("the scenario's chat");
    let listed: Value = app.chat_api().memories(chat).read_json().await;
    let mut contents: Vec<&str> = listed["memories"]
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    contents.sort_unstable();
    assert_eq!(
        contents,
        [
            "I prefer green tea to coffee",
            "The user writes code in Rust."
        ],
        "added then edited, the other deleted, and the model's save"
    );
}

#[actix_web::test]
async fn artifacts_of_every_type_render_in_the_panel_safely_with_versions_copy_and_download() {
    let app = browser_app(|_| {}).await;
    // The same file tells the scenario what each artifact holds.
    let fixture: Value = serde_json::from_str(include_str!("../browser/artifacts.json"))
        .expect("tests/browser/artifacts.json is JSON");
    let created = fixture["created"].as_array().expect("created artifacts");
    let updated = fixture["updated"].as_array().expect("updated artifacts");
    // One round creates every type; then the code and the diagram get a version 2 (the
    // diagram's does not parse), one round each so the last event is the diagram's.
    let mut create = Reply::tool_call("call_1", "create_artifact", created[0].clone())
        .delay(Duration::from_millis(200));
    for (index, artifact) in created.iter().enumerate().skip(1) {
        create = create.and_tool_call(
            &format!("call_{}", index + 1),
            "create_artifact",
            artifact.clone(),
        );
    }
    app.upstream.script([
        create,
        Reply::tool_call("call_8", "update_artifact", updated[0].clone()),
        Reply::tool_call("call_9", "update_artifact", updated[1].clone()),
        text(fixture["answer"].as_str().expect("the answer")).event_gap(Duration::from_millis(20)),
    ]);
    run_scenario(&app, "artifacts", &[]).await;

    let chats: Value = app.chat_api().list_chats().read_json().await;
    let chat = chats["data"][0]["id"]
        .as_str()
        .expect("the scenario's chat");
    let listed: Value = app.chat_api().artifacts(chat).read_json().await;
    assert_eq!(listed["total"], 7, "{listed}");
    let version_of = |identifier: &str| {
        listed["artifacts"]
            .as_array()
            .and_then(|all| all.iter().find(|a| a["identifier"] == identifier))
            .map(|a| a["version"].clone())
    };
    assert_eq!(version_of("fibonacci.py"), Some(json!(2)));
    assert_eq!(version_of("flow.mmd"), Some(json!(2)));
    // What the iframe loaded: the page inline, under a sandboxing CSP of its own.
    let preview = app
        .chat_api()
        .artifact_preview(chat, "probe.html")
        .call()
        .await;
    assert_eq!(preview.status(), 200);
    let csp = preview.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(csp.starts_with("sandbox allow-scripts"), "{csp}");
    assert!(
        preview
            .headers()
            .get("content-disposition")
            .is_none_or(|value| !value.to_str().unwrap_or("").starts_with("attachment")),
        "a preview is shown, not downloaded"
    );
}

#[actix_web::test]
async fn a_chats_agent_is_picked_in_settings_and_the_tools_switch_shows_what_it_allows() {
    let app = browser_app(|_| {}).await;
    let created = app
        .api()
        .create_agent()
        .json(
            &json!({"name": "Calculator", "enabled_tools": ["calculator"],
                    "system_prompt": "Only calculate."}),
        )
        .call()
        .await;
    assert_eq!(created.status(), 201);
    app.upstream.script([
        text("Hello from the default agent."),
        text("Using the calculator agent."),
    ]);
    run_scenario(&app, "agents", &[]).await;
    let requests: Vec<_> = app
        .upstream
        .received()
        .into_iter()
        .filter(|r| r.path == "/v1/chat/completions")
        .collect();
    let last = requests.last().expect("the second message's request");
    let offered: Vec<&str> = last.body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        offered,
        [
            "calculator",
            "create_artifact",
            "update_artifact",
            "save_memory",
            "recall_memory",
            "ask_user"
        ],
        "the Calculator agent's research tool, and the chat's own tools (always present)"
    );
    let first = last.body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default();
    assert!(
        first.starts_with("Only calculate."),
        "the agent's prompt comes first: {first}"
    );
}

#[actix_web::test]
async fn reasoning_streams_open_then_folds_above_the_answer_and_stays_folded_after_a_reload() {
    let app = browser_app(|_| {}).await;
    // Slow enough that the scenario sees the block open while the thoughts stream.
    app.upstream.script([Reply::reasoned(
        crate::fake_upstream::ReasoningShape::ReasoningContent,
        "Sunlight hits the air. Short blue waves scatter more than red ones: Rayleigh \
         scattering. So the sky looks blue.",
        "Because short blue waves scatter the most.",
    )
    .event_gap(Duration::from_millis(120))]);
    run_scenario(&app, "reasoning", &[]).await;
    let chats: Value = app.chat_api().list_chats().read_json().await;
    let chat = chats["data"][0]["id"]
        .as_str()
        .expect("the scenario's chat");
    let messages: Value = app.chat_api().messages(chat).read_json().await;
    let answer = messages["data"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        answer["content"],
        "Because short blue waves scatter the most."
    );
    assert!(
        answer["reasoning"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("Rayleigh scattering")),
        "{answer}"
    );
    assert!(
        answer["reasoning"]["duration_ms"].as_u64().unwrap() >= 1_000,
        "the thoughts took over a second to stream: {answer}"
    );
}

#[actix_web::test]
async fn a_knowledge_base_is_made_filled_given_to_an_agent_and_searched_in_its_chat() {
    let app = browser_app(|_| {}).await;
    app.upstream.script([
        text("Hello! Ask me about the handbook."),
        Reply::tool_call(
            "tc_kb",
            "search_knowledge",
            json!({"query": "days of paid holiday"}),
        ),
        text("You get 25 days of paid holiday."),
    ]);
    run_scenario(&app, "knowledge", &[]).await;
    let received = app.upstream.received();
    let asked = received
        .iter()
        .find(|r| {
            r.body["messages"]
                .as_array()
                .is_some_and(|m| m.iter().any(|m| m["tool_call_id"] == "tc_kb"))
        })
        .expect("the model got search_knowledge's result");
    let offered: Vec<&str> = asked.body["tools"]
        .as_array()
        .expect("tools offered")
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(offered.contains(&"search_knowledge"), "{offered:?}");
    let result = asked.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["tool_call_id"] == "tc_kb")
        .unwrap();
    let result: Value = serde_json::from_str(result["content"].as_str().unwrap()).unwrap();
    let first = &result["results"][0];
    assert_eq!(first["filename"], "holidays.md", "{result}");
    assert_eq!(first["knowledge_base"], "Handbook");
    assert!(
        first["chunk_text"]
            .as_str()
            .unwrap()
            .contains("25 days of paid holiday"),
        "{result}"
    );
    // Deleted on its page: gone, and the agent no longer names it.
    let listed: Value = app.api().knowledge_bases().read_json().await;
    assert_eq!(listed["knowledge_bases"], json!([]));
    let agents: Value = app.api().agents().read_json().await;
    assert_eq!(agents["agents"][0]["knowledge_base_ids"], json!([]));
}

#[actix_web::test]
async fn the_automations_page_lists_workflows_and_schedules_and_pauses_resumes_and_deletes() {
    let app = browser_app(|config| {
        config.schedules.test_only_seconds_field = true;
        config.schedules.poll_interval_ms = 200;
    })
    .await;
    // A schedule that has fired once (then paused): its chat shows the firing's steps.
    let sums = crate::workflows::create_workflow(
        &app,
        json!({"name": "Sums", "steps": [
            {"id": "one", "tool": "calculator", "arguments": {"expression": "1 + 1"}},
            {"id": "two", "tool": "calculator", "arguments": {"expression": "6 * 7"}}
        ]}),
    )
    .await;
    let ticking: Value = app
        .api()
        .create_schedule()
        .json(
            &json!({"name": "Sums each second", "cron": "* * * * * *", "workflow_id": sums["id"]}),
        )
        .read_json()
        .await;
    let ticking = ticking["id"].as_str().unwrap().to_string();
    crate::helpers::eventually("a firing", std::time::Duration::from_secs(20), || async {
        let view: Value = app.api().schedule(&ticking).read_json().await;
        view["last_runs"]
            .as_array()?
            .iter()
            .any(|r| r["status"] == "succeeded")
            .then_some(())
    })
    .await;
    app.api()
        .pause_schedule(&ticking)
        .json(&json!({}))
        .call()
        .await;
    let workflow = crate::workflows::create_workflow(
        &app,
        json!({"name": "Morning digest", "steps": [
            {"id": "sum", "tool": "calculator", "arguments": {"expression": "1 + 1"}},
            {"id": "say", "prompt": "Explain {{steps.sum.result}}"}
        ]}),
    )
    .await;
    let created = app
        .api().create_schedule().json(&json!({"name": "Weekday digest", "cron": "0 9 * * 1-5", "time_zone": "Europe/Paris", "workflow_id": workflow["id"]})).call()
        .await;
    assert_eq!(created.status(), 201);
    let created: Value = created.json().await.unwrap();
    run_scenario(&app, "automations", &[]).await;
    let id = created["id"].as_str().unwrap();
    assert_eq!(app.api().schedule(id).call().await.status(), 404, "deleted");
    let listed: Value = app.api().workflows().read_json().await;
    assert_eq!(listed["total"], 2, "the workflows stay");
}
