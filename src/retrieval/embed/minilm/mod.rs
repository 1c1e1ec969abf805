//! The `minilm` embedder: all-MiniLM-L6-v2 (a six-layer BERT) run on the CPU with candle.
//! Loads `model.safetensors`, `tokenizer.json` and, when present, `config.json` from one
//! directory. A text becomes the mean of its token vectors (over the attention mask), averaged
//! across 256-token windows when it is longer, then scaled to unit length.
//! It never downloads anything and never runs the model on an async worker thread.
//!
//! Here: `MiniLm` (loading a model directory, the `Embedder`) and its configuration. Beside it:
//! `error` (`MiniLmError` and the `fail!`/`bail!` helpers), `encoder` (tokenizing into windows,
//! running the network, pooling) and `test_model` (`write_test_model`, a tiny random model for
//! tests).

// First, so that its `fail!` and `bail!` reach the modules below.
#[macro_use]
mod error;
mod encoder;
mod test_model;

#[cfg(test)]
mod tests;

use std::path::Path;
use std::sync::Arc;

use candle_transformers::models::bert::Config;
use serde_json::{Value, json};

use super::{DuplicateCheck, EmbedError, EmbedFuture, Embedder};
use encoder::Encoder;
use error::{Context, Result};

pub use error::MiniLmError;
pub use test_model::write_test_model;

const MODEL_FILE: &str = "model.safetensors";
const TOKENIZER_FILE: &str = "tokenizer.json";
const CONFIG_FILE: &str = "config.json";

/// Whether `dir` holds `model.safetensors` and `tokenizer.json`.
pub fn looks_like_model(dir: &Path) -> bool {
    dir.join(MODEL_FILE).is_file() && dir.join(TOKENIZER_FILE).is_file()
}

/// all-MiniLM-L6-v2 loaded from a model directory; cheap to share, the network sits in an `Arc`.
pub struct MiniLm {
    id: String,
    encoder: Arc<Encoder>,
}

impl MiniLm {
    /// Loads the model in `dir`; the error names the file that is missing or unreadable.
    pub fn load(dir: &Path) -> Result<Self> {
        if !dir.is_dir() {
            bail!("minilm model directory {} does not exist", dir.display());
        }
        for file in [MODEL_FILE, TOKENIZER_FILE] {
            let path = dir.join(file);
            if !path.is_file() {
                bail!(
                    "{} is missing: a minilm model directory needs {MODEL_FILE} and {TOKENIZER_FILE}",
                    path.display()
                );
            }
        }
        let config = read_config(dir)?;
        let encoder = Encoder::load(dir, &config)?;
        let name = dir
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| dir.display().to_string());
        Ok(Self {
            id: format!("minilm:{name}"),
            encoder: Arc::new(encoder),
        })
    }

    /// Embeds `texts` on the calling thread: one unit vector per text, in order.
    pub fn embed_sync(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        self.encoder.embed(texts)
    }
}

impl Embedder for MiniLm {
    fn id(&self) -> &str {
        &self.id
    }

    fn embed(&self, texts: Vec<String>) -> EmbedFuture {
        let encoder = Arc::clone(&self.encoder);
        Box::pin(async move {
            tokio::task::spawn_blocking(move || encoder.embed(&texts))
                .await
                .map_err(|e| EmbedError::Model(format!("minilm task failed: {e}")))?
                .map_err(|e| EmbedError::Model(format!("{e:#}")))
        })
    }

    /// Measured on `tests/data/memory-duplicates/` (`colloquy eval-duplicates`): precision
    /// 0.983, recall 0.456. A sentence similarity of 0.6 lets the word-by-word reading judge
    /// most rewordings; reworded words must be 0.75 alike ("kid" / "child": 0.81).
    fn duplicate_check(&self) -> DuplicateCheck {
        DuplicateCheck {
            threshold: 0.6,
            synonyms: 0.75,
        }
    }
}

/// The all-MiniLM-L6-v2 configuration, overlaid by the keys of `config.json` when there is one.
fn read_config(dir: &Path) -> Result<Config> {
    let mut config = json!({
        "vocab_size": 30522,
        "hidden_size": 384,
        "num_hidden_layers": 6,
        "num_attention_heads": 12,
        "intermediate_size": 1536,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "max_position_embeddings": 512,
        "type_vocab_size": 2,
        "initializer_range": 0.02,
        "layer_norm_eps": 1e-12,
        "pad_token_id": 0,
        "model_type": "bert",
    });
    let path = dir.join(CONFIG_FILE);
    if path.is_file() {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let file: Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not valid JSON", path.display()))?;
        let (Value::Object(base), Value::Object(file)) = (&mut config, file) else {
            bail!("{} is not a JSON object", path.display());
        };
        // A null (e.g. `classifier_dropout`) means "not set": keep the default.
        base.extend(file.into_iter().filter(|(_, value)| !value.is_null()));
    }
    serde_json::from_value(config)
        .with_context(|| format!("{} is not a BERT configuration", path.display()))
}
