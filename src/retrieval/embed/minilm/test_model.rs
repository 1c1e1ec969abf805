//! `write_test_model`: a tiny randomly initialised BERT with a WordPiece tokenizer, laid out
//! like a real MiniLM directory, the same for the same seed; for tests here and elsewhere.

use std::collections::HashMap;
use std::path::Path;

use candle_core::{Device, Tensor};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;
use tokenizers::models::wordpiece::WordPiece;
use tokenizers::normalizers::BertNormalizer;
use tokenizers::pre_tokenizers::bert::BertPreTokenizer;
use tokenizers::processors::bert::BertProcessing;
use tokenizers::{AddedToken, Tokenizer};

use super::error::{Context, MiniLmError, Result};
use super::{CONFIG_FILE, MODEL_FILE, TOKENIZER_FILE};

/// Hidden size of the model `write_test_model` writes.
pub(super) const TEST_HIDDEN: usize = 32;
const TEST_LAYERS: usize = 2;
const TEST_HEADS: usize = 2;
const TEST_INTERMEDIATE: usize = 64;
/// As in the real model, so windows of 256 tokens fit.
const TEST_MAX_POSITION: usize = 512;
/// The test model's WordPiece vocabulary besides single letters and `##` letters: with those,
/// every lowercase ASCII word tokenizes without [UNK].
const TEST_WORDS: &[&str] = &[
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9",
    ".", ",", "!", "?", "'", "-", ":", ";", "(", ")", "the", "and", "of", "to", "in", "is", "it",
    "that", "was", "for", "on", "with", "as", "be", "at", "by", "this", "have", "from", "or", "an",
    "not", "are", "cat", "dog", "chat", "rust", "##s", "##ing", "##ed", "##er", "##ly", "##es",
    "##tion",
];

/// Writes a tiny randomly initialised BERT (hidden size 32, 2 layers) with a WordPiece tokenizer
/// to `dir`, laid out like a real MiniLM directory. The same seed writes the same model.
#[doc(hidden)]
pub fn write_test_model(dir: &Path, seed: u64) -> Result<()> {
    write_test_model_files(dir, seed, "")
}

/// `write_test_model` with every tensor name under `prefix` (e.g. `"bert."`).
pub(super) fn write_test_model_files(dir: &Path, seed: u64, prefix: &str) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let letters = ('a'..='z').map(String::from);
    let pieces = ('a'..='z').map(|c| format!("##{c}"));
    let vocab: Vec<String> = TEST_WORDS
        .iter()
        .map(|word| word.to_string())
        .chain(letters)
        .chain(pieces)
        .collect();

    let config = json!({
        "vocab_size": vocab.len(),
        "hidden_size": TEST_HIDDEN,
        "num_hidden_layers": TEST_LAYERS,
        "num_attention_heads": TEST_HEADS,
        "intermediate_size": TEST_INTERMEDIATE,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "max_position_embeddings": TEST_MAX_POSITION,
        "type_vocab_size": 2,
        "initializer_range": 0.02,
        "layer_norm_eps": 1e-12,
        "pad_token_id": 0,
        "model_type": "bert",
    });
    std::fs::write(
        dir.join(CONFIG_FILE),
        serde_json::to_string_pretty(&config)?,
    )?;
    write_test_tokenizer(&dir.join(TOKENIZER_FILE), &vocab)?;

    let mut weights = TestWeights {
        rng: StdRng::seed_from_u64(seed),
        prefix,
        tensors: HashMap::new(),
    };
    let (hidden, inner) = (TEST_HIDDEN, TEST_INTERMEDIATE);
    weights.random(
        "embeddings.word_embeddings.weight",
        &[vocab.len(), hidden],
        0.5,
    )?;
    weights.random(
        "embeddings.position_embeddings.weight",
        &[TEST_MAX_POSITION, hidden],
        0.5,
    )?;
    weights.random("embeddings.token_type_embeddings.weight", &[2, hidden], 0.5)?;
    weights.layer_norm("embeddings.LayerNorm", hidden)?;
    for layer in 0..TEST_LAYERS {
        let at = |name: &str| format!("encoder.layer.{layer}.{name}");
        for part in ["query", "key", "value"] {
            weights.linear(&at(&format!("attention.self.{part}")), hidden, hidden)?;
        }
        weights.linear(&at("attention.output.dense"), hidden, hidden)?;
        weights.layer_norm(&at("attention.output.LayerNorm"), hidden)?;
        weights.linear(&at("intermediate.dense"), hidden, inner)?;
        weights.linear(&at("output.dense"), inner, hidden)?;
        weights.layer_norm(&at("output.LayerNorm"), hidden)?;
    }
    candle_core::safetensors::save(&weights.tensors, dir.join(MODEL_FILE))?;
    Ok(())
}

