//! `AppError`: every error an HTTP handler can return, with one exhaustive mapping to a status
//! and a stable machine-readable code. Bodies use OpenAI's shape everywhere,
//! `{"error": {"message", "type", "code"}}`, so `/v1` clients and the chat API read errors alike.
//! A 5xx never shows its cause to the client; the cause chain goes to the log.

use actix_web::http::StatusCode;

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// No credentials, or credentials that match nothing.
    #[error("authentication required: send an API key as 'Authorization: Bearer <key>' or log in")]
    Unauthenticated,
    /// Authenticated, but the action needs rights this user does not have.
    #[error("{0}")]
    Forbidden(String),
    /// Like `Forbidden`, with a code of its own clients can match on (a disabled account's
    /// login link: `account_disabled`).
    #[error("{message}")]
    ForbiddenWithCode { code: &'static str, message: String },
    /// A browser-session request that changes data from a page that is not Colloquy's own
    /// (`auth::CrossSiteError`, converted where it is defined).
    #[error("{0}")]
    CrossSite(String),
    /// The resource does not exist, or belongs to someone else (we never say which).
    #[error("{0} not found")]
    NotFound(&'static str),
    /// `NotFound` whose message also says how to make what is missing (an unknown vector
    /// store: how to create one and put files in it).
    #[error("{0}")]
    NotFoundWithHelp(String),
    /// The request is well-formed JSON but asks for something invalid.
    #[error("{0}")]
    InvalidRequest(String),
    /// Like `InvalidRequest`, with a code of its own clients can match on (an agent naming
    /// tools this server does not have: `unknown_tool`).
    #[error("{message}")]
    InvalidWithCode { code: &'static str, message: String },
    /// The body is not valid JSON or does not have the expected shape.
    #[error("invalid JSON body: {0}")]
    InvalidJson(String),
    /// The body is larger than the configured limit.
    #[error("request body is too large (limit {limit} bytes)")]
    PayloadTooLarge { limit: usize },
    /// A declared size is over a limit; refused before the body is stored.
    #[error("{message}")]
    TooLarge { code: &'static str, message: String },
    /// A count limit was reached (e.g. documents per chat).
    #[error("{message}")]
    LimitReached { code: &'static str, message: String },
    /// A protocol precondition failed (e.g. an unsupported tus version).
    #[error("{message}")]
    PreconditionFailed { code: &'static str, message: String },
    /// The body's Content-Type is not one the endpoint accepts.
    #[error("unsupported content type: {0}")]
    UnsupportedMediaType(String),
    /// The content itself, judged by its bytes, is of a type the endpoint does not take
    /// (e.g. an attached file that is not an image).
    #[error("{message}")]
    UnsupportedType { code: &'static str, message: String },
    /// The request is refused for a reason with its own stable code (e.g. too many images).
    #[error("{message}")]
    Refused { code: &'static str, message: String },
    /// The request conflicts with the resource's current state (e.g. answering twice).
    #[error("{0}")]
    Conflict(String),
    /// The resource existed but is no longer usable (e.g. an expired question).
    #[error("{0}")]
    Gone(String),
    /// The server is serving as many requests as it is configured to (`http.max_in_flight`);
    /// retry after the given number of seconds.
    #[error(
        "the server is at its limit of requests in flight; retry in {retry_after_secs} seconds"
    )]
    Overloaded { retry_after_secs: u64 },
    /// Another process of the cluster owns the chat and the request could not be forwarded
    /// there as it was (the HTTP layer forwards it whenever it can); retry, and it will be.
    #[error("this chat is served by another process of this server; retry in 1 second")]
    OwnedElsewhere { address: String },
    /// The process that owns the chat did not answer a forwarded request, and its lease has
    /// lapsed (it stalled or died): another takes the chat over; retry.
    #[error(
        "the process serving this chat does not answer; retry in 1 second (another process takes \
         the chat over once its lease has ended)"
    )]
    OwnerUnresponsive,
    /// This process lost the chat to another while the request was under way (it had stalled
    /// past its lease): nothing was written; retry, and the request goes to the new owner.
    #[error("another process of this server took this chat over; retry in 1 second")]
    OwnershipLost,
    /// The file store (the data directory or an object store) failed to keep an upload:
    /// nothing of it was kept; upload it again.
    #[error("the uploaded file could not be stored (the file store failed); upload it again")]
    StorageFailed,
    /// Too many requests; retry after the given number of seconds.
    #[error("rate limit exceeded, retry in {retry_after_secs} seconds")]
    RateLimited { retry_after_secs: u64 },
    /// The upstream model server failed (`llm::LlmError`, converted where it is defined, by
    /// `AppError::upstream`): its status and code, the whole `cause` (logged), and `message`,
    /// what the caller reads — the public summary, or for an admin the whole cause.
    #[error("{message}")]
    Upstream {
        status: StatusCode,
        code: &'static str,
        cause: String,
        message: String,
    },
    /// A run failed before answering anything, not by the model server's fault (a save that
    /// failed, Deep Think that could not research, a stored stop): its kind's status and code
    /// (`run::events::RunErrorKind`, converted in `http::run_failure`).
    #[error("{message}")]
    RunFailed {
        status: StatusCode,
        code: &'static str,
        message: String,
    },
    /// The database failed.
    #[error("database error")]
    Database(sea_orm::DbErr),
    /// The server is shutting down or not ready.
    #[error("{0}")]
    Unavailable(String),
    /// The embedder failed; the message names it and says what it returned (never an
    /// upstream's address), because the fix is in its configuration.
    #[error("{0}")]
    EmbedderFailed(String),
    /// Anything else that is our fault.
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

impl AppError {
    pub fn internal(err: impl Into<anyhow::Error>) -> Self {
        Self::Internal(err.into())
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::InvalidRequest(message.into())
    }

    /// The stable code clients can match on. Never change an existing one.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Unauthenticated => "unauthenticated",
            Self::Forbidden(_) => "forbidden",
            Self::CrossSite(_) => "cross_site_request",
            Self::NotFound(_) | Self::NotFoundWithHelp(_) => "not_found",
            Self::InvalidRequest(_) => "invalid_request",
            Self::InvalidJson(_) => "invalid_json",
            Self::PayloadTooLarge { .. } => "payload_too_large",
            Self::TooLarge { code, .. }
            | Self::InvalidWithCode { code, .. }
            | Self::ForbiddenWithCode { code, .. }
            | Self::LimitReached { code, .. }
            | Self::PreconditionFailed { code, .. }
            | Self::UnsupportedType { code, .. }
            | Self::Refused { code, .. } => code,
            Self::UnsupportedMediaType(_) => "unsupported_media_type",
            Self::Conflict(_) => "conflict",
            Self::Gone(_) => "gone",
            Self::RateLimited { .. } => "rate_limited",
            Self::Overloaded { .. } => "overloaded",
            Self::OwnedElsewhere { .. } => "chat_owned_elsewhere",
            Self::OwnerUnresponsive => "chat_owner_unresponsive",
            Self::OwnershipLost => "chat_ownership_lost",
            Self::StorageFailed => "storage_failed",
            Self::Upstream { code, .. } | Self::RunFailed { code, .. } => code,
            Self::Database(_) => "database_error",
            Self::Unavailable(_) => "unavailable",
            Self::EmbedderFailed(_) => "embedder_failed",
            Self::Internal(_) => "internal_error",
        }
    }
}

pub type AppResult<T> = Result<T, AppError>;
