//! The specification's own examples (docs/spec.md#examples), run as written against the real
//! server: its Chat Completions examples (curl, the Python and the Node SDK) and its documents
//! REST examples (curl, Python `requests`, Node `fetch`). `tests/seed_examples/` and
//! `tests/clients/node/seed_examples.mjs` hold them with only the base URL, key, model, chat
//! id, session token and document id substituted. Each must run without an error, print what
//! the example prints for the events it watches, and do what it says (the document is gone).

use std::path::PathBuf;
use std::process::Command;

use serde_json::json;

use crate::documents::{documents, settled, upload};
use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, spawn_app};

/// The examples each client runs, in order, with the model's replies for each.
const EXAMPLES: [&str; 5] = [
    "all_tools_enabled",
    "multi_tool_conversation_flow",
    "deep_think",
    "artifact_creation_flow",
    "document_management",
];

fn replies() -> Vec<Reply> {
    vec![
        // all tools enabled
        Reply::text("Tokio favours throughput; smol favours simplicity."),
        // multi-tool flow: a server-side calculator round, then the answer
        Reply::tool_call(
            "call_calc",
            "calculator",
            json!({"expression": "3.5 * 2400"}),
        ),
        Reply::text("3.5 troy ounces cost about 8400 EUR."),
        // deep think: the plan, each sub-task's notes (no tools), the synthesis
        Reply::text(
            &json!({"title": "Quantum Computing Advances", "subtasks": [
                {"id": "1", "query": "Latest quantum error correction breakthroughs", "tools": ["web_search"]},
                {"id": "2", "query": "Major quantum hardware milestones", "tools": ["web_search"]},
                {"id": "3", "query": "Quantum algorithms that matter", "tools": ["fetch_url"]}]})
            .to_string(),
        ),
        Reply::text("- Logical qubits improved."),
        Reply::text("- Hardware scaled."),
        Reply::text("- Algorithms matured."),
        Reply::text("Quantum error correction advanced."),
        // artifact creation
        Reply::tool_call(
            "call_bst",
            "create_artifact",
            json!({"identifier": "bst.py", "title": "Binary Search Tree",
                   "type": "text/x-python", "language": "python",
                   "content": "class Node:\n    pass\n"}),
        ),
        Reply::text("Here is the binary search tree."),
    ]
}

/// A chat with one processed document, and a browser session of its owner.
async fn chat_with_a_document(app: &TestApp) -> (String, String, String) {
    let chat = app.create_chat("Seed 002").await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let uploaded = upload(
        app,
        &chat,
        "design-notes.md",
        b"# Design notes\n\nEvery endpoint is authenticated.\n".to_vec(),
    )
    .await;
    assert!(uploaded.status().is_success(), "{}", uploaded.status());
    let list = settled(app, &chat).await;
    let document = list["documents"][0]["artifact_id"]
        .as_str()
        .unwrap()
        .to_string();
    (chat, app.admin_session().await, document)
}

/// Runs `command` with the app's address, key, the chat, session and document in its
/// environment; returns what it printed, failing with its output if it failed.
async fn run(app: &TestApp, mut command: Command, chat: &str, session: &str, doc: &str) -> String {
    command
        .env("COLLOQUY_URL", &app.address)
        .env("COLLOQUY_KEY", &app.api_key)
        .env("CHAT_ID", chat)
        .env("SESSION", session)
        .env("DOCUMENT_ID", doc);
    let output = actix_web::rt::task::spawn_blocking(move || {
        crate::subprocess::output_within(command, "a seed example", crate::subprocess::CLIENT_LIMIT)
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(
        output.status.success(),
        "an example failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// What every client's run must show: the answers, the research and artifact lines the
/// examples print, the document listed, and then deleted.
async fn assert_the_examples_worked(app: &TestApp, printed: &str, chat: &str) {
    for expected in [
        "Tokio favours throughput; smol favours simplicity.",
        "3.5 troy ounces cost about 8400 EUR.",
        "Quantum error correction advanced.",
        "Here is the binary search tree.",
        "design-notes.md (processed) - 49 bytes",
    ] {
        assert!(
            printed.contains(expected),
            "{expected:?} missing:\n{printed}"
        );
    }
    let list = documents(app, chat).await;
    assert_eq!(list["total"], 0, "the example's DELETE removed it: {list}");
}

/// `assert_the_examples_worked`, and the lines the SDK examples print for the events they
/// watch.
async fn assert_the_sdk_examples_worked(app: &TestApp, printed: &str, chat: &str) {
    for line in [
        "[Calculating] ",
        "[Research complete] 2 iterations",
        "[x_deep_think.plan_created]",
        "\"title\": \"Quantum Computing Advances\"",
        "[x_deep_think.subtask_completed]",
        "[x_deep_think.synthesizing]",
        "[x_deep_think.completed]",
        "[Artifact created] bst.py - Binary Search Tree (v1)",
    ] {
        assert!(printed.contains(line), "{line:?} missing:\n{printed}");
    }
    assert_the_examples_worked(app, printed, chat).await;
}

#[actix_web::test]
async fn seed_000_and_002_python_examples_run_as_written() {
    let python = tokio::task::spawn_blocking(crate::openai_python::python_with_openai)
        .await
        .unwrap();
    let app = spawn_app().await;
    let (chat, session, doc) = chat_with_a_document(&app).await;
    app.upstream.script(replies());
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/seed_examples/chat_completions.py");
    let mut command = Command::new(python);
    command.arg(script).args(EXAMPLES);
    let printed = run(&app, command, &chat, &session, &doc).await;
    assert_the_sdk_examples_worked(&app, &printed, &chat).await;
}

#[actix_web::test]
async fn seed_000_and_002_node_examples_run_as_written() {
    let dir = tokio::task::spawn_blocking(crate::openai_node::node_clients)
        .await
        .unwrap();
    let app = spawn_app().await;
    let (chat, session, doc) = chat_with_a_document(&app).await;
    app.upstream.script(replies());
    let mut command = Command::new("node");
    command
        .arg("seed_examples.mjs")
        .args(EXAMPLES)
        .current_dir(dir);
    let printed = run(&app, command, &chat, &session, &doc).await;
    assert_the_sdk_examples_worked(&app, &printed, &chat).await;
}

#[actix_web::test]
async fn seed_000_and_002_curl_examples_run_as_written() {
    let app = spawn_app().await;
    let (chat, session, doc) = chat_with_a_document(&app).await;
    let mut replies = vec![Reply::text("Rust has no runtime in the language.")];
    replies.extend(self::replies());
    app.upstream.script(replies);
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/seed_examples/curl.sh");
    let mut command = Command::new("bash");
    command.arg(script);
    let printed = run(&app, command, &chat, &session, &doc).await;
    assert!(
        printed.contains("\"type\":\"x_artifact.created\""),
        "{printed}"
    );
    assert!(
        printed.contains("\"type\":\"x_research.calculating\""),
        "{printed}"
    );
    assert!(
        printed.contains("\"type\":\"x_deep_think.completed\""),
        "{printed}"
    );
    assert!(
        printed.contains("\"filename\":\"design-notes.md\""),
        "{printed}"
    );
    assert!(printed.contains("\"deleted\":true"), "{printed}");
    assert!(printed.contains("\"content\":\"Rust \""), "{printed}");
    let list = documents(&app, &chat).await;
    assert_eq!(list["total"], 0, "{list}");
}
