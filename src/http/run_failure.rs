//! A failed run as an HTTP error: the one place a run's `RunErrorKind` becomes a status and
//! stable code. The model server's failures stay `AppError::Upstream` (logged as its); ours
//! are `AppError::RunFailed` with their own code (a 500's message is "internal error", its
//! cause logged).

use actix_web::http::StatusCode;

use crate::error::AppError;
use crate::run::events::RunError;

/// The HTTP error for a run that failed before producing anything, worded as the run's reader
/// may see it (`RunError::shown`).
pub(super) fn run_failure(error: &RunError) -> AppError {
    let kind = error.kind;
    let status = StatusCode::from_u16(kind.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let message = error.shown().to_string();
    if kind.is_upstream() {
        return AppError::Upstream {
            status,
            code: kind.code(),
            cause: message.clone(),
            message,
        };
    }
    AppError::RunFailed {
        status,
        code: kind.code(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use actix_web::ResponseError;

    use super::*;
    use crate::run::events::{RunErrorKind, StopReason};

    fn mapped(kind: RunErrorKind) -> (u16, &'static str) {
        let error = run_failure(&RunError::new(kind, "failed"));
        (error.status_code().as_u16(), error.code())
    }

    #[test]
    fn each_kind_has_its_status_and_code_and_only_the_upstreams_are_gateway_failures() {
        let expected = [
            (
                RunErrorKind::UpstreamUnreachable,
                502,
                "upstream_unreachable",
            ),
            (RunErrorKind::UpstreamTimeout, 504, "upstream_timeout"),
            (
                RunErrorKind::UpstreamRateLimited,
                503,
                "upstream_rate_limited",
            ),
            (RunErrorKind::UpstreamRejected, 400, "upstream_rejected"),
            (RunErrorKind::UpstreamError, 502, "upstream_error"),
            (
                RunErrorKind::UpstreamInvalidResponse,
                502,
                "upstream_invalid_response",
            ),
            (
                RunErrorKind::UpstreamStreamError,
                502,
                "upstream_stream_error",
            ),
            (
                RunErrorKind::UpstreamStreamTruncated,
                502,
                "upstream_stream_truncated",
            ),
            (
                RunErrorKind::ContextLengthExceeded,
                400,
                "context_length_exceeded",
            ),
            (
                RunErrorKind::ModelCannotReadImages,
                400,
                "model_cannot_read_images",
            ),
            (RunErrorKind::PersistenceFailed, 500, "persistence_failed"),
            (RunErrorKind::PauseFailed, 500, "pause_failed"),
            (RunErrorKind::DeepThinkFailed, 500, "deep_think_failed"),
            (RunErrorKind::WorkflowFailed, 500, "workflow_failed"),
        ];
        assert_eq!(expected.len(), RunErrorKind::FIXED.len());
        for (kind, status, code) in expected {
            assert!(RunErrorKind::FIXED.contains(&kind));
            assert_eq!(mapped(kind), (status, code), "{kind:?}");
            assert_eq!(
                matches!(
                    run_failure(&RunError::new(kind, "x")),
                    AppError::Upstream { .. }
                ),
                status != 500,
                "{kind:?}"
            );
        }
        let stored = |reason| mapped(RunErrorKind::stored(reason));
        assert_eq!(stored(StopReason::UpstreamError), (502, "upstream_error"));
        assert_eq!(stored(StopReason::Cancelled), (409, "cancelled"));
        assert_eq!(stored(StopReason::TimeBudget), (504, "time_budget"));
        assert_eq!(stored(StopReason::Interrupted), (503, "interrupted"));
        assert_eq!(
            stored(StopReason::WorkflowFailed),
            (500, "workflow_failed"),
            "a stored failed workflow keeps its kind"
        );
    }

    #[test]
    fn an_upstream_failure_keeps_the_code_it_had_as_an_llm_error() {
        use crate::llm::LlmError;
        for err in [
            LlmError::Connect("x".into()),
            LlmError::Timeout("x".into()),
            LlmError::RateLimited {
                retry_after_secs: None,
            },
            LlmError::Status {
                status: 404,
                message: "x".into(),
            },
            LlmError::Status {
                status: 500,
                message: "x".into(),
            },
            LlmError::InvalidResponse("x".into()),
            LlmError::StreamError("x".into()),
            LlmError::StreamTruncated("x".into()),
            LlmError::ContextOverflow {
                context_length: None,
                message: "x".into(),
            },
        ] {
            let kind = RunErrorKind::from(&err);
            assert_eq!(kind.code(), err.code(), "{err:?}");
            assert_eq!(kind.status(), err.status().as_u16(), "{err:?}");
        }
    }
}
