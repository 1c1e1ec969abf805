//! The official OpenAI Python client against Colloquy: installed with pip into a virtualenv
//! under `target/` on first use, then run as a subprocess against the real server.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use crate::fake_upstream::Reply;
use crate::helpers::{run_client, spawn_app};

/// The virtualenv's python, with `tests/python/requirements.txt` (the pinned clients:
/// `openai`, `langchain-openai`) installed; the virtualenv is made, or brought up to date,
/// the first time a test asks after the list changed.
pub fn python_with_openai() -> PathBuf {
    python_venv("target/openai-venv", "tests/python/requirements.txt")
}

/// Python in the venv `venv` with `requirements` installed (both relative to the crate),
/// made or brought up to date the first time a test asks after the list changed.
pub fn python_venv(venv: &str, requirements: &str) -> PathBuf {
    static INSTALLING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = INSTALLING.lock().unwrap_or_else(|e| e.into_inner());
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let venv = root.join(venv);
    let python = venv.join("bin/python");
    let wanted = root.join(requirements);
    let installed_list = venv.join("requirements.txt");
    let current = std::fs::read(&wanted).expect("the requirements file");
    if python.exists() && std::fs::read(&installed_list).ok().as_ref() == Some(&current) {
        return python;
    }
    if !python.exists() {
        let created = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .expect("python3 runs");
        assert!(created.success(), "python3 -m venv failed");
    }
    let mut pip = Command::new(&python);
    pip.args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "-r",
    ])
    .arg(&wanted);
    let installed =
        crate::subprocess::output_within(pip, "pip install", crate::subprocess::INSTALL_LIMIT);
    assert!(
        installed.status.success(),
        "pip install -r {requirements} failed:\n{}",
        String::from_utf8_lossy(&installed.stderr)
    );
    std::fs::write(&installed_list, current).expect("record what is installed");
    python
}

#[actix_web::test]
async fn the_official_openai_python_client_streams_and_non_streams() {
    let python = tokio::task::spawn_blocking(python_with_openai)
        .await
        .unwrap();
    let app = spawn_app().await;
    app.upstream.script([
        Reply::tool_call("call_1", "calculator", json!({"expression": "2^10"})),
        Reply::text("2^10 is 1024."),
        Reply::tool_call("call_2", "calculator", json!({"expression": "3^3"})),
        Reply::text("3^3 is 27."),
        Reply::text("Hello there!"),
        Reply::tool_call("call_w", "get_weather", json!({"city": "Oslo"})),
        Reply::text("It is sunny in Oslo."),
        Reply::text("{\"name\": \"red\", \"hex\": \"#ff0000\"}"),
    ]);
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python/openai_client.py");
    let mut command = Command::new(python);
    command.arg(script);
    let seen = run_client(&app, command).await;
    assert_eq!(seen["streamed"], "2^10 is 1024.");
    assert_eq!(seen["finish_reasons"], json!(["stop"]));
    let types: Vec<&str> = seen["event_types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "x_research.calculating",
            "x_research.result",
            "x_research.complete",
            "x_chat.metadata"
        ]
    );
    assert_eq!(seen["helper_content"], "3^3 is 27.");
    assert_eq!(seen["helper_usage_lines"], 1, "usage once");
    assert!(seen["helper_total_tokens"].as_u64().unwrap() > 0);
    assert_eq!(seen["non_stream"], "Hello there!");
    assert_eq!(seen["non_stream_finish"], "stop");
    assert_eq!(seen["total_tokens"], 15);
    assert_eq!(seen["models"], json!(["fake-model"]));
    assert_eq!(seen["tool_finish"], "tool_calls");
    assert_eq!(seen["tool_name"], "get_weather");
    assert_eq!(seen["tool_arguments"], json!({"city": "Oslo"}));
    assert_eq!(seen["tool_answer"], "It is sunny in Oslo.");
    assert_eq!(seen["parsed"], json!({"name": "red", "hex": "#ff0000"}));
    let received = app.upstream.received();
    let parse_request = received
        .iter()
        .find(|r| r.body["response_format"]["type"] == "json_schema")
        .expect("parse() sent a JSON schema, forwarded");
    assert_eq!(
        parse_request.body["response_format"]["json_schema"]["name"],
        "Colour"
    );
    assert_eq!(seen["retrieved"], "fake-model");
    assert_eq!(seen["missing"], "NotFoundError");
    // Colloquy's embedder (the hash embedder here) answers, and names itself.
    let embedder = app.state.embedder().clone();
    assert_eq!(seen["embedding_model"], embedder.id());
    let expected = embedder
        .embed(vec!["first text".into(), "second text".into()])
        .await
        .unwrap();
    let close = |got: &Value, want: &[f32]| {
        let got: Vec<f64> = serde_json::from_value(got.clone()).unwrap();
        got.len() == want.len()
            && got
                .iter()
                .zip(want)
                .all(|(a, b)| (a - f64::from(*b)).abs() < 1e-6)
    };
    assert!(
        close(&seen["embeddings"][0], &expected[0]),
        "decoded from base64"
    );
    assert!(close(&seen["embeddings"][1], &expected[1]));
    assert!(close(&seen["float_embedding"], &expected[0]), "as floats");
    assert!(seen["embedding_tokens"].as_u64().unwrap() >= 4);
    let sent = app.upstream.received();
    assert_eq!(sent[0].body["messages"][0]["content"], "What is 2^10?");
}

#[actix_web::test]
async fn langchains_chat_openai_counts_usage_once_binds_tools_and_structures_output() {
    let python = tokio::task::spawn_blocking(python_with_openai)
        .await
        .unwrap();
    let app = spawn_app().await;
    app.upstream.script([
        Reply::text("Hello there!"),
        Reply::tool_call("call_w", "get_weather", json!({"city": "Oslo"})),
        Reply::text("It is sunny in Oslo."),
        Reply::text("{\"name\": \"red\", \"hex\": \"#ff0000\"}"),
    ]);
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python/langchain_client.py");
    let mut command = Command::new(python);
    command.arg(script);
    let seen = run_client(&app, command).await;
    assert_eq!(seen["streamed"], "Hello there!");
    // The fake reports 10 + 5 tokens for a turn: counted once, not twice.
    assert_eq!(seen["usage"]["total_tokens"], 15, "{seen}");
    assert_eq!(seen["tool_name"], "get_weather");
    assert_eq!(seen["tool_args"], json!({"city": "Oslo"}));
    assert_eq!(seen["tool_answer"], "It is sunny in Oslo.");
    assert_eq!(seen["colour"], json!({"name": "red", "hex": "#ff0000"}));
    let sent = app.upstream.received();
    assert_eq!(sent[0].body["stream"], true);
    assert_eq!(
        sent[2].body["messages"].as_array().unwrap().last().unwrap()["role"],
        "tool"
    );
    assert_eq!(sent[3].body["response_format"]["type"], "json_schema");
}
