//! Splitting extracted text into overlapping windows of cl100k_base tokens (seed 002: 1024
//! tokens, 128 shared with the next window) so each chunk fits an embedder and a prompt.
//! Plain Rust on the calling thread; embedding and indexing the chunks are not done here.
//!
//! Long texts are encoded piece by piece, cut only where cl100k_base's own pre-tokenizer
//! cuts, so the tokens are those of the whole text; a run of more than `MAX_UNBROKEN_BYTES`
//! without such a place (a base64 blob, a line of digits) is cut anyway, which keeps the
//! byte-pair merge (quadratic in a piece's length) from stalling on hostile input.

use tiktoken_rs::{CoreBPE, Rank};

/// Tokens in a chunk (seed 002).
pub const CHUNK_TOKENS: usize = 1024;
/// Tokens a chunk shares with the next one, so a sentence cut by a boundary is whole in one
/// of them (seed 002).
pub const OVERLAP_TOKENS: usize = 128;
/// Bytes encoded in one call once a safe cut is found: large enough that per-call overhead
/// vanishes, small enough to keep the encoder's working set in cache.
const SEGMENT_BYTES: usize = 8 * 1024;
/// Longest run without a safe cut before one is forced.
const MAX_UNBROKEN_BYTES: usize = 256;

/// One window of a document's tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// Position among the document's chunks, from 0.
    pub index: usize,
    /// The window's text. A character split between two tokens at either edge is left out
    /// (the neighbouring chunk, which overlaps, holds it whole).
    pub text: String,
    /// Tokens in the window: `chunk_tokens` except in the last chunk.
    pub token_count: usize,
}

/// Cuts texts into token windows. Build one and reuse it; the tokenizer is loaded once per
/// process.
#[derive(Clone, Copy)]
pub struct Chunker {
    bpe: &'static CoreBPE,
    chunk_tokens: usize,
    overlap_tokens: usize,
}

impl Default for Chunker {
    fn default() -> Self {
        Self::new(CHUNK_TOKENS, OVERLAP_TOKENS)
    }
}

impl Chunker {
    /// A chunker making windows of `chunk_tokens` tokens (at least 1) that overlap by
    /// `overlap_tokens` (at most `chunk_tokens - 1`, so every window moves forward).
    pub fn new(chunk_tokens: usize, overlap_tokens: usize) -> Self {
        let chunk_tokens = chunk_tokens.max(1);
        Self {
            // The crate keeps cl100k_base in a `LazyLock`: the first call parses its ranks
            // (about 100k entries, a fraction of a second), later calls return the same one.
            bpe: tiktoken_rs::cl100k_base_singleton(),
            chunk_tokens,
            overlap_tokens: overlap_tokens.min(chunk_tokens - 1),
        }
    }

    /// The text's chunks, in order; none for an empty text.
    pub fn chunk(&self, text: &str) -> Vec<Chunk> {
        let tokens = self.encode(text);
        let step = self.chunk_tokens - self.overlap_tokens;
        let mut chunks = Vec::with_capacity(tokens.len().div_ceil(step));
        let mut start = 0;
        while start < tokens.len() {
            let end = (start + self.chunk_tokens).min(tokens.len());
            let window = &tokens[start..end];
            chunks.push(Chunk {
                index: chunks.len(),
                text: self.decode_window(window),
                token_count: window.len(),
            });
            if end == tokens.len() {
                break;
            }
            start += step;
        }
        chunks
    }

    /// The cl100k_base tokens of a text, special-token markers included as plain text.
    pub fn encode(&self, text: &str) -> Vec<Rank> {
        let mut tokens = Vec::with_capacity(text.len() / 4 + 1);
        for segment in segments(text) {
            tokens.extend(self.bpe.encode_ordinary(segment));
        }
        tokens
    }

    /// The text of a window of tokens, without the partial characters at its edges.
    fn decode_window(&self, window: &[Rank]) -> String {
        // unwrap_or_default: every id came from this encoder, so every id decodes.
        let bytes = self.bpe.decode_bytes(window).unwrap_or_default();
        let start = bytes
            .iter()
            .take(3)
            .take_while(|b| is_continuation(**b))
            .count();
        let bytes = &bytes[start..];
        match std::str::from_utf8(bytes) {
            Ok(text) => text.to_string(),
            // Only the tail is cut short: keep what precedes it.
            Err(err) if err.error_len().is_none() => {
                String::from_utf8_lossy(&bytes[..err.valid_up_to()]).into_owned()
            }
            Err(_) => String::from_utf8_lossy(bytes).into_owned(),
        }
    }
}

fn is_continuation(byte: u8) -> bool {
    byte & 0b1100_0000 == 0b1000_0000
}

