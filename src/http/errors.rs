//! The one place where errors become HTTP responses: `AppError`'s status, OpenAI's error
//! shape (`{"error": {"message", "type", "code"}}`, so `/v1` clients and the chat API read
//! errors alike) and every conversion from a module's own error into an `AppError` (the model
//! server's, the chat store's, images', memories', a refused request's, accounts', agents',
//! chat exports' and imports', knowledge bases', the cross-site check's, a stopped chat
//! session's, shared links'). A 5xx never shows its cause to the client; the cause chain goes to the log. A
//! failed run's kind becomes an error in `run_failure`.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;

use crate::auth::CrossSiteError;
use crate::auth::{AccountChangeError, AuthError};
use crate::chat::agents::AgentError;
use crate::chat::artifacts::ArtifactError;
use crate::chat::attachments::AttachmentError;
use crate::chat::automations::AutomationError;
use crate::chat::export::{ArchiveError, ImportError};
use crate::chat::knowledge_bases::KnowledgeBaseError;
use crate::chat::memory::MemoryError;
use crate::chat::persistence::{ChatStoreError, FolderError};
use crate::chat::session::ChatError;
use crate::chat::shares::ShareError;
use crate::documents::DocumentsError;
use crate::error::AppError;
use crate::llm::LlmError;
use crate::supervisor::launch::Refusal;

/// OpenAI's `error.type` for an error answered with `status`.
fn error_type(status: StatusCode) -> &'static str {
    match status.as_u16() {
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        429 => "rate_limit_error",
        400..=499 => "invalid_request_error",
        502..=504 => "upstream_error",
        _ => "server_error",
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
            Self::Forbidden(_) | Self::ForbiddenWithCode { .. } | Self::CrossSite(_) => {
                StatusCode::FORBIDDEN
            }
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
            Self::Unavailable(_)
            | Self::EmbedderFailed(_)
            | Self::Overloaded { .. }
            | Self::OwnedElsewhere { .. }
            | Self::OwnerUnresponsive
            | Self::OwnershipLost => StatusCode::SERVICE_UNAVAILABLE,
            Self::StorageFailed => StatusCode::INTERNAL_SERVER_ERROR,
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
            // Not a failure: the limit the operator set, logged where it refuses.
            Self::Overloaded { .. }
            | Self::OwnedElsewhere { .. }
            | Self::OwnerUnresponsive
            | Self::OwnershipLost => self.to_string(),
            Self::StorageFailed => {
                tracing::error!(error = ?anyhow_chain(self), code = self.code(), "the file store failed");
                self.to_string()
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
            Self::RateLimited { retry_after_secs } | Self::Overloaded { retry_after_secs } => {
                response.insert_header((header::RETRY_AFTER, retry_after_secs.to_string()));
            }
            Self::OwnedElsewhere { .. } | Self::OwnerUnresponsive | Self::OwnershipLost => {
                response.insert_header((header::RETRY_AFTER, "1"));
            }
            _ => {}
        }
        response.json(ErrorBody {
            error: ErrorDetail {
                message,
                kind: error_type(status),
                code: self.code(),
            },
        })
    }
}

