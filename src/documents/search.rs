//! Searching a chat's documents.

use crate::retrieval::embed;
use crate::retrieval::index::{Legs, SearchHit, SearchOptions};
use entities::ids::ChatId;

use super::{DocumentsError, Workspace};

impl Workspace {
    /// Searches a chat's documents: hybrid BM25 + vector ranking, relevance = cosine in [0, 1].
    pub async fn search(
        &self,
        chat_id: &ChatId,
        query: &str,
        limit: usize,
    ) -> Result<Vec<SearchHit>, DocumentsError> {
        let vector = embed::embed_one(self.inner.embedder.as_ref(), query).await?;
        let index = self.index(chat_id).await?;
        let guard = index.index.clone().lock_owned().await;
        let query = query.to_string();
        let options = SearchOptions {
            legs: Legs::Both,
            vector_weight: self.inner.embedder.vector_weight(),
        };
        Ok(
            tokio::task::spawn_blocking(move || guard.search_with(&query, &vector, limit, options))
                .await??
                .0,
        )
    }
}
