//! MCP custom tools against real MCP servers: `tests/mcp/server.py` (the `mcp` package, installed
//! into `target/mcp-venv` on first use) run over stdio by Colloquy, and over streamable HTTP by
//! the test; the scripted model calls their tools in chats.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

use colloquy::config::{Config, McpServerConfig};
use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::free_port;
use crate::helpers::{TestApp, eventually, spawn_app_with};
use crate::sse::{content, finished};

/// Python with `tests/mcp/requirements.txt` installed, made or brought up to date the first
/// time a test asks after the list changed.
fn python_with_mcp() -> PathBuf {
    crate::openai_python::python_venv("target/mcp-venv", "tests/mcp/requirements.txt")
}

pub(crate) async fn python() -> PathBuf {
    tokio::task::spawn_blocking(python_with_mcp).await.unwrap()
}

fn script() -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    root.join("tests/mcp/server.py").display().to_string()
}

/// A server Colloquy runs as `server.py MODE` over stdio.
pub(crate) fn stdio_server(python: &Path, id: &str, mode: &str) -> McpServerConfig {
    serde_json::from_value(json!({
        "id": id,
        "command": python.display().to_string(),
        "args": [script(), mode],
        "env": {"ECHO_PREFIX": "echoed: "},
        "timeout_secs": 30,
    }))
    .unwrap()
}

/// Reconnections a test can wait for.
fn quick_reconnects(config: &mut Config) {
    config.mcp.reconnect_initial_ms = 100;
    config.mcp.reconnect_max_ms = 500;
}

async fn servers(app: &TestApp) -> Vec<Value> {
    let response = app.api().mcp_servers().call().await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    body["servers"].as_array().unwrap().clone()
}

async fn server(app: &TestApp, id: &str) -> Value {
    servers(app)
        .await
        .into_iter()
        .find(|s| s["id"] == id)
        .expect("the server is listed")
}

/// Waits until server `id` is connected, and returns its health.
pub(crate) async fn connected(app: &TestApp, id: &str) -> Value {
    eventually(
        &format!("MCP server {id} connecting"),
        Duration::from_secs(60),
        || async {
            let health = server(app, id).await;
            (health["state"] == "connected").then_some(health)
        },
    )
    .await
}

/// The content of the tool message the upstream received in its `index`th request.
fn tool_result(app: &TestApp, index: usize) -> String {
    let received = app.upstream.received();
    let messages = received[index].body["messages"].as_array().unwrap();
    let tool = messages.last().unwrap();
    assert_eq!(tool["role"], "tool");
    tool["content"].as_str().unwrap().to_string()
}

fn with_tools(text: &str, tools: &[&str]) -> Value {
    json!({"content": text, "web_search_options": {"x_tools": tools}})
}

#[actix_web::test]
async fn a_stdio_servers_tool_is_called_in_a_chat_and_its_health_is_listed() {
    let python = python().await;
    let app = spawn_app_with(|config| {
        config.mcp.servers = vec![
            stdio_server(&python, "local", "stdio"),
            stdio_server(&python, "bare", "empty"),
        ];
        quick_reconnects(config);
    })
    .await;
    let health = connected(&app, "local").await;
    assert_eq!(health["transport"], "stdio");
    assert_eq!(health["tools"], 3);
    assert_eq!(health["tool_names"], json!(["echo", "add", "crash"]));
    assert_eq!(health["warning"], Value::Null);

    let bare = connected(&app, "bare").await;
    assert_eq!(bare["tools"], 0);
    assert_eq!(bare["warning"], "the server lists no tools");

    let anonymous = app.as_anonymous().api().mcp_servers().send().await.unwrap();
    assert_eq!(anonymous.status(), 401);

    let chat = app.new_chat().await;
    app.upstream.script([
        Reply::tool_call("c1", "echo", json!({"text": "hello"})),
        Reply::text("It said hello."),
    ]);
    let frames = app.send(&chat, with_tools("echo hello", &["echo"])).await;
    assert_eq!(content(&frames), "It said hello.");
    let offered = &app.upstream.received()[0].body["tools"];
    let echo = offered
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "echo")
        .expect("echo is offered");
    assert_eq!(echo["function"]["description"], "Echoes the text back.");
    assert_eq!(
        echo["function"]["parameters"]["properties"]["text"]["type"],
        "string"
    );
    let result = tool_result(&app, 1);
    assert!(
        result.contains("echoed: hello"),
        "the server's answer (with its configured environment): {result}"
    );
}

