//! Word statistics shared by indexes searched together, so that their BM25 scores are on one
//! scale. BM25 weighs a word by how many chunks hold it and a chunk by its length against the
//! average, and both differ from one chat's index to the next: the same passage scores higher
//! in a small index than in a large one. Summed over every index of a search, the statistics
//! are those of one index holding all their chunks, and each index scores with them.

use std::collections::HashMap;

use tantivy::Term;
use tantivy::query::Bm25StatisticsProvider;
use tantivy::schema::Field;

/// The chunk count, the text field's token count and each query word's chunk count of one or
/// more indexes, for one query.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WordStatistics {
    /// Chunks (tantivy counts deleted ones not yet merged away in both this and `chunks_with`).
    pub(super) chunks: u64,
    /// Tokens in the text field, over every chunk.
    pub(super) tokens: u64,
    /// Chunks holding each analysed query word.
    pub(super) chunks_with: HashMap<String, u64>,
}

impl WordStatistics {
    /// Adds another index's statistics for the same query.
    pub fn add(&mut self, other: &WordStatistics) {
        self.chunks += other.chunks;
        self.tokens += other.tokens;
        for (word, count) in &other.chunks_with {
            *self.chunks_with.entry(word.clone()).or_default() += count;
        }
    }

    /// These statistics as tantivy reads them while scoring the text field.
    pub(super) fn provider(&self, text: Field) -> Provider<'_> {
        Provider { stats: self, text }
    }
}

/// `WordStatistics` answering tantivy's questions.
pub(super) struct Provider<'a> {
    stats: &'a WordStatistics,
    text: Field,
}

impl Bm25StatisticsProvider for Provider<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        if field != self.text {
            return Err(tantivy::TantivyError::InvalidArgument(
                "shared statistics cover the text field only".into(),
            ));
        }
        Ok(self.stats.tokens)
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.stats.chunks)
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        // A word the query analysis did not produce is in no chunk, as far as this search goes.
        Ok(term
            .value()
            .as_str()
            .and_then(|word| self.stats.chunks_with.get(word))
            .copied()
            .unwrap_or(0))
    }
}
