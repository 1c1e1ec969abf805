//! The `[mcp]` section: the MCP servers whose tools runs may call, declared here and nowhere
//! else (a stdio server is a command this process runs: never something an API user names),
//! and how their connections are retried.

use std::collections::BTreeMap;

use secrecy::SecretString;
use serde::Deserialize;

/// MCP (Model Context Protocol) servers and their supervision.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct McpConfig {
    /// `[[mcp.servers]]` entries, each a stdio command or a streamable-HTTP URL.
    pub servers: Vec<McpServerConfig>,
    /// Milliseconds before the first reconnection of a server that failed or exited; doubled
    /// after each failure up to `reconnect_max_ms`, reset once a connection succeeds.
    pub reconnect_initial_ms: u64,
    /// Longest wait between reconnections: a server that stays down costs one attempt per
    /// interval, not a busy loop.
    pub reconnect_max_ms: u64,
    /// The hosts a Responses request's `{"type": "mcp", "server_url": …}` may reach, besides
    /// the `url`s of `servers`: `HOST` (any port), `HOST:PORT`, or `*` (any host). Empty (the
    /// default): only the configured servers. Every connection still goes through the SSRF
    /// guard (`tools.ssrf_allow_list` is what exempts a private address), so `*` opens public
    /// hosts only.
    pub remote_hosts: Vec<String>,
}

impl Default for McpConfig {
    fn default() -> Self {
        Self {
            servers: Vec::new(),
            reconnect_initial_ms: 1_000,
            reconnect_max_ms: 30_000,
            remote_hosts: Vec::new(),
        }
    }
}

/// One MCP server: exactly one of `command` (stdio) and `url` (streamable HTTP).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// Its name in the health list and in prefixed tool names (`{id}__{tool}`): a slug of
    /// lowercase letters, digits, `-` and `_`.
    pub id: String,
    /// The program a stdio server is run as (looked up in `PATH` when not a path).
    pub command: Option<String>,
    /// The program's arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables added to the program's environment (which is otherwise Colloquy's); values may
    /// be secrets, so they never print.
    #[serde(default)]
    pub env: BTreeMap<String, SecretString>,
    /// A streamable-HTTP server's endpoint (`http://host:port/mcp`).
    pub url: Option<String>,
    /// Headers sent with every request to `url` (an `Authorization` token, say); secret values.
    #[serde(default)]
    pub headers: BTreeMap<String, SecretString>,
    /// Seconds connecting (start, handshake, tool list) and one tool call may take at most; a
    /// call is also bounded by `agent.tool_timeout_secs`, whichever is shorter.
    #[serde(default = "default_timeout_secs")]
    pub timeout_secs: u64,
}

fn default_timeout_secs() -> u64 {
    30
}

/// How a server is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpTransportKind {
    Stdio,
    Http,
}

impl McpTransportKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stdio => "stdio",
            Self::Http => "http",
        }
    }
}

impl McpServerConfig {
    /// Its transport; validation has made sure there is exactly one.
    pub fn transport(&self) -> McpTransportKind {
        if self.command.is_some() {
            McpTransportKind::Stdio
        } else {
            McpTransportKind::Http
        }
    }
}

/// Longest server id: `{id}__{tool}` must still leave room in OpenAI's 64-character tool names.
pub const MAX_SERVER_ID_CHARS: usize = 32;

impl McpConfig {
    /// What is wrong with these servers, if anything: ids that are not unique slugs, servers
    /// with no transport or two, URLs that are not http(s), header names that are not valid.
    pub fn problem(&self) -> Option<String> {
        if self.reconnect_initial_ms == 0 || self.reconnect_max_ms < self.reconnect_initial_ms {
            return Some(
                "mcp.reconnect_initial_ms must be at least 1 and at most mcp.reconnect_max_ms"
                    .into(),
            );
        }
        if let Some(entry) = self
            .remote_hosts
            .iter()
            .find(|entry| !remote_host_entry(entry))
        {
            return Some(format!(
                "mcp.remote_hosts entry {entry:?} must be *, HOST or HOST:PORT (no scheme, no path)"
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        for server in &self.servers {
            let id = &server.id;
            let slug = !id.is_empty()
                && id.chars().count() <= MAX_SERVER_ID_CHARS
                && id
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
            if !slug {
                return Some(format!(
                    "mcp server id {id:?} must be 1 to {MAX_SERVER_ID_CHARS} lowercase letters, \
                     digits, '-' or '_'"
                ));
            }
            if !seen.insert(id.as_str()) {
                return Some(format!("mcp server id {id:?} is declared twice"));
            }
            match (&server.command, &server.url) {
                (Some(_), Some(_)) | (None, None) => {
                    return Some(format!(
                        "mcp server {id:?} needs exactly one of command (stdio) and url \
                         (streamable HTTP)"
                    ));
                }
                (Some(command), None) => {
                    if command.trim().is_empty() {
                        return Some(format!("mcp server {id:?} has an empty command"));
                    }
                    if !server.headers.is_empty() {
                        return Some(format!(
                            "mcp server {id:?}: headers are for url servers; a command takes env"
                        ));
                    }
                }
                (None, Some(url)) => {
                    let web = url::Url::parse(url).is_ok_and(|url| {
                        matches!(url.scheme(), "http" | "https") && url.has_host()
                    });
                    if !web {
                        return Some(format!(
                            "mcp server {id:?}: url must be an http:// or https:// URL"
                        ));
                    }
                    if !server.args.is_empty() || !server.env.is_empty() {
                        return Some(format!(
                            "mcp server {id:?}: args and env are for command servers"
                        ));
                    }
                    if let Some(name) = server.headers.keys().find(|name| {
                        reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err()
                    }) {
                        return Some(format!(
                            "mcp server {id:?}: {name:?} is not a valid header name"
                        ));
                    }
                }
            }
            if server.timeout_secs == 0 {
                return Some(format!(
                    "mcp server {id:?}: timeout_secs must be at least 1"
                ));
            }
        }
        None
    }
}

/// Whether `entry` is a `remote_hosts` entry: `*`, or a host with an optional port, as a URL
/// would carry them (`example.org`, `127.0.0.1:8931`, `[::1]:8931`).
pub fn remote_host_entry(entry: &str) -> bool {
    if entry == "*" {
        return true;
    }
    url::Url::parse(&format!("http://{entry}/")).is_ok_and(|url| {
        url.has_host()
            && url.path() == "/"
            && url.username().is_empty()
            && url.query().is_none()
            && !entry.contains(['/', '@', '?', '#'])
    })
}
