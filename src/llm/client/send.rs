//! Sending a request: retries on connection errors, 429 and 5xx with backoff (honouring
//! `Retry-After`) within the retry deadline, headers within the first-byte allowance (a timeout
//! is never retried), a failed answer's status and message as a typed error, and bodies read as
//! JSON within what is left of the allowance.

use std::time::Duration;

use reqwest::header::{HeaderMap, RETRY_AFTER};
use reqwest::{RequestBuilder, Response};

use super::Upstream;
use crate::llm::LlmError;
use crate::llm::window;

/// Longest error body we read from the upstream for a message.
const MAX_ERROR_BODY_CHARS: usize = 2_000;

impl Upstream {
    /// The body of a non-streaming answer, within what is left of its first-byte allowance
    /// plus one chunk interval.
    pub(super) async fn read_json_within<T: serde::de::DeserializeOwned>(
        &self,
        response: Response,
        left: Duration,
    ) -> Result<T, LlmError> {
        let allowed = left + self.timeouts.between_chunks;
        tokio::time::timeout(allowed, read_json(response))
            .await
            .unwrap_or_else(|_| {
                Err(LlmError::Timeout(format!(
                    "the model server did not finish its answer within {} s",
                    allowed.as_secs()
                )))
            })
    }

    /// Sends a request, retrying connection failures, 429 and 5xx with backoff until the
    /// retry deadline. Returns the first successful response with what is left of its
    /// `first_byte` allowance (for the body's first bytes), or the last failure as a typed
    /// error. Headers that take longer than the allowance are a timeout, never retried.
    pub(super) async fn send(
        &self,
        builder: &RequestBuilder,
        first_byte: Duration,
    ) -> Result<(Response, Duration), LlmError> {
        let started = tokio::time::Instant::now();
        let mut attempt = 0;
        loop {
            let request = builder
                .try_clone()
                .ok_or_else(|| LlmError::Connect("the request cannot be sent twice".into()))?;
            let sent = tokio::time::Instant::now();
            let outcome = tokio::time::timeout(first_byte, request.send()).await;
            let (err, retry_after) = match outcome {
                Err(_) => {
                    return Err(LlmError::Timeout(format!(
                        "the model server did not answer within {} s",
                        first_byte.as_secs()
                    )));
                }
                Ok(Ok(response)) if response.status().is_success() => {
                    return Ok((response, first_byte.saturating_sub(sent.elapsed())));
                }
                Ok(Ok(response)) => {
                    let retry_after = retry_after(response.headers());
                    (status_error(response).await, retry_after)
                }
                Ok(Err(err)) => (LlmError::from_reqwest(&err), None),
            };
            if !err.is_retryable() || !self.retry.allows(attempt, started.elapsed(), retry_after) {
                return Err(err);
            }
            let delay = self.retry.backoff(attempt, retry_after);
            tracing::warn!(%err, attempt, delay_ms = delay.as_millis() as u64, "upstream request failed; retrying");
            tokio::time::sleep(delay).await;
            attempt += 1;
        }
    }
}

/// `Retry-After` in seconds (the HTTP-date form is rare from model servers and is ignored).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?;
    let seconds: f64 = value.trim().parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
}

async fn status_error(response: Response) -> LlmError {
    let status = response.status().as_u16();
    let retry_after_secs = retry_after(response.headers()).map(|d| d.as_secs());
    if status == 429 {
        return LlmError::RateLimited { retry_after_secs };
    }
    let body = response.text().await.unwrap_or_default();
    let parsed = serde_json::from_str::<serde_json::Value>(&body).unwrap_or_default();
    let message = parsed
        .pointer("/error/message")
        .or_else(|| parsed.get("error"))
        .and_then(|m| m.as_str().map(str::to_string))
        .unwrap_or_else(|| body.chars().take(MAX_ERROR_BODY_CHARS).collect());
    if matches!(status, 400 | 413)
        && let Some(context_length) = window::overflow(&parsed, &message)
    {
        return LlmError::ContextOverflow {
            context_length,
            message,
        };
    }
    // llama.cpp answers 500, so this is known before a retry would ask again.
    if matches!(status, 400 | 422 | 500 | 501) && crate::llm::error::refuses_images(&message) {
        return LlmError::ImagesUnsupported {
            model: String::new(),
            message,
        };
    }
    LlmError::Status { status, message }
}

async fn read_json<T: serde::de::DeserializeOwned>(response: Response) -> Result<T, LlmError> {
    let bytes = response
        .bytes()
        .await
        .map_err(|err| LlmError::from_reqwest(&err))?;
    serde_json::from_slice(&bytes).map_err(|err| LlmError::InvalidResponse(err.to_string()))
}
