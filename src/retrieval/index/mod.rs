//! `ChatIndex`: one chat's searchable chunks. Words go to a tantivy index on disk (BM25 over
//! English stems, `analyzer`), written through `writer`; vectors stay in memory (`vectors`).
//! A search fuses both rankings (a weighted mean of normalised scores) and scores each hit
//! by its fused score. The database is the source of truth: this index can be wiped and rebuilt from
//! it at any time, and never reads it itself.
//!
//! Here: `ChatIndex`, opening it, its chunks and hits, `IndexError`. Beside it: `schema` (the
//! tantivy side: fields, opening or creating the directory, a chunk as a document), `edit`
//! (adding, replacing and removing documents, rebuilding), `search` (both rankings),
//! `fusion` (their fused score, also across indexes) and `statistics` (word statistics shared
//! by indexes searched together, so their BM25 scores compare).

mod addresses;
mod edit;
mod fusion;
mod schema;
mod search;
mod statistics;

#[cfg(test)]
mod query_tests;
#[cfg(test)]
mod tests;

use std::fs;
use std::path::{Path, PathBuf};

use entities::ids::{ChunkId, DocumentId};
use tantivy::IndexReader;

use super::analyzer::Stemming;
use super::outline::ChunkHeadings;
use super::vectors::Vectors;
use super::writer::IdleWriter;
use schema::{Fields, Layout, create, open_existing, schema};

pub use fusion::fuse_across;
pub use schema::write_legacy_index;
pub use search::{
    DEFAULT_VECTOR_WEIGHT, Fusion, HEADINGS_BOOST, Legs, RRF_K, SearchOptions, SearchTimings,
};
pub use statistics::WordStatistics;

/// Why an index operation failed.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error(transparent)]
    Tantivy(#[from] tantivy::TantivyError),
    #[error(transparent)]
    Directory(#[from] tantivy::directory::error::OpenDirectoryError),
    #[error(transparent)]
    Dimension(#[from] super::vectors::DimensionMismatch),
    /// A step that failed, with what was being done.
    #[error("{what}: {source}")]
    During {
        what: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Chunks or an index that cannot be used as they are.
    #[error("{0}")]
    Invalid(String),
}

impl IndexError {
    /// `source`, which failed while doing `what`.
    pub fn during(
        what: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self::During {
            what: what.into(),
            source: Box::new(source),
        }
    }
}

/// A chunk to index, with its embedding.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexedChunk {
    pub chunk_id: ChunkId,
    pub document_id: DocumentId,
    pub filename: String,
    pub text: String,
    /// The title and headings it is under or holds.
    pub headings: ChunkHeadings,
    pub vector: Vec<f32>,
}

/// A chunk found by a search.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchHit {
    pub chunk_id: ChunkId,
    pub document_id: DocumentId,
    pub filename: String,
    pub text: String,
    /// The title and headings it is under ("Guide › Install"), when its document has any.
    pub heading_path: Option<String>,
    /// The fused score in [0, 1] that orders the hits: a weighted mean of the chunk's BM25
    /// score relative to the best of the search and its cosine similarity (`fusion`).
    pub relevance_score: f32,
    /// The cosine similarity of the chunk's vector with the query's, clamped to [0, 1] (0 when
    /// the chunk has no vector in memory): what injection thresholds compare.
    pub similarity: f32,
    /// Its BM25 score for the query, 0 when the words did not find it: on the scale of its
    /// own index, or of every index searched together with shared statistics.
    pub bm25: f32,
    /// Its cosine similarity with the query, `None` when the index had no vectors.
    pub cosine: Option<f32>,
}

/// One chat's hybrid index.
pub struct ChatIndex {
    dir: PathBuf,
    reader: IndexReader,
    /// The fields, and the analyzers queries are read with for each.
    fields: Fields,
    layout: Layout,
    vectors: Vectors,
    writer: IdleWriter,
    recreated: bool,
    /// Chunk addresses by key, for the latest generation searched.
    addresses: addresses::AddressCache,
}

impl ChatIndex {
    /// Opens the index in `dir` with English stemming (`open_with`).
    pub fn open(dir: &Path) -> Result<Self, IndexError> {
        Self::open_with(dir, Stemming::default())
    }

    /// Opens the index in `dir`, which it owns, reading words with `stemming`: a missing
    /// directory is created, and one that is corrupt or from another schema is wiped and
    /// created empty (`was_recreated`); the caller then rebuilds it from the database. One
    /// made before stems and headings had fields of their own opens as it is
    /// (`is_outdated`): searchable until the caller rebuilds it (`documents` does so in the
    /// background). Vectors start empty (`load_vectors`).
    pub fn open_with(dir: &Path, stemming: Stemming) -> Result<Self, IndexError> {
        let (schema, current) = schema(stemming);
        let (index, reader, fields, layout, recreated) = match open_existing(dir, &schema, &current)
        {
            Ok(Some((index, reader, fields, layout))) => (index, reader, fields, layout, false),
            Ok(None) => {
                let (index, reader) = create(dir, &schema, &current)?;
                (index, reader, current, Layout::Current, true)
            }
            Err(err) => {
                tracing::warn!(dir = %dir.display(), error = %format!("{err:#}"),
                        "document index unreadable; recreating it empty");
                if dir.exists() {
                    fs::remove_dir_all(dir).map_err(|err| {
                        IndexError::during(format!("could not wipe {}", dir.display()), err)
                    })?;
                }
                let (index, reader) = create(dir, &schema, &current)?;
                (index, reader, current, Layout::Current, true)
            }
        };
        Ok(Self {
            dir: dir.to_path_buf(),
            writer: IdleWriter::new(index, reader.clone(), dir),
            reader,
            fields,
            layout,
            vectors: Vectors::default(),
            recreated,
            addresses: addresses::AddressCache::default(),
        })
    }

    /// Whether the index on disk was made before stems and headings had fields of their own:
    /// it searches as it always did, and should be rebuilt.
    pub fn is_outdated(&self) -> bool {
        self.layout == Layout::Old
    }

    /// Whether `open` found no usable index and created an empty one.
    pub fn was_recreated(&self) -> bool {
        self.recreated
    }

    /// Whether the word index disagrees with the `stored_chunks` the database holds for this
    /// chat, so the caller should `rebuild` rather than `load_vectors`.
    pub fn needs_rebuild(&self, stored_chunks: usize) -> bool {
        self.indexed_len() != stored_chunks
    }

    /// Chunks with a vector in memory.
    pub fn len(&self) -> usize {
        self.vectors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.vectors.len() == 0
    }

    /// Chunks in the word index on disk.
    pub fn indexed_len(&self) -> usize {
        self.reader.searcher().num_docs() as usize
    }

    /// The directory the index lives in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}
