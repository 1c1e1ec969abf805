//! Seed 003's server-side tools on the Responses API with the official OpenAI Python and Node
//! SDKs (`tests/python/responses_tools.py`, `tests/clients/node/responses_tools.mjs`) against the real server, a fake search engine and the
//! fake upstream: a web search seen on a default stream as OpenAI shows its own, a local_shell
//! round trip the client runs, artifacts delivered in the answer on both APIs, and web searches
//! streamed as a new user asks (`tools: [{"type": "web_search_preview"}]` or `"web_search"`, with
//! `stream: true` and nothing of Colloquy's).

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, run_client, spawn_app_with};
use crate::openai_node::node_clients;
use crate::openai_python::python_with_openai;
use crate::research::{FakeWeb, start_fake_web};

fn artifact_call(id: &str) -> Reply {
    Reply::tool_call(
        id,
        "create_artifact",
        json!({"identifier": "fib.py", "title": "Fibonacci", "type": "text/x-python",
               "language": "python", "content": "def fib(n):\n    return n\n"}),
    )
}

/// A server searching the fake web, and an upstream scripted for the clients' flows.
async fn start() -> (TestApp, FakeWeb, String) {
    let web = start_fake_web().await;
    let (search_url, site) = (web.base.clone(), web.site());
    let app = spawn_app_with(move |config| {
        config.tools.web_search_url = Some(search_url);
        config.tools.ssrf_allow_list = vec![site];
    })
    .await;
    let gold = format!("{}/gold", web.base);
    let answer = format!("Gold costs $2,400 an ounce ([Gold price today]({gold})).");
    app.upstream.script([
        // 1. streamed, then plain
        Reply::tool_call("ws_1", "web_search", json!({"query": "gold price"})),
        Reply::text(&answer),
        Reply::tool_call("ws_2", "web_search", json!({"query": "gold price"})),
        Reply::text("About $2,400."),
        // 2. local_shell, then its output
        Reply::tool_call(
            "sh_1",
            "local_shell",
            json!({"command": ["ls"], "working_directory": "/home/ada"}),
        ),
        Reply::text("You have notes.txt."),
        // 3. an artifact on the Responses API
        artifact_call("art_1"),
        Reply::text("Here it is."),
        // 4. and on Chat Completions, plain and streamed
        artifact_call("art_2"),
        Reply::text("Here it is again."),
        artifact_call("art_3"),
        Reply::text("And streamed."),
        // 5. a new user's streams: web_search_preview, then web_search
        Reply::tool_call("ws_3", "web_search", json!({"query": "silver price"})),
        Reply::text("Silver costs about $30 an ounce."),
        Reply::tool_call("ws_4", "web_search", json!({"query": "platinum price"})),
        Reply::text("Platinum costs about $1,000 an ounce."),
    ]);
    (app, web, answer)
}

#[actix_web::test]
async fn the_python_sdk_sees_web_search_calls_local_shell_calls_and_artifacts_as_openai_shows_them()
{
    let python = tokio::task::spawn_blocking(python_with_openai)
        .await
        .unwrap();
    let (app, web, answer) = start().await;
    let client = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python/responses_tools.py");
    let mut command = Command::new(python);
    command.arg(client);
    let seen = run_client(&app, command).await;
    check(&app, &web, &answer, &seen);
}

#[actix_web::test]
async fn the_node_sdk_sees_web_search_calls_local_shell_calls_and_artifacts_as_openai_shows_them() {
    let dir = tokio::task::spawn_blocking(node_clients).await.unwrap();
    let (app, web, answer) = start().await;
    let mut command = Command::new("node");
    command.arg("responses_tools.mjs").current_dir(dir);
    let seen = run_client(&app, command).await;
    check(&app, &web, &answer, &seen);
}

