//! The browser UI under a long chat: loads a chat of 300 messages in headless Chromium, then
//! streams a 2,000-token reply into it, and reports the frames over 50 ms and the main
//! thread's busy time (Chrome's own `TaskDuration`) while it streamed.
//!
//! Colloquy runs in-process on 127.0.0.1:0 with a SQLite file in a temporary directory, in
//! front of the tests' fake upstream (real HTTP, OpenAI's wire protocol). The 150 earlier
//! turns are made through the chat API like any others; their answers are Markdown with lists
//! and code. The measured reply arrives as 2,000 deltas, one every `BENCH_GAP_MS` (default 5)
//! milliseconds. The browser side is `benches/ui_stream.mjs` (playwright-core, Debian's
//! `chromium`).
//!
//! Run with `cargo bench --bench ui_stream`. `BENCH_PROFILE=1` also prints where the main
//! thread spent its time (Chrome's sampling profiler, self time by function).

#[path = "../tests/api/fake_upstream.rs"]
#[allow(dead_code)]
mod fake_upstream;

use std::path::PathBuf;
use std::time::Duration;

use colloquy::config::Config;
use colloquy::startup::Application;
use fake_upstream::{FakeUpstream, Reply};
use secrecy::SecretString;
use serde_json::json;

const API_KEY: &str = "bench-key";
const TURNS: usize = 150;
const REPLY_TOKENS: usize = 2_000;

fn earlier_answer(turn: usize) -> String {
    format!(
        "## Answer {turn}\n\nHere is what I found about item {turn}:\n\n- first point, with **bold** text\n\
         - second point with `inline code`\n- third point\n\n```python\ndef item_{turn}(x):\n    \
         return x * {turn}\n```\n\nThat is all for now; ask again for more detail.\n"
    )
}

fn long_reply() -> Vec<String> {
    let mut pieces = Vec::with_capacity(REPLY_TOKENS);
    let mut paragraph = 0;
    while pieces.len() < REPLY_TOKENS {
        paragraph += 1;
        pieces.push(format!("\n\n### Part {paragraph}\n\n"));
        for word in 0..40 {
            pieces.push(format!("word{word} "));
        }
        pieces.push("\n\n- a list item ".into());
        pieces.push("\n- another item\n\n```rust\nfn part() {\n".into());
        for line in 0..10 {
            pieces.push(format!("    let x{line} = {line};\n"));
        }
        pieces.push("}\n```\n".into());
    }
    pieces.truncate(REPLY_TOKENS);
    pieces
}

fn main() {
    let gap_ms: u64 = std::env::var("BENCH_GAP_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    actix_web::rt::System::new().block_on(async move {
        let upstream = FakeUpstream::start().await;
        let data_dir = tempfile::tempdir().expect("temp dir");
        let mut config = Config {
            bind: "127.0.0.1:0".into(),
            data_dir: data_dir.path().to_path_buf(),
            workers: Some(2),
            ..Config::default()
        };
        config.llm.base_url = upstream.base_url.clone();
        config.llm.model = "fake-model".into();
        config.auth.bootstrap_api_key = Some(SecretString::from(API_KEY));
        // A `node static/build.mjs DIR` output, to measure UI changes without a release build.
        config.static_dir = std::env::var_os("COLLOQUY_STATIC_DIR").map(PathBuf::from);
        let app = Application::build(config).await.expect("Colloquy starts");
        let address = format!("http://{}", app.address());
        let login = app.login_url().expect("a login link").to_string();
        actix_web::rt::spawn(app.run_until_stopped());

        let http = reqwest::Client::new();
        let chat: serde_json::Value = http
            .post(format!("{address}/chat/api/chats"))
            .bearer_auth(API_KEY)
            .json(&json!({"title": "A long chat"}))
            .send()
            .await
            .expect("create chat")
            .json()
            .await
            .expect("chat JSON");
        let chat_id = chat["id"].as_str().expect("chat id").to_string();
        upstream.script((0..TURNS).map(|turn| Reply::text(&earlier_answer(turn))));
        for turn in 0..TURNS {
            let response = http
                .post(format!("{address}/chat/api/{chat_id}/messages"))
                .bearer_auth(API_KEY)
                .json(&json!({"content": format!("Question {turn}: tell me about item {turn}")}))
                .send()
                .await
                .expect("send");
            response.text().await.expect("the turn's stream");
        }
        upstream.script([Reply {
            pieces: long_reply(),
            ..Reply::text("")
        }
        .event_gap(Duration::from_millis(gap_ms))]);

        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let status = actix_web::rt::task::spawn_blocking(move || {
            std::process::Command::new("node")
                .arg(root.join("benches/ui_stream.mjs"))
                .current_dir(&root)
                .env("COLLOQUY_URL", &address)
                .env("COLLOQUY_LOGIN_URL", &login)
                .env("CHAT_ID", &chat_id)
                .env("REPLY_TOKENS", REPLY_TOKENS.to_string())
                .env(
                    "BENCH_PROFILE",
                    std::env::var("BENCH_PROFILE").unwrap_or_default(),
                )
                .status()
        })
        .await
        .expect("the browser's thread")
        .expect("node runs");
        assert!(status.success(), "the browser side failed");
        drop(data_dir);
    });
}
