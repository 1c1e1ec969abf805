//! The `minilm` embedder: all-MiniLM-L6-v2 (a six-layer BERT) run on the CPU with candle.
//! Loads `model.safetensors`, `tokenizer.json` and, when present, `config.json` from one
//! directory. A text becomes the mean of its token vectors (over the attention mask), averaged
//! across 256-token windows when it is longer, then scaled to unit length.
//! It never downloads anything and never runs the model on an async worker thread.

use std::collections::HashMap;
use std::iter::repeat_n;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use tokenizers::models::wordpiece::WordPiece;
use tokenizers::normalizers::BertNormalizer;
use tokenizers::pre_tokenizers::bert::BertPreTokenizer;
use tokenizers::processors::bert::BertProcessing;
use tokenizers::{AddedToken, Tokenizer};

use super::{EmbedError, EmbedFuture, Embedder, normalize};

/// Why the model could not be loaded, written or run; the message says what and where.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct MiniLmError(String);

type Result<T, E = MiniLmError> = std::result::Result<T, E>;

impl From<candle_core::Error> for MiniLmError {
    fn from(err: candle_core::Error) -> Self {
        Self(err.to_string())
    }
}

impl From<serde_json::Error> for MiniLmError {
    fn from(err: serde_json::Error) -> Self {
        Self(err.to_string())
    }
}

impl From<std::io::Error> for MiniLmError {
    fn from(err: std::io::Error) -> Self {
        Self(err.to_string())
    }
}

/// A failure's cause, prefixed with what was being done.
trait Context<T> {
    fn with_context(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E: std::fmt::Display> Context<T> for std::result::Result<T, E> {
    fn with_context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|err| MiniLmError(format!("{}: {err}", what())))
    }
}

/// A `MiniLmError` with a formatted message.
macro_rules! fail {
    ($($arg:tt)*) => { MiniLmError(format!($($arg)*)) };
}

/// Returns a `MiniLmError` with a formatted message.
macro_rules! bail {
    ($($arg:tt)*) => { return Err(fail!($($arg)*)) };
}

const MODEL_FILE: &str = "model.safetensors";
const TOKENIZER_FILE: &str = "tokenizer.json";
const CONFIG_FILE: &str = "config.json";

/// all-MiniLM-L6-v2 was trained on at most 256 tokens; longer texts are split into windows of
/// this many tokens, [CLS] and [SEP] included.
const WINDOW_TOKENS: usize = 256;
/// Windows run through the model together. Bounds the attention scores held at once:
/// 16 windows × 12 heads × 256² f32 is about 50 MB for the real model.
const BATCH_WINDOWS: usize = 16;
/// The tensor that tells whether the weights sit under a `bert.` prefix (as in checkpoints saved
/// from `BertForMaskedLM`) or at the top level (as sentence-transformers publishes them).
const WORD_EMBEDDINGS: &str = "embeddings.word_embeddings.weight";

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

/// The network and its tokenizer: everything `embed` needs on the blocking pool.
struct Encoder {
    bert: BertModel,
    tokenizer: Tokenizer,
    cls: u32,
    sep: u32,
    pad: u32,
    /// Tokens per window, [CLS] and [SEP] included.
    window: usize,
    device: Device,
}

