//! `LlmError`: how a call to the upstream model server can fail, typed so the loop can tell a
//! retryable hiccup from a refusal and the HTTP layer can pick a status.

use actix_web::http::StatusCode;

#[derive(Debug, Clone, thiserror::Error)]
pub enum LlmError {
    /// The upstream could not be reached (refused, DNS, TLS) even after retries.
    #[error("could not reach the model server: {0}")]
    Connect(String),
    /// The upstream did not answer in time.
    #[error("the model server timed out: {0}")]
    Timeout(String),
    /// The upstream kept answering 429 after retries.
    #[error("the model server is rate limiting requests")]
    RateLimited { retry_after_secs: Option<u64> },
    /// The upstream answered with an error status (after retries for 5xx).
    #[error("the model server answered {status}: {message}")]
    Status { status: u16, message: String },
    /// A response or stream event that is not the OpenAI wire format.
    #[error("the model server sent an invalid response: {0}")]
    InvalidResponse(String),
    /// An `error` object inside an otherwise successful stream.
    #[error("the model server reported an error mid-stream: {0}")]
    StreamError(String),
    /// The upstream refused the request as longer than the model's context window; carries
    /// the window's size when the error said it.
    #[error("the request does not fit the model's context window: {message}")]
    ContextOverflow {
        context_length: Option<u32>,
        message: String,
    },
    /// The stream ended (or broke) before the model finished its turn.
    #[error("the model's stream was cut off before it finished: {0}")]
    StreamTruncated(String),
    /// The upstream refused a request with images because its model cannot read them
    /// (llama.cpp without a projector, vLLM's and Ollama's text-only models); `model` is the
    /// request's, filled in by the client (`with_model`).
    #[error("the model {model} cannot read images (the model server said: {message})")]
    ImagesUnsupported { model: String, message: String },
    /// No configured model server serves the model a request named; `available` are the
    /// names that would do.
    #[error("{}", unknown_model(model, available))]
    UnknownModel {
        model: String,
        available: Vec<String>,
    },
}

/// Most model names an unknown-model error lists.
const MAX_NAMED_MODELS: usize = 50;

fn unknown_model(model: &str, available: &[String]) -> String {
    let mut names: Vec<&str> = available
        .iter()
        .take(MAX_NAMED_MODELS)
        .map(String::as_str)
        .collect();
    if available.len() > MAX_NAMED_MODELS {
        names.push("…");
    }
    if names.is_empty() {
        format!("no model server serves the model {model:?}; none is reachable now")
    } else {
        format!(
            "no model server serves the model {model:?}; available: {}",
            names.join(", ")
        )
    }
}

/// What model servers say when a request carries images their model cannot read (matched in
/// lower case): llama.cpp's server, vLLM, Ollama, LM Studio and OpenAI.
const IMAGES_REFUSED: [&str; 7] = [
    "image input is not supported",
    "is not a multimodal model",
    "missing data required for image input",
    "does not support image",
    "does not support vision",
    "image_url is only supported by certain models",
    "vision is not supported",
];

/// Whether an upstream's error message says its model cannot read images.
pub(crate) fn refuses_images(message: &str) -> bool {
    let message = message.to_lowercase();
    IMAGES_REFUSED.iter().any(|phrase| message.contains(phrase))
}

