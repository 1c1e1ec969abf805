//! `LlmClient`: HTTP to the upstream with timeouts that fit real servers — a connect timeout,
//! a first-byte allowance that grows with the prompt (servers read the whole prompt before
//! they send anything), and a timeout between chunks — and retries with exponential backoff
//! on connection errors, 429 and 5xx (honouring `Retry-After`) within a total deadline. A
//! request that timed out is never sent again (the server may still be working on it), and
//! nothing is retried once the first chunk of a stream has arrived.

use std::pin::Pin;
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use reqwest::header::{HeaderMap, RETRY_AFTER};
use reqwest::{RequestBuilder, Response};
use secrecy::{ExposeSecret, SecretString};
use serde::Serialize;

use super::LlmError;
use super::stream::decode_chunks;
use super::window::{self, ContextWindows, Known};
use super::wire::{
    ChatCompletion, ChatCompletionChunk, ChatRequest, EmbeddingRequest, EmbeddingResponse,
    ModelList, StreamOptions,
};
use crate::config::LlmConfig;

/// A stream of decoded chunks of one model turn.
pub type ChatStream = Pin<Box<dyn Stream<Item = Result<ChatCompletionChunk, LlmError>> + Send>>;

/// Longest error body we read from the upstream for a message.
const MAX_ERROR_BODY_CHARS: usize = 2_000;
/// How long asking a server for a model's context window may take.
const DESCRIBE_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Clone)]
pub struct LlmClient {
    http: reqwest::Client,
    base_url: String,
    /// Where `/embeddings` goes: `llm.embedding_base_url`, else `base_url`.
    embedding_base_url: String,
    api_key: Option<SecretString>,
    default_model: String,
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

/// An answer's bytes, failing with `TimedOut` when the first takes longer than `first` or a
/// later one longer than `between`.
fn timed_bytes(
    response: Response,
    first: Duration,
    between: Duration,
) -> impl Stream<Item = Result<bytes::Bytes, std::io::Error>> + Send + Unpin + 'static {
    let bytes = response.bytes_stream();
    Box::pin(futures_util::stream::unfold(
        (bytes, first, false),
        move |(mut bytes, wait, ended)| async move {
            if ended {
                return None;
            }
            match tokio::time::timeout(wait, bytes.next()).await {
                Ok(Some(Ok(chunk))) => Some((Ok(chunk), (bytes, between, false))),
                Ok(Some(Err(err))) => Some((
                    Err(std::io::Error::other(
                        LlmError::from_reqwest(&err).to_string(),
                    )),
                    (bytes, between, true),
                )),
                Ok(None) => None,
                Err(_) => Some((
                    Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!("the model server sent nothing for {} s", wait.as_secs()),
                    )),
                    (bytes, between, true),
                )),
            }
        },
    ))
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

