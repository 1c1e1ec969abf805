//! Searching a `ChatIndex`: BM25 over the query's analysed words and cosine similarity over
//! vectors, fused by a weighted mean of normalised scores (`fusion`), each hit scored by its
//! fused score. The query is never parsed as query syntax: `AND`, `-word`, `field:` and
//! `two-dimensional` are words to the person who typed them.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Arc;
use std::time::{Duration, Instant};

use entities::ids::{ChunkId, DocumentId};
use tantivy::collector::{Collector, TopDocs};
use tantivy::columnar::Column;
use tantivy::query::{
    BooleanWeight, BoostWeight, EnableScoring, Explanation, Occur, Query, Scorer, SumCombiner,
    TermQuery, Weight,
};
use tantivy::schema::{Field, IndexRecordOption, Value};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{DocAddress, DocId, DocSet, Searcher, SegmentReader, TantivyDocument, Term};

use super::fusion::{Candidate, SEARCH_SCALE, Scale, fuse, fuse_ranks, fuse_scaled};
use super::schema::WordField;
use super::statistics::WordStatistics;
use super::{ChatIndex, IndexError, SearchHit};
use crate::retrieval::vectors::top_rows;

/// How deep each ranking goes before fusion. Every candidate is fused with both of its
/// scores: its cosine is known for every chunk, and a chunk only the vectors found is scored
/// by BM25 on its own (`score_by_words`), so a chunk either ranking puts this high competes
/// with its real scores, while BM25's top-k stays small enough to skip most postings.
pub(super) const CANDIDATES_PER_RANKING: usize = 100;
/// From how many vectors the two rankings are computed on two threads at once: below this,
/// both together take less than starting a thread.
pub(super) const SIDE_BY_SIDE_FROM: usize = 2_000;
/// The vector leg's share of the fused score when a caller names none: an embedder that
/// understands meaning as well as BM25 matches words.
pub const DEFAULT_VECTOR_WEIGHT: f32 = 0.5;

/// Which rankings a search uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Legs {
    /// BM25 over words only.
    Words,
    /// Cosine similarity over vectors only.
    Vectors,
    /// Both, fused (what `file_search` uses).
    Both,
}

impl Legs {
    fn words(self) -> bool {
        matches!(self, Self::Words | Self::Both)
    }

    fn vectors(self) -> bool {
        matches!(self, Self::Vectors | Self::Both)
    }
}

/// How the two rankings become one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fusion {
    /// A weighted mean of scores each divided by the best of the search
    /// (`fusion::SEARCH_SCALE`): what searches use.
    Scores,
    /// The weighted mean with the cosine as it is (`fusion::fuse`), for measuring.
    AbsoluteScores,
    /// Reciprocal rank fusion with this `k` (`fusion::fuse_ranks`), for measuring.
    ReciprocalRank(f32),
    /// A weighted mean of scores each scaled from the candidates' lowest to their best, for
    /// measuring.
    MinMaxScores,
}

/// The `k` reciprocal rank fusion is usually run with (Cormack et al.).
pub const RRF_K: f32 = 60.0;

/// How much a query word found in a chunk's title or headings adds against the same word
/// found in its text (exact and stemmed together): half as much again. Headings repeat words
/// of the text they head, so a match there comes on top of the text's. Measured with
/// `colloquy eval-retrieval --headings-boost` on Cranfield and the man-page collection, both
/// embedders: 0.5 was best on both, ahead of 0 (no headings field: 3 to 6 points of nDCG@10
/// less), 1, 2 and 3 (each worse than the one before).
pub const HEADINGS_BOOST: f32 = 0.5;

/// How to search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchOptions {
    pub legs: Legs,
    /// The cosine's share of the fused score, in [0, 1] (`Embedder::vector_weight`).
    pub vector_weight: f32,
    pub fusion: Fusion,
    /// A word in the headings against one in the text (`HEADINGS_BOOST`).
    pub headings_boost: f32,
}

impl SearchOptions {
    /// Both rankings fused by scores with `vector_weight`.
    pub const fn fused(vector_weight: f32) -> Self {
        Self::legs(Legs::Both, vector_weight)
    }

    /// One ranking (or both) with `vector_weight`, fused by scores.
    pub const fn legs(legs: Legs, vector_weight: f32) -> Self {
        Self {
            legs,
            vector_weight,
            fusion: Fusion::Scores,
            headings_boost: HEADINGS_BOOST,
        }
    }
}

impl Default for SearchOptions {
    fn default() -> Self {
        Self::fused(DEFAULT_VECTOR_WEIGHT)
    }
}

