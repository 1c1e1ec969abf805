//! Remote MCP servers a Responses request names (`{"type": "mcp", "server_label",
//! "server_url", "headers", "allowed_tools", "require_approval"}`), each connected for that run
//! only, over streamable HTTP.
//!
//! - `RemoteServer`: the tool as the request gives it, checked (`RemoteServer::parse`).
//! - `RemoteMcp`: the gate and the connector. A URL is reached only if its host is on
//!   `mcp.remote_hosts` or it is a configured server's URL (`NotAllowed` otherwise), and only
//!   through the SSRF guard every fetch goes through (`Refused`): both before any connection,
//!   the guard judging the addresses a host name resolves to as well (`check_resolved`).
//!   `open` connects and lists the tools (`Unreachable` when it cannot, within the timeout).
//! - `RemoteSession`: one open connection with the tools it listed (cut to `allowed_tools`),
//!   dropped (and closed) with the run's tools; its `listing` is the `x_mcp.list_tools` event the
//!   Responses API shows as an `mcp_list_tools` item.
//! - `RemoteTool`: one listed tool under the loop's governance. A tool that needs the user's
//!   approval (`require_approval`) pauses the run on a confirm question carrying the call
//!   (`approval_question`); the continuation makes the call on a yes (`supervisor::resume`).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::ServiceExt;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{Peer, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Map, Value, json};
use url::Url;

use super::tool::{CallFailure, call_on, model_name};
use crate::llm::wire::ToolDefinition;
use crate::tools::fetch::Fetcher;
use crate::tools::{ProgressKind, SharedTool, Tool, ToolError, ToolFuture};

/// The event that lists a remote server's tools at the start of a run (an `mcp_list_tools`
/// item on the Responses API).
pub const LIST_TOOLS_EVENT: &str = "x_mcp.list_tools";
/// Most remote MCP servers one request may name.
pub const MAX_REMOTE_SERVERS: usize = 8;
/// Most headers one server may be given, and the most bytes in one header's value.
const MAX_HEADERS: usize = 32;
const MAX_HEADER_BYTES: usize = 8_192;
/// Most tool names in `allowed_tools` or in one of `require_approval`'s lists.
const MAX_TOOL_NAMES: usize = 256;
/// Longest `server_label`, in characters.
const MAX_LABEL_CHARS: usize = 64;
/// Most tools a server may list for one run (past it, the rest are not offered).
const MAX_TOOLS: usize = 128;
/// The answers of an approval question.
pub const APPROVE: &str = "Yes";
pub const DECLINE: &str = "No";

/// Which calls of a server's tools wait for the user's approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// Every call (OpenAI's default).
    Always,
    /// None.
    Never,
    /// The tools named under `never` run at once; every other call waits.
    Except { never: Vec<String> },
}

impl Approval {
    pub fn needed(&self, tool: &str) -> bool {
        match self {
            Self::Always => true,
            Self::Never => false,
            Self::Except { never } => !never.iter().any(|name| name == tool),
        }
    }
}

/// A request's remote MCP server, checked.
#[derive(Clone)]
pub struct RemoteServer {
    pub label: String,
    pub url: Url,
    /// Sent with every request to the server; never stored or shown.
    headers: Vec<(HeaderName, HeaderValue)>,
    /// The tools the run may use (all the server lists when `None`).
    pub allowed_tools: Option<Vec<String>>,
    pub approval: Approval,
}

impl std::fmt::Debug for RemoteServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteServer")
            .field("label", &self.label)
            .field("url", &self.url.as_str())
            .field("headers", &self.headers.len())
            .field("allowed_tools", &self.allowed_tools)
            .field("approval", &self.approval)
            .finish()
    }
}

