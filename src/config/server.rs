//! The server's own sections: `[log]` (format and filter), `[database]` (URL, pool, busy
//! timeout), `[auth]` (the first admin, sessions, login links, login throttling) and `[http]`
//! (body and message size limits, `/v1` chat retention).

use secrecy::SecretString;
use serde::Deserialize;

use super::lenient;

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
    /// Pool size; unset: `SQLITE_POOL` on SQLite (in WAL mode these readers run beside the one
    /// writer) and `POSTGRES_POOL` on PostgreSQL, where every connection is a writer and a
    /// turn's transactions hold one each.
    pub max_connections: Option<u32>,
    /// How long a SQLite writer waits for the lock before failing, in milliseconds.
    pub busy_timeout_ms: u64,
}

impl Default for DatabaseConfig {
    fn default() -> Self {
        Self {
            url: None,
            max_connections: None,
            busy_timeout_ms: 5_000,
        }
    }
}

impl DatabaseConfig {
    /// The pool's size when `max_connections` is unset, on SQLite.
    pub const SQLITE_POOL: u32 = 8;
    /// The pool's size when `max_connections` is unset, on PostgreSQL: room for the turns of
    /// many chats at once, and a few processes within PostgreSQL's default 100 connections.
    pub const POSTGRES_POOL: u32 = 16;

    /// The pool's size on SQLite, or on PostgreSQL (`postgres`).
    pub fn pool_size(&self, postgres: bool) -> u32 {
        self.max_connections.unwrap_or(if postgres {
            Self::POSTGRES_POOL
        } else {
            Self::SQLITE_POOL
        })
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
    /// API keys one user may hold at once (revoked keys do not count): each is a standing way
    /// in, and a few per device or script is plenty.
    pub max_api_keys_per_user: u64,
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
            max_api_keys_per_user: 100,
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
    /// Requests served at once, a streamed answer counting until it ends; one more is answered
    /// `503 overloaded` with `Retry-After: retry_after_secs` (health probes and `/metrics`
    /// always answer). Each needs about two open files (its socket and the model server's), so
    /// start-up warns when the process's open-file limit cannot hold this many.
    pub max_in_flight: usize,
    /// The `Retry-After` of an `overloaded` answer, in seconds.
    pub retry_after_secs: u64,
    /// Connections the kernel queues before Colloquy accepts them (the listen backlog). The
    /// usual default, 128, overflows when thousands of clients connect at once (a UI reloaded
    /// by every user after a restart), and a dropped SYN costs its client a one-second retry;
    /// the kernel caps it at `net.core.somaxconn`, and start-up warns when that is lower.
    pub listen_backlog: u32,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            max_json_body_bytes: 4 * 1024 * 1024,
            max_message_chars: 200_000,
            max_v1_body_bytes: 32 * 1024 * 1024,
            v1_chat_retention_days: 30,
            max_in_flight: 10_000,
            retry_after_secs: 2,
            listen_backlog: 4_096,
        }
    }
}
