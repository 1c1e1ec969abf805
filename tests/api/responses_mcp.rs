//! Remote MCP per request on the Responses API (`{"type": "mcp", "server_url": …}`): the
//! official Python SDK against a real MCP server (`tests/mcp/server.py`) reached over streamable
//! HTTP by URL lists its tools, calls one, and with `require_approval: "always"` pauses until
//! the approval comes back — exactly once, across a restart (`tests/python/responses_mcp.py`).
//! And a URL the allow-list or the SSRF guard refuses is refused before any connection, with
//! nothing stored.

use std::net::IpAddr;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use entities::chats;
use sea_orm::{EntityTrait, PaginatorTrait};
use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::free_port;
use crate::helpers::{TestApp, error_body, eventually, run_client, spawn_app_with};
use crate::openai_node::node_clients;
use crate::openai_python::python_with_openai;

/// A streamable-HTTP MCP server the test runs, killed when dropped.
struct McpServer {
    child: std::process::Child,
    port: u16,
}

impl Drop for McpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl McpServer {
    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

/// A configuration that lets requests name `server`: on the allow-list, exempt from the SSRF
/// rules (it is on loopback).
fn reaching(config: &mut colloquy::config::Config, server: &McpServer) {
    let socket = format!("127.0.0.1:{}", server.port);
    config.mcp.remote_hosts = vec![socket.clone()];
    config.tools.ssrf_allow_list = vec![socket];
}

/// `tests/mcp/server.py http PORT`, once it accepts connections.
async fn mcp_server() -> McpServer {
    let python = crate::mcp::python().await;
    let port = free_port();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/server.py");
    let child = Command::new(python)
        .arg(script)
        .args(["http", &port.to_string()])
        .env("ECHO_PREFIX", "echoed: ")
        .spawn()
        .expect("the MCP server starts");
    let server = McpServer { child, port };
    eventually(
        "the MCP server listening",
        Duration::from_secs(60),
        || async {
            tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .ok()
                .map(|_| ())
        },
    )
    .await;
    server
}

/// A client program's command for `phase` (`calls` or `approve`), reaching `url`.
type Client = Box<dyn Fn(&str, &str) -> Command>;

fn python_client(python: PathBuf) -> Client {
    Box::new(move |phase, url| {
        let mut command = Command::new(&python);
        command
            .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python/responses_mcp.py"))
            .arg(phase)
            .env("MCP_URL", url);
        command
    })
}

fn node_client(dir: PathBuf) -> Client {
    Box::new(move |phase, url| {
        let mut command = Command::new("node");
        command
            .arg("responses_mcp.mjs")
            .arg(phase)
            .current_dir(&dir)
            .env("MCP_URL", url);
        command
    })
}

/// The tool messages the model was sent, by call id.
fn tool_message(app: &TestApp, call_id: &str) -> Option<String> {
    app.upstream.received().iter().find_map(|request| {
        request.body["messages"]
            .as_array()?
            .iter()
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
            .and_then(|m| m["content"].as_str().map(str::to_string))
    })
}

#[actix_web::test]
async fn the_python_sdk_lists_and_calls_a_remote_mcp_servers_tools_and_approves_a_call_once_across_a_restart()
 {
    let python = tokio::task::spawn_blocking(python_with_openai)
        .await
        .unwrap();
    lists_calls_and_approves_once_across_a_restart(python_client(python)).await;
}

#[actix_web::test]
async fn the_node_sdk_lists_and_calls_a_remote_mcp_servers_tools_and_approves_a_call_once_across_a_restart()
 {
    let dir = tokio::task::spawn_blocking(node_clients).await.unwrap();
    lists_calls_and_approves_once_across_a_restart(node_client(dir)).await;
}

async fn lists_calls_and_approves_once_across_a_restart(client: Client) {
    let server = mcp_server().await;
    let app = spawn_app_with(|config| reaching(config, &server)).await;
    app.upstream.script([
        Reply::tool_call("e1", "echo", json!({"text": "hi"})),
        Reply::text("It echoed hi."),
        Reply::tool_call("a1", "add", json!({"a": 2, "b": 40})),
        Reply::text("2 + 40 = 42."),
    ]);
    let seen = run_client(&app, client("calls", &server.url())).await;

    // The tools listed, then the call with the server's own answer, on a default stream.
    let kinds: Vec<&str> = seen["kinds"]
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
    assert!(at("response.mcp_list_tools.in_progress") < at("response.mcp_list_tools.completed"));
    assert!(at("response.mcp_list_tools.completed") < at("response.mcp_call.in_progress"));
    assert!(at("response.mcp_call.in_progress") < at("response.mcp_call_arguments.done"));
    assert!(at("response.mcp_call_arguments.done") < at("response.mcp_call.completed"));
    assert!(at("response.mcp_call.completed") < at("response.output_text.delta"));
    assert_eq!(
        seen["types"],
        json!(["mcp_list_tools", "mcp_call", "message"])
    );
    assert_eq!(seen["listed"]["server_label"], "tests");
    assert_eq!(
        seen["listed"]["tools"],
        json!(["echo", "add"]),
        "allowed_tools leaves crash out"
    );
    assert_eq!(
        seen["listed"]["echo_schema"]["properties"]["text"]["type"],
        "string"
    );
    assert_eq!(
        seen["call"],
        json!({"name": "echo", "server_label": "tests", "arguments": {"text": "hi"},
               "output": "echoed: hi", "error": null})
    );
    assert_eq!(seen["text"], "It echoed hi.");
    assert_eq!(
        seen["echoed_headers"],
        json!({"X-Test": "<redacted>"}),
        "header values are never shown"
    );
    let offered = &app.upstream.received()[0].body["tools"];
    let names: Vec<&str> = offered
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"echo") && names.contains(&"add"),
        "{names:?}"
    );
    assert!(!names.contains(&"crash"), "{names:?}");
    assert!(
        tool_message(&app, "e1").unwrap().contains("echoed: hi"),
        "the server's answer reached the model"
    );

    // With require_approval "always", the run pauses on the call instead of making it.
    assert_eq!(
        seen["asked_types"],
        json!(["mcp_list_tools", "mcp_approval_request"])
    );
    assert_eq!(
        seen["request"]["arguments"],
        json!({"a": 2, "b": 40}),
        "{seen}"
    );
    assert_eq!(seen["request"]["name"], "add");
    assert_eq!(seen["request"]["server_label"], "tests");
    assert_eq!(seen["asked_status"], "completed");
    assert_eq!(tool_message(&app, "a1"), None, "not called before approval");
    let approval_id = seen["request"]["id"].as_str().unwrap().to_string();
    let response_id = seen["response_id"].as_str().unwrap().to_string();
    // The headers (credentials) are stored nowhere: not with the question, not with the
    // response.
    let asks = entities::pending_asks::Entity::find()
        .all(&app.db)
        .await
        .unwrap();
    assert!(!asks.is_empty());
    let responses = entities::responses::Entity::find()
        .all(&app.db)
        .await
        .unwrap();
    for stored in asks
        .iter()
        .map(|a| format!("{} {}", a.question, a.checkpoint))
        .chain(responses.iter().map(|r| r.request.to_string()))
    {
        assert!(!stored.contains("secret-value"), "{stored}");
    }

    // The approval, after a restart: the call is made once, and the run goes on.
    let app = app.restart().await;
    let mut command = client("approve", &server.url());
    command
        .env("APPROVAL_ID", &approval_id)
        .env("RESPONSE_ID", &response_id);
    let approved = run_client(&app, command).await;
    assert_eq!(
        approved["types"],
        json!(["mcp_list_tools", "mcp_call", "message"])
    );
    assert_eq!(
        approved["call"],
        json!({"name": "add", "output": "42", "approval_request_id": approval_id})
    );
    assert_eq!(approved["text"], "2 + 40 = 42.");
    assert_eq!(approved["again"], 409, "an approval is used once");
    assert_eq!(
        tool_message(&app, "a1").as_deref(),
        Some("{\"content\":\"42\"}")
    );
    let calls = app
        .upstream
        .received()
        .iter()
        .filter(|r| r.body.to_string().contains("a1"))
        .count();
    assert_eq!(calls, 1, "the call's result went to the model once");
}

