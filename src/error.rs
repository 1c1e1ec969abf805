//! `AppError`: every error an HTTP handler can return, with one exhaustive mapping to a status
//! and a stable machine-readable code. Bodies use OpenAI's shape everywhere,
//! `{"error": {"message", "type", "code"}}`, so `/v1` clients and the chat API read errors alike.
//! A 5xx never shows its cause to the client; the cause chain goes to the log.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// No credentials, or credentials that match nothing.
    #[error("authentication required: send an API key as 'Authorization: Bearer <key>' or log in")]
    Unauthenticated,
    /// Authenticated, but the action needs rights this user does not have.
    #[error("{0}")]
    Forbidden(String),
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
    Database(#[from] sea_orm::DbErr),
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
            | Self::LimitReached { code, .. }
            | Self::PreconditionFailed { code, .. }
            | Self::UnsupportedType { code, .. }
            | Self::Refused { code, .. } => code,
            Self::UnsupportedMediaType(_) => "unsupported_media_type",
            Self::Conflict(_) => "conflict",
            Self::Gone(_) => "gone",
            Self::RateLimited { .. } => "rate_limited",
            Self::Upstream { code, .. } | Self::RunFailed { code, .. } => code,
            Self::Database(_) => "database_error",
            Self::Unavailable(_) => "unavailable",
            Self::EmbedderFailed(_) => "embedder_failed",
            Self::Internal(_) => "internal_error",
        }
    }

    /// OpenAI's `error.type` for this error.
    fn kind(&self) -> &'static str {
        match self.status_code().as_u16() {
            401 => "authentication_error",
            403 => "permission_error",
            404 => "not_found_error",
            429 => "rate_limit_error",
            400..=499 => "invalid_request_error",
            502..=504 => "upstream_error",
            _ => "server_error",
        }
    }
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: ErrorDetail<'a>,
}

#[derive(Serialize)]
struct ErrorDetail<'a> {
    message: String,
    #[serde(rename = "type")]
    kind: &'a str,
    code: &'a str,
}

impl ResponseError for AppError {
    fn status_code(&self) -> StatusCode {
        match self {
            Self::Unauthenticated => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) | Self::CrossSite(_) => StatusCode::FORBIDDEN,
            Self::NotFound(_) | Self::NotFoundWithHelp(_) => StatusCode::NOT_FOUND,
            Self::InvalidRequest(_)
            | Self::InvalidWithCode { .. }
            | Self::InvalidJson(_)
            | Self::Refused { .. } => StatusCode::BAD_REQUEST,
            Self::PayloadTooLarge { .. } | Self::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::LimitReached { .. } => StatusCode::CONFLICT,
            Self::PreconditionFailed { .. } => StatusCode::PRECONDITION_FAILED,
            Self::UnsupportedMediaType(_) | Self::UnsupportedType { .. } => {
                StatusCode::UNSUPPORTED_MEDIA_TYPE
            }
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::Gone(_) => StatusCode::GONE,
            Self::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Upstream { status, .. } | Self::RunFailed { status, .. } => *status,
            Self::Database(_) | Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            Self::Unavailable(_) | Self::EmbedderFailed(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let status = self.status_code();
        let message = match self {
            Self::Upstream { cause, message, .. } => {
                tracing::warn!(error = %cause, code = self.code(), "the model server failed");
                message.clone()
            }
            Self::EmbedderFailed(message) => {
                tracing::warn!(code = self.code(), %message, "the embedder failed");
                message.clone()
            }
            _ if status.is_server_error() => {
                tracing::error!(error = ?anyhow_chain(self), code = self.code(), "request failed");
                "internal error".to_string()
            }
            _ => self.to_string(),
        };
        let mut response = HttpResponse::build(status);
        match self {
            Self::Unauthenticated => {
                response.insert_header((
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"colloquy\""),
                ));
            }
            Self::RateLimited { retry_after_secs } => {
                response.insert_header((header::RETRY_AFTER, retry_after_secs.to_string()));
            }
            _ => {}
        }
        response.json(ErrorBody {
            error: ErrorDetail {
                message,
                kind: self.kind(),
                code: self.code(),
            },
        })
    }
}

/// The error and its sources, one per line, for the log.
fn anyhow_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        out.push_str(": ");
        out.push_str(&cause.to_string());
        source = cause.source();
    }
    out
}

impl From<actix::MailboxError> for AppError {
    /// A chat's session actor stopped (or its mailbox closed) while a request waited on it:
    /// it is restarted on the next use, so the client may simply retry.
    fn from(err: actix::MailboxError) -> Self {
        Self::Unavailable(format!("chat is restarting, retry: {err}"))
    }
}

pub type AppResult<T> = Result<T, AppError>;

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::body::to_bytes;

    #[actix_web::test]
    async fn errors_use_openai_shape_and_hide_internal_causes() {
        let response = AppError::internal(anyhow::anyhow!("secret path /etc/x")).error_response();
        assert_eq!(response.status(), 500);
        let body = to_bytes(response.into_body()).await.unwrap();
        let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(json["error"]["message"], "internal error");
        assert_eq!(json["error"]["type"], "server_error");
        assert_eq!(json["error"]["code"], "internal_error");

        let response = AppError::NotFound("chat").error_response();
        assert_eq!(response.status(), 404);
        let body = to_bytes(response.into_body()).await.unwrap();
        let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(json["error"]["message"], "chat not found");
        assert_eq!(json["error"]["type"], "not_found_error");
    }

    #[test]
    fn rate_limits_tell_when_to_retry() {
        let response = AppError::RateLimited {
            retry_after_secs: 12,
        }
        .error_response();
        assert_eq!(response.status(), 429);
        assert_eq!(response.headers().get("retry-after").unwrap(), "12");
    }
}