/// Where a search's time went, stage by stage. The two rankings run side by side on a large
/// index, so `words` and `vectors` may overlap.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SearchTimings {
    /// Analysing the query and ranking chunks by BM25.
    pub words: Duration,
    /// Scoring every vector and keeping the best.
    pub vectors: Duration,
    /// Reading chunk keys, merging the candidates and fusing their scores.
    pub fusion: Duration,
    /// Loading the hits' texts and names from the word index.
    pub texts: Duration,
}

impl ChatIndex {
    /// The `k` best chunks for a query, both rankings fused with equal weight
    /// (`DEFAULT_VECTOR_WEIGHT`); a zero query vector searches by words only.
    pub fn search(
        &self,
        query: &str,
        query_vector: &[f32],
        k: usize,
    ) -> Result<Vec<SearchHit>, IndexError> {
        Ok(self
            .search_with(query, query_vector, k, SearchOptions::default())?
            .0)
    }

    /// The `k` best chunks for a query by the rankings `options` names, each
    /// `CANDIDATES_PER_RANKING` deep, best first by `relevance_score`, with the time each
    /// stage took. Any text is accepted: its words are what is searched.
    pub fn search_with(
        &self,
        query: &str,
        query_vector: &[f32],
        k: usize,
        options: SearchOptions,
    ) -> Result<(Vec<SearchHit>, SearchTimings), IndexError> {
        self.search_scaled(query, query_vector, k, options, None)
    }

    /// This index's word statistics for `query`, to be summed with other indexes' for a
    /// search over them all (`search_shared`).
    pub fn word_statistics(&self, query: &str) -> Result<WordStatistics, IndexError> {
        use tantivy::query::Bm25StatisticsProvider;
        let searcher = self.reader.searcher();
        let mut stats = WordStatistics {
            chunks: searcher.total_num_docs()?,
            ..WordStatistics::default()
        };
        for searched in &self.fields.searched {
            let tokens = searcher.total_num_tokens(searched.field)?;
            stats.tokens.insert(searched.name.to_string(), tokens);
            for (word, _) in query_words(searched.analyzer.clone(), query) {
                let term = Term::from_field_text(searched.field, &word);
                let count = searcher.doc_freq(&term)?;
                stats
                    .chunks_with
                    .insert((searched.name.to_string(), word), count);
            }
        }
        Ok(stats)
    }

    /// `search_with`, its BM25 scored with `shared` statistics (the sum of every index searched
    /// together), so that hits of several indexes can be fused into one ranking
    /// (`fusion::fuse_across`).
    pub fn search_shared(
        &self,
        query: &str,
        query_vector: &[f32],
        k: usize,
        options: SearchOptions,
        shared: &WordStatistics,
    ) -> Result<(Vec<SearchHit>, SearchTimings), IndexError> {
        self.search_scaled(query, query_vector, k, options, Some(shared))
    }

