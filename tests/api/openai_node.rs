//! Node clients against Colloquy — the official OpenAI SDK, and Vercel's AI SDK with
//! `@ai-sdk/openai-compatible`: `tests/clients/node/` (its `package.json` and lock file) is
//! installed with `npm ci` into `target/node-clients/` on first use, and its scripts run there
//! as subprocesses against the real server.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::fake_upstream::Reply;
use crate::helpers::{run_client, spawn_app};

const FILES: [&str; 13] = [
    "package.json",
    "package-lock.json",
    "openai_client.mjs",
    "vercel_ai.mjs",
    "seed_examples.mjs",
    "responses_client.mjs",
    "reasoning_client.mjs",
    "quickstart_loops.mjs",
    "images_client.mjs",
    "responses_tools.mjs",
    "image_generation.mjs",
    "responses_mcp.mjs",
    "code_interpreter.mjs",
];

/// `target/node-clients/`, with the pinned clients installed and the current script.
pub fn node_clients() -> PathBuf {
    // Tests run in parallel: one installs while the others wait, so none runs a script in a
    // half-installed `node_modules`.
    static INSTALLING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = INSTALLING.lock().unwrap_or_else(|e| e.into_inner());
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let source = root.join("tests/clients/node");
    let target = root.join("target/node-clients");
    std::fs::create_dir_all(&target).expect("target/node-clients");
    let read = |dir: &Path, name: &str| std::fs::read(dir.join(name)).ok();
    // What the last install that succeeded installed: a failed one is retried.
    let lock_changed = read(&source, "package-lock.json") != read(&target, "installed-lock.json");
    // Scripts of other tests may be running from here: a file is replaced only when it
    // changed, and whole (written aside, then renamed), so none reads one half-copied.
    for name in FILES {
        let wanted = read(&source, name).expect("the client files");
        if read(&target, name).as_ref() != Some(&wanted) {
            let aside = target.join(format!(".{name}.new"));
            std::fs::write(&aside, &wanted).expect("copy the client files");
            std::fs::rename(&aside, target.join(name)).expect("copy the client files");
        }
    }
    if lock_changed || !target.join("node_modules/@ai-sdk/openai").exists() {
        let mut npm = Command::new("npm");
        npm.args(["ci", "--ignore-scripts", "--no-audit", "--no-fund"])
            .current_dir(&target);
        let installed = crate::subprocess::output_within(
            npm,
            "npm ci in target/node-clients",
            crate::subprocess::INSTALL_LIMIT,
        );
        assert!(
            installed.status.success(),
            "npm ci in target/node-clients failed:\n{}",
            String::from_utf8_lossy(&installed.stderr)
        );
        std::fs::copy(
            source.join("package-lock.json"),
            target.join("installed-lock.json"),
        )
        .expect("record what is installed");
    }
    target
}

#[actix_web::test]
async fn the_official_openai_node_client_streams_with_its_helper_and_embeds() {
    let dir = tokio::task::spawn_blocking(node_clients).await.unwrap();
    let app = spawn_app().await;
    app.upstream.script([
        Reply::tool_call("call_1", "calculator", json!({"expression": "2^10"})),
        Reply::text("2^10 is 1024."),
        Reply::text("Hello there!"),
        Reply::tool_call("call_w", "get_weather", json!({"city": "Oslo"})),
        Reply::text("It is sunny in Oslo."),
        Reply::text("{\"name\": \"red\", \"hex\": \"#ff0000\"}"),
    ]);
    let mut command = Command::new("node");
    command.arg("openai_client.mjs").current_dir(dir);
    let seen = run_client(&app, command).await;
    assert_eq!(seen["helper_content"], "2^10 is 1024.");
    assert_eq!(seen["usage_chunks"], 1, "usage on one chunk: {seen}");
    assert!(seen["helper_total_tokens"].as_u64().unwrap() > 0);
    let types: Vec<&str> = seen["types"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        types,
        [
            "x_research.calculating",
            "x_research.result",
            "x_research.complete",
            "x_chat.metadata"
        ],
        "the typed lines reach the SDK's chunk handler"
    );
    assert_eq!(seen["text"], "Hello there!");
    assert_eq!(seen["finish_reasons"], json!(["stop"]));
    assert!(seen["embedding_length"].as_u64().unwrap() > 0);
    // runTools: the client's function ran with the model's arguments, and its result went back.
    assert_eq!(seen["tool_ran_with"], json!(["Oslo"]));
    assert_eq!(seen["tool_answer"], "It is sunny in Oslo.");
    // parse(): the zod type went as a JSON schema, and the answer came back parsed.
    assert_eq!(seen["parsed"], json!({"name": "red", "hex": "#ff0000"}));
    let received = app.upstream.received();
    let parse_request = &received.last().unwrap().body;
    assert_eq!(parse_request["response_format"]["type"], "json_schema");
    assert_eq!(
        parse_request["response_format"]["json_schema"]["name"],
        "colour"
    );
    let last = received[received.len() - 2].body.clone();
    let messages = last["messages"].as_array().unwrap();
    assert_eq!(messages.last().unwrap()["role"], "tool");
    assert!(
        messages.last().unwrap()["content"]
            .as_str()
            .unwrap()
            .contains("clear")
    );
    // The SDK sent what the request asked for.
    let sent = app.upstream.received();
    assert_eq!(sent[0].body["messages"][0]["content"], "What is 2^10?");
}

#[actix_web::test]
async fn vercels_ai_sdk_streams_without_error_parts_and_runs_a_tool_round_trip() {
    let dir = tokio::task::spawn_blocking(node_clients).await.unwrap();
    let app = spawn_app().await;
    app.upstream.script([
        Reply::tool_call("call_1", "calculator", json!({"expression": "2^10"})),
        Reply::text("2^10 is 1024."),
        Reply::tool_call("call_w", "get_weather", json!({"city": "Oslo"})),
        Reply::text("It is sunny in Oslo."),
    ]);
    let mut command = Command::new("node");
    command.arg("vercel_ai.mjs").current_dir(dir);
    let seen = run_client(&app, command).await;
    assert_eq!(seen["errors"], json!([]), "no error parts: {seen}");
    assert_eq!(seen["text"], "2^10 is 1024.");
    assert_eq!(seen["finish_reason"], "stop");
    assert!(seen["total_tokens"].as_u64().unwrap() > 0, "{seen}");
    assert_eq!(seen["tool_ran_with"], json!(["Oslo"]));
    assert_eq!(seen["tool_answer"], "It is sunny in Oslo.");
    let sent = app.upstream.received();
    assert!(
        sent[0].body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["function"]["name"] == "calculator"),
        "the server-side tool was switched on"
    );
    let last = &sent.last().unwrap().body;
    assert_eq!(
        last["messages"].as_array().unwrap().last().unwrap()["role"],
        "tool"
    );
}
