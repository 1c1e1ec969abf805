//! The `hash` embedder: no model files. Each lowercased word and each character trigram of a
//! word (with boundary marks, so "cat" gives "^ca", "cat", "at$") is hashed to one of `dim`
//! buckets with a hashed sign, weighted (whole words count more than their trigrams), and the
//! sum is L2-normalised. Texts sharing words or word pieces point the same way; it knows no
//! synonyms. Deterministic across processes and platforms (FNV-1a, not `std`'s random hasher).

use super::{EmbedFuture, Embedder, normalize};

/// Buckets in a hash vector.
pub const DEFAULT_DIM: usize = 384;
const WORD_WEIGHT: f32 = 1.0;
const TRIGRAM_WEIGHT: f32 = 0.35;

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
    pub fn embed_text(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0.0f32; self.dim];
        let mut word = String::new();
        for c in text.chars().chain(std::iter::once(' ')) {
            if c.is_alphanumeric() {
                word.extend(c.to_lowercase());
            } else if !word.is_empty() {
                self.add_word(&mut v, &word);
                word.clear();
            }
        }
        normalize(&mut v);
        v
    }

    fn add_word(&self, v: &mut [f32], word: &str) {
        self.add(v, fnv1a(0x77, word.as_bytes()), WORD_WEIGHT);
        let chars: Vec<char> = std::iter::once('^')
            .chain(word.chars())
            .chain(std::iter::once('$'))
            .collect();
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

    fn embed(&self, texts: Vec<String>) -> EmbedFuture {
        let vectors = texts.iter().map(|t| self.embed_text(t)).collect();
        Box::pin(async move { Ok(vectors) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::cosine;

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

    #[test]
    fn empty_text_is_the_zero_vector() {
        let e = HashEmbedder::new(16);
        assert!(e.embed_text("  ,. ").iter().all(|x| *x == 0.0));
    }
}
