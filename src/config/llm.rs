//! The `[llm]` section: the OpenAI-compatible upstream (URL, key, models, context windows),
//! its timeouts and its retries.

use secrecy::SecretString;
use serde::Deserialize;

use super::lenient;

#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct LlmConfig {
    /// Base URL of the OpenAI-compatible upstream, ending in `/v1` (Ollama's by default).
    pub base_url: String,
    /// Bearer token for the upstream, if it needs one.
    #[serde(deserialize_with = "lenient::secret")]
    pub api_key: Option<SecretString>,
    /// Model used when a request names none.
    #[serde(deserialize_with = "lenient::string")]
    pub model: String,
    /// Model for the upstream `/embeddings` endpoint.
    #[serde(deserialize_with = "lenient::string")]
    pub embedding_model: String,
    /// Base URL for `/embeddings` when another server than the chat's serves them; `None`
    /// uses `base_url`. A single-slot llama-server evicts the chat's cached prompt at every
    /// embedding call, so give embeddings a server of their own there.
    pub embedding_base_url: Option<String>,
    /// The context window (in tokens) of every model, when set; overrides discovery.
    pub context_length: Option<u32>,
    /// Context windows by model name, for models the server does not describe. Without an
    /// entry, Colloquy asks the server (llama.cpp's `/props`, vLLM's `max_model_len` in
    /// `/v1/models`, Ollama's `/api/show`) and learns it from a context-overflow error.
    pub context_lengths: std::collections::HashMap<String, u32>,
    /// Seconds to establish a connection to the upstream.
    pub connect_timeout_secs: u64,
    /// Seconds an answer's first byte may take for a short prompt. Servers read the whole
    /// prompt before they send anything (llama-server sends its headers, then nothing), so the
    /// allowance grows with the prompt: see `prompt_tokens_per_sec`.
    pub first_byte_timeout_secs: u64,
    /// The slowest prompt reading Colloquy waits for, in tokens per second: a prompt of N
    /// tokens adds N / this to `first_byte_timeout_secs`.
    pub prompt_tokens_per_sec: u32,
    /// Seconds without a byte between the chunks of an answer before it fails (a server that
    /// froze mid-answer).
    pub read_timeout_secs: u64,
    /// Retries after the first attempt, on connection errors, 429 and 5xx before the first
    /// token. A request that timed out is not retried: the server accepted it and may still
    /// be working on it.
    pub max_retries: u32,
    /// Seconds after the first attempt when retrying stops, whatever `max_retries` allows.
    pub retry_deadline_secs: u64,
    /// First retry delay in milliseconds; doubled each retry.
    pub retry_initial_backoff_ms: u64,
    /// Longest delay between retries (and the most of a `Retry-After` we honour), in ms.
    pub retry_max_backoff_ms: u64,
    /// `[[llm.providers]]`: several model servers, routed to by model name; empty: the fields
    /// above are the one server.
    pub providers: Vec<super::ProviderConfig>,
}

impl Default for LlmConfig {
    fn default() -> Self {
        Self {
            base_url: "http://127.0.0.1:11434/v1".into(),
            api_key: None,
            model: "llama3.2".into(),
            embedding_model: "nomic-embed-text".into(),
            embedding_base_url: None,
            context_length: None,
            context_lengths: std::collections::HashMap::new(),
            connect_timeout_secs: 10,
            first_byte_timeout_secs: 60,
            prompt_tokens_per_sec: 25,
            read_timeout_secs: 60,
            max_retries: 3,
            retry_deadline_secs: 30,
            retry_initial_backoff_ms: 250,
            retry_max_backoff_ms: 10_000,
            providers: Vec::new(),
        }
    }
}
