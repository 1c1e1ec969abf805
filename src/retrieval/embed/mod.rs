//! Embedders: text → unit-length vectors, compared by cosine similarity (a dot product).
//! Three providers behind one trait, chosen in configuration (`memory.embedder`):
//! - `openai`: the upstream server's `/embeddings` (Ollama, vLLM, TEI and OpenAI serve it);
//! - `minilm`: all-MiniLM-L6-v2 run on the CPU with candle (`minilm/`);
//! - `hash`:   built in, no model files: feature hashing (`hash.rs`).
//!
//! Every stored vector records the `id()` of the embedder that made it; vectors from different
//! embedders are never compared (see `memory` for the background re-embedding).

pub mod hash;
pub mod minilm;
pub mod openai;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::future::BoxFuture;

use crate::config::{Config, EmbedderKind};
use crate::llm::LlmClient;

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("embedding model failed: {0}")]
    Model(String),
    /// Names the embedder and what went wrong.
    #[error("{0}")]
    Upstream(String),
    /// The configuration names no embedder that can be built (an unknown one, a missing
    /// or unreadable model).
    #[error("{0}")]
    Config(String),
}

pub type EmbedFuture = BoxFuture<'static, Result<Vec<Vec<f32>>, EmbedError>>;

/// Turns texts into L2-normalised vectors, one per text, in order.
pub trait Embedder: Send + Sync + 'static {
    /// Names the embedder and its model; recorded with every vector it makes.
    fn id(&self) -> &str;
    /// Embeds a batch. CPU-bound providers run on the blocking pool, never on the caller.
    fn embed(&self, texts: Vec<String>) -> EmbedFuture;
    /// How much a hybrid search should trust this embedder's cosine similarity against BM25,
    /// in [0, 1] (the vector leg's share of the fused score): a model of meaning as much as
    /// words (`index::DEFAULT_VECTOR_WEIGHT`), unless the embedder knows it sees less.
    fn vector_weight(&self) -> f32 {
        crate::retrieval::index::DEFAULT_VECTOR_WEIGHT
    }
    /// How `save_memory` finds that a new memory repeats an existing one with this embedder
    /// (`memory.duplicate_threshold` overrides the threshold). Each embedder's scale differs,
    /// so each has its own, measured on labelled pairs (`eval::duplicates`).
    fn duplicate_check(&self) -> DuplicateCheck {
        DuplicateCheck::DEFAULT
    }
}

/// When a new memory counts as a near-duplicate of an existing one: its cosine similarity
/// reaches `threshold` and, read word by word (`same_fact`), it brings nothing new, reworded
/// words counting when they are `synonyms` alike.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DuplicateCheck {
    pub threshold: f32,
    pub synonyms: f32,
}

impl DuplicateCheck {
    /// For an embedder not measured here (an upstream's model): cautious, so that a distinct
    /// fact is seldom refused.
    pub const DEFAULT: Self = Self {
        threshold: 0.9,
        synonyms: 0.9,
    };
}

pub type SharedEmbedder = Arc<dyn Embedder>;

/// Embeds one text.
pub async fn embed_one(embedder: &dyn Embedder, text: &str) -> Result<Vec<f32>, EmbedError> {
    embedder
        .embed(vec![text.to_string()])
        .await?
        .pop()
        .ok_or_else(|| EmbedError::Model("no vector returned".into()))
}

/// Cosine similarity of two vectors (0 when either is zero or their lengths differ).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

/// Scales `v` to unit length in place; `false` (and `v` unchanged) for a zero or non-finite
/// vector, which has no direction.
pub fn normalize(v: &mut [f32]) -> bool {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 && norm.is_finite() {
        v.iter_mut().for_each(|x| *x /= norm);
        true
    } else {
        false
    }
}

/// A vector as stored in a blob column: little-endian f32s.
pub fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The inverse of `to_blob`; `None` for a blob that is not a whole number of f32s.
pub fn from_blob(bytes: &[u8]) -> Option<Vec<f32>> {
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    Some(
        bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

/// Where a MiniLM model is looked for when none is configured.
pub fn default_minilm_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("models").join("all-MiniLM-L6-v2")
}

/// The embedder the configuration asks for. With none named: `minilm` when a model directory
/// is configured or found in the data directory, else `hash`. Logs which is in use.
pub fn from_config(config: &Config, llm: &LlmClient) -> Result<SharedEmbedder, EmbedError> {
    let memory = &config.memory;
    let minilm_dir = memory.minilm_dir.clone().or_else(|| {
        Some(default_minilm_dir(&config.data_dir)).filter(|d| minilm::looks_like_model(d))
    });
    let choice = match memory.embedder {
        Some(kind) => kind,
        None if minilm_dir.is_some() => EmbedderKind::MiniLm,
        None => EmbedderKind::Hash,
    };
    let embedder: SharedEmbedder = match choice {
        EmbedderKind::Hash => Arc::new(hash::HashEmbedder::default()),
        EmbedderKind::OpenAi => Arc::new(openai::OpenAiEmbedder::new(llm.clone())),
        EmbedderKind::MiniLm => {
            let dir = minilm_dir.ok_or_else(|| {
                EmbedError::Config(format!(
                    "memory.embedder is minilm but no model directory is configured \
                     (memory.minilm_dir) or present at {}",
                    default_minilm_dir(&config.data_dir).display()
                ))
            })?;
            Arc::new(minilm::MiniLm::load(&dir).map_err(|err| EmbedError::Config(err.to_string()))?)
        }
    };
    tracing::info!(embedder = embedder.id(), "embedder in use");
    Ok(embedder)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_of_parallel_orthogonal_and_zero_vectors() {
        assert!((cosine(&[1.0, 2.0], &[2.0, 4.0]) - 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[1.0, 0.0], &[0.0, 1.0]), 0.0);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 1.0]), 0.0);
        assert_eq!(cosine(&[1.0], &[1.0, 0.0]), 0.0);
    }

    #[test]
    fn blobs_round_trip_and_reject_ragged_bytes() {
        let v = vec![0.5, -1.25, 3.0];
        assert_eq!(from_blob(&to_blob(&v)).unwrap(), v);
        assert!(from_blob(&[1, 2, 3]).is_none());
    }
}
