//! Per-chat memory (save_memory / recall_memory, docs/spec.md#memory): facts, preferences and
//! instructions with their embeddings. A chat's memories and their vectors (a `UnitMatrix`, one
//! unit row per memory) live in its `ChatSession`, which is their single writer; every change is
//! persisted before it is acknowledged. Vectors are made outside the actor (embedding is slow) and
//! handed in with the id of the embedder that made them. Memories whose stored vector came from
//! another embedder are left out of the matrix, never compared, and re-embedded in the background
//! (`ChatSession::reembed_memories`).
//!
//! Here: the categories, `Memory`, `Embedded`, `MemoryError` and loading a chat's rows. Beside
//! it: `store` (`MemoryStore`, the memories and their matrix, ranking), `messages` (the
//! session's messages to save, recall, list, update and delete memories, and their handlers)
//! and `reembed` (re-embedding stale memories in the background).

mod messages;
mod reembed;
mod store;

use chrono::{DateTime, Utc};
use entities::ids::{ChatId, MemoryId};
use entities::memories;
use sea_orm::{ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QueryOrder};
use serde::Serialize;

pub use messages::{DeleteMemory, ListMemories, RecallMemories, SaveMemory, Saved, UpdateMemory};
pub use store::MemoryStore;

pub const CATEGORIES: [&str; 3] = ["preference", "fact", "instruction"];

/// The category of a memory saved without one. Instructions tell the assistant what to do
/// ("always…", "never…", "use…", "make sure…"); preferences state a liking ("prefers",
/// "likes", "favourite", "would rather"); everything else is a fact.
pub fn infer_category(content: &str) -> &'static str {
    let text = content.trim().to_lowercase();
    let words: Vec<&str> = text
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .collect();
    let has = |w: &str| words.contains(&w);
    const IMPERATIVES: [&str; 14] = [
        "always", "never", "use", "do", "don't", "avoid", "make", "ensure", "write", "respond",
        "answer", "reply", "include", "keep",
    ];
    let first = words.first().copied().unwrap_or_default();
    if IMPERATIVES.contains(&first)
        || has("always")
        || has("never")
        || has("must")
        || has("should")
        || text.contains("make sure")
        || text.contains("do not")
    {
        return "instruction";
    }
    const LIKING: [&str; 12] = [
        "prefer",
        "prefers",
        "preferred",
        "like",
        "likes",
        "love",
        "loves",
        "hate",
        "hates",
        "dislike",
        "dislikes",
        "enjoys",
    ];
    if LIKING.iter().any(|w| has(w))
        || has("favorite")
        || has("favourite")
        || text.contains("rather")
    {
        return "preference";
    }
    "fact"
}

/// A memory as the API and the tools show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Memory {
    pub id: MemoryId,
    pub content: String,
    pub category: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl From<&memories::Model> for Memory {
    fn from(row: &memories::Model) -> Self {
        Self {
            id: row.id.clone(),
            content: row.content.clone(),
            category: row.category.clone(),
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

/// The memories of a chat that a new one looks like (cosine similarity at least
/// `check.threshold`, the five closest) but that say another fact when read word by word
/// (`retrieval::same_fact`): `SaveMemory` does not take them for duplicates. A lookalike whose
/// words cannot be embedded counts as distinct: a duplicate saved only takes a place, while a
/// fact refused is lost.
pub async fn distinct_lookalikes(
    session: &actix::Addr<crate::chat::session::ChatSession>,
    embedder: &dyn crate::retrieval::embed::Embedder,
    content: &str,
    embedded: &Embedded,
    check: crate::retrieval::embed::DuplicateCheck,
) -> Vec<MemoryId> {
    const LOOKALIKES: usize = 5;
    let lookalikes = match session
        .send(RecallMemories {
            query: embedded.clone(),
            limit: LOOKALIKES,
            min_relevance: check.threshold,
        })
        .await
    {
        Ok(lookalikes) => lookalikes,
        // SaveMemory will find the session gone too, and say so.
        Err(_) => return Vec::new(),
    };
    let mut distinct = Vec::new();
    for (memory, _) in lookalikes {
        match crate::retrieval::same_fact::evidence(embedder, &memory.content, content).await {
            Ok(evidence) if evidence.same(check.synonyms) => {}
            Ok(_) => distinct.push(memory.id),
            Err(err) => {
                tracing::warn!(error = %err, memory_id = %memory.id,
                    "could not compare a memory word by word; taking it for a distinct fact");
                distinct.push(memory.id);
            }
        }
    }
    distinct
}

/// How save_memory finds near-duplicates with `embedder`: its own check, with the configured
/// `memory.duplicate_threshold` when one is set.
pub fn duplicate_check(
    config: &crate::config::MemoryConfig,
    embedder: &dyn crate::retrieval::embed::Embedder,
) -> crate::retrieval::embed::DuplicateCheck {
    let mut check = embedder.duplicate_check();
    if let Some(threshold) = config.duplicate_threshold {
        check.threshold = threshold;
    }
    check
}

/// A vector and the embedder that made it.
#[derive(Debug, Clone)]
pub struct Embedded {
    pub vector: Vec<f32>,
    pub embedder: String,
}

/// Loads a chat's memories, oldest first.
pub async fn load_rows(
    db: &DatabaseConnection,
    chat_id: &ChatId,
) -> Result<Vec<memories::Model>, DbErr> {
    memories::Entity::find()
        .filter(memories::Column::ChatId.eq(chat_id))
        .order_by_asc(memories::Column::CreatedAt)
        .order_by_asc(memories::Column::Id)
        .all(db)
        .await
}

#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("this chat already holds the most memories allowed ({0})")]
    Full(usize),
    #[error("no such memory")]
    NotFound,
    #[error("the vector was made by another embedder; try again")]
    StaleVector,
    #[error("database error: {0}")]
    Database(#[from] DbErr),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_are_inferred_from_wording() {
        assert_eq!(infer_category("Always answer in French"), "instruction");
        assert_eq!(infer_category("Use tabs, not spaces"), "instruction");
        assert_eq!(
            infer_category("Code must compile on Rust 1.80"),
            "instruction"
        );
        assert_eq!(
            infer_category("User prefers TypeScript with strict mode"),
            "preference"
        );
        assert_eq!(
            infer_category("Her favourite editor is Helix"),
            "preference"
        );
        assert_eq!(infer_category("The project deadline is March 3"), "fact");
    }
}
