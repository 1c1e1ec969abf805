//! How the document index reads words: split on non-alphanumerics, drop overlong "words",
//! lowercase, drop the language's stop words ("the", "of"); the stemmed analyzer then reduces
//! each word to its stem ("running", "runs" → "run"), the exact one keeps it as written. The
//! index holds both, so "runs" finds "running" and an exact match still counts for more.
//! Stemming is the costly step of indexing and words repeat, so stems are remembered: by each
//! analyzer, and process-wide (per language) for the next segment's analyzer.

use std::collections::HashMap;
use std::sync::{LazyLock, PoisonError, RwLock};

use tantivy::tokenizer::{
    Language, LowerCaser, RawTokenizer, RemoveLongFilter, SimpleTokenizer, Stemmer, StopWordFilter,
    TextAnalyzer, Token, TokenFilter, TokenStream, Tokenizer,
};

use super::tokens::FastHash;
use crate::config::StemmingLanguage;

/// Longer "words" (hashes, base64) are dropped from the word index: nobody searches for them
/// by typing them, and they bloat the term dictionary.
const MAX_WORD_BYTES: usize = 40;
/// Stems remembered (per analyzer, and process-wide) before starting over: well above a
/// chat's vocabulary, and at most some 10 MB.
const MAX_CACHED_STEMS: usize = 200_000;

type StemMap = HashMap<String, String, FastHash>;

/// Stems made by any analyzer, per language. tantivy gives every new segment (every commit) a
/// fresh clone of the analyzer; this lets it start warm.
static SHARED_STEMS: LazyLock<RwLock<HashMap<Language, StemMap>>> = LazyLock::new(RwLock::default);

/// The language document words are read in (`documents.stemming`): its stop words are dropped
/// and its stems indexed beside the exact words. `None` indexes exact words only, with no stop
/// words dropped. English by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Stemming(pub Option<Language>);

impl Default for Stemming {
    fn default() -> Self {
        Self(Some(Language::English))
    }
}

/// The names `documents.stemming` accepts, besides `none`.
const LANGUAGES: &[(&str, Language)] = &[
    ("arabic", Language::Arabic),
    ("danish", Language::Danish),
    ("dutch", Language::Dutch),
    ("english", Language::English),
    ("finnish", Language::Finnish),
    ("french", Language::French),
    ("german", Language::German),
    ("greek", Language::Greek),
    ("hungarian", Language::Hungarian),
    ("italian", Language::Italian),
    ("norwegian", Language::Norwegian),
    ("portuguese", Language::Portuguese),
    ("romanian", Language::Romanian),
    ("russian", Language::Russian),
    ("spanish", Language::Spanish),
    ("swedish", Language::Swedish),
    ("tamil", Language::Tamil),
    ("turkish", Language::Turkish),
];

impl Stemming {
    /// `english`, `german`, … (any case), or `none` / `off`.
    pub fn parse(name: &str) -> Result<Self, String> {
        let name = name.trim().to_ascii_lowercase();
        if matches!(name.as_str(), "none" | "off" | "") {
            return Ok(Self(None));
        }
        LANGUAGES
            .iter()
            .find(|(known, _)| *known == name)
            .map(|(_, language)| Self(Some(*language)))
            .ok_or_else(|| {
                let names: Vec<&str> = LANGUAGES.iter().map(|(known, _)| *known).collect();
                format!(
                    "unknown stemming language {name:?}: use none or one of {}",
                    names.join(", ")
                )
            })
    }

    /// The setting's name: `none` or the language in lowercase.
    pub fn name(self) -> &'static str {
        match self.0 {
            None => "none",
            Some(language) => LANGUAGES
                .iter()
                .find(|(_, known)| *known == language)
                .map_or("none", |(name, _)| name),
        }
    }

    /// The name the exact analyzer is registered under: it differs by language (the stop
    /// words differ), so an index made in another language has another schema.
    pub(crate) fn words_tokenizer(self) -> String {
        format!("words_{}", self.name())
    }

    /// The name the stemming analyzer is registered under; `None` without stemming.
    pub(crate) fn stems_tokenizer(self) -> Option<String> {
        self.0.map(|_| format!("stems_{}", self.name()))
    }

    /// Exact words: lowercased, the language's stop words dropped.
    pub(crate) fn words(self) -> TextAnalyzer {
        TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(RemoveLongFilter::limit(MAX_WORD_BYTES))
            .filter(LowerCaser)
            .filter(stop_words(self.0))
            .build()
    }

    /// Stemmed words; `None` without stemming.
    pub(crate) fn stems(self) -> Option<TextAnalyzer> {
        let language = self.0?;
        Some(
            TextAnalyzer::builder(SimpleTokenizer::default())
                .filter(RemoveLongFilter::limit(MAX_WORD_BYTES))
                .filter(LowerCaser)
                .filter(stop_words(Some(language)))
                .filter(CachedStemmer(language))
                .build(),
        )
    }
}