impl RemoteServer {
    /// `tools[index]`, a `{"type": "mcp"}` tool, checked; the message says what is wrong.
    pub fn parse(index: usize, tool: &Map<String, Value>) -> Result<Self, String> {
        let at = |what: &str| format!("tools[{index}].{what}");
        for key in tool.keys() {
            if !matches!(
                key.as_str(),
                "type"
                    | "server_label"
                    | "server_url"
                    | "server_description"
                    | "headers"
                    | "allowed_tools"
                    | "require_approval"
            ) {
                let hint = if key == "connector_id" {
                    ": connectors are OpenAI's own; name the server by server_url"
                } else {
                    ""
                };
                return Err(format!("{} is not a field of an mcp tool{hint}", at(key)));
            }
        }
        let label = tool
            .get("server_label")
            .and_then(Value::as_str)
            .filter(|label| {
                !label.is_empty()
                    && label.chars().count() <= MAX_LABEL_CHARS
                    && label
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            })
            .ok_or_else(|| {
                format!(
                    "{} must be 1 to {MAX_LABEL_CHARS} letters, digits, '_' or '-'",
                    at("server_label")
                )
            })?
            .to_string();
        let url = tool
            .get("server_url")
            .and_then(Value::as_str)
            .and_then(|url| Url::parse(url).ok())
            .filter(|url| matches!(url.scheme(), "http" | "https") && url.has_host())
            .filter(|url| url.username().is_empty() && url.password().is_none())
            .ok_or_else(|| {
                format!(
                    "{} must be an http:// or https:// URL without credentials (send them in \
                     headers)",
                    at("server_url")
                )
            })?;
        let headers = match tool.get("headers") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Object(headers)) => {
                if headers.len() > MAX_HEADERS {
                    return Err(format!(
                        "{} may have at most {MAX_HEADERS} headers",
                        at("headers")
                    ));
                }
                let mut checked = Vec::with_capacity(headers.len());
                for (name, value) in headers {
                    let header = HeaderName::from_bytes(name.as_bytes())
                        .map_err(|_| format!("{} is not a valid header name", at("headers")))?;
                    let value = value
                        .as_str()
                        .filter(|value| value.len() <= MAX_HEADER_BYTES)
                        .and_then(|value| HeaderValue::from_str(value).ok())
                        .ok_or_else(|| {
                            format!(
                                "{}: the value of {name} must be a string of at most \
                                 {MAX_HEADER_BYTES} bytes without control characters",
                                at("headers")
                            )
                        })?;
                    checked.push((header, value));
                }
                checked
            }
            Some(_) => return Err(format!("{} must be an object of strings", at("headers"))),
        };
        let allowed_tools = match tool.get("allowed_tools") {
            None | Some(Value::Null) => None,
            Some(Value::Object(filter)) => Some(names(
                filter.get("tool_names").unwrap_or(&Value::Null),
                &at("allowed_tools.tool_names"),
            )?),
            Some(list) => Some(names(list, &at("allowed_tools"))?),
        };
        let approval = match tool.get("require_approval") {
            None | Some(Value::Null) => Approval::Always,
            Some(Value::String(word)) if word == "always" => Approval::Always,
            Some(Value::String(word)) if word == "never" => Approval::Never,
            Some(Value::Object(lists)) => {
                if let Some(key) = lists
                    .keys()
                    .find(|k| !matches!(k.as_str(), "always" | "never"))
                {
                    return Err(format!(
                        "{} is not a field of require_approval (always, never)",
                        at(&format!("require_approval.{key}"))
                    ));
                }
                let list = |key: &str| match lists.get(key) {
                    None | Some(Value::Null) => Ok(Vec::new()),
                    Some(filter) => names(
                        filter.get("tool_names").unwrap_or(&Value::Null),
                        &at(&format!("require_approval.{key}.tool_names")),
                    ),
                };
                let always = list("always")?;
                let never = list("never")?;
                if let Some(both) = always.iter().find(|name| never.contains(name)) {
                    return Err(format!(
                        "{}: {both} is both always and never approved",
                        at("require_approval")
                    ));
                }
                Approval::Except { never }
            }
            Some(_) => {
                return Err(format!(
                    "{} must be \"always\", \"never\" or {{\"always\": {{\"tool_names\": [...]}}, \
                     \"never\": {{\"tool_names\": [...]}}}}",
                    at("require_approval")
                ));
            }
        };
        Ok(Self {
            label,
            url,
            headers,
            allowed_tools,
            approval,
        })
    }

    /// The server as an approval question remembers it, to reconnect when the answer comes
    /// without the request's tool (from the app, or after a restart): no headers, which are
    /// never stored, and only the approved tool.
    pub fn remembered(label: &str, url: &str, tool: &str) -> Option<Self> {
        let url = Url::parse(url).ok()?;
        Some(Self {
            label: label.to_string(),
            url,
            headers: Vec::new(),
            allowed_tools: Some(vec![tool.to_string()]),
            approval: Approval::Never,
        })
    }
}

