//! Configuration: built-in defaults, then an optional TOML file, then `COLLOQUY_*` environment
//! variables (nested with `__`, e.g. `COLLOQUY_LLM__BASE_URL`). This module is the only reader
//! of the environment; everything else receives a `Config`. Secrets are `SecretString`s, whose
//! `Debug` output is redacted, so a logged `Config` never shows them.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use figment::Figment;
use figment::providers::{Env, Format, Toml};
use secrecy::SecretString;
use serde::Deserialize;

/// The environment variable naming a TOML configuration file (same as `--config`).
pub const CONFIG_PATH_VAR: &str = "COLLOQUY_CONFIG";
/// The prefix of every configuration environment variable.
const ENV_PREFIX: &str = "COLLOQUY_";
/// Times work resumed at start-up (a document's processing, an answered ask's continuation)
/// may have been cut off by a crash, a restart or a timeout before it is failed instead of
/// begun again: once may be bad luck, twice is an input that kills the process.
pub const MAX_CUT_OFF_ATTEMPTS: i32 = 2;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("could not read configuration: {0}")]
    Load(#[from] Box<figment::Error>),
    #[error("configuration file {0} does not exist")]
    MissingFile(PathBuf),
    #[error("invalid configuration: {0}")]
    Invalid(String),
}

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
    pub memory: MemoryConfig,
    pub documents: DocumentsConfig,
    pub deep_think: DeepThinkConfig,
    pub ask_user: AskUserConfig,
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
            memory: MemoryConfig::default(),
            documents: DocumentsConfig::default(),
            deep_think: DeepThinkConfig::default(),
            ask_user: AskUserConfig::default(),
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct LogConfig {
    pub format: LogFormat,
    /// A `tracing` filter directive; `RUST_LOG` is not read, so this is the one place to set it.
    pub filter: String,
}