impl From<StemmingLanguage> for Stemming {
    fn from(language: StemmingLanguage) -> Self {
        use StemmingLanguage as L;
        Self(match language {
            L::None => None,
            L::Arabic => Some(Language::Arabic),
            L::Danish => Some(Language::Danish),
            L::Dutch => Some(Language::Dutch),
            L::English => Some(Language::English),
            L::Finnish => Some(Language::Finnish),
            L::French => Some(Language::French),
            L::German => Some(Language::German),
            L::Greek => Some(Language::Greek),
            L::Hungarian => Some(Language::Hungarian),
            L::Italian => Some(Language::Italian),
            L::Norwegian => Some(Language::Norwegian),
            L::Portuguese => Some(Language::Portuguese),
            L::Romanian => Some(Language::Romanian),
            L::Russian => Some(Language::Russian),
            L::Spanish => Some(Language::Spanish),
            L::Swedish => Some(Language::Swedish),
            L::Tamil => Some(Language::Tamil),
            L::Turkish => Some(Language::Turkish),
        })
    }
}

/// The analyzer of indexes made before exact words were kept (tokenizer `en_stem`): English
/// stems, English stop words. Still registered so such an index can be searched while it is
/// rebuilt.
pub(crate) fn legacy_english() -> TextAnalyzer {
    Stemming::default()
        .stems()
        .unwrap_or_else(|| Stemming::default().words())
}

/// The language's stop words (for English, Lucene's list: articles, conjunctions, "is",
/// "of"...). They are a quarter or more of a text yet weigh almost nothing in BM25: dropping
/// them makes indexing and searching cheaper and hardly changes a ranking. None are dropped
/// without a language, or for one tantivy has no list for.
fn stop_words(language: Option<Language>) -> StopWordFilter {
    language
        .and_then(StopWordFilter::new)
        .unwrap_or_else(|| StopWordFilter::remove(Vec::<String>::new()))
}

/// tantivy's `Stemmer` for a language, with a memory.
#[derive(Clone, Copy)]
struct CachedStemmer(Language);

impl TokenFilter for CachedStemmer {
    type Tokenizer<T: Tokenizer> = CachedStemFilter<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> CachedStemFilter<T> {
        CachedStemFilter {
            inner: tokenizer,
            stems: Stems::new(self.0),
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
    language: Language,
    known: StemMap,
    /// tantivy's stemmer, applied to one whole word at a time.
    stemmer: TextAnalyzer,
}

impl Stems {
    fn new(language: Language) -> Self {
        Self {
            language,
            known: HashMap::default(),
            stemmer: TextAnalyzer::builder(RawTokenizer::default())
                .filter(Stemmer::new(language))
                .build(),
        }
    }
}

/// tantivy clones the registered analyzer for every segment and every parsed query; each
/// clone starts with an empty memory (backed by `SHARED_STEMS`), so cloning stays cheap.
impl Clone for Stems {
    fn clone(&self) -> Self {
        Self::new(self.language)
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
            .get(&self.language)
            .and_then(|stems| stems.get(word.as_str()))
            .cloned();
        let stem = match shared {
            Some(stem) => stem,
            None => {
                let stem = self.stem_now(word);
                let mut shared = SHARED_STEMS.write().unwrap_or_else(PoisonError::into_inner);
                let stems = shared.entry(self.language).or_default();
                remember(stems, word.clone(), stem.clone());
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
            .filter(stop_words(Some(Language::English)))
            .filter(Stemmer::new(Language::English))
            .build();
        let text = "Running runs RAN the runner's databases; Databases were indexed, \
                    indexing INDEXES. Café naïve 42 x1 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        // Twice, so the second pass reads from the memory.
        let text = format!("{text} {text}");
        let english = || Stemming::default().stems().unwrap();
        assert_eq!(tokens(english(), &text), tokens(plain, &text));
        assert_eq!(tokens(english(), "Running runs"), ["run@0", "run@1"]);
        assert_eq!(
            tokens(english(), "the runs of a runner"),
            ["run@1", "runner@4"]
        );
        assert_eq!(tokens(legacy_english(), &text), tokens(english(), &text));
    }

    #[test]
    fn exact_words_keep_their_endings_and_stems_follow_the_language() {
        let english = Stemming::default();
        assert_eq!(
            tokens(english.words(), "The Runs of a RUNNER"),
            ["runs@1", "runner@4"]
        );
        let german = Stemming::parse("German").unwrap();
        assert_eq!(german.name(), "german");
        // German stop words ("die") go; its stemmer reads "Häuser" as "haus".
        assert_eq!(tokens(german.stems().unwrap(), "die Häuser"), ["haus@1"]);
        let none = Stemming::parse("none").unwrap();
        assert!(none.stems().is_none());
        assert_eq!(tokens(none.words(), "the runs"), ["the@0", "runs@1"]);
        assert_eq!(none.stems_tokenizer(), None);
        assert_eq!(english.words_tokenizer(), "words_english");
        assert!(Stemming::parse("klingon").unwrap_err().contains("english"));
        assert_eq!(Stemming::from(StemmingLanguage::default()), english);
        assert_eq!(
            Stemming::from(StemmingLanguage::German),
            Stemming::parse("german").unwrap()
        );
        assert_eq!(Stemming::from(StemmingLanguage::None).name(), "none");
    }
}