/// A list of tool names.
fn names(value: &Value, at: &str) -> Result<Vec<String>, String> {
    let list = value
        .as_array()
        .filter(|list| list.len() <= MAX_TOOL_NAMES)
        .ok_or_else(|| format!("{at} must be a list of at most {MAX_TOOL_NAMES} tool names"))?;
    list.iter()
        .map(|name| {
            name.as_str()
                .filter(|name| !name.is_empty() && name.len() <= 128)
                .map(str::to_string)
                .ok_or_else(|| format!("{at} must hold tool names (strings of 1 to 128 bytes)"))
        })
        .collect()
}

/// Why a remote server cannot be used.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RemoteError {
    /// Its host is not on `mcp.remote_hosts` and it is no configured server.
    #[error(
        "the MCP server {label} ({host}) is not allowed: this server reaches only its configured \
         MCP servers and the hosts on mcp.remote_hosts"
    )]
    NotAllowed { label: String, host: String },
    /// The SSRF guard refused its address.
    #[error("the MCP server {label} cannot be reached: {reason}")]
    Refused { label: String, reason: String },
    /// It could not be connected to, or did not list its tools.
    #[error("error retrieving the tool list from the MCP server {label}: {reason}")]
    Unreachable { label: String, reason: String },
}

/// The gate and connector of remote MCP servers.
pub struct RemoteMcp {
    /// `mcp.remote_hosts`, lowercased.
    hosts: Vec<String>,
    /// The configured streamable-HTTP servers' URLs.
    configured: Vec<Url>,
    fetcher: Arc<Fetcher>,
    timeout: Duration,
}

impl RemoteMcp {
    /// `timeout`: connecting and listing, and each call.
    pub fn new(
        config: &crate::config::McpConfig,
        fetcher: Arc<Fetcher>,
        timeout: Duration,
    ) -> Self {
        Self {
            hosts: config
                .remote_hosts
                .iter()
                .map(|h| h.trim_end_matches('.').to_ascii_lowercase())
                .collect(),
            configured: config
                .servers
                .iter()
                .filter_map(|server| server.url.as_deref())
                .filter_map(|url| Url::parse(url).ok())
                .collect(),
            fetcher,
            timeout,
        }
    }

    /// Whether `server` may be reached, decided before any connection: on the allow-list (or
    /// configured), and passed by the SSRF guard.
    pub fn check(&self, server: &RemoteServer) -> Result<(), RemoteError> {
        let url = &server.url;
        let host = url
            .host_str()
            .unwrap_or_default()
            .trim_end_matches('.')
            .to_ascii_lowercase();
        let port = url.port_or_known_default().unwrap_or(0);
        let listed = self
            .hosts
            .iter()
            .any(|entry| entry == "*" || *entry == host || *entry == format!("{host}:{port}"));
        let configured = self.configured.iter().any(|known| known == url);
        if !listed && !configured {
            return Err(RemoteError::NotAllowed {
                label: server.label.clone(),
                host: format!("{host}:{port}"),
            });
        }
        self.fetcher
            .check_url(url)
            .map_err(|refusal| RemoteError::Refused {
                label: server.label.clone(),
                reason: refusal.to_string(),
            })
    }

