//! Measuring document search on a test collection in BEIR's format, through the path
//! `file_search` takes: each document as an uploaded text file (extraction, chunking, one
//! embedder call per document, two at a time as the processing queue runs them), one chat's
//! `ChatIndex`, and each question searched as the tool searches, its chunks ranked by the
//! index and read as the list of files they come from. Reports nDCG@10, Recall@10 and
//! Recall@100 for each leg alone (BM25, vectors) and fused, and the ingestion rate.
//! Plain retrieval: no database and no HTTP (`cli` runs it as `colloquy eval-retrieval`).

mod collection;
pub mod duplicates;
mod metrics;

#[cfg(test)]
mod tests;

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::Path;
use std::time::{Duration, Instant};

use entities::ids::{ChunkId, DocumentId};
use futures_util::StreamExt;

use super::analyzer::Stemming;
use super::chunk::Chunker;
use super::embed::{EmbedError, Embedder};
use super::extract::{self, DocKind};
use super::index::{
    ChatIndex, Fusion, HEADINGS_BOOST, IndexError, IndexedChunk, Legs, RRF_K, SearchOptions,
};
use super::text::Deadline;

pub use collection::{Collection, CorpusDocument, Query};
pub use metrics::{ndcg_at, recall_at};

/// Characters of text kept per file: the product's default limit (`documents.max_text_chars`).
const MAX_TEXT_CHARS: usize = 500_000;
/// Documents embedded at once, as the processing queue's default `processing_concurrency`.
const CONCURRENT_DOCUMENTS: usize = 2;
/// Documents indexed per commit.
const INDEX_BATCH: usize = 500;
/// Chunks a `file_search` call may return (`tools::file_search::MAX_RESULTS`): the depth at
/// which nDCG@10 and Recall@10 are read, so fusion sees the candidates the tool's does.
const TOOL_RESULTS: usize = 20;
/// The depth of the second search, for Recall@100.
const DEEP_RESULTS: usize = 100;

/// Why an evaluation could not run.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("{path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Format(String),
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error(transparent)]
    Index(#[from] IndexError),
    #[error(transparent)]
    Extract(#[from] extract::ExtractError),
}

impl EvalError {
    fn read(path: &Path, source: std::io::Error) -> Self {
        Self::Read {
            path: path.display().to_string(),
            source,
        }
    }
}

/// The three measures, averaged over the questions.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Scores {
    pub ndcg_at_10: f64,
    pub recall_at_10: f64,
    pub recall_at_100: f64,
}

/// What an evaluation measured.
#[derive(Debug, Clone)]
pub struct Report {
    pub embedder: String,
    /// The cosine's share of the fused score.
    pub vector_weight: f32,
    pub documents: usize,
    pub chunks: usize,
    pub queries: usize,
    /// Wall-clock time spent extracting, chunking and embedding the documents.
    pub ingestion: Duration,
    /// How words were read (`documents.stemming`).
    pub stemming: Stemming,
    /// A word in the headings against one in the text.
    pub headings_boost: f32,
    pub words: Scores,
    pub vectors: Scores,
    /// Fused as searches fuse: normalised scores.
    pub fused: Scores,
    /// Fused by reciprocal rank (k = `RRF_K`), for comparison.
    pub reciprocal_rank: Scores,
    /// Fused with the cosine as it is (how searches fused before), for comparison.
    pub absolute: Scores,
    /// Fused by scores each scaled from the candidates' lowest to their best, for comparison.
    pub min_max: Scores,
}

impl Report {
    /// Chunks prepared (extracted, chunked, embedded) per second.
    pub fn chunks_per_second(&self) -> f64 {
        self.chunks as f64 / self.ingestion.as_secs_f64().max(1e-9)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "embedder {} (vector weight {}, stemming {}, headings boost {}): {} documents, {} chunks, {} queries",
            self.embedder,
            self.vector_weight,
            self.stemming.name(),
            self.headings_boost,
            self.documents,
            self.chunks,
            self.queries
        )?;
        writeln!(
            f,
            "ingestion: {:.2} s, {:.1} chunks/s, {:.1} documents/s",
            self.ingestion.as_secs_f64(),
            self.chunks_per_second(),
            self.documents as f64 / self.ingestion.as_secs_f64().max(1e-9)
        )?;
        writeln!(f, "| leg | nDCG@10 | Recall@10 | Recall@100 |")?;
        writeln!(f, "|---|---|---|---|")?;
        for (name, scores) in [
            ("BM25", self.words),
            ("vectors", self.vectors),
            ("fused", self.fused),
            ("fused by rank (RRF)", self.reciprocal_rank),
            ("fused, cosine as it is", self.absolute),
            ("fused, min-max", self.min_max),
        ] {
            writeln!(
                f,
                "| {name} | {:.4} | {:.4} | {:.4} |",
                scores.ndcg_at_10, scores.recall_at_10, scores.recall_at_100
            )?;
        }
        Ok(())
    }
}

/// Runs `collection` through a fresh index in `index_dir` (which should not exist yet)
/// with `embedder` and English stemming, fusing with its own `vector_weight` unless one is
/// given.
pub async fn evaluate(
    collection: &Collection,
    embedder: &dyn Embedder,
    index_dir: &Path,
    vector_weight: Option<f32>,
) -> Result<Report, EvalError> {
    evaluate_with(
        collection,
        embedder,
        index_dir,
        vector_weight,
        Stemming::default(),
    )
    .await
}

