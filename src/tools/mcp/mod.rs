//! MCP custom tools: the servers `[[mcp.servers]]` declares (configuration only: a stdio server
//! is a command this process runs), each kept connected by its own supervisor task
//! (`supervise`), and their tools offered to runs as `McpTool`s (`tool`) under the loop's usual
//! governance. A server that fails or exits is reported in its health and reconnected with
//! back-off; its tools are unavailable meanwhile, and a call of one is a tool error, never a
//! failed run. Must not: reach the loop, a chat or the HTTP layer.
//!
//! `McpRegistry`: `tools()` (every tool the servers listed, which the launcher adds to the
//! built-ins a request selects from; a down server's answer `mcp_unavailable`),
//! `tool(server_id, tool_name)` (an agent's custom tool entry) and `health()` (for
//! `GET /api/mcp/servers`).
//!
//! `remote`: the servers a Responses request names by URL, connected for its run only.

pub mod remote;
mod supervise;
mod tool;

use std::sync::{Arc, Mutex, MutexGuard};

use rmcp::RoleClient;
use rmcp::service::Peer;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::config::{McpConfig, McpServerConfig};
use crate::tools::{SharedTool, Tool};

pub use tool::McpTool;

/// The warning a server that lists no tools carries, in its health and the log.
pub const NO_TOOLS_WARNING: &str = "the server lists no tools";

/// Where a server's connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConnectionState {
    /// Starting, handshaking or listing tools (first time or again after a failure).
    Connecting,
    /// Its tools are offered.
    Connected,
    /// Down: waiting to reconnect; its tools are unavailable.
    Disconnected,
}

/// One server's health, as `GET /api/mcp/servers` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ServerHealth {
    pub id: String,
    pub transport: &'static str,
    pub state: ConnectionState,
    /// How many tools it listed at its last connection.
    pub tools: usize,
    /// The model-facing names of those tools.
    pub tool_names: Vec<String>,
    /// Why it last failed or disconnected, if it ever did (kept after a reconnection).
    pub last_error: Option<String>,
    /// Something wrong short of a failure (it lists no tools).
    pub warning: Option<String>,
}

/// A live connection: the handle calls go through, and the token that ends it (a call that
/// finds the transport broken cancels it, so the supervisor reconnects at once).
#[derive(Clone)]
struct Connection {
    peer: Peer<RoleClient>,
    closer: CancellationToken,
}

/// What the supervisor last learnt about a server.
struct Status {
    state: ConnectionState,
    connection: Option<Connection>,
    /// The tools it listed at its last connection (kept while it is down, so its tools keep
    /// their names when it comes back).
    tools: Vec<rmcp::model::Tool>,
    last_error: Option<String>,
    warning: Option<String>,
}

/// One configured server and its status, shared by its supervisor and its tools.
struct Server {
    config: McpServerConfig,
    status: Mutex<Status>,
}

impl Server {
    fn status(&self) -> MutexGuard<'_, Status> {
        // A panic while holding this lock leaves plain data behind: still readable.
        self.status
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn id(&self) -> &str {
        &self.config.id
    }
}

/// The configured MCP servers. Cheap to clone; `start` spawns their supervisors.
#[derive(Clone, Default)]
pub struct McpRegistry {
    servers: Arc<Vec<Arc<Server>>>,
    /// The built-in tools' names: an MCP tool with one of these is offered prefixed.
    reserved: Arc<Vec<String>>,
}

impl McpRegistry {
    /// Starts one supervisor task per configured server (on the current Tokio runtime);
    /// `reserved` are the names of the server's other tools.
    pub fn start(config: &McpConfig, reserved: Vec<String>) -> Self {
        let servers: Vec<Arc<Server>> = config
            .servers
            .iter()
            .map(|server| {
                Arc::new(Server {
                    config: server.clone(),
                    status: Mutex::new(Status {
                        state: ConnectionState::Connecting,
                        connection: None,
                        tools: Vec::new(),
                        last_error: None,
                        warning: None,
                    }),
                })
            })
            .collect();
        let backoff = supervise::Backoff::new(config);
        for server in &servers {
            tokio::spawn(supervise::supervise(Arc::clone(server), backoff));
        }
        Self {
            servers: Arc::new(servers),
            reserved: Arc::new(reserved),
        }
    }

