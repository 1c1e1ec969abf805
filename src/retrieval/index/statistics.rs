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

#[cfg(test)]
mod tests {
    use crate::retrieval::index::{ChatIndex, IndexedChunk, Legs, SearchOptions, WordStatistics};
    use entities::ids::{ChunkId, DocumentId};

    fn index(dir: &std::path::Path, texts: &[(&str, &str)]) -> ChatIndex {
        let mut index = ChatIndex::open(dir).unwrap();
        let chunks = texts
            .iter()
            .map(|(id, text)| IndexedChunk {
                chunk_id: ChunkId::from_string(*id),
                document_id: DocumentId::from_string(*id),
                filename: format!("{id}.txt"),
                text: text.to_string(),
                vector: vec![0.0; 8],
            })
            .collect();
        index.add(chunks).unwrap();
        index
    }

    const WORDS: SearchOptions = SearchOptions {
        legs: Legs::Words,
        vector_weight: 0.0,
    };

    #[test]
    fn indexes_scored_with_shared_statistics_agree_with_one_index_holding_everything() {
        let small = [
            ("a1", "solar panels on the roof"),
            ("a2", "the garden shed"),
        ];
        let large = [
            ("b1", "solar inverter maintenance schedule"),
            ("b2", "solar battery storage for the night"),
            ("b3", "wind turbines on the hill"),
            ("b4", "solar tariffs and the grid"),
            ("b5", "a roof of slate"),
        ];
        let dirs = [(); 3].map(|_| tempfile::tempdir().unwrap());
        let a = index(dirs[0].path(), &small);
        let b = index(dirs[1].path(), &large);
        let all: Vec<_> = small.iter().chain(&large).copied().collect();
        let whole = index(dirs[2].path(), &all);
        let query = "solar roof";

        let mut shared = WordStatistics::default();
        shared.add(&a.word_statistics(query).unwrap());
        shared.add(&b.word_statistics(query).unwrap());
        assert_eq!(shared, whole.word_statistics(query).unwrap());

        let (expected, _) = whole.search_with(query, &[0.0; 8], 10, WORDS).unwrap();
        let bm25_of = |id: &str| {
            expected
                .iter()
                .find(|h| h.chunk_id == id)
                .map(|h| h.bm25)
                .unwrap()
        };
        for part in [&a, &b] {
            let (hits, _) = part
                .search_shared(query, &[0.0; 8], 10, WORDS, &shared)
                .unwrap();
            assert!(!hits.is_empty());
            for hit in hits {
                let want = bm25_of(hit.chunk_id.as_str());
                assert!(
                    (hit.bm25 - want).abs() < 1e-4,
                    "{}: {} vs {want}",
                    hit.chunk_id,
                    hit.bm25
                );
            }
        }
        // Scored alone, the small index says something else of the same passage.
        let (alone, _) = a.search_with(query, &[0.0; 8], 10, WORDS).unwrap();
        let a1 = alone.iter().find(|h| h.chunk_id == "a1").unwrap();
        assert!((a1.bm25 - bm25_of("a1")).abs() > 1e-3);
    }
}
