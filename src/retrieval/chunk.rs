//! Splitting extracted text into overlapping windows of cl100k_base tokens
//! (docs/spec.md#processing: 1024 tokens, 128 shared with the next window) so each chunk fits an
//! embedder and a prompt. Plain Rust on the calling thread; embedding and indexing the chunks are
//! not done here.
//!
//! Tokens come from `tokens::encode`: tiktoken's own, found several times faster, with
//! overlong runs (base64, digits) cut so hostile input cannot stall the byte-pair merge.

use tiktoken_rs::{CoreBPE, Rank};

use super::tokens;

/// Tokens in a chunk (docs/spec.md#processing).
pub const CHUNK_TOKENS: usize = 1024;
/// Tokens a chunk shares with the next one, so a sentence cut by a boundary is whole in one
/// of them (docs/spec.md#processing).
pub const OVERLAP_TOKENS: usize = 128;

/// One window of a document's tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// Position among the document's chunks, from 0.
    pub index: usize,
    /// The window's text. A character split between two tokens at either edge is left out
    /// (the neighbouring chunk, which overlaps, holds it whole).
    pub text: String,
    /// Where `text` starts in the document's text, in bytes (what its headings are read by).
    pub start: usize,
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
        let ends = tokens::encode(self.bpe, text).ends;
        let step = self.chunk_tokens - self.overlap_tokens;
        let mut chunks = Vec::with_capacity(ends.len().div_ceil(step));
        let mut start = 0;
        while start < ends.len() {
            let end = (start + self.chunk_tokens).min(ends.len());
            let from = if start == 0 { 0 } else { ends[start - 1] };
            let (begins, window) = whole_characters(text, from, ends[end - 1]);
            chunks.push(Chunk {
                index: chunks.len(),
                text: window.to_string(),
                start: begins,
                token_count: end - start,
            });
            if end == ends.len() {
                break;
            }
            start += step;
        }
        chunks
    }

    /// The cl100k_base tokens of a text, special-token markers included as plain text.
    pub fn encode(&self, text: &str) -> Vec<Rank> {
        tokens::encode(self.bpe, text).ids
    }
}

/// The characters wholly inside `text[from..to]`, and where they start: a token may end inside
/// a character that takes several tokens.
fn whole_characters(text: &str, mut from: usize, mut to: usize) -> (usize, &str) {
    while from < to && !text.is_char_boundary(from) {
        from += 1;
    }
    while to > from && !text.is_char_boundary(to) {
        to -= 1;
    }
    if !text.is_char_boundary(from) {
        // The whole window lies inside one character (found by the property test below).
        return (from, "");
    }
    (from, &text[from..to])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieval::tokens::{MAX_UNBROKEN_BYTES, segments};

    /// A window's text by decoding its token ids, partial characters at the edges dropped.
    fn decode_window(chunker: &Chunker, window: &[Rank]) -> String {
        let bytes = chunker.bpe.decode_bytes(window).unwrap();
        let start = bytes.iter().take_while(|b| **b & 0xC0 == 0x80).count();
        let bytes = &bytes[start..];
        match std::str::from_utf8(bytes) {
            Ok(text) => text.to_string(),
            Err(err) => {
                assert!(err.error_len().is_none(), "only the tail may be cut short");
                std::str::from_utf8(&bytes[..err.valid_up_to()])
                    .unwrap()
                    .to_string()
            }
        }
    }

    /// Deterministic prose with punctuation, numbers, newlines and some non-ASCII words.
    fn prose(words: usize) -> String {
        // Split on spaces; "¶" stands for a paragraph break.
        const WORDS: &str = "the system uses a three-tier architecture, with load balancer and \
            database cluster. Café naïve über 42 x=3; (see note) 日本語 テキスト 🦀 shards ¶ \
            don't it's";
        let vocabulary: Vec<&str> = WORDS
            .split_whitespace()
            .map(|w| if w == "¶" { "\n\n" } else { w })
            .collect();
        let mut state: u64 = 7;
        let mut out = String::new();
        for _ in 0..words {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let word = vocabulary[(state >> 33) as usize % vocabulary.len()];
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
            assert_eq!(chunk.text, decode_window(&chunker, window));
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
        let ids = tiny.encode(&text);
        for chunk in tiny.chunk(&text) {
            assert!(!chunk.text.contains('\u{fffd}'), "{:?}", chunk.text);
            assert!(text.contains(&chunk.text), "{:?}", chunk.text);
            let start = chunk.index * 3;
            let window = &ids[start..(start + 5).min(ids.len())];
            assert_eq!(chunk.text, decode_window(&tiny, window));
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

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// Any text, however odd (control characters, lone combining marks, huge unbroken
        /// runs), is cut into windows of whole characters that move forward and cover it.
        #[test]
        fn any_text_is_chunked_into_whole_characters_that_cover_it(
            text in "(\\PC|\\p{M}|[\\x00-\\x1f]| {1,40}|a{1,300}|\\u{1F600}){0,400}",
            chunk_tokens in 1usize..64,
            overlap in 0usize..64,
        ) {
            let chunker = Chunker::new(chunk_tokens, overlap);
            let chunks = chunker.chunk(&text);
            proptest::prop_assert_eq!(chunks.is_empty(), chunker.encode(&text).is_empty());
            for (i, chunk) in chunks.iter().enumerate() {
                proptest::prop_assert_eq!(chunk.index, i);
                proptest::prop_assert!(chunk.token_count <= chunk_tokens);
                proptest::prop_assert!(text.contains(chunk.text.as_str()));
            }
            if let Some(last) = chunks.last() {
                proptest::prop_assert!(text.ends_with(last.text.as_str()));
            }
        }
    }
}