impl Default for LogConfig {
    fn default() -> Self {
        Self {
            format: LogFormat::Text,
            filter: "info,sqlx=warn,sea_orm=warn".into(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct DatabaseConfig {
    /// `sqlite://...` or `postgres://...`; `None` means `colloquy.db` in the data directory.
    pub url: Option<String>,
    /// Pool size. SQLite in WAL mode lets these readers run beside the one writer.
    pub max_connections: u32,
    /// How long a SQLite writer waits for the lock before failing, in milliseconds.
    pub busy_timeout_ms: u64,
}

impl Default for DatabaseConfig {
    fn default() -> Self {
        Self {
            url: None,
            max_connections: 8,
            busy_timeout_ms: 5_000,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct LlmConfig {
    /// Base URL of the OpenAI-compatible upstream, ending in `/v1` (Ollama's by default).
    pub base_url: String,
    /// Bearer token for the upstream, if it needs one.
    #[serde(deserialize_with = "lenient::secret")]
    pub api_key: Option<SecretString>,
    /// Model used when a request names none.
    #[serde(deserialize_with = "lenient::string")]
    pub model: String,
    /// Model for the upstream `/embeddings` endpoint.
    #[serde(deserialize_with = "lenient::string")]
    pub embedding_model: String,
    /// Base URL for `/embeddings` when another server than the chat's serves them; `None`
    /// uses `base_url`. A single-slot llama-server evicts the chat's cached prompt at every
    /// embedding call, so give embeddings a server of their own there.
    pub embedding_base_url: Option<String>,
    /// The context window (in tokens) of every model, when set; overrides discovery.
    pub context_length: Option<u32>,
    /// Context windows by model name, for models the server does not describe. Without an
    /// entry, Colloquy asks the server (llama.cpp's `/props`, vLLM's `max_model_len` in
    /// `/v1/models`, Ollama's `/api/show`) and learns it from a context-overflow error.
    pub context_lengths: std::collections::HashMap<String, u32>,
    /// Seconds to establish a connection to the upstream.
    pub connect_timeout_secs: u64,
    /// Seconds an answer's first byte may take for a short prompt. Servers read the whole
    /// prompt before they send anything (llama-server sends its headers, then nothing), so the
    /// allowance grows with the prompt: see `prompt_tokens_per_sec`.
    pub first_byte_timeout_secs: u64,
    /// The slowest prompt reading Colloquy waits for, in tokens per second: a prompt of N
    /// tokens adds N / this to `first_byte_timeout_secs`.
    pub prompt_tokens_per_sec: u32,
    /// Seconds without a byte between the chunks of an answer before it fails (a server that
    /// froze mid-answer).
    pub read_timeout_secs: u64,
    /// Retries after the first attempt, on connection errors, 429 and 5xx before the first
    /// token. A request that timed out is not retried: the server accepted it and may still
    /// be working on it.
    pub max_retries: u32,
    /// Seconds after the first attempt when retrying stops, whatever `max_retries` allows.
    pub retry_deadline_secs: u64,
    /// First retry delay in milliseconds; doubled each retry.
    pub retry_initial_backoff_ms: u64,
    /// Longest delay between retries (and the most of a `Retry-After` we honour), in ms.
    pub retry_max_backoff_ms: u64,
}

impl Default for LlmConfig {
    fn default() -> Self {
        Self {
            base_url: "http://127.0.0.1:11434/v1".into(),
            api_key: None,
            model: "llama3.2".into(),
            embedding_model: "nomic-embed-text".into(),
            embedding_base_url: None,
            context_length: None,
            context_lengths: std::collections::HashMap::new(),
            connect_timeout_secs: 10,
            first_byte_timeout_secs: 60,
            prompt_tokens_per_sec: 25,
            read_timeout_secs: 60,
            max_retries: 3,
            retry_deadline_secs: 30,
            retry_initial_backoff_ms: 250,
            retry_max_backoff_ms: 10_000,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct AuthConfig {
    /// When set, created for the first admin on first start (for automated deployments).
    #[serde(deserialize_with = "lenient::secret")]
    pub bootstrap_api_key: Option<SecretString>,
    /// Username of the admin created on first start.
    #[serde(deserialize_with = "lenient::string")]
    pub admin_username: String,
    /// Lifetime of a browser login session, in hours.
    pub session_ttl_hours: u64,
    /// Lifetime of a one-time login link, in minutes.
    pub login_link_ttl_minutes: u64,
    /// Mark the session cookie `Secure` (set when served over HTTPS).
    pub secure_cookies: bool,
    /// Failed password logins one username may take (from any address) before further tries
    /// wait; the allowance refills over `login_failure_window_secs`. Low, because guessing one
    /// person's password is what it stops; anyone can spend it, so a locked-out person still
    /// has their sessions, API keys and login links.
    pub login_failures_per_account: u32,
    /// Failed password logins one client address (an IPv6 /64) may take across all usernames.
    /// Higher than the per-account limit: people behind one NAT share it. Behind a reverse
    /// proxy every client is the proxy's address, so raise it there.
    pub login_failures_per_address: u32,
    /// Seconds over which a spent allowance refills completely (one try back every
    /// window / limit seconds).
    pub login_failure_window_secs: u64,
}

impl Default for AuthConfig {
    fn default() -> Self {
        Self {
            bootstrap_api_key: None,
            admin_username: "admin".into(),
            session_ttl_hours: 24 * 30,
            login_link_ttl_minutes: 60 * 24,
            secure_cookies: false,
            login_failures_per_account: 5,
            login_failures_per_address: 20,
            login_failure_window_secs: 15 * 60,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct HttpConfig {
    /// Largest JSON request body in bytes: a chat request with a long history fits, a flood does not.
    pub max_json_body_bytes: usize,
    /// Longest message in characters, however it enters: the chat API's send and edit, each
    /// message of a Chat Completions or Responses request, each text of an ask_user answer
    /// (refused with `message_too_long`).
    /// 200,000 is a long pasted document (some 50,000 tokens), yet bounds what one message puts
    /// in the database and in every later prompt of its chat.
    pub max_message_chars: usize,
    /// Largest `/v1/chat/completions` body in bytes: room for a few high-resolution images sent
    /// inline as base64 (a 5 MB photo is about 7 MB of JSON).
    pub max_v1_body_bytes: usize,
    /// Days a chat made by a `/v1` request without `x_chat_id` is kept after its last use,
    /// unless someone opens it in the UI (OpenAI keeps stored responses 30 days).
    pub v1_chat_retention_days: u64,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            max_json_body_bytes: 4 * 1024 * 1024,
            max_message_chars: 200_000,
            max_v1_body_bytes: 32 * 1024 * 1024,
            v1_chat_retention_days: 30,
        }
    }
}

/// Governance of the agentic loop (seed 000 "Agentic Loop", seed 001).
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct AgentConfig {
    /// Tool-call rounds per request when the request says nothing (seed 000: 5).
    pub max_iterations: u32,
    /// The most rounds a request's `max_iterations` may ask for (seed 001: 8).
    pub max_iterations_ceiling: u32,
    /// Seconds one tool call may run before it is cancelled and reported as an error (seed: 15).
    pub tool_timeout_secs: u64,
    /// Seconds an identical call (name + canonical arguments) is served from cache (seed: 5 min).
    pub tool_cache_ttl_secs: u64,
    /// How many recent calls loop detection remembers (seed 001: 10).
    pub loop_detection_window: usize,
    /// How often the same call may run within that window (seed 001: 2).
    pub max_identical_calls: usize,
    /// Tool results longer than this many characters are truncated with a marker (seed 001).
    pub max_tool_result_chars: usize,
    /// Wall-clock budget of one run in seconds, model calls and tools included.
    pub run_time_budget_secs: u64,
    /// Seconds a finished run's event log stays available for re-attaching clients.
    pub run_log_retention_secs: u64,
    /// Seconds a chat may sit idle before its actor is passivated (stopped; state stays in the DB).
    pub chat_idle_secs: u64,
    /// System prompt sent first in every chat; `None` sends none.
    pub system_prompt: Option<String>,
    /// What a chat that sets none does with history that outgrows the model's context.
    pub context_strategy: ContextStrategy,
}

/// What happens to the oldest turns of a chat whose history outgrows the model's context.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ContextStrategy {
    /// They are left out of the request.
    #[default]
    Drop,
    /// The model summarises them, and the summary goes in their place.
    Summarize,
}

impl ContextStrategy {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Drop => "drop",
            Self::Summarize => "summarize",
        }
    }

    /// The strategy a stored value names; `None` for anything else.
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "drop" => Some(Self::Drop),
            "summarize" => Some(Self::Summarize),
            _ => None,
        }
    }
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            max_iterations: 5,
            max_iterations_ceiling: 8,
            tool_timeout_secs: 15,
            tool_cache_ttl_secs: 300,
            loop_detection_window: 10,
            max_identical_calls: 2,
            max_tool_result_chars: 10_000,
            run_time_budget_secs: 600,
            run_log_retention_secs: 600,
            chat_idle_secs: 600,
            system_prompt: None,
            context_strategy: ContextStrategy::Drop,
        }
    }
}

/// Research tools and their limits (seed 000 "Tool Limits", "Rate Limiting & Caching").
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct ToolsConfig {
    /// Research tool calls per minute per project (API key or user) (seed: 45).
    pub rate_limit_per_minute: u32,
    /// Top web_search results fetched automatically (seed: 2).
    pub web_search_auto_fetch: usize,
    /// Characters shared by the auto-fetched pages of one web_search.
    pub web_search_fetch_budget_chars: usize,
    /// URLs one fetch_url call may name (seed: 5).
    pub fetch_max_urls: usize,
    /// Same-domain discovered links fetch_url may follow (seed: 3).
    pub fetch_max_follow: usize,
    /// Pages one fetch_url call may fetch in all (seed: 8).
    pub fetch_max_pages: usize,
    /// Characters shared equally by the pages of one fetch_url call (seed: 24,000).
    pub fetch_budget_chars: usize,
    /// Largest response body fetch_url reads, in bytes.
    pub fetch_max_response_bytes: usize,
    /// Seconds a single page fetch may take. Two waves (pages, then followed links) must fit in
    /// the 15 s tool timeout.
    pub fetch_timeout_secs: u64,
    /// Seconds one fetched page's text extraction (HTML parsing, PDF reading) may take. Pages
    /// are hostile input: one that needs longer is an `extraction_failed` result, never a
    /// worker held for minutes.
    pub fetch_extraction_budget_secs: u64,
    /// Most code_search results (seed: 30); its default is 5.
    pub code_search_max_results: u32,
    /// Most gitlab_code_search results (seed: 20).
    pub gitlab_search_max_results: u32,
    /// Results whose full file content is fetched (seed: 3).
    pub code_search_full_content: usize,
    /// Paths one browse call may name (seed: 10).
    pub browse_max_paths: usize,
    /// Longest calculator expression in characters (seed: 1,000).
    pub calculator_max_chars: usize,
    /// SearXNG-compatible search API; `None` disables web_search.
    pub web_search_url: Option<String>,
    /// GitHub REST API base URL.
    pub github_api_url: String,
    #[serde(deserialize_with = "lenient::secret")]
    pub github_token: Option<SecretString>,
    /// GitLab v4 API base URL; `None` disables gitlab_code_search.
    pub gitlab_api_url: Option<String>,
    #[serde(deserialize_with = "lenient::secret")]
    pub gitlab_token: Option<SecretString>,
    /// `HOST:PORT` entries (IPv6 as `[ADDRESS]:PORT`) fetch_url may reach despite the SSRF
    /// rules, each on its port only; an entry without a port is refused at start-up. For
    /// tests only; empty by default.
    pub ssrf_allow_list: Vec<String>,
}

impl Default for ToolsConfig {
    fn default() -> Self {
        Self {
            rate_limit_per_minute: 45,
            web_search_auto_fetch: 2,
            web_search_fetch_budget_chars: 12_000,
            fetch_max_urls: 5,
            fetch_max_follow: 3,
            fetch_max_pages: 8,
            fetch_budget_chars: 24_000,
            fetch_max_response_bytes: 10 * 1024 * 1024,
            fetch_timeout_secs: 6,
            fetch_extraction_budget_secs: 5,
            code_search_max_results: 30,
            gitlab_search_max_results: 20,
            code_search_full_content: 3,
            browse_max_paths: 10,
            calculator_max_chars: 1_000,
            web_search_url: None,
            github_api_url: "https://api.github.com".into(),
            github_token: None,
            gitlab_api_url: None,
            gitlab_token: None,
            ssrf_allow_list: Vec::new(),
        }
    }
}

/// Artifacts (seed 000 create_artifact).
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct ArtifactsConfig {
    /// Longest artifact identifier (seed: 128).
    pub max_identifier_chars: usize,
    /// Largest artifact content in bytes (seed: 1 MB).
    pub max_content_bytes: usize,
}

impl Default for ArtifactsConfig {
    fn default() -> Self {
        Self {
            max_identifier_chars: 128,
            max_content_bytes: 1_000_000,
        }
    }
}

/// Per-chat memory and the embedder.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct MemoryConfig {
    /// `openai`, `minilm` or `hash`; `None` picks minilm when a model directory exists, else hash.
    pub embedder: Option<String>,
    /// Directory holding all-MiniLM-L6-v2's `model.safetensors` and `tokenizer.json`.
    pub minilm_dir: Option<PathBuf>,
    /// Cosine similarity at or above which a new memory counts as a duplicate.
    pub duplicate_threshold: f32,
    /// Least similarity for a memory to be injected into the model's context.
    pub injection_threshold: f32,
    /// Most memories injected per user turn.
    pub max_injected: usize,
    /// Most memories one chat may hold.
    pub max_per_chat: usize,
    /// Longest memory in characters.
    pub max_content_chars: usize,
    /// Most memories recall_memory returns.
    pub recall_limit: usize,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        Self {
            embedder: None,
            minilm_dir: None,
            duplicate_threshold: 0.92,
            injection_threshold: 0.35,
            max_injected: 5,
            max_per_chat: 1_000,
            max_content_chars: 4_000,
            recall_limit: 10,
        }
    }
}

/// The document workspace (seed 002 "Limits").
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct DocumentsConfig {
    /// Largest uploaded file in bytes (seed: 200 MB).
    pub max_file_bytes: u64,
    /// Documents per chat (seed: 50).
    pub max_files_per_chat: usize,
    /// Extracted characters indexed per file (seed: 500,000).
    pub max_text_chars: usize,
    /// Tokens per chunk (seed: 1024).
    pub chunk_tokens: usize,
    /// Tokens shared by neighbouring chunks (seed: 128).
    pub chunk_overlap_tokens: usize,
    /// file_search results when the model asks for no number (seed: 5).
    pub default_search_results: usize,
    /// Least similarity for a chunk to be injected automatically.
    pub injection_threshold: f32,
    /// Most chunks injected per user turn.
    pub max_injected_chunks: usize,
    /// Documents processed at once.
    pub processing_concurrency: usize,
    /// Seconds extracting one document's text may take; a file that needs longer (a hostile
    /// HTML or PDF structure) is marked `error` instead of holding a processing slot.
    pub extraction_budget_secs: u64,
}

impl Default for DocumentsConfig {
    fn default() -> Self {
        Self {
            max_file_bytes: 200 * 1000 * 1000,
            max_files_per_chat: 50,
            max_text_chars: 500_000,
            chunk_tokens: 1024,
            chunk_overlap_tokens: 128,
            default_search_results: 5,
            injection_threshold: 0.3,
            max_injected_chunks: 3,
            processing_concurrency: 2,
            extraction_budget_secs: 120,
        }
    }
}

/// Deep Think (seed 000 "Deep Think").
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct DeepThinkConfig {
    /// Fewest sub-tasks a plan has (seed: 3).
    pub min_subtasks: usize,
    /// Most sub-tasks a plan may have (seed: 7).
    pub max_subtasks: usize,
    /// Loop iterations per sub-task (seed: 5).
    pub subtask_iterations: u32,
    /// Tokens (input + output) per sub-task (seed: 16,000).
    pub subtask_token_budget: u64,
}

impl Default for DeepThinkConfig {
    fn default() -> Self {
        Self {
            min_subtasks: 3,
            max_subtasks: 7,
            subtask_iterations: 5,
            subtask_token_budget: 16_000,
        }
    }
}

/// ask_user pauses.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct AskUserConfig {
    /// Hours a question stays answerable.
    pub expiry_hours: u64,
    /// Most options one question may offer.
    pub max_options: usize,
    /// Most fields one form may have.
    pub max_fields: usize,
    /// Longest question, option, label or answer text in characters.
    pub max_text_chars: usize,
}

impl Default for AskUserConfig {
    fn default() -> Self {
        Self {
            expiry_hours: 24,
            max_options: 20,
            max_fields: 20,
            max_text_chars: 4_000,
        }
    }
}

impl Config {
    /// Loads defaults, then the TOML file (`explicit_path`, else `COLLOQUY_CONFIG`), then the
    /// environment.
    pub fn load(explicit_path: Option<&Path>) -> Result<Self, ConfigError> {
        let from_env = std::env::var_os(CONFIG_PATH_VAR).map(PathBuf::from);
        let path = explicit_path.map(Path::to_path_buf).or(from_env);
        let mut figment = Figment::new();
        if let Some(path) = path {
            if !path.exists() {
                return Err(ConfigError::MissingFile(path));
            }
            figment = figment.merge(Toml::file(path));
        }
        Self::extract(figment.merge(Self::env_provider()))
    }