    /// `check`, then the addresses `server`'s host name resolves to, as a connection would
    /// resolve it: refused (`Refused`) when any is private, loopback or otherwise off limits
    /// and `tools.ssrf_allow_list` does not exempt the name, still before any connection. The
    /// connection is guarded all the same (the name may resolve differently by then). A name
    /// that does not resolve in time is `Unreachable`.
    pub async fn check_resolved(&self, server: &RemoteServer) -> Result<(), RemoteError> {
        self.check(server)?;
        match tokio::time::timeout(self.timeout, self.fetcher.check_resolved(&server.url)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(refusal)) => Err(RemoteError::Refused {
                label: server.label.clone(),
                reason: refusal.to_string(),
            }),
            Err(_) => Err(RemoteError::Unreachable {
                label: server.label.clone(),
                reason: format!(
                    "its name did not resolve within {} seconds",
                    self.timeout.as_secs()
                ),
            }),
        }
    }

    /// Checks (`check_resolved`), connects and lists `server`'s tools.
    pub async fn open(&self, server: RemoteServer) -> Result<Arc<RemoteSession>, RemoteError> {
        self.check_resolved(&server).await?;
        let unreachable = |reason: String| RemoteError::Unreachable {
            label: server.label.clone(),
            reason,
        };
        let client = self
            .fetcher
            .guarded_client(self.timeout)
            .map_err(|err| unreachable(err.to_string()))?;
        let headers: HashMap<HeaderName, HeaderValue> = server.headers.iter().cloned().collect();
        let transport = StreamableHttpClientTransport::with_client(
            client,
            StreamableHttpClientTransportConfig::with_uri(server.url.as_str())
                .custom_headers(headers),
        );
        let info = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("colloquy", env!("CARGO_PKG_VERSION")),
        );
        let attempt = async {
            let service = info
                .serve(transport)
                .await
                .map_err(|err| format!("the handshake failed: {err}"))?;
            let tools = service
                .peer()
                .list_all_tools()
                .await
                .map_err(|err| format!("listing its tools failed: {err}"))?;
            Ok::<_, String>((service, tools))
        };
        let (service, mut tools) = match tokio::time::timeout(self.timeout, attempt).await {
            Ok(Ok(done)) => done,
            Ok(Err(reason)) => return Err(unreachable(reason)),
            Err(_) => {
                return Err(unreachable(format!(
                    "no answer within {} seconds",
                    self.timeout.as_secs()
                )));
            }
        };
        if let Some(allowed) = &server.allowed_tools {
            tools.retain(|tool| allowed.iter().any(|name| name == tool.name.as_ref()));
        }
        tools.truncate(MAX_TOOLS);
        Ok(Arc::new(RemoteSession {
            peer: service.peer().clone(),
            _service: service,
            server,
            tools,
            timeout: self.timeout,
        }))
    }
}

/// One remote server connected for a run, with the tools the run may use.
pub struct RemoteSession {
    server: RemoteServer,
    peer: Peer<RoleClient>,
    /// Kept so the connection lives as long as the session; dropping it closes it.
    _service: RunningService<RoleClient, ClientConfig>,
    tools: Vec<rmcp::model::Tool>,
    timeout: Duration,
}

impl std::fmt::Debug for RemoteSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteSession")
            .field("server", &self.server)
            .field("tools", &self.tools.len())
            .finish()
    }
}

impl RemoteSession {
    pub fn label(&self) -> &str {
        &self.server.label
    }

    /// The session's tools under the names the model calls them by: a tool's own name when
    /// it is a valid OpenAI name not in `taken` (every other tool's name so far), else
    /// `{label}__{name}`; a tool whose name is taken even so is left out.
    pub fn tools(self: &Arc<Self>, taken: &[String]) -> Vec<Arc<RemoteTool>> {
        let mut names: Vec<String> = taken.to_vec();
        let mut made = Vec::new();
        for listed in &self.tools {
            let own = listed.name.as_ref();
            let unique = !names.iter().any(|name| name == own);
            let name = model_name(&self.server.label, own, unique);
            if names.contains(&name) {
                tracing::warn!(
                    mcp_server = self.label(),
                    tool = own,
                    "a remote MCP tool's name is taken even when prefixed; it is not offered"
                );
                continue;
            }
            names.push(name.clone());
            made.push(Arc::new(RemoteTool::new(Arc::clone(self), name, listed)));
        }
        made
    }

    /// The `x_mcp.list_tools` event's payload for `tools` (this session's, as `tools` named
    /// them): the server, what it listed, and which model-facing name is which tool and which
    /// wait for approval.
    pub fn listing(&self, tools: &[Arc<RemoteTool>]) -> Value {
        let listed: Vec<Value> = self
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": Value::Object((*tool.input_schema).clone()),
                    "annotations": tool.annotations,
                })
            })
            .collect();
        let names: Map<String, Value> = tools
            .iter()
            .map(|tool| (tool.name.clone(), json!(tool.tool_name)))
            .collect();
        let approval: Vec<&str> = tools
            .iter()
            .filter(|tool| tool.approval)
            .map(|tool| tool.name.as_str())
            .collect();
        json!({
            "server_label": self.server.label,
            "tools": listed,
            "names": names,
            "approval": approval,
        })
    }
}