/// A streamable-HTTP server the test runs, killed when dropped.
struct HttpServer(Child);

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[actix_web::test]
async fn a_streamable_http_servers_tool_is_called_in_a_chat() {
    let python = python().await;
    let port = free_port();
    let _server = HttpServer(
        Command::new(&python)
            .args([script(), "http".into(), port.to_string()])
            .spawn()
            .expect("the MCP server starts"),
    );
    let app = spawn_app_with(|config| {
        config.mcp.servers = vec![
            serde_json::from_value(json!({
                "id": "remote",
                "url": format!("http://127.0.0.1:{port}/mcp"),
                "headers": {"X-Test": "yes"},
            }))
            .unwrap(),
        ];
        quick_reconnects(config);
    })
    .await;
    let health = connected(&app, "remote").await;
    assert_eq!(health["transport"], "http");
    assert_eq!(health["tools"], 3);

    let chat = app.new_chat().await;
    app.upstream.script([
        Reply::tool_call("c1", "add", json!({"a": 2, "b": 40})),
        Reply::text("2 + 40 = 42."),
    ]);
    let frames = app.send(&chat, with_tools("add", &["add"])).await;
    assert_eq!(content(&frames), "2 + 40 = 42.");
    let result = tool_result(&app, 1);
    assert!(result.contains("42"), "{result}");
}

#[actix_web::test]
async fn a_server_killed_mid_chat_fails_the_call_not_the_run_and_is_reconnected() {
    let python = python().await;
    let app = spawn_app_with(|config| {
        config.mcp.servers = vec![stdio_server(&python, "local", "stdio")];
        quick_reconnects(config);
    })
    .await;
    connected(&app, "local").await;

    let chat = app.new_chat().await;
    app.upstream.script([
        Reply::tool_call("c1", "crash", json!({})),
        Reply::text("The tool failed, so I answer without it."),
    ]);
    let frames = app.send(&chat, with_tools("crash it", &["crash"])).await;
    assert_eq!(finished(&frames)["stop_reason"], "completed", "{frames:?}");
    assert_eq!(content(&frames), "The tool failed, so I answer without it.");
    let result = tool_result(&app, 1);
    assert!(result.contains("\"error\""), "an error result: {result}");

    // The exit is reported, then the server is started again.
    eventually("the exit is reported", Duration::from_secs(30), || async {
        let health = server(&app, "local").await;
        health["last_error"].is_string().then_some(())
    })
    .await;
    connected(&app, "local").await;

    app.upstream.script([
        Reply::tool_call("c2", "echo", json!({"text": "again"})),
        Reply::text("Back."),
    ]);
    let frames = app.send(&chat, with_tools("echo again", &["echo"])).await;
    assert_eq!(content(&frames), "Back.");
    let received = app.upstream.received();
    let result = tool_result(&app, received.len() - 1);
    assert!(result.contains("echoed: again"), "{result}");
}

/// A custom tool entry (docs/spec.md#custom-tools-over-mcp): an agent that names an MCP server's
/// tool has it in its chats without asking for it, and it is in the agent's tool list.
#[actix_web::test]
async fn an_agents_custom_tool_entry_offers_the_mcp_tool_in_its_chats() {
    let python = python().await;
    let app = spawn_app_with(|config| {
        config.mcp.servers = vec![stdio_server(&python, "local", "stdio")];
        quick_reconnects(config);
    })
    .await;
    connected(&app, "local").await;
    let agent: Value = app
        .api().create_agent().json(&json!({"name": "Adder", "enabled_tools": ["calculator"],
                    "custom_tools": [{"type": "mcp", "config": {"server_id": "local", "tool_name": "add"}}]})).read_json().await;
    let id = agent["id"].as_str().unwrap();
    let listed: Value = app.api().agent_tools(id).read_json().await;
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "calculator",
            "create_artifact",
            "update_artifact",
            "save_memory",
            "recall_memory",
            "ask_user",
            "file_search",
            "add"
        ],
        "the chat's own tools stay beside those the agent names"
    );
    let chat = app.new_chat_with(&json!({"agent_id": id})).await;
    app.upstream.script([
        Reply::tool_call("c1", "add", json!({"a": 2, "b": 3})),
        Reply::text("Five."),
    ]);
    app.send(&chat, json!({"content": "2 + 3?"})).await;
    let offered: Vec<String> = app.upstream.received()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        offered,
        [
            "calculator",
            "create_artifact",
            "update_artifact",
            "save_memory",
            "recall_memory",
            "ask_user",
            "add"
        ]
    );
    assert!(
        tool_result(&app, 1).contains('5'),
        "{}",
        tool_result(&app, 1)
    );
}

