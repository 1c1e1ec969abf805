//! OpenAI's quickstart loops, as users copy them, in the official Python and Node SDKs:
//! `chunk.choices[0].delta` on every chunk of a plain stream, of one with server-side tools
//! on and of one that ends in an error, and the Responses stream helper with server-side
//! tools on, to its final response (`tests/python/quickstart_loops.py`,
//! `tests/clients/node/quickstart_loops.mjs`).

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, run_client, spawn_app};
use crate::openai_node::node_clients;
use crate::openai_python::python_with_openai;

/// The upstream's answers, in the order the scripts ask.
fn script(app: &TestApp) {
    app.upstream.script([
        Reply::text("Hello there!"),
        Reply::tool_call("call_1", "calculator", json!({"expression": "2^10"})),
        Reply::text("2^10 is 1024."),
        Reply::text("This answer breaks off here").cut_after(2),
        Reply::tool_call("call_2", "calculator", json!({"expression": "6*7"})),
        Reply::text("6*7 is 42."),
    ]);
}

fn assert_every_loop_finished(seen: &Value) {
    assert_eq!(seen["plain"], "Hello there!", "{seen}");
    assert_eq!(seen["tools"], "2^10 is 1024.", "{seen}");
    // The loop read the x_research.* and x_chat.metadata lines too, not only the text.
    assert!(seen["tools_chunks"].as_u64().unwrap() > 8, "{seen}");
    assert_eq!(seen["partial"], "This answer ", "{seen}");
    assert!(
        seen["error"]
            .as_str()
            .is_some_and(|e| e.ends_with("APIError")),
        "the SDK's own error, not an IndexError/TypeError: {seen}"
    );
    assert!(
        seen["error_message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{seen}"
    );
    assert_eq!(seen["responses_text"], "6*7 is 42.", "{seen}");
    assert_eq!(seen["responses_status"], "completed", "{seen}");
    let types = seen["responses_event_types"].as_array().unwrap();
    assert!(
        types
            .iter()
            .all(|t| t.as_str().is_some_and(|t| t.starts_with("response."))),
        "only the event types the SDKs know: {seen}"
    );
}

#[actix_web::test]
async fn the_python_quickstart_loops_run_to_the_end_of_every_stream() {
    let python = tokio::task::spawn_blocking(python_with_openai)
        .await
        .unwrap();
    let app = spawn_app().await;
    script(&app);
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python/quickstart_loops.py");
    let mut command = Command::new(python);
    command.arg(path);
    let seen = run_client(&app, command).await;
    assert_every_loop_finished(&seen);
}

#[actix_web::test]
async fn the_node_quickstart_loops_run_to_the_end_of_every_stream() {
    let dir = tokio::task::spawn_blocking(node_clients).await.unwrap();
    let app = spawn_app().await;
    script(&app);
    let mut command = Command::new("node");
    command.arg("quickstart_loops.mjs").current_dir(dir);
    let seen = run_client(&app, command).await;
    assert_every_loop_finished(&seen);
}
