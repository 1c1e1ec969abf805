//! Chat completions: one non-streaming answer, and a streamed one, retried until its first
//! chunk arrives (with the one-token probe that tells llama-cpp-python's empty 200 from a
//! context overflow), its bytes timed first and between chunks.

use std::time::Duration;

use futures_util::{Stream, StreamExt};
use reqwest::Response;

use super::{ChatStream, Upstream};
use crate::llm::LlmError;
use crate::llm::stream::decode_chunks;
use crate::llm::wire::{ChatCompletion, ChatRequest, StreamOptions};

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

impl Upstream {
    /// One non-streaming completion.
    pub async fn chat(&self, request: &ChatRequest) -> Result<ChatCompletion, LlmError> {
        let mut request = request.clone();
        request.stream = false;
        request.stream_options = None;
        let (builder, first_byte) = self.post_chat(&request);
        let (response, left) = self
            .send(&builder, first_byte)
            .await
            .map_err(|err| err.with_model(&request.model))?;
        self.read_json_within(response, left).await
    }

    /// A streaming completion. Retries happen until the first chunk arrives; after that the
    /// stream yields errors instead.
    pub async fn chat_stream(&self, request: &ChatRequest) -> Result<ChatStream, LlmError> {
        let mut request = request.clone();
        request.stream = true;
        request.stream_options = Some(StreamOptions {
            include_usage: true,
        });
        let (builder, first_byte) = self.post_chat(&request);
        let started = tokio::time::Instant::now();
        let mut attempt = 0;
        loop {
            let (response, left) = self
                .send(&builder, first_byte)
                .await
                .map_err(|err| err.with_model(&request.model))?;
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
}