    fn search_scaled(
        &self,
        query: &str,
        query_vector: &[f32],
        k: usize,
        options: SearchOptions,
        shared: Option<&WordStatistics>,
    ) -> Result<(Vec<SearchHit>, SearchTimings), IndexError> {
        let mut timings = SearchTimings::default();
        if k == 0 {
            return Ok((Vec::new(), timings));
        }
        let depth = CANDIDATES_PER_RANKING.max(k);
        let searcher = self.reader.searcher();

        let started = Instant::now();
        let provider = shared.map(|stats| stats.provider(&self.fields.searched));
        let scoring = match &provider {
            Some(provider) => EnableScoring::enabled_from_statistics_provider(provider, &searcher),
            None => EnableScoring::enabled_from_searcher(&searcher),
        };
        let weights = match WordQuery::new(&self.fields.searched, query, options.headings_boost) {
            Some(words) if options.legs.words() => Some(words.weights(scoring)?),
            _ => None,
        };
        let best_words = || match &weights {
            Some(weights) => best_by_words(&searcher, &weights.any, depth),
            None => Ok(Vec::new()),
        };
        let best_vectors = || {
            let started = Instant::now();
            let similarities = if options.legs.vectors() {
                self.vectors.similarities(query_vector)?
            } else {
                None
            };
            let semantic = similarities
                .as_deref()
                .map(|scores| top_rows(scores, depth))
                .unwrap_or_default();
            Ok::<_, IndexError>((similarities, semantic, started.elapsed()))
        };
        // Each leg takes about a millisecond at a few thousand chunks: side by side they cost
        // the slower one, not the sum.
        let side_by_side =
            weights.is_some() && options.legs.vectors() && self.vectors.len() >= SIDE_BY_SIDE_FROM;
        let (lexical, vectors) = if side_by_side {
            std::thread::scope(|scope| {
                let vectors = scope.spawn(best_vectors);
                let lexical = best_words();
                timings.words = started.elapsed();
                let vectors = vectors
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                (lexical, vectors)
            })
        } else {
            let lexical = best_words();
            timings.words = started.elapsed();
            (lexical, best_vectors())
        };
        let lexical = lexical?;
        let (similarities, semantic, vectors_took) = vectors?;
        timings.vectors = vectors_took;

        let started = Instant::now();
        let cosine = |key: u64| -> Option<f32> {
            let scores = similarities.as_deref()?;
            Some(self.vectors.row_index(key).map_or(0.0, |row| scores[row]))
        };
        // Candidates by chunk key, with the word index's address when it has one.
        let mut addresses: HashMap<u64, DocAddress> = HashMap::new();
        let mut candidates = Vec::with_capacity(lexical.len() + semantic.len());
        let mut keys = KeyColumns::new(&searcher);
        for (bm25, address) in lexical {
            if let Some(key) = keys.key(address)? {
                addresses.insert(key, address);
                candidates.push(Candidate {
                    key,
                    bm25,
                    cosine: cosine(key),
                });
            }
        }
        // The vectors' candidates the words did not rank: scored by BM25 where they are.
        let mut unscored = Vec::new();
        if !semantic.is_empty() {
            let all = self.addresses.of(&searcher)?;
            for row in semantic {
                let key = self.vectors.key(row);
                if let Entry::Vacant(entry) = addresses.entry(key) {
                    if let Some(address) = all.get(key) {
                        entry.insert(address);
                        unscored.push((address, candidates.len()));
                    }
                    candidates.push(Candidate {
                        key,
                        bm25: 0.0,
                        cosine: cosine(key),
                    });
                }
            }
        }
        timings.fusion = started.elapsed();
        if let Some(weights) = &weights {
            let started = Instant::now();
            score_by_words(&searcher, weights, &mut unscored, &mut candidates)?;
            timings.words += started.elapsed();
        }

        let started = Instant::now();
        let vector_weight = match options.legs {
            Legs::Words => 0.0,
            Legs::Vectors => 1.0,
            Legs::Both => options.vector_weight,
        };
        let ranked = match options.fusion {
            Fusion::Scores => fuse_scaled(&candidates, vector_weight, SEARCH_SCALE),
            Fusion::AbsoluteScores => fuse(&candidates, vector_weight),
            Fusion::ReciprocalRank(k) => fuse_ranks(&candidates, k),
            Fusion::MinMaxScores => fuse_scaled(&candidates, vector_weight, Scale::MinMax),
        };
        timings.fusion += started.elapsed();

        let started = Instant::now();
        let mut hits = Vec::with_capacity(k);
        for fused in ranked {
            if hits.len() == k {
                break;
            }
            let Some(&address) = addresses.get(&fused.key) else {
                // A vector whose words are not on disk: the halves disagree until a rebuild.
                continue;
            };
            let doc: TantivyDocument = searcher.doc(address)?;
            let field = |field| text_of(&doc, field).unwrap_or_default().to_string();
            hits.push(SearchHit {
                chunk_id: ChunkId::from_string(field(self.fields.chunk_id)),
                document_id: DocumentId::from_string(field(self.fields.document_id)),
                filename: field(self.fields.filename),
                text: field(self.fields.text),
                heading_path: self
                    .fields
                    .heading_path
                    .and_then(|path| text_of(&doc, path))
                    .map(str::to_string),
                relevance_score: fused.score,
                similarity: cosine(fused.key).unwrap_or(0.0).clamp(0.0, 1.0),
                bm25: fused.bm25,
                cosine: cosine(fused.key),
            });
        }
        timings.texts = started.elapsed();
        Ok((hits, timings))
    }
}

/// The `depth` best chunks by BM25 (`weight`), best first.
fn best_by_words(
    searcher: &Searcher,
    weight: &dyn Weight,
    depth: usize,
) -> Result<Vec<(f32, DocAddress)>, IndexError> {
    let collector = TopDocs::with_limit(depth).order_by_score();
    let mut per_segment = Vec::with_capacity(searcher.segment_readers().len());
    for (ord, segment) in searcher.segment_readers().iter().enumerate() {
        per_segment.push(collector.collect_segment(weight, ord as u32, segment)?);
    }
    Ok(collector.merge_fruits(per_segment)?)
}

/// Gives each chunk of `unscored` (its address, and its candidate's place in `candidates`)
/// its BM25 score: the sum of its words' scores, 0 where it has none. Each word's postings
/// in a segment are read forward once, skipping from one chunk to the next.
fn score_by_words(
    searcher: &Searcher,
    weights: &WordWeights,
    unscored: &mut [(DocAddress, usize)],
    candidates: &mut [Candidate],
) -> Result<(), IndexError> {
    unscored.sort_unstable_by_key(|(address, _)| *address);
    for segment in unscored.chunk_by(|a, b| a.0.segment_ord == b.0.segment_ord) {
        let reader = searcher.segment_reader(segment[0].0.segment_ord);
        for (weight, boost) in &weights.terms {
            let mut scorer = weight.scorer(reader, *boost)?;
            for &(address, candidate) in segment {
                if scorer.doc() < address.doc_id {
                    scorer.seek(address.doc_id);
                }
                if scorer.doc() == address.doc_id {
                    candidates[candidate].bm25 += scorer.score();
                }
            }
        }
    }
    Ok(())
}

