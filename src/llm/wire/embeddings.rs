//! `POST {base}/embeddings`: the request, and the response's vectors, which may come pooled or
//! (llama-server without `--pooling`) one per token, then mean-pooled here.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Serialize)]
pub struct EmbeddingRequest<'a> {
    pub model: &'a str,
    pub input: &'a [String],
}

/// One input's embedding: a vector, or (llama-server without `--pooling`) one vector per token.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "Value")]
pub enum EmbeddingVectors {
    Pooled(Vec<f32>),
    PerToken(Vec<Vec<f32>>),
}

impl TryFrom<Value> for EmbeddingVectors {
    type Error = String;

    /// Says what the server sent instead of a vector, so the fix is plain.
    fn try_from(value: Value) -> Result<Self, Self::Error> {
        let numbers = |items: &[Value]| -> Option<Vec<f32>> {
            items.iter().map(|v| v.as_f64().map(|n| n as f32)).collect()
        };
        let items = match &value {
            Value::Array(items) => items,
            Value::Null => return Err("an embedding is null, not a list of numbers".into()),
            Value::Bool(_) => return Err("an embedding is a boolean, not a list of numbers".into()),
            Value::Number(_) => {
                return Err("an embedding is a number, not a list of numbers".into());
            }
            Value::String(text) => {
                let shown: String = text.chars().take(40).collect();
                return Err(format!(
                    "an embedding is the string {shown:?}, not a list of numbers (base64 \
                     encoding is not supported)"
                ));
            }
            Value::Object(_) => {
                return Err("an embedding is an object, not a list of numbers".into());
            }
        };
        if let Some(vector) = numbers(items) {
            return Ok(Self::Pooled(vector));
        }
        let tokens: Option<Vec<Vec<f32>>> = items
            .iter()
            .map(|token| token.as_array().and_then(|t| numbers(t)))
            .collect();
        tokens.map(Self::PerToken).ok_or_else(|| {
            "an embedding is neither a list of numbers nor a list of per-token lists; \
             start llama-server with --pooling mean"
                .into()
        })
    }
}

impl EmbeddingVectors {
    /// The input's vector: per-token vectors are mean-pooled, as `--pooling mean` would.
    pub fn pooled(self) -> Result<Vec<f32>, crate::llm::LlmError> {
        let tokens = match self {
            Self::Pooled(vector) => return Ok(vector),
            Self::PerToken(tokens) => tokens,
        };
        let width = tokens.first().map_or(0, Vec::len);
        if width == 0 || tokens.iter().any(|t| t.len() != width) {
            return Err(crate::llm::LlmError::InvalidResponse(
                "the embedding server returned per-token vectors of uneven or no length; \
                 start llama-server with --pooling mean"
                    .into(),
            ));
        }
        let mut mean = vec![0.0f32; width];
        for token in &tokens {
            for (sum, value) in mean.iter_mut().zip(token) {
                *sum += value;
            }
        }
        let count = tokens.len() as f32;
        mean.iter_mut().for_each(|sum| *sum /= count);
        Ok(mean)
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct EmbeddingResponse {
    pub data: Vec<Embedding>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Embedding {
    #[serde(default)]
    pub index: usize,
    pub embedding: EmbeddingVectors,
}