/// One remote server's tool, as the model sees it.
pub struct RemoteTool {
    session: Arc<RemoteSession>,
    name: String,
    tool_name: String,
    definition: ToolDefinition,
    approval: bool,
}

impl RemoteTool {
    fn new(session: Arc<RemoteSession>, name: String, listed: &rmcp::model::Tool) -> Self {
        let description = listed
            .description
            .as_deref()
            .filter(|d| !d.is_empty())
            .map(str::to_string)
            .unwrap_or_else(|| {
                format!(
                    "The {} tool of the {} MCP server.",
                    listed.name, session.server.label
                )
            });
        let parameters = Value::Object((*listed.input_schema).clone());
        Self {
            definition: ToolDefinition::function(&name, &description, parameters),
            tool_name: listed.name.to_string(),
            approval: session.server.approval.needed(listed.name.as_ref()),
            name,
            session,
        }
    }

    /// Its server's label.
    pub fn label(&self) -> &str {
        self.session.label()
    }

    /// Its name on the server.
    pub fn tool_name(&self) -> &str {
        &self.tool_name
    }

    /// Makes the call, approval or not (the continuation of an approved one).
    pub fn call(&self, arguments: Value) -> ToolFuture {
        let session = Arc::clone(&self.session);
        let tool_name = self.tool_name.clone();
        Box::pin(async move {
            let label = session.label().to_string();
            match call_on(&session.peer, &label, tool_name, arguments, session.timeout).await {
                Ok(value) => Ok(value),
                Err(CallFailure::Tool(err)) => Err(err),
                Err(CallFailure::Broken(why)) => Err(ToolError::new(
                    "mcp_unavailable",
                    format!("the MCP server {label} is unavailable: the connection failed ({why})"),
                    "Answer without this tool.",
                )),
            }
        })
    }
}

impl Tool for RemoteTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn definition(&self) -> ToolDefinition {
        self.definition.clone()
    }

    /// A call that waits for approval is announced by its question, not as research.
    fn progress(&self) -> Option<ProgressKind> {
        (!self.approval).then_some(ProgressKind::Other)
    }

    /// A call that waits for approval is announced by its question.
    fn own_events(&self) -> bool {
        self.approval
    }

    fn call_message(&self, _arguments: &Value) -> String {
        format!("Calling {} on {}", self.tool_name, self.label())
    }

    fn pauses(&self) -> bool {
        self.approval
    }

    fn run(&self, arguments: Value) -> ToolFuture {
        if self.approval {
            let question = approval_question(
                &self.session.server,
                &self.tool_name,
                &self.name,
                &arguments,
            );
            return Box::pin(async move { Ok(question) });
        }
        self.call(arguments)
    }
}

/// The confirm question a call that needs approval pauses on (ask_user's shape), with the call
/// under `mcp`: what the card shows, and what the continuation calls on a yes.
pub fn approval_question(
    server: &RemoteServer,
    tool_name: &str,
    model_name: &str,
    arguments: &Value,
) -> Value {
    json!({
        "question": format!("Allow the MCP server {} to run {tool_name}?", server.label),
        "options": [APPROVE, DECLINE],
        "allow_free_text": false,
        "multi_select": false,
        "style": "confirm",
        "fields": [],
        "mcp": {
            "server_label": server.label,
            "server_url": server.url.as_str(),
            "name": tool_name,
            "model_name": model_name,
            "arguments": arguments.to_string(),
        },
    })
}

/// A stored question's MCP call, if it is an approval question.
#[derive(Debug, Clone)]
pub struct PendingCall {
    pub label: String,
    pub url: String,
    pub tool_name: String,
    pub model_name: String,
}

impl PendingCall {
    pub fn of(question: &Value) -> Option<Self> {
        let mcp = question.get("mcp")?;
        let text = |key: &str| mcp[key].as_str().map(str::to_string);
        Some(Self {
            label: text("server_label")?,
            url: text("server_url")?,
            tool_name: text("name")?,
            model_name: text("model_name")?,
        })
    }
}