/// A BERT WordPiece tokenizer over `vocab`: lowercasing normaliser, BERT pre-tokenizer, and
/// [CLS] … [SEP] around every encoding.
fn write_test_tokenizer(path: &Path, vocab: &[String]) -> Result<()> {
    let ids = WordPiece::read_bytes(vocab.join("\n").as_bytes())
        .map_err(|e| fail!("test vocabulary: {e}"))?;
    let id = |token: &str| -> Result<u32> {
        let index = vocab.iter().position(|entry| entry == token);
        Ok(index.ok_or_else(|| fail!("test vocabulary lacks {token}"))? as u32)
    };
    let model = WordPiece::builder()
        .vocab(ids)
        .unk_token("[UNK]".into())
        .continuing_subword_prefix("##".into())
        .max_input_chars_per_word(100)
        .build()
        .map_err(|e| fail!("test WordPiece model: {e}"))?;
    let mut tokenizer = Tokenizer::new(model);
    tokenizer
        .with_normalizer(Some(BertNormalizer::default()))
        .map_err(|e| fail!("test normaliser: {e}"))?;
    tokenizer.with_pre_tokenizer(Some(BertPreTokenizer));
    tokenizer.with_post_processor(Some(BertProcessing::new(
        ("[SEP]".into(), id("[SEP]")?),
        ("[CLS]".into(), id("[CLS]")?),
    )));
    tokenizer
        .add_special_tokens(
            ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
                .map(|token| AddedToken::from(token, true)),
        )
        .map_err(|e| fail!("test special tokens: {e}"))?;
    tokenizer
        .save(path, true)
        .map_err(|e| fail!("writing {}: {e}", path.display()))
}

/// Collects the test model's tensors, drawn from one seeded generator in a fixed order.
struct TestWeights<'a> {
    rng: StdRng,
    prefix: &'a str,
    tensors: HashMap<String, Tensor>,
}

impl TestWeights<'_> {
    fn insert(&mut self, name: &str, values: Vec<f32>, shape: &[usize]) -> Result<()> {
        let tensor = Tensor::from_vec(values, shape, &Device::Cpu)?;
        self.tensors
            .insert(format!("{}{name}", self.prefix), tensor);
        Ok(())
    }

    /// Uniform in `[-scale, scale)`.
    fn random(&mut self, name: &str, shape: &[usize], scale: f32) -> Result<()> {
        let count = shape.iter().product();
        let values = (0..count)
            .map(|_| self.rng.gen_range(-scale..scale))
            .collect();
        self.insert(name, values, shape)
    }

    /// A `Linear` from `inputs` to `outputs`, initialised like PyTorch's default.
    fn linear(&mut self, name: &str, inputs: usize, outputs: usize) -> Result<()> {
        let scale = 1.0 / (inputs as f32).sqrt();
        self.random(&format!("{name}.weight"), &[outputs, inputs], scale)?;
        self.random(&format!("{name}.bias"), &[outputs], scale)
    }

    /// The identity layer norm: weight one, bias zero.
    fn layer_norm(&mut self, name: &str, size: usize) -> Result<()> {
        self.insert(&format!("{name}.weight"), vec![1.0; size], &[size])?;
        self.insert(&format!("{name}.bias"), vec![0.0; size], &[size])
    }
}