/// A listener on loopback that counts the connections it accepts.
async fn counting_listener() -> (u16, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    (port, accepted)
}

async fn chats_count(app: &TestApp) -> u64 {
    chats::Entity::find().count(&app.db).await.unwrap()
}

async fn refused(app: &TestApp, url: &str, code: &str, status: u16) -> Value {
    let before = chats_count(app).await;
    let response = app
        .openai()
        .create_response()
        .json(&json!({"model": "fake-model", "input": "hi",
            "tools": [{"type": "mcp", "server_label": "inner", "server_url": url,
                       "require_approval": "never"}]}))
        .call()
        .await;
    assert_eq!(response.status(), status, "{url}");
    let error = error_body(response).await;
    assert_eq!(error["code"], code, "{error}");
    assert_eq!(chats_count(app).await, before, "nothing stored");
    error
}

#[actix_web::test]
async fn a_private_or_loopback_mcp_url_is_refused_before_any_connection() {
    let (port, accepted) = counting_listener().await;
    let url = format!("http://127.0.0.1:{port}/mcp");

    // Not on the allow-list (empty by default: only configured servers).
    let app = spawn_app_with(|_| {}).await;
    let error = refused(&app, &url, "mcp_server_not_allowed", 400).await;
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("mcp.remote_hosts"),
        "{error}"
    );
    refused(&app, "http://10.0.0.8/mcp", "mcp_server_not_allowed", 400).await;

    // Any host allowed, but the SSRF guard still holds private and loopback addresses.
    let app = spawn_app_with(|config| config.mcp.remote_hosts = vec!["*".into()]).await;
    let error = refused(&app, &url, "mcp_server_refused", 400).await;
    assert!(
        error["message"].as_str().unwrap().contains("loopback"),
        "{error}"
    );
    refused(
        &app,
        &format!("http://localhost:{port}/mcp"),
        "mcp_server_refused",
        400,
    )
    .await;
    refused(
        &app,
        "http://169.254.169.254/mcp",
        "mcp_server_refused",
        400,
    )
    .await;
    refused(&app, "http://[::1]:9/mcp", "mcp_server_refused", 400).await;
    assert_eq!(accepted.load(Ordering::SeqCst), 0, "no connection was made");

    // Allowed and exempt, but nothing speaking MCP there: OpenAI's 424, nothing stored.
    let socket = format!("127.0.0.1:{port}");
    let app = spawn_app_with(|config| {
        config.mcp.remote_hosts = vec![socket.clone()];
        config.tools.ssrf_allow_list = vec![socket.clone()];
    })
    .await;
    refused(&app, &url, "mcp_list_tools_failed", 424).await;
    assert!(accepted.load(Ordering::SeqCst) > 0, "this one was tried");
}