impl From<crate::chat::SessionError> for AppError {
    fn from(err: crate::chat::SessionError) -> Self {
        match err {
            crate::chat::SessionError::Elsewhere { address } => Self::OwnedElsewhere { address },
            crate::chat::SessionError::Db(err) => Self::Database(err),
        }
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

impl AppError {
    /// An upstream failure as `reader_is_admin` may read it: admins see the whole cause (the
    /// upstream's address, its answer), everyone else the public summary.
    pub fn upstream(error: LlmError, reader_is_admin: bool) -> Self {
        let cause = error.to_string();
        AppError::Upstream {
            status: error.status(),
            code: error.code(),
            message: if reader_is_admin {
                cause.clone()
            } else {
                error.public_message()
            },
            cause,
        }
    }
}

impl From<LlmError> for AppError {
    /// Without a reader known to be an admin, the public summary.
    fn from(error: LlmError) -> Self {
        Self::upstream(error, false)
    }
}

impl From<ChatStoreError> for AppError {
    fn from(err: ChatStoreError) -> Self {
        match err {
            ChatStoreError::NotFound => AppError::NotFound("chat"),
            ChatStoreError::InvalidTitle => AppError::InvalidRequest(err.to_string()),
            ChatStoreError::Database(db) => AppError::Database(db),
        }
    }
}

impl From<crate::llm::images::ImagesError> for AppError {
    fn from(err: crate::llm::images::ImagesError) -> Self {
        use crate::llm::images::ImagesError;
        let upstream = |status, code| AppError::Upstream {
            status,
            code,
            cause: err.to_string(),
            message: err.to_string(),
        };
        match &err {
            ImagesError::NotConfigured => AppError::Refused {
                code: "images_not_configured",
                message: err.to_string(),
            },
            ImagesError::Invalid(message) => AppError::InvalidRequest(message.clone()),
            ImagesError::PromptTooLong(_) => AppError::TooLarge {
                code: "prompt_too_long",
                message: err.to_string(),
            },
            ImagesError::Timeout => upstream(StatusCode::GATEWAY_TIMEOUT, "upstream_timeout"),
            ImagesError::Unreachable => upstream(StatusCode::BAD_GATEWAY, "upstream_unreachable"),
            ImagesError::Rejected(_) => upstream(StatusCode::BAD_REQUEST, "upstream_rejected"),
            ImagesError::Failed(_) => upstream(StatusCode::BAD_GATEWAY, "upstream_error"),
        }
    }
}

impl From<crate::tools::code_interpreter::ContainerError> for AppError {
    fn from(err: crate::tools::code_interpreter::ContainerError) -> Self {
        use crate::tools::code_interpreter::ContainerError;
        match err {
            ContainerError::Unavailable(_) => AppError::Refused {
                code: "code_interpreter_unavailable",
                message: err.to_string(),
            },
            ContainerError::NotFound => AppError::NotFound("container"),
            ContainerError::FileNotFound => AppError::NotFound("container file"),
            ContainerError::Limit(message) => AppError::LimitReached {
                code: "container_limit_reached",
                message,
            },
            ContainerError::Invalid(message) => AppError::InvalidRequest(message),
            ContainerError::Busy => AppError::Overloaded {
                retry_after_secs: 1,
            },
            ContainerError::Db(err) => err.into(),
            other => AppError::internal(other),
        }
    }
}

impl From<crate::tools::mcp::remote::RemoteError> for AppError {
    fn from(err: crate::tools::mcp::remote::RemoteError) -> Self {
        use crate::tools::mcp::remote::RemoteError;
        match &err {
            RemoteError::NotAllowed { .. } => AppError::Refused {
                code: "mcp_server_not_allowed",
                message: err.to_string(),
            },
            RemoteError::Refused { .. } => AppError::Refused {
                code: "mcp_server_refused",
                message: err.to_string(),
            },
            // OpenAI's status for a server whose tools cannot be listed: 424.
            RemoteError::Unreachable { .. } => AppError::Upstream {
                status: StatusCode::FAILED_DEPENDENCY,
                code: "mcp_list_tools_failed",
                cause: err.to_string(),
                message: err.to_string(),
            },
        }
    }
}

impl From<AttachmentError> for AppError {
    fn from(err: AttachmentError) -> Self {
        match err {
            AttachmentError::TooLarge { .. } => AppError::TooLarge {
                code: "image_too_large",
                message: err.to_string(),
            },
            AttachmentError::NotAnImage { .. } => AppError::UnsupportedType {
                code: "unsupported_image_type",
                message: err.to_string(),
            },
            AttachmentError::TooMany { .. } => AppError::Refused {
                code: "too_many_images",
                message: err.to_string(),
            },
            AttachmentError::TooManyUnsent { .. } => AppError::LimitReached {
                code: "too_many_unsent_images",
                message: err.to_string(),
            },
            AttachmentError::InvalidUrl(_) => AppError::Refused {
                code: "invalid_image_url",
                message: err.to_string(),
            },
            AttachmentError::NotFound(_) => AppError::NotFound("attachment"),
            AttachmentError::Io(io) => AppError::internal(io),
            AttachmentError::Database(db) => AppError::Database(db),
        }
    }
}

impl From<MemoryError> for AppError {
    fn from(err: MemoryError) -> Self {
        match err {
            MemoryError::Full(max) => Self::Conflict(format!(
                "this chat already holds {max} memories, the most allowed; delete some first"
            )),
            MemoryError::NotFound => Self::NotFound("memory"),
            MemoryError::StaleVector => Self::Unavailable(err.to_string()),
            MemoryError::Database(db) => Self::Database(db),
        }
    }
}

impl From<sea_orm::DbErr> for AppError {
    /// A write the cluster's fence refused is the chat changing owner, not a failure.
    fn from(err: sea_orm::DbErr) -> Self {
        if crate::cluster::Fenced::is(&err) {
            Self::OwnershipLost
        } else {
            Self::Database(err)
        }
    }
}

impl From<ChatError> for AppError {
    fn from(err: ChatError) -> Self {
        use crate::chat::tree::TreeError;
        match err {
            ChatError::Tree(TreeError::UnknownMessage(_)) => AppError::NotFound("message"),
            ChatError::Tree(other) => AppError::InvalidRequest(other.to_string()),
            ChatError::EmptyContent => AppError::InvalidRequest(err.to_string()),
            ChatError::NotNew => AppError::Conflict(err.to_string()),
            ChatError::Database(db) => AppError::Database(db),
            ChatError::Fenced(_) => AppError::OwnershipLost,
        }
    }
}

impl From<crate::documents::CommitError> for AppError {
    fn from(err: crate::documents::CommitError) -> Self {
        use crate::documents::CommitError;
        match err {
            CommitError::Store(cause) => {
                tracing::error!(%cause, "an upload could not be stored");
                AppError::StorageFailed
            }
            CommitError::Db(err) => err.into(),
        }
    }
}

impl From<crate::documents::CreateError> for AppError {
    fn from(err: crate::documents::CreateError) -> Self {
        use crate::documents::CreateError;
        match err {
            CreateError::TooMany { .. } => AppError::LimitReached {
                code: "too_many_documents",
                message: err.to_string(),
            },
            CreateError::Db(err) => err.into(),
        }
    }
}

/// Why a file or a chat's document could not be added as a store's document.
impl From<crate::documents::AddFileError> for AppError {
    fn from(err: crate::documents::AddFileError) -> Self {
        use crate::documents::AddFileError;
        match err {
            AddFileError::Create(err) => err.into(),
            AddFileError::Commit(err) => err.into(),
            AddFileError::Db(err) => err.into(),
            AddFileError::Io(err) => AppError::internal(err),
            AddFileError::NoSuchDocument => AppError::NotFound("document"),
            AddFileError::StillUploading(_) => AppError::Conflict(err.to_string()),
        }
    }
}

impl From<crate::supervisor::turn::LaunchError> for AppError {
    fn from(err: crate::supervisor::turn::LaunchError) -> Self {
        err.into_app_error()
    }
}

impl From<Refusal> for AppError {
    fn from(refusal: Refusal) -> Self {
        AppError::invalid(refusal.to_string())
    }
}

impl From<AuthError> for AppError {
    fn from(err: AuthError) -> Self {
        match err {
            AuthError::InvalidUsername | AuthError::InvalidPassword => {
                AppError::InvalidRequest(err.to_string())
            }
            AuthError::UsernameTaken(_) => AppError::Conflict(err.to_string()),
            AuthError::NoSuchUser(_) => AppError::NotFound("user"),
            AuthError::LinkSpent => AppError::Gone(err.to_string()),
            AuthError::AccountDisabled => AppError::ForbiddenWithCode {
                code: "account_disabled",
                message: err.to_string(),
            },
            AuthError::WrongPassword => AppError::InvalidWithCode {
                code: "wrong_password",
                message: err.to_string(),
            },
            AuthError::InvalidDisplayName => AppError::InvalidWithCode {
                code: "invalid_display_name",
                message: err.to_string(),
            },
            AuthError::InvalidTimeZone(_) => AppError::InvalidWithCode {
                code: "invalid_time_zone",
                message: err.to_string(),
            },
            AuthError::TooManyApiKeys { .. } => AppError::LimitReached {
                code: "too_many_api_keys",
                message: err.to_string(),
            },
            AuthError::Hashing(_) => AppError::internal(err),
            AuthError::Database(db) => AppError::Database(db),
        }
    }
}

impl From<ImportError> for AppError {
    fn from(err: ImportError) -> Self {
        match err {
            ImportError::Unsupported(_) => AppError::InvalidWithCode {
                code: "unsupported_export",
                message: err.to_string(),
            },
            ImportError::Invalid(_) => AppError::InvalidWithCode {
                code: "invalid_export",
                message: err.to_string(),
            },
            ImportError::TooMany { .. } => AppError::TooLarge {
                code: "import_too_large",
                message: err.to_string(),
            },
            ImportError::Database(db) => AppError::Database(db),
        }
    }
}

impl From<ArchiveError> for AppError {
    fn from(err: ArchiveError) -> Self {
        match err {
            ArchiveError::TooMany { .. } => AppError::TooLarge {
                code: "export_too_large",
                message: err.to_string(),
            },
            ArchiveError::Zip(_) => AppError::internal(err),
            ArchiveError::Database(db) => AppError::Database(db),
        }
    }
}

impl From<AccountChangeError> for AppError {
    fn from(err: AccountChangeError) -> Self {
        match err {
            AccountChangeError::NotFound => AppError::NotFound("user"),
            AccountChangeError::OwnAccount(_) => AppError::Conflict(err.to_string()),
            AccountChangeError::Unconfirmed(_) => AppError::InvalidRequest(err.to_string()),
            AccountChangeError::Database(db) => AppError::Database(db),
        }
    }
}

impl From<AgentError> for AppError {
    fn from(err: AgentError) -> Self {
        match err {
            AgentError::Invalid(message) => AppError::InvalidRequest(message),
            AgentError::NotFound => AppError::NotFound("agent"),
            AgentError::Conflict(message) => AppError::Conflict(message),
            AgentError::TooMany { .. } => AppError::LimitReached {
                code: "too_many_agents",
                message: err.to_string(),
            },
            AgentError::KnowledgeBaseNotFound(id) => AppError::NotFoundWithHelp(format!(
                "knowledge base {id} not found; GET /api/knowledge-bases lists yours"
            )),
            AgentError::Database(db) => AppError::Database(db),
        }
    }
}

impl From<AutomationError> for AppError {
    fn from(err: AutomationError) -> Self {
        let message = err.to_string();
        let invalid =
            |code: &'static str, message: String| AppError::InvalidWithCode { code, message };
        match err {
            AutomationError::InvalidWorkflow(_) => invalid("invalid_workflow", message),
            AutomationError::UnknownTool(_) => invalid("unknown_tool", message),
            AutomationError::InvalidTemplate(_) => invalid("invalid_template", message),
            AutomationError::MissingInput(_) => invalid("missing_input", message),
            AutomationError::InvalidSchedule(_) => invalid("invalid_schedule", message),
            AutomationError::WorkflowNotFound => AppError::NotFound("workflow"),
            AutomationError::ScheduleNotFound => AppError::NotFound("schedule"),
            AutomationError::WorkflowInUse(_) => AppError::Conflict(message),
            AutomationError::TooMany { what, .. } => AppError::LimitReached {
                code: if what == "schedules" {
                    "too_many_schedules"
                } else {
                    "too_many_workflows"
                },
                message,
            },
            AutomationError::Database(db) => AppError::Database(db),
        }
    }
}

impl From<KnowledgeBaseError> for AppError {
    fn from(err: KnowledgeBaseError) -> Self {
        match err {
            KnowledgeBaseError::NotFound(_) => {
                AppError::NotFoundWithHelp(format!("{err}; GET /api/knowledge-bases lists yours"))
            }
            KnowledgeBaseError::TooMany { .. } => AppError::LimitReached {
                code: "too_many_knowledge_bases",
                message: err.to_string(),
            },
            KnowledgeBaseError::InvalidName => AppError::InvalidRequest(err.to_string()),
            KnowledgeBaseError::Database(db) => AppError::Database(db),
        }
    }
}

impl From<CrossSiteError> for AppError {
    fn from(err: CrossSiteError) -> Self {
        AppError::CrossSite(err.to_string())
    }
}

impl From<actix::MailboxError> for AppError {
    /// A chat's session actor stopped (or its mailbox closed) while a request waited on it:
    /// it is restarted on the next use, so the client may simply retry.
    fn from(err: actix::MailboxError) -> Self {
        Self::Unavailable(format!("chat is restarting, retry: {err}"))
    }
}

impl From<ArtifactError> for AppError {
    fn from(err: ArtifactError) -> Self {
        match err {
            ArtifactError::Invalid(message) => AppError::InvalidRequest(message),
            ArtifactError::Exists(_) => AppError::Conflict(err.to_string()),
            ArtifactError::NotFound(_) => AppError::NotFound("artifact"),
            ArtifactError::Database(db) => AppError::Database(db),
        }
    }
}

impl From<DocumentsError> for AppError {
    fn from(err: DocumentsError) -> Self {
        match err {
            DocumentsError::Database(db) => AppError::Database(db),
            DocumentsError::Embed(embed) => AppError::EmbedderFailed(embed.to_string()),
            DocumentsError::Index(_) | DocumentsError::Extract(_) | DocumentsError::Failed(_) => {
                AppError::internal(err)
            }
        }
    }
}

impl From<ShareError> for AppError {
    /// A chat's read-only links (`chat::shares`).
    fn from(err: ShareError) -> Self {
        match err {
            ShareError::NotFound => AppError::NotFound("share"),
            ShareError::TooMany { .. } => AppError::LimitReached {
                code: "too_many_shares",
                message: err.to_string(),
            },
            ShareError::InvalidExpiry(message) => AppError::InvalidWithCode {
                code: "invalid_expiry",
                message,
            },
            ShareError::Db(db) => AppError::Database(db),
        }
    }
}

impl From<FolderError> for AppError {
    /// A user's folders of chats (`chat::persistence::folders`).
    fn from(err: FolderError) -> Self {
        match err {
            FolderError::NotFound => AppError::NotFound("folder"),
            FolderError::InvalidName => AppError::InvalidWithCode {
                code: "invalid_folder_name",
                message: err.to_string(),
            },
            FolderError::NameTaken(_) => AppError::InvalidWithCode {
                code: "folder_name_taken",
                message: err.to_string(),
            },
            FolderError::TooMany => AppError::LimitReached {
                code: "too_many_folders",
                message: err.to_string(),
            },
            FolderError::Database(db) => db.into(),
        }
    }
}

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

    #[actix_web::test]
    async fn upstream_failures_show_their_cause_only_to_admins() {
        use actix_web::body::to_bytes;
        let error = LlmError::Connect(
            "error sending request for url (http://10.1.2.3:8000/v1/models)".into(),
        );
        let body = |error: AppError| async move {
            let response = error.error_response();
            assert_eq!(response.status(), 502);
            let body = to_bytes(response.into_body()).await.unwrap();
            serde_json::from_slice::<serde_json::Value>(&body).unwrap()["error"].clone()
        };
        let public = body(AppError::from(error.clone())).await;
        assert_eq!(public["message"], "could not reach the model server");
        assert_eq!(public["code"], "upstream_unreachable");
        let admin = body(AppError::upstream(error, true)).await;
        assert!(
            admin["message"].as_str().unwrap().contains("10.1.2.3:8000"),
            "{admin}"
        );
        assert_eq!(admin["code"], "upstream_unreachable");
    }
}
