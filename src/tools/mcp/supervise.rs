//! One server's supervisor: connect (spawn the stdio command, its stderr into the log, or open
//! the streamable-HTTP session), list its tools, wait until the connection ends, record why,
//! and start again after an exponential back-off. Never returns; never panics on the server's
//! account.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::ServiceExt;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{QuitReason, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use secrecy::ExposeSecret;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio_util::sync::CancellationToken;

use super::{Connection, ConnectionState, NO_TOOLS_WARNING, Server};
use crate::config::{McpConfig, McpServerConfig};

/// Longest stderr line kept in the log, in characters: a server printing a megabyte on one line
/// must not flood it.
const MAX_STDERR_LINE_CHARS: usize = 2_000;

/// Waits between attempts: from `initial`, doubled after each failure, at most `max`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Backoff {
    initial: Duration,
    max: Duration,
}

impl Backoff {
    pub(super) fn new(config: &McpConfig) -> Self {
        Self {
            initial: Duration::from_millis(config.reconnect_initial_ms),
            max: Duration::from_millis(config.reconnect_max_ms),
        }
    }

    fn next(&self, current: Duration) -> Duration {
        (current * 2).min(self.max)
    }
}

type Client = RunningService<RoleClient, ClientConfig>;

/// Keeps `server` connected for as long as the process runs.
pub(super) async fn supervise(server: Arc<Server>, backoff: Backoff) {
    let mut delay = backoff.initial;
    loop {
        server.status().state = ConnectionState::Connecting;
        let closer = CancellationToken::new();
        match connect_and_list(&server, closer.clone()).await {
            Ok((client, tools)) => {
                delay = backoff.initial;
                let count = tools.len();
                let warning = (count == 0).then(|| NO_TOOLS_WARNING.to_string());
                if count == 0 {
                    tracing::warn!(mcp_server = server.id(), "{NO_TOOLS_WARNING}");
                } else {
                    tracing::info!(
                        mcp_server = server.id(),
                        tools = count,
                        "MCP server connected"
                    );
                }
                {
                    let mut status = server.status();
                    status.state = ConnectionState::Connected;
                    status.connection = Some(Connection {
                        peer: client.peer().clone(),
                        closer: closer.clone(),
                    });
                    status.tools = tools;
                    status.warning = warning;
                }
                let reason = match client.waiting().await {
                    Ok(QuitReason::Cancelled) => "a call found the connection broken".to_string(),
                    Ok(QuitReason::Closed) => "the server closed the connection".to_string(),
                    Ok(QuitReason::JoinError(err)) | Err(err) => {
                        format!("the connection's task failed: {err}")
                    }
                    // QuitReason is non-exhaustive.
                    Ok(other) => format!("the connection ended: {other:?}"),
                };
                disconnected(&server, reason);
            }
            Err(err) => disconnected(&server, err),
        }
        tokio::time::sleep(delay).await;
        delay = backoff.next(delay);
    }
}

/// Records a lost or failed connection; its tools become unavailable.
fn disconnected(server: &Server, reason: String) {
    tracing::warn!(
        mcp_server = server.id(),
        reason,
        "MCP server disconnected; reconnecting with back-off"
    );
    let mut status = server.status();
    status.state = ConnectionState::Disconnected;
    status.connection = None;
    status.last_error = Some(reason);
}

/// Connects and lists the tools (every page), within the server's `timeout_secs`.
async fn connect_and_list(
    server: &Server,
    closer: CancellationToken,
) -> Result<(Client, Vec<rmcp::model::Tool>), String> {
    let config = &server.config;
    let timeout = Duration::from_secs(config.timeout_secs);
    let attempt = async {
        let client = connect(config, closer).await?;
        let tools = client
            .peer()
            .list_all_tools()
            .await
            .map_err(|err| format!("listing its tools failed: {err}"))?;
        Ok::<_, String>((client, tools))
    };
    match tokio::time::timeout(timeout, attempt).await {
        Ok(result) => result,
        Err(_) => Err(format!(
            "it did not connect and list its tools within {} seconds",
            timeout.as_secs()
        )),
    }
}

async fn connect(config: &McpServerConfig, closer: CancellationToken) -> Result<Client, String> {
    let info = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("colloquy", env!("CARGO_PKG_VERSION")),
    );
    if let Some(command) = &config.command {
        let mut process = tokio::process::Command::new(command);
        process.args(&config.args).kill_on_drop(true);
        for (name, value) in &config.env {
            process.env(name, value.expose_secret());
        }
        let (transport, stderr) = TokioChildProcess::builder(process)
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|err| format!("cannot start {command:?}: {err}"))?;
        if let Some(stderr) = stderr {
            tokio::spawn(log_stderr(config.id.clone(), stderr));
        }
        info.serve_with_ct(transport, closer)
            .await
            .map_err(|err| format!("the handshake failed: {err}"))
    } else if let Some(url) = &config.url {
        let mut headers = HashMap::new();
        for (name, value) in &config.headers {
            // Validation checked the names; a value with a newline is refused here.
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|err| format!("header {name:?}: {err}"))?;
            let value = HeaderValue::from_str(value.expose_secret())
                .map_err(|_| format!("the value of header {name} is not a valid header value"))?;
            headers.insert(name, value);
        }
        let transport = StreamableHttpClientTransport::from_config(
            StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(headers),
        );
        info.serve_with_ct(transport, closer)
            .await
            .map_err(|err| format!("the handshake failed: {err}"))
    } else {
        Err("it has neither a command nor a url".to_string())
    }
}

/// A stdio server's stderr, line by line, into Colloquy's log under the server's id.
async fn log_stderr(id: String, stderr: tokio::process::ChildStderr) {
    let mut lines = BufReader::new(stderr).lines();
    loop {
        match lines.next_line().await {
            Ok(Some(line)) => {
                let line: String = line.chars().take(MAX_STDERR_LINE_CHARS).collect();
                tracing::info!(mcp_server = %id, stderr = %line, "MCP server stderr");
            }
            Ok(None) => return,
            Err(err) => {
                tracing::debug!(mcp_server = %id, %err, "stopped reading an MCP server's stderr");
                return;
            }
        }
    }
}
