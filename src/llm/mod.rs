//! The upstream model client: OpenAI-compatible chat completions (streaming and not, with
//! tools; reasoning kept apart from the answer), model listing and embeddings, strictly on the
//! wire format that Ollama, vLLM, llama.cpp's server and OpenAI share. It knows nothing of
//! chats, runs or tools' meaning.
//!
//! By concern: `router` (`LlmClient`: the model servers, a request routed by its model), `client`
//! (`Upstream`, one server: sending, retries, context windows), `wire` (the wire
//! types), `stream` (SSE decoding, tool-call fragments, `TurnAccumulator`), `reasoning`
//! (`ThinkSplitter`), `window` (what each model's context window is), `error` (`LlmError`) and
//! `images` (the image server of `[images]`).

mod client;
mod error;
pub mod images;
mod reasoning;
mod router;
mod stream;
mod window;
pub mod wire;

pub use client::ChatStream;
pub use error::LlmError;
pub use reasoning::{Split, ThinkSplitter};
pub use router::{CatalogueEntry, LlmClient, ProviderStatus};
pub use stream::{AssistantTurn, TurnAccumulator};
