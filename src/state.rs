//! `AppState`: what every handler can reach — the configuration, the database, accounts, the
//! upstream client, the chat registry and supervisor, live runs, and the tools. Built once in
//! `startup`; cheap to clone.

use std::sync::Arc;

use actix::Addr;
use sea_orm::DatabaseConnection;

use crate::agent::tool_round::ToolCache;
use crate::auth::Accounts;
use crate::chat::Chats;
use crate::chat::registry::ChatRegistry;
use crate::config::Config;
use crate::llm::LlmClient;
use crate::run::log::RunRegistry;
use crate::supervisor::ChatSupervisor;
use crate::tools::SharedTool;

#[derive(Clone)]
pub struct AppState {
    pub config: Arc<Config>,
    pub db: DatabaseConnection,
    pub accounts: Accounts,
    /// Failed password logins, per account and per client address.
    pub login_throttle: Arc<crate::auth::LoginThrottle>,
    pub chats: Chats,
    pub llm: LlmClient,
    /// Makes the vectors of memories and document chunks.
    pub embedder: crate::retrieval::embed::SharedEmbedder,
    /// Documents: records, processing and the per-chat indexes.
    pub workspace: crate::documents::Workspace,
    /// Active chat sessions.
    pub sessions: ChatRegistry,
    /// Live and recently finished runs.
    pub runs: RunRegistry,
    pub supervisor: Addr<ChatSupervisor>,
    pub tool_cache: ToolCache,
    /// Every research tool this server can offer; requests select from these.
    pub tools: Arc<Vec<SharedTool>>,
    /// Research tool calls per minute per project.
    pub rate_limiter: Arc<crate::agent::rate_limit::ToolRateLimiter>,
    /// ask_user, offered in every chat; also validates answers.
    pub ask_user: Arc<crate::tools::ask_user::AskUser>,
    /// The configured MCP servers and their health.
    pub mcp: crate::tools::mcp::McpRegistry,
    /// The SSRF-guarded fetcher (shared with the research tools): image URLs of `/v1`
    /// requests are fetched through it.
    pub fetcher: Arc<crate::tools::fetch::Fetcher>,
    /// Starts and resumes runs; holds the same handles as the fields above.
    pub launcher: crate::supervisor::launch::Launcher,
}
