//! Searching a chat's documents, timing each stage so a benchmark (through `file_search`'s
//! events) can see where a search's time goes: `Found` holds the hits and `SearchStages`, which
//! `file_search` reports as `x_timings_ms`.

use std::time::{Duration, Instant};

use entities::ids::ChatId;
use serde_json::{Value, json};

use crate::retrieval::embed;
use crate::retrieval::index::{Legs, SearchHit, SearchOptions, SearchTimings};

use super::{DocumentsError, Workspace};

/// A search's hits, best first, and where its time went.
#[derive(Debug, Clone)]
pub struct Found {
    pub hits: Vec<SearchHit>,
    pub stages: SearchStages,
}

/// The time each stage of a search took.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SearchStages {
    /// Embedding the query.
    pub query_embedding: Duration,
    /// Finding (or, on first use, opening) the chat's index.
    pub open_index: Duration,
    /// Waiting for the index's lock (held by indexing).
    pub lock_wait: Duration,
    /// The index's own stages.
    pub index: SearchTimings,
    /// From calling the search to its end.
    pub total: Duration,
}

impl SearchStages {
    /// The stages in milliseconds, by name, as `file_search` reports them.
    pub fn to_json(&self) -> Value {
        let ms = |d: Duration| (d.as_secs_f64() * 1e6).round() / 1e3;
        json!({
            "query_embedding": ms(self.query_embedding),
            "open_index": ms(self.open_index),
            "lock_wait": ms(self.lock_wait),
            "bm25": ms(self.index.words),
            "vectors": ms(self.index.vectors),
            "fusion": ms(self.index.fusion),
            "chunk_texts": ms(self.index.texts),
            "search_total": ms(self.total),
        })
    }
}

impl Workspace {
    /// Searches a chat's documents: BM25 and vectors fused with the weight the embedder
    /// deserves; each hit's `relevance_score` is the fused score in [0, 1], best first.
    pub async fn search(
        &self,
        chat_id: &ChatId,
        query: &str,
        limit: usize,
    ) -> Result<Found, DocumentsError> {
        let started = Instant::now();
        let mut stages = SearchStages::default();
        let vector = embed::embed_one(self.inner.embedder.as_ref(), query).await?;
        stages.query_embedding = started.elapsed();
        let at = Instant::now();
        let index = self.index(chat_id).await?;
        stages.open_index = at.elapsed();
        let at = Instant::now();
        let guard = index.index.clone().lock_owned().await;
        stages.lock_wait = at.elapsed();
        let query = query.to_string();
        let options = SearchOptions {
            legs: Legs::Both,
            vector_weight: self.inner.embedder.vector_weight(),
        };
        let (hits, timings) =
            tokio::task::spawn_blocking(move || guard.search_with(&query, &vector, limit, options))
                .await??;
        stages.index = timings;
        stages.total = started.elapsed();
        Ok(Found { hits, stages })
    }
}
