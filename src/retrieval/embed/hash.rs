//! The `hash` embedder: no model files. Each lowercased word and each character trigram of a
//! word (with boundary marks, so "cat" gives "^ca", "cat", "at$") is hashed to one of `dim`
//! buckets with a hashed sign, weighted (whole words count more than their trigrams), and the
//! sum is L2-normalised. Texts sharing words or word pieces point the same way; it knows no
//! synonyms. Deterministic across processes and platforms (FNV-1a, not `std`'s random hasher).

use super::{DuplicateCheck, EmbedError, EmbedFuture, Embedder, normalize};

/// Buckets in a hash vector.
pub const DEFAULT_DIM: usize = 384;
const WORD_WEIGHT: f32 = 1.0;
const TRIGRAM_WEIGHT: f32 = 0.35;
/// Its say in a hybrid search. It knows no meaning, only shared words and word pieces, which
/// BM25 weighs better (rare words count more); what it adds is a little fuzziness for
/// misspellings and word forms the stemmer misses, so it only breaks near-ties of BM25.
pub const VECTOR_WEIGHT: f32 = 0.2;

pub struct HashEmbedder {
    dim: usize,
    id: String,
}

impl Default for HashEmbedder {
    fn default() -> Self {
        Self::new(DEFAULT_DIM)
    }
}

impl HashEmbedder {
    pub fn new(dim: usize) -> Self {
        assert!(dim > 0, "hash embedder dimension must be positive");
        Self {
            dim,
            id: format!("hash-v1-{dim}"),
        }
    }

    /// One text's vector, on the calling thread.
    ///
    /// Runs over bytes: ASCII letters and digits (nearly all of most documents) take a path
    /// with no decoding and no allocation per word; other characters go through Unicode's
    /// rules. Either way the same words and trigrams are added in the same order.
    pub fn embed_text(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0.0f32; self.dim];
        // The current word between boundary marks: `^` + lowercased word (+ `$` when added).
        let mut word = vec![b'^'];
        let mut ascii = true;
        let bytes = text.as_bytes();
        let mut at = 0;
        while at < bytes.len() {
            let b = bytes[at];
            if b.is_ascii() {
                at += 1;
                if b.is_ascii_alphanumeric() {
                    word.push(b.to_ascii_lowercase());
                    continue;
                }
            } else {
                // `at` is on a character boundary of a `str`, with bytes left.
                let Some(c) = text[at..].chars().next() else {
                    break;
                };
                at += c.len_utf8();
                if c.is_alphanumeric() {
                    let mut buf = [0u8; 4];
                    for lower in c.to_lowercase() {
                        word.extend_from_slice(lower.encode_utf8(&mut buf).as_bytes());
                    }
                    ascii &= c.is_ascii();
                    continue;
                }
            }
            self.end_word(&mut v, &mut word, &mut ascii);
        }
        self.end_word(&mut v, &mut word, &mut ascii);
        normalize(&mut v);
        v
    }

    /// Adds the word in `word` (if any) and starts the next one.
    fn end_word(&self, v: &mut [f32], word: &mut Vec<u8>, ascii: &mut bool) {
        if word.len() > 1 {
            self.add(v, fnv1a(0x77, &word[1..]), WORD_WEIGHT);
            word.push(b'$');
            if *ascii {
                for gram in word.windows(3) {
                    self.add(v, fnv1a(0x33, gram), TRIGRAM_WEIGHT);
                }
            } else {
                // Trigrams of characters, not bytes (only whole characters were added).
                if let Ok(marked) = std::str::from_utf8(word) {
                    self.add_char_trigrams(v, marked);
                }
            }
        }
        word.truncate(1);
        *ascii = true;
    }

    fn add_char_trigrams(&self, v: &mut [f32], marked: &str) {
        let chars: Vec<char> = marked.chars().collect();
        let mut buf = [0u8; 12];
        for gram in chars.windows(3) {
            let mut len = 0;
            for c in gram {
                len += c.encode_utf8(&mut buf[len..]).len();
            }
            self.add(v, fnv1a(0x33, &buf[..len]), TRIGRAM_WEIGHT);
        }
    }

    fn add(&self, v: &mut [f32], hash: u64, weight: f32) {
        let bucket = (hash % self.dim as u64) as usize;
        let sign = if hash >> 63 == 0 { 1.0 } else { -1.0 };
        v[bucket] += sign * weight;
    }
}

/// FNV-1a, seeded so words and trigrams land in independent buckets.
/// Text hashed on the caller's thread (see `embed`).
const EMBED_INLINE_BYTES: usize = 2048;

fn fnv1a(seed: u8, bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325 ^ u64::from(seed);
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    // FNV's high bits mix poorly; fold them down before the sign and bucket are taken.
    hash ^ (hash >> 29)
}

impl Embedder for HashEmbedder {
    fn id(&self) -> &str {
        &self.id
    }