/// `evaluate`, reading words with `stemming`.
pub async fn evaluate_with(
    collection: &Collection,
    embedder: &dyn Embedder,
    index_dir: &Path,
    vector_weight: Option<f32>,
    stemming: Stemming,
) -> Result<Report, EvalError> {
    evaluate_tuned(
        collection,
        embedder,
        index_dir,
        vector_weight,
        stemming,
        HEADINGS_BOOST,
    )
    .await
}

/// `evaluate_with`, weighing headings `headings_boost` times the text.
pub async fn evaluate_tuned(
    collection: &Collection,
    embedder: &dyn Embedder,
    index_dir: &Path,
    vector_weight: Option<f32>,
    stemming: Stemming,
    headings_boost: f32,
) -> Result<Report, EvalError> {
    let vector_weight = vector_weight.unwrap_or_else(|| embedder.vector_weight());
    let chunker = Chunker::default();
    let started = Instant::now();
    let prepared: Vec<Result<(DocumentId, Vec<IndexedChunk>), EvalError>> =
        futures_util::stream::iter(&collection.documents)
            .map(|document| prepare(document, &chunker, embedder))
            .buffered(CONCURRENT_DOCUMENTS)
            .collect()
            .await;
    let ingestion = started.elapsed();
    let mut prepared = prepared.into_iter().collect::<Result<Vec<_>, _>>()?;
    let chunks = prepared.iter().map(|(_, chunks)| chunks.len()).sum();

    let mut index = ChatIndex::open_with(index_dir, stemming)?;
    while !prepared.is_empty() {
        let rest = prepared.split_off(prepared.len().min(INDEX_BATCH));
        let rejected = index.replace_documents(std::mem::replace(&mut prepared, rest))?;
        if let Some((id, reason)) = rejected.first() {
            return Err(EvalError::Format(format!("document {id}: {reason}")));
        }
    }

    let texts: Vec<String> = collection.queries.iter().map(|q| q.text.clone()).collect();
    let query_vectors = embedder.embed(texts).await?;
    let mut totals = [Scores::default(); 6];
    let no_judgements = HashMap::new();
    for (query, vector) in collection.queries.iter().zip(&query_vectors) {
        let relevant = collection
            .judgements
            .get(&query.id)
            .unwrap_or(&no_judgements);
        let runs = [
            (Legs::Words, Fusion::Scores),
            (Legs::Vectors, Fusion::Scores),
            (Legs::Both, Fusion::Scores),
            (Legs::Both, Fusion::ReciprocalRank(RRF_K)),
            (Legs::Both, Fusion::AbsoluteScores),
            (Legs::Both, Fusion::MinMaxScores),
        ];
        for (total, (legs, fusion)) in totals.iter_mut().zip(runs) {
            let options = SearchOptions {
                fusion,
                headings_boost,
                ..SearchOptions::legs(legs, vector_weight)
            };
            let top = ranked_files(&index, &query.text, vector, TOOL_RESULTS, options)?;
            let deep = ranked_files(&index, &query.text, vector, DEEP_RESULTS, options)?;
            total.ndcg_at_10 += ndcg_at(&top, relevant, 10);
            total.recall_at_10 += recall_at(&top, relevant, 10);
            total.recall_at_100 += recall_at(&deep, relevant, 100);
        }
    }
    let count = collection.queries.len().max(1) as f64;
    let [words, vectors, fused, reciprocal_rank, absolute, min_max] = totals.map(|total| Scores {
        ndcg_at_10: total.ndcg_at_10 / count,
        recall_at_10: total.recall_at_10 / count,
        recall_at_100: total.recall_at_100 / count,
    });
    Ok(Report {
        embedder: embedder.id().to_string(),
        vector_weight,
        documents: collection.documents.len(),
        chunks,
        queries: collection.queries.len(),
        ingestion,
        stemming,
        headings_boost,
        words,
        vectors,
        fused,
        reciprocal_rank,
        absolute,
        min_max,
    })
}

/// A document as the processing queue prepares an uploaded text file: its text, its
/// chunks, one embedder call for them all.
async fn prepare(
    document: &CorpusDocument,
    chunker: &Chunker,
    embedder: &dyn Embedder,
) -> Result<(DocumentId, Vec<IndexedChunk>), EvalError> {
    let document_id = DocumentId::from_string(format!("doc-{}", document.id));
    let deadline = Deadline::after(Duration::from_secs(120));
    let extraction = extract::extract(
        document.markdown().as_bytes(),
        DocKind::Text,
        MAX_TEXT_CHARS,
        &deadline,
    )?;
    let Some(text) = extraction.text else {
        return Ok((document_id, Vec::new()));
    };
    let chunks = chunker.chunk(&text);
    let outline = extraction.outline;
    let texts = chunks.iter().map(|chunk| chunk.text.clone()).collect();
    let vectors = embedder.embed(texts).await?;
    let indexed = chunks
        .into_iter()
        .zip(vectors)
        .map(|(chunk, vector)| IndexedChunk {
            chunk_id: ChunkId::generate(),
            document_id: document_id.clone(),
            filename: document.id.clone(),
            headings: outline.for_chunk(chunk.start, chunk.start + chunk.text.len()),
            text: chunk.text,
            vector,
        })
        .collect();
    Ok((document_id, indexed))
}

/// The files of a search's `k` best chunks, best first, each once.
fn ranked_files(
    index: &ChatIndex,
    query: &str,
    vector: &[f32],
    k: usize,
    options: SearchOptions,
) -> Result<Vec<String>, EvalError> {
    let mut seen = HashSet::new();
    Ok(index
        .search_with(query, vector, k, options)?
        .0
        .into_iter()
        .filter(|hit| seen.insert(hit.filename.clone()))
        .map(|hit| hit.filename)
        .collect())
}
