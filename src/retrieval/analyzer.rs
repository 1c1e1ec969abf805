//! How the document index reads words: split on non-alphanumerics, drop overlong "words",
//! lowercase, drop English stop words ("the", "of"), reduce to the English stem ("running",
//! "runs" → "run"). Stemming is the costly step of indexing and words repeat, so stems are
//! remembered: by each analyzer, and process-wide for the next segment's analyzer.

use std::collections::HashMap;
use std::sync::{LazyLock, PoisonError, RwLock};

use tantivy::tokenizer::{
    Language, LowerCaser, RawTokenizer, RemoveLongFilter, SimpleTokenizer, Stemmer, StopWordFilter,
    TextAnalyzer, Token, TokenFilter, TokenStream, Tokenizer,
};

use super::tokens::FastHash;

/// Longer "words" (hashes, base64) are dropped from the word index: nobody searches for them
/// by typing them, and they bloat the term dictionary.
const MAX_WORD_BYTES: usize = 40;
/// Stems remembered (per analyzer, and process-wide) before starting over: well above a
/// chat's vocabulary, and at most some 10 MB.
const MAX_CACHED_STEMS: usize = 200_000;

type StemMap = HashMap<String, String, FastHash>;

/// Stems made by any analyzer. tantivy gives every new segment (every commit) a fresh clone
/// of the analyzer; this lets it start warm.
static SHARED_STEMS: LazyLock<RwLock<StemMap>> = LazyLock::new(RwLock::default);

/// The analyzer for document text and for queries against it.
pub(crate) fn english() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(MAX_WORD_BYTES))
        .filter(LowerCaser)
        .filter(stop_words())
        .filter(CachedEnglishStemmer)
        .build()
}

/// tantivy's English stop words (Lucene's list: articles, conjunctions, "is", "of"...). They
/// are a quarter or more of English text yet weigh almost nothing in BM25: dropping them makes
/// indexing and searching cheaper and hardly changes a ranking.
fn stop_words() -> StopWordFilter {
    // The list ships with tantivy's default "stopwords" feature; without it, none are dropped.
    StopWordFilter::new(Language::English)
        .unwrap_or_else(|| StopWordFilter::remove(Vec::<String>::new()))
}

/// tantivy's English `Stemmer`, with a memory.
#[derive(Clone, Copy)]
struct CachedEnglishStemmer;

impl TokenFilter for CachedEnglishStemmer {
    type Tokenizer<T: Tokenizer> = CachedStemFilter<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> CachedStemFilter<T> {
        CachedStemFilter {
            inner: tokenizer,
            stems: Stems::default(),
        }
    }
}

#[derive(Clone)]
struct CachedStemFilter<T> {
    inner: T,
    stems: Stems,
}

impl<T: Tokenizer> Tokenizer for CachedStemFilter<T> {
    type TokenStream<'a> = CachedStemStream<'a, T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        CachedStemStream {
            tail: self.inner.token_stream(text),
            stems: &mut self.stems,
        }
    }
}

struct CachedStemStream<'a, S> {
    tail: S,
    stems: &'a mut Stems,
}

impl<S: TokenStream> TokenStream for CachedStemStream<'_, S> {
    fn advance(&mut self) -> bool {
        if !self.tail.advance() {
            return false;
        }
        self.stems.stem(&mut self.tail.token_mut().text);
        true
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}

/// Lowercased words and their stems.
struct Stems {
    known: StemMap,
    /// tantivy's stemmer, applied to one whole word at a time.
    stemmer: TextAnalyzer,
}

impl Default for Stems {
    fn default() -> Self {
        Self {
            known: HashMap::default(),
            stemmer: TextAnalyzer::builder(RawTokenizer::default())
                .filter(Stemmer::new(Language::English))
                .build(),
        }
    }
}

/// tantivy clones the registered analyzer for every segment and every parsed query; each
/// clone starts with an empty memory (backed by `SHARED_STEMS`), so cloning stays cheap.
impl Clone for Stems {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl Stems {
    /// Replaces a word by its stem.
    fn stem(&mut self, word: &mut String) {
        if let Some(stem) = self.known.get(word.as_str()) {
            word.clone_from(stem);
            return;
        }
        let shared = SHARED_STEMS
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(word.as_str())
            .cloned();
        let stem = match shared {
            Some(stem) => stem,
            None => {
                let stem = self.stem_now(word);
                let mut shared = SHARED_STEMS.write().unwrap_or_else(PoisonError::into_inner);
                remember(&mut shared, word.clone(), stem.clone());
                stem
            }
        };
        remember(&mut self.known, word.clone(), stem.clone());
        *word = stem;
    }

    fn stem_now(&mut self, word: &str) -> String {
        let mut stream = self.stemmer.token_stream(word);
        if stream.advance() {
            stream.token().text.clone()
        } else {
            word.to_string()
        }
    }
}

fn remember(stems: &mut StemMap, word: String, stem: String) {
    if stems.len() >= MAX_CACHED_STEMS {
        stems.clear();
    }
    stems.insert(word, stem);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(mut analyzer: TextAnalyzer, text: &str) -> Vec<String> {
        let mut stream = analyzer.token_stream(text);
        let mut out = Vec::new();
        while let Some(token) = stream.next() {
            out.push(format!("{}@{}", token.text, token.position));
        }
        out
    }

    #[test]
    fn cached_stems_equal_tantivys_stemmer() {
        let plain = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(RemoveLongFilter::limit(MAX_WORD_BYTES))
            .filter(LowerCaser)
            .filter(stop_words())
            .filter(Stemmer::new(Language::English))
            .build();
        let text = "Running runs RAN the runner's databases; Databases were indexed, \
                    indexing INDEXES. Café naïve 42 x1 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        // Twice, so the second pass reads from the memory.
        let text = format!("{text} {text}");
        assert_eq!(tokens(english(), &text), tokens(plain, &text));
        assert_eq!(tokens(english(), "Running runs"), ["run@0", "run@1"]);
        assert_eq!(
            tokens(english(), "the runs of a runner"),
            ["run@1", "runner@4"]
        );
    }
}