/// A name other than `localhost`'s that this machine resolves to loopback addresses only,
/// without the network: one /etc/hosts gives a loopback address (the machine's own name,
/// `ip6-localhost`, `localhost.localdomain`, …), IPv4 first.
async fn a_loopback_name() -> Option<String> {
    let hosts = std::fs::read_to_string("/etc/hosts").unwrap_or_default();
    let mut listed: Vec<(IpAddr, String)> = hosts
        .lines()
        .filter_map(|line| {
            let mut fields = line.split('#').next()?.split_whitespace();
            let ip: IpAddr = fields.next()?.parse().ok()?;
            ip.is_loopback().then(|| {
                fields
                    .map(|name| (ip, name.trim_end_matches('.').to_ascii_lowercase()))
                    .collect::<Vec<_>>()
            })
        })
        .flatten()
        .filter(|(_, name)| name != "localhost" && !name.ends_with(".localhost"))
        .collect();
    listed.sort_by_key(|(ip, _)| ip.is_ipv6());
    for (_, name) in listed {
        let Ok(resolved) = tokio::net::lookup_host((name.as_str(), 0)).await else {
            continue;
        };
        let ips: Vec<IpAddr> = resolved.map(|socket| socket.ip()).collect();
        if !ips.is_empty() && ips.iter().all(IpAddr::is_loopback) {
            return Some(name);
        }
    }
    None
}

#[actix_web::test]
async fn an_allowed_name_resolving_to_loopback_is_refused_before_any_connection() {
    let Some(name) = a_loopback_name().await else {
        eprintln!("skipped: /etc/hosts gives no name but localhost a loopback address");
        return;
    };
    let (port, accepted) = counting_listener().await;
    // Any host allowed: the name passes the allow-list and the guard's check of names, and
    // is refused for what it resolves to, as an address URL is (not the 424 of a failed
    // connection).
    let app = spawn_app_with(|config| config.mcp.remote_hosts = vec!["*".into()]).await;
    let url = format!("http://{name}:{port}/mcp");
    let error = refused(&app, &url, "mcp_server_refused", 400).await;
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("{name} resolves to")) && message.contains("loopback"),
        "{error}"
    );
    assert_eq!(accepted.load(Ordering::SeqCst), 0, "no connection was made");
}