impl LlmClient {
    pub fn new(config: &LlmConfig) -> Result<Self, LlmError> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(config.connect_timeout_secs))
            .pool_idle_timeout(Duration::from_secs(90))
            .build()
            .map_err(|err| LlmError::Connect(err.to_string()))?;
        Ok(Self {
            http,
            base_url: config.base_url.trim_end_matches('/').to_string(),
            embedding_base_url: config
                .embedding_base_url
                .as_deref()
                .unwrap_or(&config.base_url)
                .trim_end_matches('/')
                .to_string(),
            api_key: config.api_key.clone(),
            default_model: config.model.clone(),
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

    /// The model used when a request names none.
    pub fn default_model(&self) -> &str {
        &self.default_model
    }

    fn url(&self, path: &str) -> String {
        format!("{}/{}", self.base_url, path)
    }

    /// A JSON POST, and the first-byte allowance for its size.
    fn post<T: Serialize + ?Sized>(&self, url: &str, body: &T) -> (RequestBuilder, Duration) {
        let body = serde_json::to_vec(body).unwrap_or_default();
        let first_byte = self.timeouts.first_byte(body.len());
        let request = self
            .http
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

    /// One non-streaming completion.
    pub async fn chat(&self, request: &ChatRequest) -> Result<ChatCompletion, LlmError> {
        let mut request = request.clone();
        request.stream = false;
        request.stream_options = None;
        let (builder, first_byte) = self.post(&self.url("chat/completions"), &request);
        let (response, left) = self.send(&builder, first_byte).await?;
        self.read_json_within(response, left).await
    }

    /// The body of a non-streaming answer, within what is left of its first-byte allowance
    /// plus one chunk interval.
    async fn read_json_within<T: serde::de::DeserializeOwned>(
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

    /// A streaming completion. Retries happen until the first chunk arrives; after that the
    /// stream yields errors instead.
    pub async fn chat_stream(&self, request: &ChatRequest) -> Result<ChatStream, LlmError> {
        let mut request = request.clone();
        request.stream = true;
        request.stream_options = Some(StreamOptions {
            include_usage: true,
        });
        let (builder, first_byte) = self.post(&self.url("chat/completions"), &request);
        let started = tokio::time::Instant::now();
        let mut attempt = 0;
        loop {
            let (response, left) = self.send(&builder, first_byte).await?;
            let bytes = timed_bytes(response, left, self.timeouts.between_chunks);
            let mut chunks = Box::pin(decode_chunks(bytes));
            match chunks.next().await {
                Some(Ok(first)) => {
                    let rest = futures_util::stream::once(async move { Ok(first) }).chain(chunks);
                    return Ok(Box::pin(rest));
                }
                Some(Err(err)) => {
                    // llama-cpp-python answers a streaming request longer than its context
                    // with an empty 200; asked without streaming, it says the size (which
                    // may differ from what was known: the server may have restarted).
                    if attempt == 0
                        && matches!(err, LlmError::StreamTruncated(_))
                        && let Err(overflow @ LlmError::ContextOverflow { .. }) =
                            self.probe_fit(&request).await
                    {
                        return Err(overflow);
                    }
                    // The server answered, but with nothing usable (llama-cpp-python's empty
                    // 200 on a template error): it is not working on it any more, so try
                    // again.
                    if !(err.is_retryable() && self.retry.allows(attempt, started.elapsed(), None))
                    {
                        return Err(err);
                    }
                    tracing::warn!(%err, attempt, "upstream stream failed before its first chunk; retrying");
                    tokio::time::sleep(self.retry.backoff(attempt, None)).await;
                    attempt += 1;
                }
                None => return Ok(Box::pin(futures_util::stream::empty())),
            }
        }
    }

    /// Asks for one token without streaming, to learn whether `request` fits the model's
    /// context (an overflow is then a 400 that says the size).
    async fn probe_fit(&self, request: &ChatRequest) -> Result<(), LlmError> {
        let mut probe = request.clone();
        probe.max_tokens = Some(1);
        self.chat(&probe).await.map(drop)
    }

    /// The context window of `model` in tokens, if it is configured or the server says it;
    /// `None` when nothing tells (requests are then sent as they are).
    pub async fn context_length(&self, model: &str) -> Option<u32> {
        match self.windows.known(model) {
            Known::Size(size) => return Some(size),
            Known::Unknown => return None,
            Known::Ask => {}
        }
        let found = self.describe_context_length(model).await;
        tracing::info!(model, context_length = ?found, "asked the model server for the context window");
        self.windows.learn(model, found);
        found
    }

    /// Remembers a window an overflow error revealed.
    pub fn learn_context_length(&self, model: &str, size: u32) {
        self.windows.learn(model, Some(size));
    }

    /// Asks the server, the ways llama.cpp, vLLM and Ollama answer, each briefly.
    async fn describe_context_length(&self, model: &str) -> Option<u32> {
        let root = self
            .base_url
            .strip_suffix("/v1")
            .unwrap_or(&self.base_url)
            .to_string();
        let ask = |request: RequestBuilder| async move {
            let response = self
                .authorize(request.timeout(DESCRIBE_TIMEOUT))
                .send()
                .await
                .ok()
                .filter(|r| r.status().is_success())?;
            response.json::<serde_json::Value>().await.ok()
        };
        if let Some(size) = ask(self.http.get(format!("{root}/props")))
            .await
            .and_then(|props| window::from_props(&props))
        {
            return Some(size);
        }
        if let Some(size) = ask(self.http.get(self.url("models")))
            .await
            .and_then(|list| window::from_model_list(&list, model))
        {
            return Some(size);
        }
        ask(self
            .http
            .post(format!("{root}/api/show"))
            .json(&serde_json::json!({ "model": model })))
        .await
        .and_then(|show| window::from_ollama_show(&show))
    }

    /// The upstream's model list, as it gives it.
    pub async fn models(&self) -> Result<ModelList, LlmError> {
        let builder = self.authorize(self.http.get(self.url("models")));
        let (response, left) = self.send(&builder, self.timeouts.first_byte).await?;
        self.read_json_within(response, left).await
    }

    /// Embeds `inputs` with the configured embedding model, in input order.
    /// The model named in `/embeddings` requests.
    pub fn embedding_model(&self) -> &str {
        &self.embedding_model
    }

    pub async fn embeddings(&self, inputs: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        if inputs.is_empty() {
            return Ok(Vec::new());
        }
        let body = EmbeddingRequest {
            model: &self.embedding_model,
            input: inputs,
        };
        let url = format!("{}/embeddings", self.embedding_base_url);
        let (builder, first_byte) = self.post(&url, &body);
        let (response, left) = self.send(&builder, first_byte).await?;
        let mut parsed: EmbeddingResponse = self.read_json_within(response, left).await?;
        if parsed.data.len() != inputs.len() {
            return Err(LlmError::InvalidResponse(format!(
                "asked for {} embeddings, got {}",
                inputs.len(),
                parsed.data.len()
            )));
        }
        parsed.data.sort_by_key(|e| e.index);
        parsed
            .data
            .into_iter()
            .map(|e| e.embedding.pooled())
            .collect()
    }

    /// Sends a request, retrying connection failures, 429 and 5xx with backoff until the
    /// retry deadline. Returns the first successful response with what is left of its
    /// `first_byte` allowance (for the body's first bytes), or the last failure as a typed
    /// error. Headers that take longer than the allowance are a timeout, never retried.
    async fn send(
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
    LlmError::Status { status, message }
}

async fn read_json<T: serde::de::DeserializeOwned>(response: Response) -> Result<T, LlmError> {
    let bytes = response
        .bytes()
        .await
        .map_err(|err| LlmError::from_reqwest(&err))?;
    serde_json::from_slice(&bytes).map_err(|err| LlmError::InvalidResponse(err.to_string()))
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
