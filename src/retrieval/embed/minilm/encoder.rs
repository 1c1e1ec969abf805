//! The network and its tokenizer: a text's token ids split into windows of at most
//! `WINDOW_TOKENS`, run through the BERT in batches of windows of similar length (from every
//! text of a call, on every core), mean-pooled over the attention mask, and averaged across
//! windows, each weighing as many tokens as it holds, to one unit vector.

use std::iter::repeat_n;
use std::ops::Range;
use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::Tokenizer;

use super::error::{Context, MiniLmError, Result};
use super::{MODEL_FILE, TOKENIZER_FILE};
use crate::retrieval::embed::normalize;

/// all-MiniLM-L6-v2 was trained on at most 256 tokens; longer texts are split into windows of
/// this many tokens, [CLS] and [SEP] included.
pub(super) const WINDOW_TOKENS: usize = 256;
/// Windows run through the model together. Bounds the attention scores held at once:
/// 16 windows × 12 heads × 256² f32 is about 50 MB for the real model.
const BATCH_WINDOWS: usize = 16;
/// A window joins a batch only if it is at least this share of the batch's longest, so
/// padding is at most a quarter of a batch's work (a 40-token leftover never pays for 256).
const MIN_BATCH_FILL: f32 = 0.75;
/// The tensor that tells whether the weights sit under a `bert.` prefix (as in checkpoints saved
/// from `BertForMaskedLM`) or at the top level (as sentence-transformers publishes them).
const WORD_EMBEDDINGS: &str = "embeddings.word_embeddings.weight";

/// The network and its tokenizer: everything `embed` needs on the blocking pool.
pub(super) struct Encoder {
    bert: BertModel,
    tokenizer: Tokenizer,
    pub(super) cls: u32,
    pub(super) sep: u32,
    pad: u32,
    /// Tokens per window, [CLS] and [SEP] included.
    window: usize,
    device: Device,
}

impl Encoder {
    pub(super) fn load(dir: &Path, config: &Config) -> Result<Self> {
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

    pub(super) fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
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
            .map(|span| weighted_mean(&pooled[span.clone()], &windows[span]))
            .collect())
    }

    /// The token ids of `text`, split into windows that each start with [CLS] and end with [SEP].
    pub(super) fn windows(&self, text: &str) -> Result<Vec<Vec<u32>>> {
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

    /// The mean of each window's last hidden states (not normalised), in order. Windows are
    /// batched by length (`batches`), and the batches shared among the cores: each thread
    /// takes the next batch until none is left.
    pub(super) fn pool(&self, windows: &[Vec<u32>]) -> Result<Vec<Vec<f32>>> {
        let batches = batches(windows);
        let threads = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .min(batches.len())
            .max(1);
        let next = std::sync::atomic::AtomicUsize::new(0);
        let work = || -> Result<Pooled> {
            let mut done = Vec::new();
            loop {
                let at = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(batch) = batches.get(at) else {
                    return Ok(done);
                };
                let rows: Vec<&[u32]> = batch.iter().map(|&i| windows[i].as_slice()).collect();
                done.extend(batch.iter().copied().zip(self.pool_batch(&rows)?));
            }
        };
        let results: Vec<Result<Pooled>> = if threads == 1 {
            vec![work()]
        } else {
            std::thread::scope(|scope| {
                let handles: Vec<_> = (0..threads).map(|_| scope.spawn(work)).collect();
                handles
                    .into_iter()
                    .map(|handle| {
                        handle
                            .join()
                            .unwrap_or_else(|_| Err(fail!("an embedding thread panicked")))
                    })
                    .collect()
            })
        };
        let mut pooled = vec![Vec::new(); windows.len()];
        for result in results {
            for (i, vector) in result? {
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

/// Windows' numbers and their pooled vectors.
type Pooled = Vec<(usize, Vec<f32>)>;

/// Window numbers in batches: longest first, at most `BATCH_WINDOWS` each, and a window
/// joins a batch only if it fills at least `MIN_BATCH_FILL` of the batch's longest.
fn batches(windows: &[Vec<u32>]) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..windows.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(windows[i].len()));
    let mut batches: Vec<Vec<usize>> = Vec::new();
    let mut longest = 0;
    for i in order {
        let len = windows[i].len();
        match batches.last_mut() {
            Some(batch)
                if batch.len() < BATCH_WINDOWS && len as f32 >= longest as f32 * MIN_BATCH_FILL =>
            {
                batch.push(i);
            }
            _ => {
                longest = len;
                batches.push(vec![i]);
            }
        }
    }
    batches
}

/// The mean of `vectors`, each weighing its window's token count, scaled to unit length: a
/// text is the mean of its tokens' vectors, whichever window saw them, and a short leftover
/// window counts for what it holds rather than as much as a full one.
fn weighted_mean(vectors: &[Vec<f32>], windows: &[Vec<u32>]) -> Vec<f32> {
    let mut mean = vec![0.0f32; vectors.first().map_or(0, Vec::len)];
    for (vector, window) in vectors.iter().zip(windows) {
        let weight = window.len() as f32;
        for (sum, x) in mean.iter_mut().zip(vector) {
            *sum += weight * x;
        }
    }
    normalize(&mut mean);
    mean
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_hold_windows_of_similar_length_longest_first() {
        let windows: Vec<Vec<u32>> = [256, 40, 250, 200, 190, 39, 30, 256]
            .iter()
            .map(|&len| vec![1; len])
            .collect();
        let grouped = batches(&windows);
        let lengths: Vec<Vec<usize>> = grouped
            .iter()
            .map(|batch| batch.iter().map(|&i| windows[i].len()).collect())
            .collect();
        assert_eq!(
            lengths,
            [vec![256, 256, 250, 200], vec![190], vec![40, 39, 30]]
        );
        // Every window once.
        let mut all: Vec<usize> = grouped.concat();
        all.sort_unstable();
        assert_eq!(all, (0..windows.len()).collect::<Vec<_>>());
        // At most BATCH_WINDOWS a batch.
        let many = vec![vec![1u32; 10]; BATCH_WINDOWS * 2 + 1];
        assert_eq!(
            batches(&many).iter().map(Vec::len).collect::<Vec<_>>(),
            [BATCH_WINDOWS, BATCH_WINDOWS, 1]
        );
    }
}