#[actix_web::test]
async fn the_tool_catalog_lists_an_mcp_servers_tools_under_their_server_for_agents_to_name() {
    let python = python().await;
    let app = spawn_app_with(|config| {
        config.mcp.servers = vec![stdio_server(&python, "local", "stdio")];
        quick_reconnects(config);
    })
    .await;
    connected(&app, "local").await;
    let catalog: Value = app.api().tools().read_json().await;
    let echo = catalog["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "echo")
        .cloned()
        .expect("the MCP server's echo tool");
    assert_eq!(echo["origin"], "mcp");
    assert_eq!(echo["server_id"], "local");
    let made = app
        .api()
        .create_agent()
        .json(&json!({"name": "Echoer", "enabled_tools": ["echo", "calculator"]}))
        .call()
        .await;
    assert_eq!(made.status(), 201, "{:?}", made.text().await);
}

#[actix_web::test]
async fn the_admin_status_lists_a_running_mcp_servers_health() {
    let python = python().await;
    let app = spawn_app_with(|config| {
        config.mcp.servers = vec![stdio_server(&python, "local", "stdio")];
        quick_reconnects(config);
    })
    .await;
    let health = connected(&app, "local").await;
    let status: Value = app.admin().status().read_json().await;
    let listed = &status["mcp_servers"];
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{status}");
    assert_eq!(listed[0]["id"], "local");
    assert_eq!(listed[0]["state"], "connected");
    assert_eq!(listed[0]["transport"], "stdio");
    assert_eq!(listed[0]["tools"], health["tools"], "{status}");
    assert!(listed[0]["tools"].as_u64().unwrap() > 0, "{status}");
}

/// An MCP server that lists a tool by every built-in tool's name (the table of tools') never
/// shadows one: each of its tools is offered prefixed with the server's id, the catalog lists
/// the built-in tool under its own name and origin, and a chat whose agent names built-in tools
/// is offered each name once and runs the built-in one.
#[actix_web::test]
async fn an_mcp_server_listing_every_built_in_name_never_shadows_one() {
    let python = python().await;
    let builtins: Vec<&str> = colloquy::tools::registry::reserved_names().collect();
    let server: McpServerConfig = serde_json::from_value(json!({
        "id": "mimic",
        "command": python.display().to_string(),
        "args": [script(), "names"],
        "env": {"TOOL_NAMES": builtins.join(",")},
        "timeout_secs": 30,
    }))
    .unwrap();
    let app = spawn_app_with(move |config| {
        config.mcp.servers = vec![server];
        quick_reconnects(config);
    })
    .await;
    let health = connected(&app, "mimic").await;
    assert_eq!(health["tools"], builtins.len(), "{health}");

    let catalog: Value = app.api().tools().read_json().await;
    let tools = catalog["tools"].as_array().unwrap();
    for name in &builtins {
        let mcp_by_name = tools
            .iter()
            .find(|t| t["name"] == *name && t["origin"] == "mcp");
        assert!(
            mcp_by_name.is_none(),
            "{name} is taken by the MCP server: {catalog}"
        );
        let prefixed = format!("mimic__{name}");
        let entry = tools
            .iter()
            .find(|t| t["name"] == prefixed.as_str())
            .unwrap_or_else(|| panic!("{prefixed} in the catalog: {catalog}"));
        assert_eq!(entry["origin"], "mcp");
        assert_eq!(entry["server_id"], "mimic");
    }
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "one tool per name: {names:?}");

    // An agent naming built-in tools (and the MCP one) gets each once; the built-in runs.
    let agent: Value = app
        .api()
        .create_agent()
        .json(&json!({"name": "Both", "enabled_tools":
            ["calculator", "browse_url", "search_knowledge", "mimic__calculator"]}))
        .read_json()
        .await;
    let chat = app.new_chat_with(&json!({"agent_id": agent["id"]})).await;
    app.upstream.script([
        Reply::tool_call("c1", "calculator", json!({"expression": "6*7"})),
        Reply::tool_call("c2", "mimic__calculator", json!({"query": "x"})),
        Reply::text("Done."),
    ]);
    let frames = app.send(&chat, json!({"content": "six times seven"})).await;
    assert_eq!(content(&frames), "Done.");
    let offered: Vec<String> = app.upstream.received()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    let mut once = offered.clone();
    once.sort_unstable();
    once.dedup();
    assert_eq!(once.len(), offered.len(), "no name twice: {offered:?}");
    for name in [
        "calculator",
        "browse_url",
        "search_knowledge",
        "mimic__calculator",
    ] {
        assert!(offered.iter().any(|o| o == name), "{name} in {offered:?}");
    }
    let built_in = tool_result(&app, 1);
    assert!(
        built_in.contains("42"),
        "the built-in calculator ran: {built_in}"
    );
    let theirs = tool_result(&app, 2);
    assert!(
        theirs.contains("mcp calculator"),
        "the MCP server's, under its prefix: {theirs}"
    );
}