/// Splits a text into pieces whose encodings, concatenated, are the text's encoding.
///
/// cl100k_base's pre-tokenizer always cuts before a space that follows a visible ASCII
/// character and precedes an ASCII letter (the word and its leading space are one piece), and
/// its patterns only look ahead, never behind, across such a cut; so cutting there changes
/// nothing. Past `MAX_UNBROKEN_BYTES` without such a place a cut is forced on any character
/// boundary, which may change a token or two there.
fn segments(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut last_cut = 0;
    let mut i = 1;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            let at = i;
            i += 1;
            let safe = bytes[at] == b' '
                && bytes[at - 1].is_ascii_graphic()
                && bytes.get(at + 1).is_some_and(u8::is_ascii_alphabetic);
            let forced = !safe && at - last_cut >= MAX_UNBROKEN_BYTES && text.is_char_boundary(at);
            if safe || forced {
                last_cut = at;
                if forced || at - start >= SEGMENT_BYTES {
                    let segment = &text[start..at];
                    start = at;
                    return Some(segment);
                }
            }
        }
        (start < bytes.len()).then(|| {
            let segment = &text[start..];
            start = bytes.len();
            segment
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic prose with punctuation, numbers, newlines and some non-ASCII words.
    fn prose(words: usize) -> String {
        const WORDS: &[&str] = &[
            "the",
            "system",
            "uses",
            "a",
            "three-tier",
            "architecture,",
            "with",
            "load",
            "balancer",
            "and",
            "database",
            "cluster.",
            "Café",
            "naïve",
            "über",
            "42",
            "x=3;",
            "(see",
            "note)",
            "日本語",
            "テキスト",
            "🦀",
            "shards",
            "\n\n",
            "don't",
            "it's",
        ];
        let mut state: u64 = 7;
        let mut out = String::new();
        for _ in 0..words {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let word = WORDS[(state >> 33) as usize % WORDS.len()];
            if !out.is_empty() && !out.ends_with('\n') {
                out.push(' ');
            }
            out.push_str(word);
        }
        out
    }

    #[test]
    fn segmented_encoding_equals_whole_encoding() {
        let chunker = Chunker::default();
        let text = prose(20_000);
        assert!(segments(&text).count() > 5);
        assert_eq!(chunker.encode(&text), chunker.bpe.encode_ordinary(&text));
    }

    #[test]
    fn full_chunks_have_1024_tokens_and_neighbours_share_128() {
        let chunker = Chunker::default();
        let text = prose(5_000);
        let tokens = chunker.encode(&text);
        let chunks = chunker.chunk(&text);
        assert!(chunks.len() >= 3, "{} chunks", chunks.len());

        let step = CHUNK_TOKENS - OVERLAP_TOKENS;
        for (i, chunk) in chunks.iter().enumerate() {
            assert_eq!(chunk.index, i);
            let start = i * step;
            let window = &tokens[start..(start + CHUNK_TOKENS).min(tokens.len())];
            assert_eq!(chunk.token_count, window.len());
            assert_eq!(chunk.text, chunker.decode_window(window));
        }
        for chunk in &chunks[..chunks.len() - 1] {
            assert_eq!(chunk.token_count, CHUNK_TOKENS);
        }
        let last = chunks.last().unwrap();
        assert!(last.token_count < CHUNK_TOKENS);
        // The windows cover the text: the last one ends at the last token.
        assert_eq!((chunks.len() - 1) * step + last.token_count, tokens.len());
        // Neighbours share exactly OVERLAP_TOKENS token ids: the tail of one is the head of
        // the next.
        for pair in chunks.windows(2) {
            let first_start = pair[0].index * step;
            let tail = &tokens[first_start + step..first_start + CHUNK_TOKENS];
            let next_head = &tokens[(pair[1].index * step)..][..OVERLAP_TOKENS];
            assert_eq!(tail.len(), OVERLAP_TOKENS);
            assert_eq!(tail, next_head);
        }
    }

    #[test]
    fn chunk_text_re_encodes_to_about_its_token_count() {
        let chunker = Chunker::default();
        let text = prose(3_000);
        for chunk in chunker.chunk(&text) {
            let re_encoded = chunker.encode(&chunk.text).len();
            // Edges may tokenize differently once cut out of their context.
            assert!(re_encoded.abs_diff(chunk.token_count) <= 4, "{re_encoded}");
        }
    }

    #[test]
    fn a_small_text_is_one_chunk_and_an_empty_one_none() {
        let chunker = Chunker::default();
        let chunks = chunker.chunk("A short note about sharding.");
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].text, "A short note about sharding.");
        assert_eq!(
            chunks[0].token_count,
            chunker.encode("A short note about sharding.").len()
        );
        assert!(chunker.chunk("").is_empty());
    }

    #[test]
    fn unicode_survives_and_split_characters_are_dropped_not_mangled() {
        let chunker = Chunker::default();
        let text = "日本語のテキスト 🦀🦀 Ünïcödé ".repeat(20);
        let whole = chunker.chunk(&text);
        assert_eq!(whole.len(), 1);
        assert_eq!(whole[0].text, text);
        // Tiny windows cut through multi-token characters: no replacement characters appear,
        // and every chunk's text is a piece of the original.
        let tiny = Chunker::new(5, 2);
        for chunk in tiny.chunk(&text) {
            assert!(!chunk.text.contains('\u{fffd}'), "{:?}", chunk.text);
            assert!(text.contains(&chunk.text), "{:?}", chunk.text);
        }
    }

    #[test]
    fn long_unbroken_runs_are_cut_and_still_cover_the_text() {
        let chunker = Chunker::default();
        let blob = "QUJDRE".repeat(20_000);
        let chunks = chunker.chunk(&blob);
        assert!(chunks.len() > 1);
        let step = CHUNK_TOKENS - OVERLAP_TOKENS;
        let tokens = chunker.encode(&blob);
        assert_eq!(
            (chunks.len() - 1) * step + chunks.last().unwrap().token_count,
            tokens.len()
        );
        assert!(segments(&blob).all(|s| s.len() <= MAX_UNBROKEN_BYTES));
    }

    #[test]
    fn odd_settings_are_clamped_so_windows_advance() {
        let chunker = Chunker::new(0, 10);
        let chunks = chunker.chunk("one two three");
        assert_eq!(chunks.iter().map(|c| c.token_count).sum::<usize>(), 3);
    }
}