    /// Loads from TOML text over the defaults, without the environment.
    pub fn from_toml_str(toml: &str) -> Result<Self, ConfigError> {
        Self::extract(Figment::new().merge(Toml::string(toml)))
    }

    fn env_provider() -> Env {
        Env::prefixed(ENV_PREFIX).ignore(&["config"]).split("__")
    }

    fn extract(figment: Figment) -> Result<Self, ConfigError> {
        let config: Config = figment.extract().map_err(Box::new)?;
        config.validate()?;
        Ok(config)
    }

    /// Rejects combinations that cannot work, so a bad deployment fails at start-up.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |m: &str| Err(ConfigError::Invalid(m.into()));
        if self.bind.parse::<SocketAddr>().is_err() && !self.bind.contains(':') {
            return invalid("bind must be HOST:PORT");
        }
        if self.agent.max_iterations == 0
            || self.agent.max_iterations > self.agent.max_iterations_ceiling
        {
            return invalid(
                "agent.max_iterations must be between 1 and agent.max_iterations_ceiling",
            );
        }
        if self.documents.chunk_overlap_tokens >= self.documents.chunk_tokens {
            return invalid("documents.chunk_overlap_tokens must be smaller than chunk_tokens");
        }
        if self.database.max_connections == 0 {
            return invalid("database.max_connections must be at least 1");
        }
        if url::Url::parse(&self.llm.base_url).is_err() {
            return invalid("llm.base_url must be a URL");
        }
        if self.auth.login_failures_per_account == 0
            || self.auth.login_failures_per_address == 0
            || self.auth.login_failure_window_secs == 0
        {
            return invalid(
                "auth.login_failures_* and login_failure_window_secs must be at least 1",
            );
        }
        if let Some(public_url) = &self.public_url {
            let web = url::Url::parse(public_url)
                .is_ok_and(|url| matches!(url.scheme(), "http" | "https") && url.has_host());
            if !web {
                return invalid("public_url must be an http:// or https:// URL");
            }
        }
        if let Err(err) = crate::ssrf::AllowList::parse(&self.tools.ssrf_allow_list) {
            return invalid(&err.to_string());
        }
        Ok(())
    }

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
}