impl Encoder {
    fn load(dir: &Path, config: &Config) -> Result<Self> {
        let device = Device::Cpu;
        let model_path = dir.join(MODEL_FILE);
        let bytes = std::fs::read(&model_path)
            .with_context(|| format!("reading {}", model_path.display()))?;
        let weights = VarBuilder::from_buffered_safetensors(bytes, DType::F32, &device)
            .with_context(|| format!("{} is not a valid safetensors file", model_path.display()))?;
        let prefixed = format!("bert.{WORD_EMBEDDINGS}");
        let weights =
            if !weights.contains_tensor(WORD_EMBEDDINGS) && weights.contains_tensor(&prefixed) {
                weights.pp("bert")
            } else {
                weights
            };
        let bert = BertModel::load(weights, config).with_context(|| {
            format!(
                "{} does not hold a BERT with {} layers of hidden size {}",
                model_path.display(),
                config.num_hidden_layers,
                config.hidden_size
            )
        })?;

        let tokenizer_path = dir.join(TOKENIZER_FILE);
        let mut tokenizer = Tokenizer::from_file(&tokenizer_path)
            .map_err(|e| fail!("{} is not a valid tokenizer: {e}", tokenizer_path.display()))?;
        // The published tokenizer.json truncates at 128 tokens; windowing needs every token.
        tokenizer
            .with_truncation(None)
            .map_err(|e| fail!("{}: {e}", tokenizer_path.display()))?;
        tokenizer.with_padding(None);
        let special = |token: &str| {
            tokenizer
                .token_to_id(token)
                .ok_or_else(|| fail!("{} has no {token} token", tokenizer_path.display()))
        };
        let (cls, sep) = (special("[CLS]")?, special("[SEP]")?);
        let pad = tokenizer
            .token_to_id("[PAD]")
            .unwrap_or(config.pad_token_id as u32);
        let tokenizer_vocab = tokenizer.get_vocab_size(true);
        if tokenizer_vocab > config.vocab_size {
            bail!(
                "{} has {tokenizer_vocab} tokens but the model only {}",
                tokenizer_path.display(),
                config.vocab_size
            );
        }
        let window = WINDOW_TOKENS.min(config.max_position_embeddings);
        if window < 3 {
            bail!("max_position_embeddings {window} leaves no room for text");
        }
        Ok(Self {
            bert,
            tokenizer,
            cls,
            sep,
            pad,
            window,
            device,
        })
    }

    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let mut windows = Vec::new();
        let mut spans: Vec<Range<usize>> = Vec::with_capacity(texts.len());
        for text in texts {
            let text_windows = self.windows(text)?;
            spans.push(windows.len()..windows.len() + text_windows.len());
            windows.extend(text_windows);
        }
        let pooled = self.pool(&windows)?;
        Ok(spans
            .into_iter()
            .map(|span| normalized_mean(&pooled[span]))
            .collect())
    }

    /// The token ids of `text`, split into windows that each start with [CLS] and end with [SEP].
    fn windows(&self, text: &str) -> Result<Vec<Vec<u32>>> {
        let encoding = self
            .tokenizer
            .encode(text, false)
            .map_err(|e| fail!("tokenizing failed: {e}"))?;
        let ids = encoding.get_ids();
        let chunks: Vec<&[u32]> = if ids.is_empty() {
            vec![&[]]
        } else {
            ids.chunks(self.window - 2).collect()
        };
        Ok(chunks
            .into_iter()
            .map(|chunk| {
                let mut window = Vec::with_capacity(chunk.len() + 2);
                window.push(self.cls);
                window.extend_from_slice(chunk);
                window.push(self.sep);
                window
            })
            .collect())
    }

    /// The mean of each window's last hidden states (not normalised), in order.
    fn pool(&self, windows: &[Vec<u32>]) -> Result<Vec<Vec<f32>>> {
        // Windows of similar length share a batch, so little of it is padding.
        let mut order: Vec<usize> = (0..windows.len()).collect();
        order.sort_by_key(|&i| windows[i].len());
        let mut pooled = vec![Vec::new(); windows.len()];
        for batch in order.chunks(BATCH_WINDOWS) {
            let rows: Vec<&[u32]> = batch.iter().map(|&i| windows[i].as_slice()).collect();
            for (&i, vector) in batch.iter().zip(self.pool_batch(&rows)?) {
                pooled[i] = vector;
            }
        }
        Ok(pooled)
    }

    /// Runs one padded batch; the attention mask keeps padding out of attention and the mean.
    fn pool_batch(&self, rows: &[&[u32]]) -> Result<Vec<Vec<f32>>> {
        let len = rows.iter().map(|row| row.len()).max().unwrap_or(0);
        let mut ids = Vec::with_capacity(rows.len() * len);
        let mut mask = Vec::with_capacity(rows.len() * len);
        for row in rows {
            ids.extend_from_slice(row);
            ids.extend(repeat_n(self.pad, len - row.len()));
            mask.extend(repeat_n(1f32, row.len()));
            mask.extend(repeat_n(0f32, len - row.len()));
        }
        let shape = (rows.len(), len);
        let ids = Tensor::from_vec(ids, shape, &self.device)?;
        let mask = Tensor::from_vec(mask, shape, &self.device)?;
        let token_types = ids.zeros_like()?;
        let hidden = self.bert.forward(&ids, &token_types, Some(&mask))?;
        let summed = hidden.broadcast_mul(&mask.unsqueeze(2)?)?.sum(1)?;
        let counts = mask.sum_keepdim(1)?;
        Ok(summed.broadcast_div(&counts)?.to_vec2::<f32>()?)
    }
}

