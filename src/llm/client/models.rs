//! The upstream's model list, and embeddings with the configured embedding model (at
//! `llm.embedding_base_url` when set), in input order.

use super::Upstream;
use crate::llm::LlmError;
use crate::llm::wire::{EmbeddingRequest, EmbeddingResponse, ModelList};

impl Upstream {
    /// The upstream's model list, as it gives it.
    pub async fn models(&self) -> Result<ModelList, LlmError> {
        let builder = self.authorize(self.clients.here().get(self.url("models")));
        let (response, left) = self.send(&builder, self.timeouts.first_byte).await?;
        self.read_json_within(response, left).await
    }

    /// The model named in `/embeddings` requests.
    pub fn embedding_model(&self) -> &str {
        &self.embedding_model
    }

    /// Embeds `inputs` with the configured embedding model, in input order.
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
}