impl LlmError {
    /// Stable error code for clients.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Connect(_) => "upstream_unreachable",
            Self::Timeout(_) => "upstream_timeout",
            Self::RateLimited { .. } => "upstream_rate_limited",
            Self::Status { status, .. } if Self::is_client_status(*status) => "upstream_rejected",
            Self::Status { .. } => "upstream_error",
            Self::InvalidResponse(_) => "upstream_invalid_response",
            Self::StreamError(_) => "upstream_stream_error",
            Self::StreamTruncated(_) => "upstream_stream_truncated",
            Self::ContextOverflow { .. } => "context_length_exceeded",
            Self::ImagesUnsupported { .. } => "model_cannot_read_images",
            Self::UnknownModel { .. } => "model_not_found",
        }
    }

    /// Names the request's model in an error that should say it.
    pub(crate) fn with_model(self, model: &str) -> Self {
        match self {
            Self::ImagesUnsupported { message, .. } => Self::ImagesUnsupported {
                model: model.to_string(),
                message,
            },
            other => other,
        }
    }

    /// The status our client sees: the upstream's refusal of the request itself (bad model
    /// name, bad parameters) is the client's to fix; everything else is a gateway failure.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::Status { status, .. } if Self::is_client_status(*status) => {
                StatusCode::BAD_REQUEST
            }
            Self::ContextOverflow { .. }
            | Self::ImagesUnsupported { .. }
            | Self::UnknownModel { .. } => StatusCode::BAD_REQUEST,
            Self::Timeout(_) => StatusCode::GATEWAY_TIMEOUT,
            Self::RateLimited { .. } => StatusCode::SERVICE_UNAVAILABLE,
            Self::Connect(_)
            | Self::Status { .. }
            | Self::InvalidResponse(_)
            | Self::StreamError(_)
            | Self::StreamTruncated(_) => StatusCode::BAD_GATEWAY,
        }
    }

    /// 400, 404, 413 and 422 mean the request was wrong; 401/403 mean *our* upstream
    /// credentials are, which is a server problem.
    fn is_client_status(status: u16) -> bool {
        matches!(status, 400 | 404 | 413 | 422)
    }

    pub(crate) fn from_reqwest(err: &reqwest::Error) -> Self {
        // A connect timeout is a failure to connect: the server never got the request.
        if err.is_connect() {
            Self::Connect(error_chain(err))
        } else if err.is_timeout() {
            Self::Timeout(err.to_string())
        } else if err.is_request() {
            Self::Connect(error_chain(err))
        } else if err.is_decode() || err.is_body() {
            Self::StreamTruncated(error_chain(err))
        } else {
            Self::Connect(error_chain(err))
        }
    }

    /// The failure in words anyone may read: what went wrong, never the upstream's address
    /// (reqwest's errors name the URL) or the body of its server-side errors. The full
    /// `to_string()` is for the log and for admins.
    pub fn public_message(&self) -> String {
        match self {
            Self::Connect(_) => "could not reach the model server".into(),
            Self::Timeout(_) => "the model server timed out".into(),
            // The upstream's refusal of the request itself says what the caller must fix.
            Self::RateLimited { .. } => self.to_string(),
            Self::Status { status, .. } if Self::is_client_status(*status) => self.to_string(),
            Self::ContextOverflow { .. } | Self::UnknownModel { .. } => self.to_string(),
            // One line, naming the model; the server's own words are for the log.
            Self::ImagesUnsupported { model, .. } => format!(
                "the model {model} cannot read images: send the message without images, or \
                 choose a model that accepts them"
            ),
            Self::Status { status, .. } => format!("the model server answered {status}"),
            Self::InvalidResponse(_) => "the model server sent an invalid response".into(),
            Self::StreamError(_) => "the model server reported an error mid-stream".into(),
            Self::StreamTruncated(_) => "the model's stream was cut off before it finished".into(),
        }
    }

    /// Whether trying the same request again may succeed.
    pub(crate) fn is_retryable(&self) -> bool {
        match self {
            Self::Connect(_) | Self::RateLimited { .. } => true,
            // The server accepted the request and may still be working on it: sending it
            // again would pile a duplicate onto a busy server.
            Self::Timeout(_) => false,
            Self::Status { status, .. } => *status >= 500,
            Self::StreamTruncated(_) => true,
            Self::InvalidResponse(_)
            | Self::StreamError(_)
            | Self::ContextOverflow { .. }
            | Self::ImagesUnsupported { .. }
            | Self::UnknownModel { .. } => false,
        }
    }
}

fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        out.push_str(": ");
        out.push_str(&cause.to_string());
        source = cause.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_messages_never_carry_the_detail() {
        let address = "http://10.1.2.3:11434/v1/chat/completions";
        for err in [
            LlmError::Connect(format!("error sending request for url ({address})")),
            LlmError::Timeout(format!("operation timed out for url ({address})")),
            LlmError::Status {
                status: 500,
                message: format!("proxy error talking to {address}"),
            },
            LlmError::Status {
                status: 401,
                message: format!("bad key for {address}"),
            },
            LlmError::InvalidResponse(address.into()),
            LlmError::StreamError(address.into()),
            LlmError::StreamTruncated(format!("error decoding response body for url ({address})")),
        ] {
            assert!(err.to_string().contains(address), "{err}");
            assert!(!err.public_message().contains("10.1.2.3"), "{err:?}");
        }
        let rejected = LlmError::Status {
            status: 404,
            message: "model 'nope' not found".into(),
        };
        assert_eq!(
            rejected.public_message(),
            "the model server answered 404: model 'nope' not found",
            "the caller's own mistake is explained"
        );
    }

    #[test]
    fn every_servers_refusal_of_images_is_recognised_and_said_in_one_line() {
        for said in [
            "image input is not supported - hint: if this is unexpected, you may need to \
             provide the mmproj",
            "qwen2.5-7b-instruct is not a multimodal model",
            "this model is missing data required for image input",
            "Model does not support images. Please use a model that does.",
            "Invalid content type. image_url is only supported by certain models.",
        ] {
            assert!(refuses_images(said), "{said}");
        }
        assert!(!refuses_images(
            "the request exceeds the available context size"
        ));
        let error = LlmError::ImagesUnsupported {
            model: String::new(),
            message: "image input is not supported".into(),
        }
        .with_model("llama-3-8b");
        assert_eq!(error.code(), "model_cannot_read_images");
        assert_eq!(error.status(), StatusCode::BAD_REQUEST);
        let shown = error.public_message();
        assert!(
            shown.contains("llama-3-8b") && !shown.contains('\n'),
            "{shown}"
        );
        assert!(!error.is_retryable());
    }
}
