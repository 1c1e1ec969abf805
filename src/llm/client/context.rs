//! A model's context window: configured, remembered, learnt from an overflow error, or asked of
//! the server the ways llama.cpp, vLLM and Ollama answer.

use std::time::Duration;

use reqwest::RequestBuilder;

use super::Upstream;
use crate::llm::window::{self, Known};

/// How long asking a server for a model's context window may take.
const DESCRIBE_TIMEOUT: Duration = Duration::from_secs(5);

impl Upstream {
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

    /// The context window of `model` if it is already known (configured, or told earlier),
    /// without asking the server.
    pub fn known_context_length(&self, model: &str) -> Option<u32> {
        match self.windows.known(model) {
            Known::Size(size) => Some(size),
            Known::Unknown | Known::Ask => None,
        }
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
        if let Some(size) = ask(self.clients.here().get(format!("{root}/props")))
            .await
            .and_then(|props| window::from_props(&props))
        {
            return Some(size);
        }
        if let Some(size) = ask(self.clients.here().get(self.url("models")))
            .await
            .and_then(|list| window::from_model_list(&list, model))
        {
            return Some(size);
        }
        ask(self
            .clients
            .here()
            .post(format!("{root}/api/show"))
            .json(&serde_json::json!({ "model": model })))
        .await
        .and_then(|show| window::from_ollama_show(&show))
    }
}
