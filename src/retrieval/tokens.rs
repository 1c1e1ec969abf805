//! cl100k_base token ids for long texts, fast. `tiktoken-rs` splits text into pieces with a
//! backtracking regex (a few MB/s) and then byte-pair-merges each piece. Here the text is cut
//! into segments at places where the regex cuts anyway; a segment of common characters
//! (ASCII, Latin letters, Greek, Cyrillic, typographic punctuation) is split into the same
//! pieces by a hand-written scanner, and each piece's tokens come from a per-thread cache
//! (words repeat) or, once, from `tiktoken-rs`. Any other segment goes to `tiktoken-rs`
//! whole. The result equals `encode_ordinary` of each segment (see the tests).

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use tiktoken_rs::{CoreBPE, Rank};

/// Bytes encoded together once a safe cut is found.
const SEGMENT_BYTES: usize = 8 * 1024;
/// Longest run without a safe cut before one is forced: caps the length of a piece, since the
/// byte-pair merge is quadratic in it (a megabyte of base64 would otherwise stall it).
pub(crate) const MAX_UNBROKEN_BYTES: usize = 256;
/// Pieces remembered per thread before the cache starts over: a few MB at most.
const MAX_CACHED_PIECES: usize = 100_000;

/// A text's tokens, and where each one ends in the text.
pub(crate) struct Encoded {
    pub(crate) ids: Vec<Rank>,
    /// Byte offset just past each token; the last one is the text's length.
    pub(crate) ends: Vec<usize>,
}

/// The text's tokens: the concatenated encodings of its segments.
pub(crate) fn encode(bpe: &CoreBPE, text: &str) -> Encoded {
    let capacity = text.len() / 4 + 1;
    let mut out = Encoded {
        ids: Vec::with_capacity(capacity),
        ends: Vec::with_capacity(capacity),
    };
    let mut classes = Vec::new();
    let mut offset = 0;
    PIECES.with_borrow_mut(|cache| {
        if cache.len() > MAX_CACHED_PIECES {
            cache.clear();
        }
        for segment in segments(text) {
            if classify(segment, &mut classes) {
                split_pieces(&classes, |start, end| {
                    let piece = &segment[classes[start].0..byte_end(&classes, end, segment)];
                    let tokens = match cache.get(piece) {
                        Some(known) => known,
                        None => {
                            let encoded = with_lengths(bpe, bpe.encode_ordinary(piece));
                            cache.entry(piece.into()).or_insert(encoded)
                        }
                    };
                    for &(id, len) in tokens.iter() {
                        offset += len as usize;
                        out.ids.push(id);
                        out.ends.push(offset);
                    }
                });
            } else {
                for (id, len) in with_lengths(bpe, bpe.encode_ordinary(segment)) {
                    offset += len as usize;
                    out.ids.push(id);
                    out.ends.push(offset);
                }
            }
        }
    });
    debug_assert_eq!(offset, text.len());
    out
}

/// Each token with the length of its bytes.
fn with_lengths(bpe: &CoreBPE, ids: Vec<Rank>) -> Box<[(Rank, u32)]> {
    ids.into_iter()
        .map(|id| {
            // Every id came from this encoder, so it decodes.
            let len = bpe.decode_bytes(&[id]).map_or(0, |bytes| bytes.len());
            (id, len as u32)
        })
        .collect()
}

type PieceCache = HashMap<Box<str>, Box<[(Rank, u32)]>, FastHash>;

/// Hashing for maps keyed by short strings (pieces, words).
pub(crate) type FastHash = BuildHasherDefault<Fnv>;

thread_local! {
    static PIECES: RefCell<PieceCache> = RefCell::default();
}

/// FNV-1a: pieces are short, and SipHash would cost more than the lookup saves.
pub(crate) struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// Splits a text into segments whose encodings, concatenated, are the text's encoding.
///
/// cl100k_base's pre-tokenizer always cuts before a space that follows a visible ASCII
/// character and precedes an ASCII letter (the word and its leading space are one piece), and
/// its patterns look ahead only within whitespace, so cutting there changes nothing. Past
/// `MAX_UNBROKEN_BYTES` without such a place a cut is forced on any character boundary,
/// which may change a token or two there.
pub(crate) fn segments(text: &str) -> impl Iterator<Item = &str> {
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

/// A character's class in the pre-tokenizer's regex:
/// `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+`
/// `|\s++$|\s*[\r\n]|\s+(?!\S)|\s`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Letter,
    Digit,
    /// `\r` or `\n` (also whitespace).
    LineBreak,
    /// Whitespace other than `\r` and `\n`.
    Space,
    /// Anything else: punctuation, symbols, control characters.
    Other,
}