/// Whether `answer` (checked against the question's options) approves the call.
pub fn approves(answer: &Value) -> bool {
    answer == &Value::Bool(true) || answer.as_str() == Some(APPROVE)
}

/// The tools of `sessions`, named after `taken` and each other: as the run gets them, as
/// themselves (to find one by its server and name), and each session's listing.
pub fn tools_of(
    sessions: &[Arc<RemoteSession>],
    taken: &[String],
) -> (Vec<SharedTool>, Vec<Arc<RemoteTool>>, Vec<Value>) {
    let mut names = taken.to_vec();
    let mut all: Vec<Arc<RemoteTool>> = Vec::new();
    let mut listings = Vec::new();
    for session in sessions {
        let made = session.tools(&names);
        names.extend(made.iter().map(|tool| tool.name.clone()));
        listings.push(session.listing(&made));
        all.extend(made);
    }
    let shared = all
        .iter()
        .map(|tool| Arc::clone(tool) as SharedTool)
        .collect();
    (shared, all, listings)
}

#[cfg(test)]
mod tests {
    use std::net::IpAddr;

    use futures_util::future::BoxFuture;

    use super::*;
    use crate::ssrf::HostResolver;

    /// Resolves names from a fixed table, as a DNS server under the test's control would.
    struct MapResolver(HashMap<String, Vec<IpAddr>>);

    impl HostResolver for MapResolver {
        fn resolve(&self, host: &str) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>> {
            let found = self.0.get(host).cloned();
            Box::pin(async move { found.ok_or_else(|| std::io::ErrorKind::NotFound.into()) })
        }
    }

    /// Any host allowed (`*`), `exempt.example:80` exempt from the SSRF rules, names resolved
    /// from `names`.
    fn any_host(names: &[(&str, &[&str])]) -> RemoteMcp {
        let table = names
            .iter()
            .map(|(name, ips)| {
                let ips = ips.iter().map(|ip| ip.parse().unwrap()).collect();
                (name.to_string(), ips)
            })
            .collect();
        let tools = crate::config::ToolsConfig {
            ssrf_allow_list: vec!["exempt.example:80".into()],
            ..Default::default()
        };
        let fetcher = Fetcher::with_resolver(
            &tools,
            Duration::from_secs(60),
            Arc::new(MapResolver(table)),
        )
        .unwrap();
        let config = crate::config::McpConfig {
            remote_hosts: vec!["*".into()],
            ..Default::default()
        };
        RemoteMcp::new(&config, Arc::new(fetcher), Duration::from_secs(5))
    }

    fn server_at(url: &str) -> RemoteServer {
        parse(json!({"type": "mcp", "server_label": "inner", "server_url": url})).unwrap()
    }

    #[tokio::test]
    async fn a_name_resolving_to_any_private_address_is_refused_before_connecting() {
        let mcp = any_host(&[
            ("internal.example", &["10.0.0.5"]),
            ("mixed.example", &["93.184.216.34", "127.0.0.1"]),
            ("public.example", &["93.184.216.34"]),
            ("exempt.example", &["10.0.0.6"]),
        ]);
        for (url, says) in [
            (
                "http://internal.example/mcp",
                "internal.example resolves to 10.0.0.5, which is a private address",
            ),
            (
                "https://mixed.example:8443/mcp",
                "mixed.example resolves to 127.0.0.1, which is a loopback address",
            ),
        ] {
            let server = server_at(url);
            assert!(mcp.check(&server).is_ok(), "the name alone passes: {url}");
            let err = mcp.check_resolved(&server).await.unwrap_err();
            assert!(
                matches!(&err, RemoteError::Refused { label, reason }
                    if label == "inner" && reason.contains(says)),
                "{url}: {err}"
            );
            // `open` checks the same way before connecting: refused, not unreachable.
            let opened = mcp.open(server).await.map(|_| ()).unwrap_err();
            assert!(matches!(opened, RemoteError::Refused { .. }), "{opened}");
        }
        for url in [
            "http://public.example/mcp",
            // Exempt by name, as a connection is.
            "http://exempt.example/mcp",
            // Unresolvable: connecting reports it.
            "http://unknown.example/mcp",
        ] {
            let checked = mcp.check_resolved(&server_at(url)).await;
            assert!(checked.is_ok(), "{url}: {checked:?}");
        }
        // Exempt on its port only.
        let err = mcp
            .check_resolved(&server_at("http://exempt.example:81/mcp"))
            .await
            .unwrap_err();
        assert!(matches!(err, RemoteError::Refused { .. }), "{err}");
        let err = mcp
            .check_resolved(&server_at("http://127.0.0.1:9/mcp"))
            .await
            .unwrap_err();
        assert!(matches!(err, RemoteError::Refused { .. }), "{err}");
    }