/// Environment variables carry no types: `COLLOQUY_LLM__API_KEY=12345` arrives as a number.
/// String settings accept any scalar and keep its text.
mod lenient {
    use secrecy::SecretString;
    use serde::{Deserialize, Deserializer};

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Scalar {
        Text(String),
        Unsigned(u64),
        Signed(i64),
        Float(f64),
        Bool(bool),
    }

    impl Scalar {
        fn into_text(self) -> String {
            match self {
                Self::Text(text) => text,
                Self::Unsigned(n) => n.to_string(),
                Self::Signed(n) => n.to_string(),
                Self::Float(n) => n.to_string(),
                Self::Bool(b) => b.to_string(),
            }
        }
    }

    pub fn string<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
        Scalar::deserialize(deserializer).map(Scalar::into_text)
    }

    pub fn secret<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<SecretString>, D::Error> {
        let value = Option::<Scalar>::deserialize(deserializer)?;
        Ok(value
            .map(Scalar::into_text)
            .filter(|text| !text.is_empty())
            .map(SecretString::from))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use secrecy::ExposeSecret;

    #[test]
    fn defaults_match_the_seeds() {
        let config = Config::default();
        assert_eq!(config.bind, "127.0.0.1:8080");
        assert_eq!(config.llm.base_url, "http://127.0.0.1:11434/v1");
        assert_eq!(config.agent.max_iterations, 5);
        assert_eq!(config.agent.max_iterations_ceiling, 8);
        assert_eq!(config.agent.tool_timeout_secs, 15);
        assert_eq!(config.tools.rate_limit_per_minute, 45);
        assert_eq!(config.tools.fetch_budget_chars, 24_000);
        assert_eq!(config.documents.max_files_per_chat, 50);
        assert_eq!(config.documents.max_text_chars, 500_000);
        assert_eq!(config.deep_think.max_subtasks, 7);
        assert!(config.validate().is_ok());
    }

    #[test]
    fn toml_overrides_defaults_and_secrets_are_redacted() {
        let config = Config::from_toml_str(
            r#"
            bind = "0.0.0.0:9000"
            [llm]
            api_key = "sk-very-secret"
            model = "qwen"
            [agent]
            max_iterations = 3
            "#,
        )
        .unwrap();
        assert_eq!(config.bind, "0.0.0.0:9000");
        assert_eq!(config.llm.model, "qwen");
        assert_eq!(config.agent.max_iterations, 3);
        assert_eq!(
            config.agent.tool_timeout_secs, 15,
            "untouched fields keep defaults"
        );
        let key = config.llm.api_key.as_ref().unwrap();
        assert_eq!(key.expose_secret(), "sk-very-secret");
        assert!(!format!("{config:?}").contains("sk-very-secret"));
    }

    #[test]
    fn impossible_limits_are_refused() {
        let err = Config::from_toml_str("[agent]\nmax_iterations = 9\n").unwrap_err();
        assert!(err.to_string().contains("max_iterations"), "{err}");
        let err = Config::from_toml_str("[agent]\nmax_iterations = \"many\"\n").unwrap_err();
        assert!(err.to_string().contains("max_iterations"), "{err}");
        let err = Config::from_toml_str("public_url = \"chat.example\"\n").unwrap_err();
        assert!(err.to_string().contains("public_url"), "{err}");
    }

    #[test]
    fn ssrf_allow_list_entries_need_a_port() {
        let err =
            Config::from_toml_str("[tools]\nssrf_allow_list = [\"127.0.0.1\"]\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid configuration: tools.ssrf_allow_list entry \"127.0.0.1\" has no port: write \
             it as HOST:PORT (IPv6 as [ADDRESS]:PORT); an entry exempts one port, never a whole host"
        );
        let config = Config::from_toml_str(
            "[tools]\nssrf_allow_list = [\"127.0.0.1:8081\", \"[::1]:8082\"]\n",
        )
        .unwrap();
        assert_eq!(config.tools.ssrf_allow_list.len(), 2);
    }

    #[test]
    fn default_database_is_a_sqlite_file_in_the_data_dir() {
        let config = Config {
            data_dir: PathBuf::from("/tmp/cq"),
            ..Config::default()
        };
        assert_eq!(
            config.database_url(),
            "sqlite:///tmp/cq/colloquy.db?mode=rwc"
        );
    }

    #[test]
    #[allow(clippy::result_large_err)] // figment's Jail API fixes the closure's error type
    fn environment_overrides_the_file_which_overrides_defaults() {
        figment::Jail::expect_with(|jail| {
            jail.create_file(
                "colloquy.toml",
                "bind = \"127.0.0.1:7000\"\n[llm]\nmodel = \"from-file\"\nbase_url = \"http://file:1/v1\"\n",
            )?;
            jail.set_env("COLLOQUY_CONFIG", "colloquy.toml");
            jail.set_env("COLLOQUY_LLM__BASE_URL", "http://env:2/v1");
            jail.set_env("COLLOQUY_LLM__API_KEY", "12345");
            jail.set_env("COLLOQUY_DATA_DIR", "/srv/colloquy");
            jail.set_env("COLLOQUY_DATABASE__URL", "postgres://u@h/db");
            jail.set_env("COLLOQUY_AUTH__BOOTSTRAP_API_KEY", "k");
            jail.set_env("COLLOQUY_AGENT__MAX_ITERATIONS", "4");
            let config = Config::load(None).expect("loads");
            assert_eq!(config.bind, "127.0.0.1:7000", "from the file");
            assert_eq!(config.llm.model, "from-file");
            assert_eq!(config.llm.base_url, "http://env:2/v1", "env beats the file");
            assert_eq!(
                config.llm.api_key.as_ref().unwrap().expose_secret(),
                "12345"
            );
            assert_eq!(config.data_dir, PathBuf::from("/srv/colloquy"));
            assert_eq!(config.database_url(), "postgres://u@h/db");
            assert_eq!(
                config
                    .auth
                    .bootstrap_api_key
                    .as_ref()
                    .unwrap()
                    .expose_secret(),
                "k"
            );
            assert_eq!(config.agent.max_iterations, 4);
            Ok(())
        });
    }

    #[test]
    #[allow(clippy::result_large_err)] // figment's Jail API fixes the closure's error type
    fn a_missing_config_file_is_an_error() {
        figment::Jail::expect_with(|_| {
            let err = Config::load(Some(Path::new("/nonexistent/colloquy.toml"))).unwrap_err();
            assert!(matches!(err, ConfigError::MissingFile(_)));
            Ok(())
        });
    }
}