impl Class {
    fn is_whitespace(self) -> bool {
        matches!(self, Self::LineBreak | Self::Space)
    }

    /// The class of a character whose Unicode category is known here; `None` for the rest.
    fn of(c: char) -> Option<Self> {
        let class = match c {
            'a'..='z' | 'A'..='Z' => Self::Letter,
            '0'..='9' => Self::Digit,
            '\r' | '\n' => Self::LineBreak,
            '\t' | '\u{b}' | '\u{c}' | ' ' => Self::Space,
            '\0'..='\u{7f}' => Self::Other,
            // Latin-1 and Latin Extended-A and -B letters; × and ÷ are symbols.
            '\u{d7}' | '\u{f7}' => Self::Other,
            '\u{c0}'..='\u{24f}' => Self::Letter,
            '\u{aa}' | '\u{b5}' | '\u{ba}' => Self::Letter,
            '\u{b2}' | '\u{b3}' | '\u{b9}' | '\u{bc}'..='\u{be}' => Self::Digit,
            '\u{a1}'..='\u{bf}' => Self::Other,
            // Greek (with tonos) and basic Cyrillic letters.
            '\u{386}' | '\u{388}'..='\u{38a}' | '\u{38c}' | '\u{38e}'..='\u{3a1}' => Self::Letter,
            '\u{3a3}'..='\u{3ce}' => Self::Letter,
            '\u{400}'..='\u{45f}' => Self::Letter,
            '\u{85}' | '\u{a0}' | '\u{2000}'..='\u{200a}' | '\u{2028}' | '\u{2029}' => Self::Space,
            '\u{202f}' | '\u{3000}' => Self::Space,
            // Dashes, quotes, bullets, ellipsis, primes; currency signs.
            '\u{2010}'..='\u{2027}' | '\u{2030}'..='\u{205e}' | '\u{20a0}'..='\u{20c0}' => {
                Self::Other
            }
            _ => return None,
        };
        Some(class)
    }
}

/// Fills `out` with each character's byte offset, class and value; false when a character
/// is outside the classes known here.
fn classify(segment: &str, out: &mut Vec<(usize, Class, char)>) -> bool {
    out.clear();
    for (at, c) in segment.char_indices() {
        let Some(class) = Class::of(c) else {
            return false;
        };
        out.push((at, class, c));
    }
    true
}

fn byte_end(classes: &[(usize, Class, char)], end: usize, segment: &str) -> usize {
    classes.get(end).map_or(segment.len(), |c| c.0)
}

/// Calls `piece(start, end)` (character positions) for each piece the regex would match,
/// trying its alternatives in order, as the regex does.
fn split_pieces(chars: &[(usize, Class, char)], mut piece: impl FnMut(usize, usize)) {
    let n = chars.len();
    let class = |i: usize| chars.get(i).map(|c| c.1);
    let mut i = 0;
    while i < n {
        let end = contraction(chars, i)
            .or_else(|| letters(chars, i))
            .or_else(|| digits(chars, i))
            .or_else(|| punctuation(chars, i))
            .unwrap_or_else(|| {
                // Whitespace: `\s++$`, then `\s*[\r\n]`, then `\s+(?!\S)`, then `\s`.
                let mut run = i;
                while class(run).is_some_and(Class::is_whitespace) {
                    run += 1;
                }
                if run == n {
                    return n;
                }
                if let Some(last_break) = (i..run).rev().find(|&k| chars[k].1 == Class::LineBreak) {
                    return last_break + 1;
                }
                if run - i >= 2 { run - 1 } else { i + 1 }
            });
        piece(i, end);
        i = end;
    }
}

/// `'(?i:[sdmt]|ll|ve|re)`
fn contraction(chars: &[(usize, Class, char)], i: usize) -> Option<usize> {
    if chars[i].2 != '\'' {
        return None;
    }
    let next = |k: usize| chars.get(i + k).map(|c| c.2.to_ascii_lowercase());
    match (next(1), next(2)) {
        // `ſ` (long s) is `s` to a case-insensitive match.
        (Some('s' | 'd' | 'm' | 't' | '\u{17f}'), _) => Some(i + 2),
        (Some('l'), Some('l')) | (Some('v'), Some('e')) | (Some('r'), Some('e')) => Some(i + 3),
        _ => None,
    }
}