#[actix_web::test]
async fn a_remote_mcp_tool_is_checked_with_the_request() {
    let app = spawn_app_with(|_| {}).await;
    for (tool, says) in [
        (json!({"type": "mcp", "server_label": "x"}), "server_url"),
        (
            json!({"type": "mcp", "server_label": "x", "server_url": "ftp://h/"}),
            "server_url",
        ),
        (
            json!({"type": "mcp", "server_label": "x", "server_url": "http://h/",
                   "require_approval": "maybe"}),
            "require_approval",
        ),
        (
            json!({"type": "mcp", "server_label": "x", "connector_id": "connector_gmail"}),
            "connector",
        ),
    ] {
        let response = app
            .openai()
            .create_response()
            .json(&json!({"model": "fake-model", "input": "hi", "tools": [tool]}))
            .call()
            .await;
        assert_eq!(response.status(), 400, "{tool}");
        let error = error_body(response).await;
        assert!(error["message"].as_str().unwrap().contains(says), "{error}");
    }
    let twice = json!({"type": "mcp", "server_label": "x", "server_url": "http://h/"});
    let response = app
        .openai()
        .create_response()
        .json(&json!({"model": "fake-model", "input": "hi", "tools": [twice, twice]}))
        .call()
        .await;
    assert_eq!(response.status(), 400);
    let unknown = app
        .openai()
        .create_response()
        .json(
            &json!({"model": "fake-model", "previous_response_id": "resp_nothing",
            "input": [{"type": "mcp_approval_response", "approval_request_id": "mcpr_ask_x",
                       "approve": true}]}),
        )
        .call()
        .await;
    assert_eq!(unknown.status(), 404);
}

#[actix_web::test]
async fn the_browser_shows_an_mcp_approval_as_a_confirm_card_and_yes_makes_the_call() {
    let server = mcp_server().await;
    let app = crate::browser::browser_app(|config| reaching(config, &server)).await;
    let chat = app.new_chat().await;
    app.upstream.script([
        Reply::tool_call("a1", "add", json!({"a": 2, "b": 40})),
        Reply::text("2 + 40 = 42."),
    ]);
    let asked: Value = app
        .openai()
        .create_response()
        .json(
            &json!({"model": "fake-model", "input": "Add 2 and 40.", "x_chat_id": chat,
            "tools": [{"type": "mcp", "server_label": "tests", "server_url": server.url(),
                       "headers": {"X-Test": "secret-value"}, "require_approval": "always"}]}),
        )
        .read_json()
        .await;
    assert_eq!(
        asked["output"][1]["type"], "mcp_approval_request",
        "{asked}"
    );
    crate::browser::run_scenario(&app, "mcp_approval", &[("CHAT_ID", chat)]).await;
    // Approved in the app, without the request's headers: the server was reached again by the
    // URL the question remembers.
    assert_eq!(
        tool_message(&app, "a1").as_deref(),
        Some("{\"content\":\"42\"}")
    );
}

#[actix_web::test]
async fn a_declined_mcp_call_is_not_made_and_the_model_is_told() {
    let server = mcp_server().await;
    let app = spawn_app_with(|config| reaching(config, &server)).await;
    app.upstream.script([
        Reply::tool_call("a1", "add", json!({"a": 2, "b": 40})),
        Reply::text("I did not add them."),
    ]);
    let tool = json!({"type": "mcp", "server_label": "tests", "server_url": server.url(),
        "require_approval": {"never": {"tool_names": ["echo"]}}});
    let asked: Value = app
        .openai()
        .create_response()
        .json(&json!({"model": "fake-model", "input": "Add 2 and 40.", "tools": [tool]}))
        .read_json()
        .await;
    let request = &asked["output"][1];
    assert_eq!(request["type"], "mcp_approval_request", "{asked}");
    let declined: Value = app
        .openai()
        .create_response()
        .json(
            &json!({"model": "fake-model", "previous_response_id": asked["id"],
            "tools": [tool],
            "input": [{"type": "mcp_approval_response", "approval_request_id": request["id"],
                       "approve": false}]}),
        )
        .read_json()
        .await;
    let types: Vec<&str> = declined["output"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["mcp_list_tools", "message"], "no call was made");
    assert_eq!(declined["output_text"], "I did not add them.");
    let told = tool_message(&app, "a1").expect("the model was told");
    assert!(told.contains("declined"), "{told}");
}