/// The mean of `vectors`, scaled to unit length.
fn normalized_mean(vectors: &[Vec<f32>]) -> Vec<f32> {
    let mut mean = vec![0.0f32; vectors.first().map_or(0, Vec::len)];
    for vector in vectors {
        for (sum, x) in mean.iter_mut().zip(vector) {
            *sum += x;
        }
    }
    let count = vectors.len().max(1) as f32;
    mean.iter_mut().for_each(|sum| *sum /= count);
    normalize(&mut mean);
    mean
}

/// Hidden size of the model `write_test_model` writes.
const TEST_HIDDEN: usize = 32;
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
fn write_test_model_files(dir: &Path, seed: u64, prefix: &str) -> Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn test_model(seed: u64) -> (tempfile::TempDir, MiniLm) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("tiny-minilm");
        write_test_model(&dir, seed).unwrap();
        let model = MiniLm::load(&dir).unwrap();
        (tmp, model)
    }

    fn texts(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|text| text.to_string()).collect()
    }

    fn length(v: &[f32]) -> f32 {
        v.iter().map(|x| x * x).sum::<f32>().sqrt()
    }

    fn max_difference(a: &[f32], b: &[f32]) -> f32 {
        assert_eq!(a.len(), b.len());
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f32::max)
    }

    #[test]
    fn the_test_model_embeds_texts_as_unit_vectors_of_its_hidden_size() {
        let (_tmp, model) = test_model(1);

        let vectors = model
            .embed_sync(&texts(&["The cat sat on the mat.", "", "Rust is fun!"]))
            .unwrap();

        assert_eq!(vectors.len(), 3);
        for vector in &vectors {
            assert_eq!(vector.len(), TEST_HIDDEN);
            assert!(
                (length(vector) - 1.0).abs() < 1e-5,
                "length {}",
                length(vector)
            );
        }
        assert_eq!(model.id(), "minilm:tiny-minilm");
    }

    #[test]
    fn the_same_text_embeds_identically_and_different_texts_differ() {
        let (_tmp, model) = test_model(2);

        let first = model.embed_sync(&texts(&["a dog chased the cat"])).unwrap();
        let again = model.embed_sync(&texts(&["a dog chased the cat"])).unwrap();
        let other = model
            .embed_sync(&texts(&["tomorrow it rains in paris"]))
            .unwrap();

        assert_eq!(first, again);
        assert!(max_difference(&first[0], &other[0]) > 1e-3);
    }

    #[test]
    fn a_batch_gives_each_text_the_vector_it_gets_alone() {
        let (_tmp, model) = test_model(3);
        let batch = texts(&[
            "short",
            "a somewhat longer sentence about dogs and cats",
            "x",
        ]);

        let together = model.embed_sync(&batch).unwrap();

        for (text, vector) in batch.iter().zip(&together) {
            let alone = model.embed_sync(std::slice::from_ref(text)).unwrap();
            assert!(max_difference(&alone[0], vector) < 1e-5, "{text}");
        }
    }

    #[test]
    fn a_long_text_is_the_normalised_mean_of_its_windows() {
        let (_tmp, model) = test_model(4);
        let text = "the quick brown fox jumps over the lazy dog. ".repeat(60);
        let encoder = &model.encoder;

        let windows = encoder.windows(&text).unwrap();
        let vector = model
            .embed_sync(std::slice::from_ref(&text))
            .unwrap()
            .remove(0);

        assert!(windows.len() >= 3, "{} windows", windows.len());
        for window in &windows {
            assert!(window.len() <= WINDOW_TOKENS);
            assert_eq!(window.first(), Some(&encoder.cls));
            assert_eq!(window.last(), Some(&encoder.sep));
        }
        let mut expected = vec![0.0f32; TEST_HIDDEN];
        for window in &windows {
            let pooled = encoder
                .pool(std::slice::from_ref(window))
                .unwrap()
                .remove(0);
            expected.iter_mut().zip(&pooled).for_each(|(e, x)| *e += x);
        }
        normalize(&mut expected);
        assert!(max_difference(&vector, &expected) < 1e-5);
    }

    #[test]
    fn weights_under_a_bert_prefix_load_as_the_same_model() {
        let tmp = tempfile::tempdir().unwrap();
        let (plain, prefixed) = (tmp.path().join("plain"), tmp.path().join("prefixed"));
        write_test_model_files(&plain, 5, "").unwrap();
        write_test_model_files(&prefixed, 5, "bert.").unwrap();
        let input = texts(&["hello world"]);

        let plain = MiniLm::load(&plain).unwrap().embed_sync(&input).unwrap();
        let prefixed = MiniLm::load(&prefixed).unwrap().embed_sync(&input).unwrap();

        assert_eq!(plain, prefixed);
    }

    #[test]
    fn the_test_model_depends_only_on_its_seed() {
        let tmp = tempfile::tempdir().unwrap();
        let read = |name: &str, seed: u64| {
            let dir = tmp.path().join(name);
            write_test_model(&dir, seed).unwrap();
            std::fs::read(dir.join(MODEL_FILE)).unwrap()
        };

        assert_eq!(read("a", 7), read("b", 7));
        assert_ne!(read("c", 7), read("d", 8));
    }

    #[test]
    fn a_missing_directory_or_file_is_named_in_the_error() {
        let tmp = tempfile::tempdir().unwrap();
        let absent = tmp.path().join("absent");
        let error = MiniLm::load(&absent).err().unwrap().to_string();
        assert!(error.contains("absent"), "{error}");

        let dir = tmp.path().join("model");
        write_test_model(&dir, 9).unwrap();
        std::fs::remove_file(dir.join(TOKENIZER_FILE)).unwrap();
        let error = MiniLm::load(&dir).err().unwrap().to_string();
        assert!(error.contains(TOKENIZER_FILE), "{error}");
    }

    #[test]
    fn a_corrupt_model_file_is_named_in_the_error() {
        let tmp = tempfile::tempdir().unwrap();
        write_test_model(tmp.path(), 10).unwrap();
        std::fs::write(tmp.path().join(MODEL_FILE), b"not safetensors").unwrap();

        let error = format!("{:#}", MiniLm::load(tmp.path()).err().unwrap());

        assert!(error.contains(MODEL_FILE), "{error}");
    }

    #[test]
    fn without_config_json_the_minilm_configuration_is_assumed() {
        let tmp = tempfile::tempdir().unwrap();

        let config = read_config(tmp.path()).unwrap();

        assert_eq!(config.vocab_size, 30522);
        assert_eq!(config.hidden_size, 384);
        assert_eq!(config.num_hidden_layers, 6);
        assert_eq!(config.num_attention_heads, 12);
        assert_eq!(config.intermediate_size, 1536);
        assert_eq!(config.max_position_embeddings, 512);
    }

    #[test]
    fn looks_like_model_needs_both_files() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(!looks_like_model(tmp.path()));
        assert!(!looks_like_model(&tmp.path().join("absent")));

        write_test_model(tmp.path(), 11).unwrap();
        assert!(looks_like_model(tmp.path()));

        std::fs::remove_file(tmp.path().join(MODEL_FILE)).unwrap();
        assert!(!looks_like_model(tmp.path()));
    }

    #[tokio::test]
    async fn embed_runs_on_the_blocking_pool_and_matches_embed_sync() {
        let (_tmp, model) = test_model(12);
        let input = texts(&["one text", "another text"]);

        let vectors = model.embed(input.clone()).await.unwrap();

        assert_eq!(vectors, model.embed_sync(&input).unwrap());
    }
}
