//! `Upstream`: HTTP to one model server (a provider; `router` picks which) with timeouts that fit real servers — a connect timeout,
//! a first-byte allowance that grows with the prompt (servers read the whole prompt before
//! they send anything), and a timeout between chunks — and retries with exponential backoff
//! on connection errors, 429 and 5xx (honouring `Retry-After`) within a total deadline. A
//! request that timed out is never sent again (the server may still be working on it), and
//! nothing is retried once the first chunk of a stream has arrived.
//!
//! Here: `Upstream` and its construction, the retry policy and timeouts, building requests.
//! Beside it: `chat` (completions, streamed and not), `context` (learning a model's context
//! window), `models` (the model list, embeddings) and `send` (sending with retries, reading
//! answers and errors).

mod chat;
mod context;
mod models;
mod per_thread;
mod send;

use std::pin::Pin;
use std::time::Duration;

use futures_util::Stream;
use reqwest::RequestBuilder;
use secrecy::{ExposeSecret, SecretString};
use serde::Serialize;

use super::LlmError;
use super::window::ContextWindows;
use super::wire::ChatCompletionChunk;
use crate::config::LlmConfig;

/// A stream of decoded chunks of one model turn.
pub type ChatStream = Pin<Box<dyn Stream<Item = Result<ChatCompletionChunk, LlmError>> + Send>>;

/// One model server.
#[derive(Clone)]
pub struct Upstream {
    /// One client per calling thread (`per_thread`).
    clients: per_thread::PerThread,
    base_url: String,
    /// `{base_url}/chat/completions`, read once: a URL given as text is parsed again on every
    /// request. `None` when it does not parse (each request then says why).
    chat_url: Option<reqwest::Url>,
    /// Where `/embeddings` goes: `llm.embedding_base_url`, else `base_url`.
    embedding_base_url: String,
    api_key: Option<SecretString>,
    embedding_model: String,
    retry: RetryPolicy,
    timeouts: Timeouts,
    windows: std::sync::Arc<ContextWindows>,
}

#[derive(Debug, Clone, Copy)]
struct RetryPolicy {
    max_retries: u32,
    initial_backoff: Duration,
    max_backoff: Duration,
    /// No retry starts after this long since the first attempt.
    deadline: Duration,
}

/// How long each part of an answer may take.
#[derive(Debug, Clone, Copy)]
struct Timeouts {
    first_byte: Duration,
    prompt_tokens_per_sec: u32,
    between_chunks: Duration,
}

impl Timeouts {
    /// The first byte's allowance for a request body of `body_bytes` (about four bytes a
    /// token).
    fn first_byte(&self, body_bytes: usize) -> Duration {
        let tokens = body_bytes as f64 / 4.0;
        let reading = tokens / f64::from(self.prompt_tokens_per_sec.max(1));
        self.first_byte + Duration::from_secs_f64(reading.min(86_400.0))
    }
}

impl RetryPolicy {
    /// Whether another attempt may follow attempt number `attempt`, `elapsed` after the first
    /// began: within `max_retries`, and with its backoff ending before the deadline.
    fn allows(&self, attempt: u32, elapsed: Duration, retry_after: Option<Duration>) -> bool {
        attempt < self.max_retries && elapsed + self.backoff(attempt, retry_after) < self.deadline
    }

    fn backoff(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let exponential = self.initial_backoff.saturating_mul(1 << attempt.min(16));
        retry_after.unwrap_or(exponential).min(self.max_backoff)
    }
}

impl Upstream {
    pub fn new(config: &LlmConfig) -> Result<Self, LlmError> {
        let clients = per_thread::PerThread::new(Duration::from_secs(config.connect_timeout_secs))
            .map_err(|err| LlmError::Connect(err.to_string()))?;
        let base_url = config.base_url.trim_end_matches('/').to_string();
        Ok(Self {
            clients,
            chat_url: reqwest::Url::parse(&format!("{base_url}/chat/completions")).ok(),
            base_url,
            embedding_base_url: config
                .embedding_base_url
                .as_deref()
                .unwrap_or(&config.base_url)
                .trim_end_matches('/')
                .to_string(),
            api_key: config.api_key.clone(),
            embedding_model: config.embedding_model.clone(),
            retry: RetryPolicy {
                max_retries: config.max_retries,
                initial_backoff: Duration::from_millis(config.retry_initial_backoff_ms),
                max_backoff: Duration::from_millis(config.retry_max_backoff_ms),
                deadline: Duration::from_secs(config.retry_deadline_secs),
            },
            timeouts: Timeouts {
                first_byte: Duration::from_secs(config.first_byte_timeout_secs),
                prompt_tokens_per_sec: config.prompt_tokens_per_sec,
                between_chunks: Duration::from_secs(config.read_timeout_secs),
            },
            windows: std::sync::Arc::new(ContextWindows::new(
                config.context_length,
                config.context_lengths.clone(),
            )),
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}/{}", self.base_url, path)
    }

    /// A POST of `body` to `chat/completions`.
    fn post_chat<T: Serialize + ?Sized>(&self, body: &T) -> (RequestBuilder, Duration) {
        match &self.chat_url {
            Some(url) => self.post(url.clone(), body),
            None => self.post(self.url("chat/completions"), body),
        }
    }

    /// A JSON POST, and the first-byte allowance for its size.
    fn post<T: Serialize + ?Sized>(
        &self,
        url: impl reqwest::IntoUrl,
        body: &T,
    ) -> (RequestBuilder, Duration) {
        let body = serde_json::to_vec(body).unwrap_or_default();
        let first_byte = self.timeouts.first_byte(body.len());
        let request = self
            .clients
            .here()
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        (self.authorize(request), first_byte)
    }

    fn authorize(&self, request: RequestBuilder) -> RequestBuilder {
        match &self.api_key {
            Some(key) => request.bearer_auth(key.expose_secret()),
            None => request,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_end_at_the_count_or_the_deadline_whichever_comes_first() {
        let policy = RetryPolicy {
            max_retries: 3,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
            deadline: Duration::from_secs(1),
        };
        assert!(policy.allows(0, Duration::ZERO, None));
        assert!(!policy.allows(3, Duration::ZERO, None), "the count");
        assert!(
            !policy.allows(0, Duration::from_millis(950), None),
            "the deadline"
        );
        assert!(
            !policy.allows(0, Duration::ZERO, Some(Duration::from_secs(5))),
            "a Retry-After past the deadline"
        );
    }

    #[test]
    fn the_first_byte_allowance_grows_with_the_prompt() {
        let timeouts = Timeouts {
            first_byte: Duration::from_secs(60),
            prompt_tokens_per_sec: 25,
            between_chunks: Duration::from_secs(60),
        };
        assert_eq!(timeouts.first_byte(0), Duration::from_secs(60));
        // 3,400 tokens at 25 a second: 136 s more.
        assert_eq!(timeouts.first_byte(13_600), Duration::from_secs(196));
    }

    #[test]
    fn backoff_doubles_and_respects_retry_after_up_to_the_cap() {
        let policy = RetryPolicy {
            max_retries: 3,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
            deadline: Duration::from_secs(5),
        };
        assert_eq!(policy.backoff(0, None), Duration::from_millis(100));
        assert_eq!(policy.backoff(2, None), Duration::from_millis(400));
        assert_eq!(policy.backoff(10, None), Duration::from_secs(2));
        assert_eq!(
            policy.backoff(0, Some(Duration::from_secs(1))),
            Duration::from_secs(1)
        );
        assert_eq!(
            policy.backoff(0, Some(Duration::from_secs(60))),
            Duration::from_secs(2)
        );
    }
}