    /// Every tool the servers listed at their last connection, under its model-facing name.
    /// A down server's tools stay selectable and answer `mcp_unavailable` until it is back, as
    /// web_search without an engine answers `search_unavailable`: a request naming one is told,
    /// never silently given other tools.
    pub fn tools(&self) -> Vec<SharedTool> {
        self.all_tools()
            .into_iter()
            .map(|(tool, _)| Arc::new(tool) as SharedTool)
            .collect()
    }

    /// The tools of the servers connected now.
    pub fn connected_tools(&self) -> Vec<SharedTool> {
        self.all_tools()
            .into_iter()
            .filter(|(_, connected)| *connected)
            .map(|(tool, _)| Arc::new(tool) as SharedTool)
            .collect()
    }

    /// The tool `tool_name` (its name on the server) of server `server_id`, if the server has
    /// listed it (it answers `mcp_unavailable` while the server is down): how an agent's
    /// `{"type": "mcp", "config": {"server_id", "tool_name"}}` entry finds its tool.
    pub fn tool(&self, server_id: &str, tool_name: &str) -> Option<SharedTool> {
        self.all_tools()
            .into_iter()
            .find(|(tool, _)| tool.server_id() == server_id && tool.tool_name() == tool_name)
            .map(|(tool, _)| Arc::new(tool) as SharedTool)
    }

    /// Every server's health, in configuration order.
    pub fn health(&self) -> Vec<ServerHealth> {
        let tools = self.all_tools();
        self.servers
            .iter()
            .map(|server| {
                let status = server.status();
                let tool_names = tools
                    .iter()
                    .filter(|(tool, _)| tool.server_id() == server.id())
                    .map(|(tool, _)| tool.name().to_string())
                    .collect();
                ServerHealth {
                    id: server.id().to_string(),
                    transport: server.config.transport().as_str(),
                    state: status.state,
                    tools: status.tools.len(),
                    tool_names,
                    last_error: status.last_error.clone(),
                    warning: status.warning.clone(),
                }
            })
            .collect()
    }

    /// Every server's last-listed tools, named, with whether their server is connected. Names
    /// are chosen over all of them, connected or not, so they do not change as servers come
    /// and go.
    fn all_tools(&self) -> Vec<(McpTool, bool)> {
        let listings: Vec<(Arc<Server>, Vec<rmcp::model::Tool>, bool)> = self
            .servers
            .iter()
            .map(|server| {
                let status = server.status();
                let connected = status.state == ConnectionState::Connected;
                (Arc::clone(server), status.tools.clone(), connected)
            })
            .collect();
        let own_names: Vec<&str> = listings
            .iter()
            .flat_map(|(_, tools, _)| tools.iter().map(|t| t.name.as_ref()))
            .collect();
        let mut chosen: Vec<(McpTool, bool)> = Vec::new();
        for (server, tools, connected) in &listings {
            for listed in tools {
                let own = listed.name.as_ref();
                let unique = own_names.iter().filter(|name| **name == own).count() == 1
                    && !self.reserved.iter().any(|name| name == own);
                let name = tool::model_name(server.id(), own, unique);
                if chosen.iter().any(|(tool, _)| tool.name() == name) {
                    tracing::warn!(
                        mcp_server = server.id(),
                        tool = own,
                        "an MCP tool's name collides with another's even when prefixed; it \
                         is not offered"
                    );
                    continue;
                }
                chosen.push((McpTool::new(Arc::clone(server), name, listed), *connected));
            }
        }
        chosen
    }
}

#[cfg(test)]
mod tests;