/// `[^\r\n\p{L}\p{N}]?+\p{L}++`: the optional character, once taken, is not given back.
fn letters(chars: &[(usize, Class, char)], i: usize) -> Option<usize> {
    let mut j = i;
    if matches!(chars[i].1, Class::Space | Class::Other) {
        j += 1;
    }
    let start = j;
    while chars.get(j).is_some_and(|c| c.1 == Class::Letter) {
        j += 1;
    }
    (j > start).then_some(j)
}

/// `\p{N}{1,3}+`
fn digits(chars: &[(usize, Class, char)], i: usize) -> Option<usize> {
    let mut j = i;
    while j < i + 3 && chars.get(j).is_some_and(|c| c.1 == Class::Digit) {
        j += 1;
    }
    (j > i).then_some(j)
}

/// ` ?[^\s\p{L}\p{N}]++[\r\n]*+`
fn punctuation(chars: &[(usize, Class, char)], i: usize) -> Option<usize> {
    let mut j = i;
    if chars[i].2 == ' ' {
        j += 1;
    }
    let start = j;
    while chars.get(j).is_some_and(|c| c.1 == Class::Other) {
        j += 1;
    }
    if j == start {
        return None;
    }
    while chars.get(j).is_some_and(|c| c.1 == Class::LineBreak) {
        j += 1;
    }
    Some(j)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bpe() -> &'static CoreBPE {
        tiktoken_rs::cl100k_base_singleton()
    }

    /// Every piece boundary of the scanner matches tiktoken's on tricky text.
    #[test]
    fn the_scanner_splits_like_the_regex() {
        let samples = [
            "Hello, world! It's 2024; we'll see. They've I'm he'd she'S 'LL 're",
            "  leading and trailing spaces   ",
            "tabs\tand\t\tmore\r\nwindows\r\n\r\nlines\n\n\nx",
            "numbers 1234567 3.14159 -42 1,000,000 and x2y3",
            "punctuation!!! ... ?!\n--- (parens) [brackets] {braces} \"quotes\" \n",
            "Café naïve façade Ærøskøbing œuvre ſ 'ſ × ÷ ½ ² µ º ª",
            "Ελληνικά кириллица — “smart quotes” ‘single’ … • € £ ¥ ‰",
            "a\u{a0}b\u{2003}c\u{2028}d\u{85}e \u{3000} f",
            "\u{0}\u{1}control\u{7f}chars\u{b}\u{c}",
            "trailing newline\n",
            "   ",
            "'",
            "x'",
            "end with space ",
        ];
        for sample in samples {
            let mut classes = Vec::new();
            assert!(classify(sample, &mut classes), "{sample:?}");
            let mut ours = Vec::new();
            split_pieces(&classes, |start, end| {
                ours.push(&sample[classes[start].0..byte_end(&classes, end, sample)]);
            });
            let theirs = bpe().split_by_token_ordinary(sample).unwrap();
            let ours_tokens: Vec<Rank> =
                ours.iter().flat_map(|p| bpe().encode_ordinary(p)).collect();
            assert_eq!(
                ours_tokens,
                bpe().encode_ordinary(sample),
                "{sample:?}: {ours:?} vs {theirs:?}"
            );
        }
    }

    /// Random strings over an alphabet of every class: the fast path and tiktoken agree.
    #[test]
    fn fast_encoding_equals_tiktoken_on_random_text() {
        const ALPHABET: &[&str] = &[
            "a", "Z", "é", "ſ", "ω", "ж", "7", "½", "²", " ", " ", " ", "\t", "\r", "\n", "\n",
            "'", "s", "ll", "ve", "re", "t", ".", ",", "!", "—", "“", "\u{a0}", "\u{2009}", "$",
            "€", "-", "\u{1}", "the", " and", "word",
        ];
        let mut state: u64 = 1;
        for _ in 0..3_000 {
            let mut text = String::new();
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = (state >> 33) as usize % 40;
            for _ in 0..len {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                text.push_str(ALPHABET[(state >> 33) as usize % ALPHABET.len()]);
            }
            let mut expected = Vec::new();
            for segment in segments(&text) {
                expected.extend(bpe().encode_ordinary(segment));
            }
            let encoded = encode(bpe(), &text);
            assert_eq!(encoded.ids, expected, "{text:?}");
            assert_eq!(encoded.ends.last().copied().unwrap_or(0), text.len());
        }
    }

    #[test]
    fn text_outside_the_known_classes_falls_back_to_tiktoken() {
        let text = "日本語のテキスト 🦀 mixed with English words";
        assert_eq!(encode(bpe(), text).ids, bpe().encode_ordinary(text));
    }
}
