//! Word statistics shared by indexes searched together, so that their BM25 scores are on one
//! scale. BM25 weighs a word by how many chunks hold it and a chunk by its length against the
//! average, and both differ from one chat's index to the next: the same passage scores higher
//! in a small index than in a large one. Summed over every index of a search, the statistics
//! are those of one index holding all their chunks, and each index scores with them.

use std::collections::HashMap;

use tantivy::Term;
use tantivy::query::Bm25StatisticsProvider;
use tantivy::schema::Field;

use super::schema::WordField;

/// The chunk count, each searched field's token count and each query word's chunk count per
/// field, of one or more indexes, for one query. Fields are known by name, so indexes whose
/// schemas number them differently still add up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WordStatistics {
    /// Chunks (tantivy counts deleted ones not yet merged away in both this and `chunks_with`).
    pub(super) chunks: u64,
    /// Tokens in each searched field, over every chunk.
    pub(super) tokens: HashMap<String, u64>,
    /// Chunks holding each analysed query word, by field and word.
    pub(super) chunks_with: HashMap<(String, String), u64>,
}

impl WordStatistics {
    /// Adds another index's statistics for the same query.
    pub fn add(&mut self, other: &WordStatistics) {
        self.chunks += other.chunks;
        for (field, tokens) in &other.tokens {
            *self.tokens.entry(field.clone()).or_default() += tokens;
        }
        for (key, count) in &other.chunks_with {
            *self.chunks_with.entry(key.clone()).or_default() += count;
        }
    }

    /// These statistics as tantivy reads them while scoring the searched fields.
    pub(super) fn provider<'a>(&'a self, searched: &'a [WordField]) -> Provider<'a> {
        Provider {
            stats: self,
            searched,
        }
    }
}

/// `WordStatistics` answering tantivy's questions.
pub(super) struct Provider<'a> {
    stats: &'a WordStatistics,
    searched: &'a [WordField],
}

impl Provider<'_> {
    fn name(&self, field: Field) -> tantivy::Result<&str> {
        self.searched
            .iter()
            .find(|searched| searched.field == field)
            .map(|searched| searched.name)
            .ok_or_else(|| {
                tantivy::TantivyError::InvalidArgument(
                    "shared statistics cover the searched fields only".into(),
                )
            })
    }
}

impl Bm25StatisticsProvider for Provider<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        let name = self.name(field)?;
        Ok(self.stats.tokens.get(name).copied().unwrap_or(0))
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.stats.chunks)
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        let name = self.name(term.field())?;
        // A word the query analysis did not produce is in no chunk, as far as this search goes.
        Ok(term
            .value()
            .as_str()
            .and_then(|word| {
                self.stats
                    .chunks_with
                    .get(&(name.to_string(), word.to_string()))
            })
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
                headings: Default::default(),
                vector: vec![0.0; 8],
            })
            .collect();
        index.add(chunks).unwrap();
        index
    }

    const WORDS: SearchOptions = SearchOptions::legs(Legs::Words, 0.0);

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
