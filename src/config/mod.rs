//! Configuration: built-in defaults, then an optional TOML file, then `COLLOQUY_*` environment
//! variables (nested with `__`, e.g. `COLLOQUY_LLM__BASE_URL`). This module is the only reader
//! of the environment; everything else receives a `Config`. Secrets are `SecretString`s, whose
//! `Debug` output is redacted, so a logged `Config` never shows them.
//!
//! `Config` (the top-level settings) is here; each section has a file by concern: `server`
//! (`[log]`, `[database]`, `[auth]`, `[http]`), `llm` (`[llm]`, the upstream), `providers` (`[[llm.providers]]`, several model servers), `agent`
//! (`[agent]`, `[deep_think]`, `[ask_user]`), `tools` (`[tools]`, `[artifacts]`), `retrieval`
//! (`[retrieval]`, `[memory]`, `[documents]`), `attachments` (`[attachments]`, images on
//! messages), `mcp` (`[mcp]`, the MCP servers, from the file only in practice), `sql` (`[sql]`,
//! the databases `execute_sql` reads, from the file only in practice), `email` (`[email]`,
//! send_email's SMTP server and allow-list); `load` reads
//! and validates, `lenient` deserialises strings from untyped environment values; `threads`
//! sets the numeric libraries' thread counts at start-up.
//!
//! `[retrieval]` holds the injection threshold memories and documents share (each may set its
//! own); `threads::single_threaded_kernels` is called first in `main` (candle's and rayon's
//! thread counts).

mod agent;
mod attachments;
mod browser;
mod cluster;
mod code_interpreter;
mod email;
mod images;
mod lenient;
mod llm;
mod load;
mod mcp;
mod providers;
mod retrieval;
mod schedules;
mod search;
mod server;
mod sql;
mod storage;
mod threads;
mod tools;

#[cfg(test)]
mod tests;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

pub use threads::single_threaded_kernels;

pub use agent::{AgentConfig, AskUserConfig, ContextStrategy, DeepThinkConfig};
pub use attachments::AttachmentsConfig;
pub use browser::BrowserConfig;
pub use cluster::ClusterConfig;
pub use code_interpreter::CodeInterpreterConfig;
pub use email::{EmailConfig, RecipientPattern, is_one_mailbox};
pub use images::ImagesConfig;
pub use llm::LlmConfig;
pub use load::{CONFIG_PATH_VAR, ConfigError};
pub use mcp::{MAX_SERVER_ID_CHARS, McpConfig, McpServerConfig, McpTransportKind};
pub use providers::{LLM_SECTION_PROVIDER, MAX_PROVIDERS, ProviderConfig};
pub use retrieval::{
    DocumentsConfig, EmbedderKind, MemoryConfig, RetrievalConfig, StemmingLanguage,
};
pub use schedules::SchedulesConfig;
pub use search::SearchConfig;
pub use server::{AuthConfig, DatabaseConfig, HttpConfig, LogConfig, LogFormat};
pub use sql::{MAX_SQL_DATABASE_ID_CHARS, MAX_SQL_ROWS, SqlConfig, SqlDatabaseConfig, SqlTarget};
pub use storage::StorageConfig;
pub use tools::{ArtifactsConfig, ToolsConfig, WebSearchProvider};

/// Times work resumed at start-up (a document's processing, an answered ask's continuation)
/// may have been cut off by a crash, a restart or a timeout before it is failed instead of
/// begun again: once may be bad luck, twice is an input that kills the process.
pub const MAX_CUT_OFF_ATTEMPTS: i32 = 2;