    fn parse(tool: Value) -> Result<RemoteServer, String> {
        RemoteServer::parse(0, tool.as_object().unwrap())
    }

    #[test]
    fn a_tool_is_checked_field_by_field() {
        let server = parse(json!({"type": "mcp", "server_label": "docs",
            "server_url": "https://mcp.example.org/mcp", "headers": {"Authorization": "Bearer x"},
            "allowed_tools": ["search"], "require_approval": "never"}))
        .unwrap();
        assert_eq!(server.label, "docs");
        assert_eq!(server.allowed_tools, Some(vec!["search".to_string()]));
        assert_eq!(server.approval, Approval::Never);
        assert!(
            !format!("{server:?}").contains("Bearer"),
            "headers never print"
        );
        let filtered = parse(
            json!({"type": "mcp", "server_label": "d", "server_url": "http://h/",
            "allowed_tools": {"tool_names": ["a"]},
            "require_approval": {"never": {"tool_names": ["a"]}}}),
        )
        .unwrap();
        assert_eq!(filtered.allowed_tools, Some(vec!["a".to_string()]));
        assert!(!filtered.approval.needed("a") && filtered.approval.needed("b"));
        let default = parse(json!({"type": "mcp", "server_label": "d", "server_url": "http://h/"}));
        assert_eq!(default.unwrap().approval, Approval::Always);
        for (bad, says) in [
            (
                json!({"type": "mcp", "server_url": "http://h/"}),
                "server_label",
            ),
            (
                json!({"type": "mcp", "server_label": "a b", "server_url": "http://h/"}),
                "server_label",
            ),
            (
                json!({"type": "mcp", "server_label": "d", "server_url": "file:///etc"}),
                "server_url",
            ),
            (
                json!({"type": "mcp", "server_label": "d", "server_url": "http://u:p@h/"}),
                "server_url",
            ),
            (
                json!({"type": "mcp", "server_label": "d", "connector_id": "x"}),
                "connector",
            ),
            (
                json!({"type": "mcp", "server_label": "d", "server_url": "http://h/",
                "headers": {"X": "a\nb"}}),
                "headers",
            ),
            (
                json!({"type": "mcp", "server_label": "d", "server_url": "http://h/",
                "require_approval": "sometimes"}),
                "require_approval",
            ),
            (
                json!({"type": "mcp", "server_label": "d", "server_url": "http://h/",
                "require_approval": {"always": {"tool_names": ["a"]},
                    "never": {"tool_names": ["a"]}}}),
                "both",
            ),
            (
                json!({"type": "mcp", "server_label": "d", "server_url": "http://h/",
                "allowed_tools": "all"}),
                "allowed_tools",
            ),
        ] {
            let err = parse(bad.clone()).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }

    #[test]
    fn only_yes_approves_and_questions_carry_their_call() {
        assert!(approves(&json!("Yes")) && approves(&json!(true)));
        assert!(!approves(&json!("No")) && !approves(&json!(null)));
        let server = parse(json!({"type": "mcp", "server_label": "docs",
            "server_url": "http://h:9/mcp", "headers": {"Authorization": "secret"}}))
        .unwrap();
        let question = approval_question(&server, "echo", "docs__echo", &json!({"text": "hi"}));
        assert_eq!(question["style"], "confirm");
        assert!(
            !question.to_string().contains("secret"),
            "headers are never stored"
        );
        let call = PendingCall::of(&question).unwrap();
        assert_eq!(
            (
                call.label.as_str(),
                call.url.as_str(),
                call.tool_name.as_str(),
                call.model_name.as_str()
            ),
            ("docs", "http://h:9/mcp", "echo", "docs__echo")
        );
        assert!(PendingCall::of(&json!({"question": "?"})).is_none());
    }
}