/// What either client saw, and what the model was sent.
fn check(app: &TestApp, web: &FakeWeb, answer: &str, seen: &Value) {
    let gold = format!("{}/gold", web.base);
    // 1. OpenAI's web search events on a stream that did not ask for Colloquy's own.
    let kinds: Vec<&str> = seen["web_kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    let at = |kind: &str| {
        kinds
            .iter()
            .position(|k| *k == kind)
            .unwrap_or_else(|| panic!("{kind} missing from {kinds:?}"))
    };
    assert!(at("response.web_search_call.in_progress") < at("response.web_search_call.searching"));
    assert!(at("response.web_search_call.searching") < at("response.web_search_call.completed"));
    assert!(at("response.web_search_call.completed") < at("response.output_text.delta"));
    assert!(!kinds.iter().any(|k| k.starts_with("x_")), "{kinds:?}");
    assert_eq!(
        seen["web_output_types"],
        json!(["web_search_call", "message"])
    );
    assert_eq!(
        seen["web_call"],
        json!({"id": "ws_ws_1", "status": "completed", "action_type": "search",
               "query": "gold price",
               "sources": [gold, format!("{}/fx", web.base), format!("{}/third", web.base)]})
    );
    assert_eq!(seen["web_text"], answer);
    let annotations = seen["web_annotations"].as_array().unwrap();
    assert_eq!(annotations.len(), 1, "{annotations:?}");
    let annotation = &annotations[0];
    assert_eq!(annotation["type"], "url_citation");
    assert_eq!(annotation["url"], gold);
    assert_eq!(annotation["title"], "Gold price today");
    let cited: String = answer
        .chars()
        .skip(annotation["start_index"].as_u64().unwrap() as usize)
        .take(
            (annotation["end_index"].as_u64().unwrap()
                - annotation["start_index"].as_u64().unwrap()) as usize,
        )
        .collect();
    assert_eq!(cited, format!("[Gold price today]({gold})"));
    assert_eq!(seen["annotation_event"], *annotation);
    assert_eq!(
        seen["plain_action"],
        json!({"type": "search", "query": "gold price"}),
        "no sources unless include asks for them"
    );

    // 2. The shell call went to the client, and its output to the model.
    assert_eq!(
        seen["shell_item"],
        json!({"type": "local_shell_call", "call_id": "sh_1", "command": ["ls"],
               "working_directory": "/home/ada", "status": "completed"})
    );
    assert_eq!(seen["shell_answer"], "You have notes.txt.");
    let received = app.upstream.received();
    let offered = received
        .iter()
        .find(|r| r.body.to_string().contains("List the files here."))
        .expect("the local_shell request reached the model");
    let shell_tool = offered.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "local_shell")
        .expect("local_shell offered as a function");
    assert_eq!(
        shell_tool["function"]["parameters"]["required"],
        json!(["command"])
    );
    let continued = received
        .iter()
        .find(|r| {
            r.body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["role"] == "tool" && m["tool_call_id"] == "sh_1")
        })
        .expect("the shell's output reached the model");
    let output = continued.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["tool_call_id"] == "sh_1")
        .unwrap();
    assert_eq!(output["content"], "notes.txt\n");

    // 3. The artifact is a part of the Responses answer, after its text.
    let parts = seen["artifact_parts"].as_array().unwrap();
    assert_eq!(parts[0]["text"], "Here it is.");
    let artifact = &parts[1];
    assert_eq!(artifact["type"], "x_artifact");
    assert_eq!(artifact["identifier"], "fib.py");
    assert_eq!(artifact["title"], "Fibonacci");
    assert_eq!(artifact["mime_type"], "text/x-python");
    assert_eq!(artifact["version"], 1);
    assert_eq!(artifact["content"], "def fib(n):\n    return n\n");

    // 4. And on Chat Completions, beside the content and in the streamed event.
    let listed = &seen["completion_artifacts"];
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(listed[0]["content"], "def fib(n):\n    return n\n");
    assert_eq!(listed[0]["identifier"], "fib.py");
    let streamed: &Value = &seen["streamed_artifact"];
    assert_eq!(streamed["content"], "def fib(n):\n    return n\n");
    assert_eq!(streamed["version"], 1);

    // 5. A new user's plain stream, OpenAI's tool type alone: the same events and item.
    new_user_saw(
        &seen["new_user_preview"],
        "ws_ws_3",
        "silver price",
        "Silver costs about $30 an ounce.",
    );
    new_user_saw(
        &seen["new_user_web_search"],
        "ws_ws_4",
        "platinum price",
        "Platinum costs about $1,000 an ounce.",
    );
}

/// A stream made with only `tools: [{"type": ...}]` and `stream: true`: OpenAI's three web
/// search events in order inside the response's lifecycle, one completed `web_search_call` with
/// the model's query (the same in `response.output_item.done` and `response.completed`), the
/// answer after it, and none of Colloquy's `x_` events.
fn new_user_saw(seen: &Value, id: &str, query: &str, answer: &str) {
    let kinds: Vec<&str> = seen["kinds"]
        .as_array()
        .unwrap_or_else(|| panic!("no events recorded: {seen}"))
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    let at = |kind: &str| {
        let found: Vec<usize> = (0..kinds.len()).filter(|&i| kinds[i] == kind).collect();
        assert_eq!(found.len(), 1, "{kind} once in {kinds:?}");
        found[0]
    };
    assert_eq!(kinds.first(), Some(&"response.created"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"response.completed"), "{kinds:?}");
    let in_progress = at("response.web_search_call.in_progress");
    let searching = at("response.web_search_call.searching");
    let completed = at("response.web_search_call.completed");
    assert!(
        at("response.created") < in_progress
            && in_progress < searching
            && searching < completed
            && completed < at("response.completed"),
        "{kinds:?}"
    );
    assert!(
        !kinds.iter().any(|k| k.starts_with("x_")),
        "no x_ events: {kinds:?}"
    );
    assert_eq!(seen["x_kinds"], json!([]));
    let call = json!({"id": id, "status": "completed", "action_type": "search", "query": query});
    assert_eq!(seen["done_calls"], json!([call]), "{seen}");
    assert_eq!(seen["completed_calls"], json!([call]), "{seen}");
    assert_eq!(seen["text"], answer);
}