    /// Hashing is CPU work that grows with the texts (up to megabytes from `/v1/embeddings`
    /// or an upload's chunks): on the blocking pool, as the trait asks, never the caller's
    /// thread — except a few kilobytes (a question to recall memories by), hashed in less
    /// time than the hop to the pool and back takes.
    fn embed(&self, texts: Vec<String>) -> EmbedFuture {
        if texts.iter().map(String::len).sum::<usize>() <= EMBED_INLINE_BYTES {
            let vectors = texts.iter().map(|t| self.embed_text(t)).collect();
            return Box::pin(std::future::ready(Ok(vectors)));
        }
        let embedder = Self {
            dim: self.dim,
            id: self.id.clone(),
        };
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                texts
                    .iter()
                    .map(|t| embedder.embed_text(t))
                    .collect::<Vec<_>>()
            })
            .await
            .map_err(|err| EmbedError::Model(format!("the hash embedder failed: {err}")))
        })
    }

    fn vector_weight(&self) -> f32 {
        VECTOR_WEIGHT
    }

    /// Measured on `tests/data/memory-duplicates/` (`colloquy eval-duplicates`): precision
    /// 1.0, recall 0.368. Hashed word pieces know no synonyms, so only words spelled nearly
    /// alike count as the same (0.9).
    fn duplicate_check(&self) -> DuplicateCheck {
        DuplicateCheck {
            threshold: 0.6,
            synonyms: 0.9,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieval::embed::cosine;

    /// The trait's contract: hashing megabytes leaves the caller's thread to its other work
    /// (a task ticking on the same single-threaded runtime keeps ticking).
    #[tokio::test]
    async fn embedding_runs_on_the_blocking_pool_and_the_callers_thread_stays_free() {
        use std::time::{Duration, Instant};
        let e = HashEmbedder::default();
        let texts: Vec<String> = (0..128)
            .map(|i| {
                format!(
                    "text {i} {}",
                    "words to hash many times over ".repeat(2_000)
                )
            })
            .collect();
        let started = Instant::now();
        let expected: Vec<Vec<f32>> = texts.iter().map(|t| e.embed_text(t)).collect();
        let alone = started.elapsed();
        assert!(alone > Duration::from_millis(100), "{alone:?}");

        let ticks = std::sync::Arc::new(std::sync::Mutex::new(vec![Instant::now()]));
        let recorded = ticks.clone();
        let other = tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(5)).await;
                recorded.lock().unwrap().push(Instant::now());
            }
        });
        let vectors = e.embed(texts).await.unwrap();
        other.abort();
        let ticks = ticks.lock().unwrap();
        let longest_wait = ticks
            .windows(2)
            .map(|pair| pair[1] - pair[0])
            .max()
            .unwrap_or_default();
        assert!(ticks.len() > 2);
        assert!(
            longest_wait < alone / 2,
            "the caller's thread waited {longest_wait:?}; hashing takes {alone:?}"
        );
        assert_eq!(vectors, expected);
    }

    #[test]
    fn vectors_are_unit_length_and_deterministic() {
        let e = HashEmbedder::default();
        let a = e.embed_text("The user prefers TypeScript with strict mode");
        let norm: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5);
        assert_eq!(
            a,
            e.embed_text("The user prefers TypeScript with strict mode")
        );
        assert_eq!(a.len(), DEFAULT_DIM);
    }

    #[test]
    fn case_and_punctuation_do_not_matter_but_words_do() {
        let e = HashEmbedder::default();
        let a = e.embed_text("User prefers TypeScript, strict mode!");
        let b = e.embed_text("user prefers typescript strict mode");
        assert!(cosine(&a, &b) > 0.999);
        let related = e.embed_text("Which language does the user prefer? TypeScript?");
        let unrelated = e.embed_text("The deadline for the quarterly report is Friday");
        assert!(cosine(&a, &related) > cosine(&a, &unrelated) + 0.2);
    }

    /// The definition, one character at a time: what the byte-wise `embed_text` must equal.
    fn reference(e: &HashEmbedder, text: &str) -> Vec<f32> {
        let mut v = vec![0.0f32; e.dim];
        let mut word = String::new();
        for c in text.chars().chain(std::iter::once(' ')) {
            if c.is_alphanumeric() {
                word.extend(c.to_lowercase());
            } else if !word.is_empty() {
                e.add(&mut v, fnv1a(0x77, word.as_bytes()), WORD_WEIGHT);
                e.add_char_trigrams(&mut v, &format!("^{word}$"));
                word.clear();
            }
        }
        normalize(&mut v);
        v
    }

    #[test]
    fn the_fast_path_equals_the_definition() {
        let e = HashEmbedder::default();
        for text in [
            "",
            "a",
            "Plain ASCII words, digits 42 and x1 -- punctuation!",
            "Café naïve ÉCOLE İstanbul straße ﬁne 東京 2024年 emoji 🚀 end",
            "mixedÄscii wordsß at the end é",
            "tab\tnew\nline\r\u{0}zero",
        ] {
            assert_eq!(e.embed_text(text), reference(&e, text), "{text:?}");
        }
    }

    #[test]
    fn empty_text_is_the_zero_vector() {
        let e = HashEmbedder::new(16);
        assert!(e.embed_text("  ,. ").iter().all(|x| *x == 0.0));
    }
}
