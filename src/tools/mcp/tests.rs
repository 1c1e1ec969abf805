use std::sync::{Arc, Mutex};

use rmcp::model::{CallToolResult, ContentBlock, ToolAnnotations};
use serde_json::json;

use super::tool::model_name;
use super::*;

fn listed(name: &str, read_only: bool) -> rmcp::model::Tool {
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    let mut tool = rmcp::model::Tool::new(
        name.to_string(),
        format!("{name} things"),
        Arc::new(schema.as_object().cloned().unwrap()),
    );
    if read_only {
        tool.annotations = Some(ToolAnnotations::new().read_only(true));
    }
    tool
}

fn server(id: &str, state: ConnectionState, tools: Vec<rmcp::model::Tool>) -> Arc<Server> {
    let config: crate::config::McpServerConfig = serde_json::from_value(json!({
        "id": id, "command": "true"
    }))
    .unwrap();
    Arc::new(Server {
        config,
        status: Mutex::new(Status {
            state,
            connection: None,
            tools,
            last_error: None,
            warning: None,
        }),
    })
}

fn registry(servers: Vec<Arc<Server>>, reserved: &[&str]) -> McpRegistry {
    McpRegistry {
        servers: Arc::new(servers),
        reserved: Arc::new(reserved.iter().map(|s| s.to_string()).collect()),
    }
}

fn names(tools: &[crate::tools::SharedTool]) -> Vec<String> {
    tools.iter().map(|t| t.name().to_string()).collect()
}

#[test]
fn a_unique_valid_name_is_kept_and_others_are_prefixed_and_sanitised() {
    assert_eq!(model_name("files", "search", true), "search");
    assert_eq!(model_name("files", "search", false), "files__search");
    assert_eq!(model_name("files", "read.file", true), "files__read_file");
    let long = "x".repeat(80);
    assert_eq!(model_name("files", &long, true).len(), 64);
}

#[test]
fn tools_shared_by_two_servers_or_with_a_built_in_name_are_prefixed() {
    let registry = registry(
        vec![
            server(
                "one",
                ConnectionState::Connected,
                vec![listed("echo", false), listed("web_search", false)],
            ),
            server(
                "two",
                ConnectionState::Connected,
                vec![listed("echo", false), listed("add", true)],
            ),
        ],
        &["web_search", "calculator"],
    );
    assert_eq!(
        names(&registry.tools()),
        ["one__echo", "one__web_search", "two__echo", "add"]
    );
    let add = registry.tool("two", "add").expect("add is offered");
    assert_eq!(add.name(), "add");
    assert!(add.cacheable(), "read-only tools are cached");
    assert!(!registry.tool("one", "echo").unwrap().cacheable());
    assert!(add.progress().is_some(), "rate limited like research tools");
    let definition = add.definition();
    assert_eq!(definition.function.name, "add");
    assert_eq!(
        definition.function.parameters.unwrap()["properties"]["text"]["type"],
        "string"
    );
}

#[test]
fn a_disconnected_servers_tools_stay_selectable_and_keep_their_names() {
    let registry = registry(
        vec![
            server(
                "down",
                ConnectionState::Disconnected,
                vec![listed("echo", false)],
            ),
            server(
                "up",
                ConnectionState::Connected,
                vec![listed("echo", false)],
            ),
        ],
        &[],
    );
    assert_eq!(names(&registry.tools()), ["down__echo", "up__echo"]);
    assert_eq!(names(&registry.connected_tools()), ["up__echo"]);
    assert!(registry.tool("down", "echo").is_some());
    let health = registry.health();
    assert_eq!(health[0].state, ConnectionState::Disconnected);
    assert_eq!(health[0].tools, 1);
    assert_eq!(health[0].transport, "stdio");
}

#[actix_web::test]
async fn a_call_while_the_server_is_down_is_an_unavailable_error() {
    let registry = registry(
        vec![server(
            "down",
            ConnectionState::Disconnected,
            vec![listed("echo", false)],
        )],
        &[],
    );
    let tool = registry.tool("down", "echo").unwrap();
    let err = tool.run(json!({"text": "hi"})).await.unwrap_err();
    assert_eq!(err.code, "mcp_unavailable");
}

#[test]
fn text_blocks_are_joined_and_an_error_result_is_a_tool_error() {
    let ok = CallToolResult::success(vec![ContentBlock::text("a"), ContentBlock::text("b")]);
    assert_eq!(
        super::tool::read_result(ok).unwrap(),
        json!({"content": "a\nb"})
    );
    let failed = CallToolResult::error(vec![ContentBlock::text("no such city")]);
    let err = super::tool::read_result(failed).unwrap_err();
    assert_eq!(
        (err.code.as_str(), err.message.as_str()),
        ("tool_error", "no such city")
    );
}

#[test]
fn configuration_needs_unique_slugs_and_exactly_one_transport() {
    let problem = |toml: &str| {
        crate::config::Config::from_toml_str(toml)
            .err()
            .map(|e| e.to_string())
    };
    assert!(problem("[[mcp.servers]]\nid = \"a\"\ncommand = \"python3\"\n").is_none());
    assert!(
        problem("[[mcp.servers]]\nid = \"a\"\nurl = \"http://127.0.0.1:9/mcp\"\n[mcp.servers.headers]\nAuthorization = \"Bearer x\"\n")
            .is_none()
    );
    let twice = "[[mcp.servers]]\nid = \"a\"\ncommand = \"x\"\n[[mcp.servers]]\nid = \"a\"\ncommand = \"y\"\n";
    assert!(problem(twice).unwrap().contains("declared twice"));
    let both = "[[mcp.servers]]\nid = \"a\"\ncommand = \"x\"\nurl = \"http://h/mcp\"\n";
    assert!(problem(both).unwrap().contains("exactly one"));
    let neither = "[[mcp.servers]]\nid = \"a\"\n";
    assert!(problem(neither).unwrap().contains("exactly one"));
    let bad_id = "[[mcp.servers]]\nid = \"My Server\"\ncommand = \"x\"\n";
    assert!(problem(bad_id).unwrap().contains("lowercase"));
    let bad_url = "[[mcp.servers]]\nid = \"a\"\nurl = \"file:///etc\"\n";
    assert!(problem(bad_url).unwrap().contains("http"));
}

#[test]
fn secret_env_and_header_values_never_print() {
    let config = crate::config::Config::from_toml_str(
        "[[mcp.servers]]\nid = \"a\"\ncommand = \"x\"\nenv = { TOKEN = \"env-secret-1\" }\n\
         [[mcp.servers]]\nid = \"b\"\nurl = \"http://h/mcp\"\nheaders = { Authorization = \"Bearer hdr-secret-2\" }\n",
    )
    .unwrap();
    let printed = format!("{config:?}");
    assert!(!printed.contains("env-secret-1") && !printed.contains("hdr-secret-2"));
}
