//! Searching a chat's documents, timing each stage so a benchmark (through `file_search`'s
//! events) can see where a search's time goes: `Found` holds the hits and `SearchStages`, which
//! `file_search` reports as `x_timings_ms`. `search_together` searches several chats' documents
//! (knowledge bases beside a chat's own) as one ranking.

use std::time::{Duration, Instant};

use entities::ids::ChatId;
use serde_json::{Value, json};

use crate::retrieval::embed;
use crate::retrieval::index::{
    SearchHit, SearchOptions, SearchTimings, WordStatistics, fuse_across,
};

use super::{DocumentsError, Workspace};

/// A search's hits, best first, and where its time went.
#[derive(Debug, Clone)]
pub struct Found {
    pub hits: Vec<SearchHit>,
    pub stages: SearchStages,
}

/// Hits of several chats' documents ranked as one search, best first, each with its chat.
#[derive(Debug, Clone)]
pub struct FoundTogether {
    pub hits: Vec<(ChatId, SearchHit)>,
    pub stages: SearchStages,
}

/// How many of its best passages each index brings to a search over several: more than the
/// search returns, since one normalisation over them all can reorder an index's own ranking.
fn candidates_per_index(limit: usize) -> usize {
    limit.saturating_mul(3).max(30)
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
    /// Both searches' times, stage by stage.
    fn plus(self, other: SearchStages) -> SearchStages {
        SearchStages {
            query_embedding: self.query_embedding + other.query_embedding,
            open_index: self.open_index + other.open_index,
            lock_wait: self.lock_wait + other.lock_wait,
            index: SearchTimings {
                words: self.index.words + other.index.words,
                vectors: self.index.vectors + other.index.vectors,
                fusion: self.index.fusion + other.index.fusion,
                texts: self.index.texts + other.index.texts,
            },
            total: self.total + other.total,
        }
    }

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
        let options = SearchOptions::fused(self.inner.embedder.vector_weight());
        let (hits, timings) =
            tokio::task::spawn_blocking(move || guard.search_with(&query, &vector, limit, options))
                .await??;
        stages.index = timings;
        stages.total = started.elapsed();
        Ok(Found { hits, stages })
    }

    /// Searches the documents of several chats (knowledge bases and a chat's own) as one
    /// collection: the query is embedded once, each index scores its words with the summed
    /// word statistics of all of them, and their best passages are fused again with one
    /// normalisation (`fuse_across`), so a hit's `relevance_score` means the same whichever
    /// chat it came from. The chats' documents are not copied or merged: each index stays its
    /// chat's, and only one index's lock is held at a time.
    pub async fn search_together(
        &self,
        chats: &[ChatId],
        query: &str,
        limit: usize,
    ) -> Result<FoundTogether, DocumentsError> {
        let started = Instant::now();
        let mut stages = SearchStages::default();
        let vector =
            std::sync::Arc::new(embed::embed_one(self.inner.embedder.as_ref(), query).await?);
        stages.query_embedding = started.elapsed();
        let options = SearchOptions::fused(self.inner.embedder.vector_weight());
        let mut indexes = Vec::with_capacity(chats.len());
        let mut shared = WordStatistics::default();
        for chat_id in chats {
            let at = Instant::now();
            let index = self.index_of_other(chat_id).await?;
            stages.open_index += at.elapsed();
            let at = Instant::now();
            let guard = index.index.clone().lock_owned().await;
            stages.lock_wait += at.elapsed();
            let words = query.to_string();
            let stats =
                tokio::task::spawn_blocking(move || guard.word_statistics(&words)).await??;
            shared.add(&stats);
            indexes.push((chat_id.clone(), index));
        }
        let shared = std::sync::Arc::new(shared);
        let depth = candidates_per_index(limit);
        let mut hits = Vec::new();
        for (chat_id, index) in indexes {
            let at = Instant::now();
            let guard = index.index.clone().lock_owned().await;
            stages.lock_wait += at.elapsed();
            let (words, vector, shared) = (query.to_string(), vector.clone(), shared.clone());
            let (found, timings) = tokio::task::spawn_blocking(move || {
                guard.search_shared(&words, &vector, depth, options, &shared)
            })
            .await??;
            stages = stages.plus(SearchStages {
                index: timings,
                ..SearchStages::default()
            });
            hits.extend(found.into_iter().map(|hit| (chat_id.clone(), hit)));
        }
        let at = Instant::now();
        let mut hits = fuse_across(hits, options.vector_weight);
        hits.truncate(limit);
        stages.index.fusion += at.elapsed();
        stages.total = started.elapsed();
        Ok(FoundTogether { hits, stages })
    }
}