/// Everything Colloquy can be told at start-up.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct Config {
    /// Address the HTTP server listens on (`COLLOQUY_BIND`). Port 0 picks a free port.
    pub bind: String,
    /// Directory for the SQLite database, uploads and indexes (`COLLOQUY_DATA_DIR`).
    pub data_dir: PathBuf,
    /// Serve the browser UI from this directory (the output of `node static/build.mjs DIR`)
    /// instead of the build embedded in the binary (`COLLOQUY_STATIC_DIR`): for working on the
    /// UI without rebuilding the server. `None`, the default, serves the embedded build.
    pub static_dir: Option<PathBuf>,
    /// The URL people reach this server at, used in the printed login link. Defaults to
    /// `http://{bind}`. Its origin is also one a browser session may change data from (beside
    /// the origin the request addressed): set it behind a proxy that terminates TLS or rewrites
    /// `Host`, or the UI's requests are refused as cross-site.
    pub public_url: Option<String>,
    /// Seconds in-flight requests get to finish after SIGINT/SIGTERM before they are dropped.
    pub shutdown_timeout_secs: u64,
    /// HTTP worker threads; `None` means one per core.
    pub workers: Option<usize>,
    pub log: LogConfig,
    pub database: DatabaseConfig,
    pub llm: LlmConfig,
    pub auth: AuthConfig,
    pub http: HttpConfig,
    pub agent: AgentConfig,
    pub tools: ToolsConfig,
    pub artifacts: ArtifactsConfig,
    /// `[retrieval]`: what memory and document injection share.
    pub retrieval: RetrievalConfig,
    pub memory: MemoryConfig,
    pub documents: DocumentsConfig,
    /// `[attachments]`: images on user messages.
    pub attachments: AttachmentsConfig,
    pub deep_think: DeepThinkConfig,
    pub ask_user: AskUserConfig,
    /// `[mcp]`: the MCP servers whose tools runs may call.
    pub mcp: McpConfig,
    /// `[sql]`: the databases `execute_sql` may query.
    pub sql: SqlConfig,
    /// `[email]`: send_email's SMTP server; `None` (no section): no send_email.
    pub email: Option<EmailConfig>,
    /// `[images]`: the server `/v1/images/generations` goes to; `None` (no section): none.
    pub images: Option<ImagesConfig>,
    /// `[browser]`: the Chromium `browser_action` and `analyze_page` drive.
    pub browser: BrowserConfig,
    /// `[code_interpreter]`: the sandbox `code_interpreter` runs Python in.
    pub code_interpreter: CodeInterpreterConfig,
    /// `[schedules]`: workflows' and schedules' limits and timing.
    pub schedules: SchedulesConfig,
    /// `[search]`: search inside chats.
    pub search: SearchConfig,
    /// `[cluster]`: several processes on one PostgreSQL.
    pub cluster: ClusterConfig,
    /// `[storage]`: where files live (the data directory, or an S3-compatible store).
    pub storage: StorageConfig,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            bind: "127.0.0.1:8080".into(),
            data_dir: PathBuf::from("./data"),
            static_dir: None,
            public_url: None,
            shutdown_timeout_secs: 30,
            workers: None,
            log: LogConfig::default(),
            database: DatabaseConfig::default(),
            llm: LlmConfig::default(),
            auth: AuthConfig::default(),
            http: HttpConfig::default(),
            agent: AgentConfig::default(),
            tools: ToolsConfig::default(),
            artifacts: ArtifactsConfig::default(),
            retrieval: RetrievalConfig::default(),
            memory: MemoryConfig::default(),
            documents: DocumentsConfig::default(),
            attachments: AttachmentsConfig::default(),
            deep_think: DeepThinkConfig::default(),
            ask_user: AskUserConfig::default(),
            mcp: McpConfig::default(),
            sql: SqlConfig::default(),
            email: None,
            images: None,
            browser: BrowserConfig::default(),
            code_interpreter: CodeInterpreterConfig::default(),
            schedules: SchedulesConfig::default(),
            search: SearchConfig::default(),
            cluster: ClusterConfig::default(),
            storage: StorageConfig::default(),
        }
    }
}

impl Config {
    /// The database URL: the configured one, or a SQLite file in the data directory.
    pub fn database_url(&self) -> String {
        match &self.database.url {
            Some(url) => url.clone(),
            None => format!(
                "sqlite://{}?mode=rwc",
                self.data_dir.join("colloquy.db").display()
            ),
        }
    }

    /// Whether several processes may share the database (PostgreSQL): chats are then owned
    /// through leases (`crate::cluster`).
    pub fn is_clustered(&self) -> bool {
        let url = self.database_url();
        url.starts_with("postgres://") || url.starts_with("postgresql://")
    }

    /// The base URL the other processes of a cluster reach this one at.
    pub fn advertise_url(&self, bound: SocketAddr) -> String {
        match &self.cluster.advertise_url {
            Some(url) => url.trim_end_matches('/').to_string(),
            None if bound.ip().is_unspecified() => format!("http://127.0.0.1:{}", bound.port()),
            None => format!("http://{bound}"),
        }
    }

    /// The base URL people use to reach this server.
    pub fn public_url(&self, bound: SocketAddr) -> String {
        match &self.public_url {
            Some(url) => url.trim_end_matches('/').to_string(),
            None => format!("http://{bound}"),
        }
    }

    pub fn shutdown_timeout(&self) -> Duration {
        Duration::from_secs(self.shutdown_timeout_secs)
    }

    /// Least similarity for a memory to be injected: `memory.injection_threshold`, else the
    /// shared `retrieval.injection_threshold`.
    pub fn memory_injection_threshold(&self) -> f32 {
        self.memory
            .injection_threshold
            .unwrap_or(self.retrieval.injection_threshold)
    }

    /// Least similarity for a document passage to be injected: `documents.injection_threshold`,
    /// else the shared `retrieval.injection_threshold`.
    pub fn document_injection_threshold(&self) -> f32 {
        self.documents
            .injection_threshold
            .unwrap_or(self.retrieval.injection_threshold)
    }
}