/// A text's analysed words (stemmed, stop words dropped), each with how often it appears.
fn query_words(mut analyzer: TextAnalyzer, text: &str) -> Vec<(String, u16)> {
    let mut words: Vec<(String, u16)> = Vec::new();
    let mut stream = analyzer.token_stream(text);
    while let Some(token) = stream.next() {
        match words.iter_mut().find(|(word, _)| *word == token.text) {
            Some((_, count)) => *count = count.saturating_add(1),
            None => words.push((token.text.clone(), 1)),
        }
    }
    words
}

/// The BM25 query for a text over the searched fields: any of its words as each field's
/// analyzer reads them, a word that appears n times weighing n times. A chunk scores the sum
/// over fields, so a word that matches exactly (in `text` and `stems`) counts for more than
/// one that shares only its stem, and one in the headings `headings_boost` times what it
/// counts in the text.
struct WordQuery {
    /// Each field's word, with its weight.
    terms: Vec<(Term, f32)>,
}

impl WordQuery {
    /// `None` when no word is left.
    fn new(fields: &[WordField], text: &str, headings_boost: f32) -> Option<Self> {
        let text_fields = fields.iter().filter(|f| !f.headings).count().max(1);
        let mut terms = Vec::new();
        for searched in fields {
            let weight = if searched.headings {
                headings_boost * text_fields as f32
            } else {
                1.0
            };
            for (word, count) in query_words(searched.analyzer.clone(), text) {
                let term = Term::from_field_text(searched.field, &word);
                terms.push((term, f32::from(count) * weight));
            }
        }
        (!terms.is_empty()).then_some(Self { terms })
    }

    /// The query's weights for one search, each term's BM25 statistics read once.
    fn weights(&self, scoring: EnableScoring<'_>) -> Result<WordWeights, IndexError> {
        let mut terms = Vec::with_capacity(self.terms.len());
        let mut clauses: Vec<(Occur, Box<dyn Weight>)> = Vec::with_capacity(self.terms.len());
        for (term, boost) in &self.terms {
            let query = TermQuery::new(term.clone(), IndexRecordOption::WithFreqs);
            let weight: Arc<dyn Weight> = Arc::from(query.weight(scoring)?);
            let shared: Box<dyn Weight> = Box::new(SharedWeight(Arc::clone(&weight)));
            let clause: Box<dyn Weight> = if *boost == 1.0 {
                shared
            } else {
                Box::new(BoostWeight::new(shared, *boost))
            };
            clauses.push((Occur::Should, clause));
            terms.push((weight, *boost));
        }
        let any = BooleanWeight::with_minimum_number_should_match(
            clauses,
            1,
            true,
            Box::new(SumCombiner::default),
        );
        Ok(WordWeights { terms, any })
    }
}

/// A `WordQuery`'s weights: all its words as one (any of them matching) for ranking, and each
/// on its own for scoring single chunks.
struct WordWeights {
    terms: Vec<(Arc<dyn Weight>, f32)>,
    any: BooleanWeight<SumCombiner>,
}

/// A term's weight, shared between the query that ranks and the scoring of single chunks.
/// Its scorer is the term's own, so tantivy still prunes a union of terms by their blocks'
/// best scores (block-max WAND).
struct SharedWeight(Arc<dyn Weight>);

impl Weight for SharedWeight {
    fn scorer(&self, reader: &SegmentReader, boost: f32) -> tantivy::Result<Box<dyn Scorer>> {
        self.0.scorer(reader, boost)
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        self.0.explain(reader, doc)
    }
}

/// The chunk keys of word-search hits, reading each segment's column once.
struct KeyColumns<'a> {
    searcher: &'a Searcher,
    columns: HashMap<u32, Column<u64>>,
}

impl<'a> KeyColumns<'a> {
    fn new(searcher: &'a Searcher) -> Self {
        Self {
            searcher,
            columns: HashMap::new(),
        }
    }

    fn key(&mut self, address: DocAddress) -> Result<Option<u64>, IndexError> {
        let column = match self.columns.entry(address.segment_ord) {
            Entry::Occupied(entry) => entry.into_mut(),
            Entry::Vacant(entry) => entry.insert(
                self.searcher
                    .segment_reader(address.segment_ord)
                    .fast_fields()
                    .u64("chunk_key")?,
            ),
        };
        Ok(column.first(address.doc_id))
    }
}

fn text_of(doc: &TantivyDocument, field: Field) -> Option<&str> {
    doc.get_first(field).and_then(|value| value.as_str())
}
