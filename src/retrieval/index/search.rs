//! Searching a `ChatIndex`: BM25 over stemmed words and cosine similarity over vectors, fused
//! by reciprocal rank, each hit scored by its cosine similarity.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use entities::ids::{ChunkId, DocumentId};
use tantivy::collector::{DocSetCollector, TopDocs};
use tantivy::columnar::Column;
use tantivy::query::TermQuery;
use tantivy::schema::{Field, IndexRecordOption, Value};
use tantivy::{DocAddress, Searcher, TantivyDocument, Term};

use super::{ChatIndex, IndexError, SearchHit};
use crate::retrieval::vectors::top_rows;

/// How deep each ranking goes before fusion: enough that a chunk ranked well by one side
/// and modestly by the other still surfaces.
const CANDIDATES_PER_RANKING: usize = 50;
/// The reciprocal rank fusion constant (Cormack et al., 2009): damps the weight of the very
/// first ranks so one ranking cannot dominate.
const RRF_K: f32 = 60.0;

impl ChatIndex {
    /// The `k` best chunks for a query: BM25 over stemmed words and cosine similarity over
    /// vectors, each `CANDIDATES_PER_RANKING` deep, fused by reciprocal rank. Any query text
    /// is accepted (syntax errors are ignored); a zero query vector searches by words only.
    pub fn search(
        &self,
        query: &str,
        query_vector: &[f32],
        k: usize,
    ) -> Result<Vec<SearchHit>, IndexError> {
        self.search_legs(query, query_vector, k, Legs::Both)
    }

    /// `search` with only some of its rankings (for evaluating each leg alone).
    pub fn search_legs(
        &self,
        query: &str,
        query_vector: &[f32],
        k: usize,
        legs: Legs,
    ) -> Result<Vec<SearchHit>, IndexError> {
        if k == 0 {
            return Ok(Vec::new());
        }
        let depth = CANDIDATES_PER_RANKING.max(k);
        let searcher = self.reader.searcher();

        // Words are indexed without positions, so a quoted phrase is searched as its words.
        let (parsed, _ignored_errors) = self.parser.parse_query_lenient(&query.replace('"', " "));
        let lexical = if legs.words() {
            searcher.search(&parsed, &TopDocs::with_limit(depth).order_by_score())?
        } else {
            Vec::new()
        };
        let similarities = if legs.vectors() {
            self.vectors.similarities(query_vector)?
        } else {
            None
        };
        let semantic = similarities
            .as_deref()
            .map(|scores| top_rows(scores, depth))
            .unwrap_or_default();

        // Fused score by chunk key, with the word index's address when it has one.
        let mut fused: HashMap<u64, (f32, Option<DocAddress>)> = HashMap::new();
        let mut keys = KeyColumns::new(&searcher);
        for (rank, (_, address)) in lexical.into_iter().enumerate() {
            if let Some(key) = keys.key(address)? {
                fused.insert(key, (rrf(rank), Some(address)));
            }
        }
        for (rank, row) in semantic.into_iter().enumerate() {
            fused.entry(self.vectors.key(row)).or_insert((0.0, None)).0 += rrf(rank);
        }

        let relevance = |key: u64| -> f32 {
            match (&similarities, self.vectors.row_index(key)) {
                (Some(scores), Some(row)) => scores[row].clamp(0.0, 1.0),
                _ => 0.0,
            }
        };
        let mut ranked: Vec<(u64, f32, f32, Option<DocAddress>)> = fused
            .into_iter()
            .map(|(key, (score, address))| (key, score, relevance(key), address))
            .collect();
        ranked.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then(b.2.total_cmp(&a.2))
                .then(a.0.cmp(&b.0))
        });

        let mut hits = Vec::with_capacity(k);
        for (key, _, relevance_score, address) in ranked {
            if hits.len() == k {
                break;
            }
            let address = match address.or_else(|| self.find(&searcher, key)) {
                Some(address) => address,
                // A vector whose words are not on disk: the halves disagree until a rebuild.
                None => continue,
            };
            let doc: TantivyDocument = searcher.doc(address)?;
            let field = |field| text_of(&doc, field).unwrap_or_default().to_string();
            hits.push(SearchHit {
                chunk_id: ChunkId::from_string(field(self.fields.chunk_id)),
                document_id: DocumentId::from_string(field(self.fields.document_id)),
                filename: field(self.fields.filename),
                text: field(self.fields.text),
                relevance_score,
            });
        }
        Ok(hits)
    }

    /// Looks up in the word index a chunk found by its vector.
    fn find(&self, searcher: &Searcher, key: u64) -> Option<DocAddress> {
        let row = self.vectors.row(key)?;
        let term = Term::from_field_text(self.fields.chunk_id, row.chunk_id.as_str());
        let query = TermQuery::new(term, IndexRecordOption::Basic);
        match searcher.search(&query, &DocSetCollector) {
            Ok(found) => found.into_iter().next(),
            Err(err) => {
                tracing::warn!(error = %err, "looking a chunk up by id");
                None
            }
        }
    }
}

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

/// Reciprocal rank fusion's share for a 0-based rank.
fn rrf(rank: usize) -> f32 {
    1.0 / (RRF_K + rank as f32 + 1.0)
}
