//! `McpTool`: one MCP server's tool behind the `Tool` trait. Its definition is the server's
//! (name, description, `inputSchema`); its calls go to the server's current connection. It
//! reports progress like a research tool (so it is rate limited and announced), and is cached
//! only when the server marks it read-only.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use rmcp::service::Peer;
use rmcp::{RoleClient, ServiceError};
use serde_json::{Value, json};

use super::Server;
use crate::llm::wire::ToolDefinition;
use crate::tools::{ProgressKind, Tool, ToolError, ToolFuture};

/// Longest tool name OpenAI accepts (`^[a-zA-Z0-9_-]{1,64}$`).
const MAX_TOOL_NAME_CHARS: usize = 64;

/// The name the model calls a server's tool by: its own when it is unique among every tool
/// and a valid OpenAI name, else `{server_id}__{tool}` with other characters replaced by `_`
/// and cut to 64 characters.
pub(super) fn model_name(server_id: &str, own: &str, unique: bool) -> String {
    let valid = |name: &str| {
        !name.is_empty()
            && name.len() <= MAX_TOOL_NAME_CHARS
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    if unique && valid(own) {
        return own.to_string();
    }
    format!("{server_id}__{own}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(MAX_TOOL_NAME_CHARS)
        .collect()
}

/// A tool of an MCP server, as the model sees it.
pub struct McpTool {
    server: Arc<Server>,
    /// The model-facing name.
    name: String,
    /// Its name on the server.
    tool_name: String,
    definition: ToolDefinition,
    read_only: bool,
}

impl McpTool {
    pub(super) fn new(server: Arc<Server>, name: String, listed: &rmcp::model::Tool) -> Self {
        let description = listed.description.as_deref().unwrap_or_default();
        let description = if description.is_empty() {
            format!(
                "The {} tool of the {} MCP server.",
                listed.name,
                server.id()
            )
        } else {
            description.to_string()
        };
        let parameters = Value::Object((*listed.input_schema).clone());
        let read_only = listed
            .annotations
            .as_ref()
            .and_then(|a| a.read_only_hint)
            .unwrap_or(false);
        Self {
            definition: ToolDefinition::function(&name, &description, parameters),
            tool_name: listed.name.to_string(),
            name,
            server,
            read_only,
        }
    }

    pub fn server_id(&self) -> &str {
        self.server.id()
    }

    /// Its name on its server.
    pub fn tool_name(&self) -> &str {
        &self.tool_name
    }
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn definition(&self) -> ToolDefinition {
        self.definition.clone()
    }

    fn progress(&self) -> Option<ProgressKind> {
        Some(ProgressKind::Other)
    }

    fn call_message(&self, _arguments: &Value) -> String {
        format!("Calling {} on {}", self.tool_name, self.server_id())
    }

    /// The result cache is shared by every chat: only a tool its server says only reads (and
    /// whose result is then a function of its arguments, as far as anyone can tell) is cached.
    fn cacheable(&self) -> bool {
        self.read_only
    }

    fn run(&self, arguments: Value) -> ToolFuture {
        let server = Arc::clone(&self.server);
        let tool_name = self.tool_name.clone();
        Box::pin(async move { call(&server, tool_name, arguments).await })
    }
}

/// One `tools/call` on the server's current connection, within the server's `timeout_secs`.
async fn call(server: &Server, tool_name: String, arguments: Value) -> Result<Value, ToolError> {
    let id = server.id().to_string();
    let Some(connection) = server.status().connection.clone() else {
        return Err(unavailable(&id, "it is not connected"));
    };
    let timeout = Duration::from_secs(server.config.timeout_secs);
    match call_on(&connection.peer, &id, tool_name, arguments, timeout).await {
        Ok(value) => Ok(value),
        Err(CallFailure::Broken(err)) => {
            // The connection is gone: the supervisor reconnects at once rather than waiting to
            // notice.
            connection.closer.cancel();
            tracing::warn!(mcp_server = %id, %err, "an MCP call found the connection broken");
            Err(unavailable(&id, &format!("the connection failed ({err})")))
        }
        Err(CallFailure::Tool(err)) => Err(err),
    }
}

/// Why a call on a connection failed: the connection broke (`ServiceError` text), or the call
/// itself did (its tool error).
pub(super) enum CallFailure {
    Broken(String),
    Tool(ToolError),
}

/// One `tools/call` of `tool_name` on `peer` (server `id`), within `timeout`.
pub(super) async fn call_on(
    peer: &Peer<RoleClient>,
    id: &str,
    tool_name: String,
    arguments: Value,
    timeout: Duration,
) -> Result<Value, CallFailure> {
    let Value::Object(arguments) = arguments else {
        return Err(CallFailure::Tool(ToolError::invalid_arguments(
            "the arguments must be a JSON object",
        )));
    };
    let params = CallToolRequestParams::new(tool_name).with_arguments(arguments);
    let result = match tokio::time::timeout(timeout, peer.call_tool(params)).await {
        Ok(result) => result,
        Err(_) => {
            return Err(CallFailure::Tool(ToolError::new(
                "timeout",
                format!(
                    "the MCP server {id} did not answer within {} seconds",
                    timeout.as_secs()
                ),
                "Try a simpler request, or answer with what you have.",
            )));
        }
    };
    match result {
        Ok(result) => read_result(result).map_err(CallFailure::Tool),
        Err(err @ (ServiceError::TransportClosed | ServiceError::TransportSend(_))) => {
            Err(CallFailure::Broken(err.to_string()))
        }
        Err(ServiceError::McpError(err)) => Err(CallFailure::Tool(ToolError::new(
            "mcp_error",
            format!("the MCP server {id} refused the call: {}", err.message),
            "Check the arguments against the tool's schema, or answer with what you have.",
        ))),
        Err(err) => Err(CallFailure::Tool(ToolError::new(
            "mcp_error",
            format!("the call to the MCP server {id} failed: {err}"),
            "Answer with what you have, or try again later.",
        ))),
    }
}

fn unavailable(id: &str, why: &str) -> ToolError {
    ToolError::new(
        "mcp_unavailable",
        format!("the MCP server {id} is unavailable: {why}; it is being reconnected"),
        "Answer without this tool, or try it again later.",
    )
}

/// The model's result: `{"content": text}` with the server's text blocks joined; a result the
/// server marks `isError` is a tool error carrying that text.
pub(super) fn read_result(result: CallToolResult) -> Result<Value, ToolError> {
    let text = result
        .content
        .iter()
        .map(content_text)
        .collect::<Vec<_>>()
        .join("\n");
    if result.is_error == Some(true) {
        let message = if text.is_empty() {
            "the tool reported an error without a message".to_string()
        } else {
            text
        };
        return Err(ToolError::new(
            "tool_error",
            message,
            "Fix the arguments if the error names them, or answer with what you have.",
        ));
    }
    if text.is_empty()
        && let Some(structured) = result.structured_content
    {
        return Ok(json!({"content": structured}));
    }
    Ok(json!({"content": text}))
}

/// A content block as text: text as is, other kinds named (images and audio are not passed to
/// the model, which takes text results).
fn content_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => format!("[image: {}]", image.mime_type),
        ContentBlock::Audio(audio) => format!("[audio: {}]", audio.mime_type),
        ContentBlock::Resource(resource) => match serde_json::to_value(&resource.resource) {
            Ok(value) => value
                .get("text")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| format!("[resource: {}]", value["uri"])),
            Err(_) => "[resource]".to_string(),
        },
        ContentBlock::ResourceLink(link) => format!("[resource: {}]", link.uri),
        // Kinds newer than this code.
        _ => "[content]".to_string(),
    }
}
