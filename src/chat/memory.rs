//! Per-chat memory (seed 000 save_memory / recall_memory): facts, preferences and instructions
//! with their embeddings. A chat's memories and their vectors (a `UnitMatrix`, one unit row
//! per memory) live in its `ChatSession`, which is their single writer; every change is
//! persisted before it is acknowledged. Vectors are made outside the actor (embedding is slow)
//! and handed in with the id of the embedder that made them. Memories whose stored vector came
//! from another embedder are left out of the matrix, never compared, and re-embedded in the
//! background (`ChatSession::reembed_memories`).

use crate::error::AppError;
use crate::retrieval::vectors::UnitMatrix;
use actix::prelude::*;
use chrono::{DateTime, Utc};
use entities::ids::{ChatId, MemoryId};
use entities::memories;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QueryOrder,
    Set,
};
use serde::Serialize;

use super::session::ChatSession;
use crate::retrieval::embed;

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

/// A vector and the embedder that made it.
#[derive(Debug, Clone)]
pub struct Embedded {
    pub vector: Vec<f32>,
    pub embedder: String,
}

/// A chat's memories and the matrix of their current vectors.
#[derive(Debug, Default)]
pub struct MemoryStore {
    memories: Vec<Memory>,
    /// Per memory, its vector from the current embedder (`None` while stale).
    vectors: Vec<Option<Vec<f32>>>,
    /// Unit rows of the memories that have a current vector; `rows[i]` is its memory index.
    matrix: UnitMatrix,
    rows: Vec<usize>,
    embedder: String,
}

impl MemoryStore {
    /// Builds a store from rows, keeping vectors only from `embedder`. Returns the memories
    /// that need re-embedding.
    pub fn load(rows: Vec<memories::Model>, embedder: &str) -> (Self, Vec<(MemoryId, String)>) {
        let mut store = Self {
            embedder: embedder.to_string(),
            ..Self::default()
        };
        let mut stale = Vec::new();
        for row in &rows {
            let vector = row
                .embedding
                .as_deref()
                .filter(|_| row.embedder.as_deref() == Some(embedder))
                .and_then(embed::from_blob);
            if vector.is_none() {
                stale.push((row.id.clone(), row.content.clone()));
            }
            store.memories.push(Memory::from(row));
            store.vectors.push(vector);
        }
        store.rebuild();
        (store, stale)
    }

    pub fn embedder(&self) -> &str {
        &self.embedder
    }

    pub fn len(&self) -> usize {
        self.memories.len()
    }

    pub fn is_empty(&self) -> bool {
        self.memories.is_empty()
    }

    pub fn all(&self) -> &[Memory] {
        &self.memories
    }

    fn rebuild(&mut self) {
        let current: Vec<usize> = (0..self.memories.len())
            .filter(|&i| self.vectors[i].is_some())
            .collect();
        let (matrix, placed) =
            UnitMatrix::from_vectors(current.iter().filter_map(|&i| self.vectors[i].as_deref()));
        self.rows = current
            .iter()
            .zip(placed)
            .filter_map(|(&i, row)| row.map(|_| i))
            .collect();
        self.matrix = matrix;
    }

    /// Every memory with a current vector, most similar to `query` first, with its cosine
    /// similarity clamped to [0, 1].
    pub fn ranked(&self, query: &[f32]) -> Vec<(Memory, f32)> {
        // No memories with vectors, a query of another length, or a zero one: nothing ranks.
        let Ok(Some(scores)) = self.matrix.similarities(query) else {
            return Vec::new();
        };
        let mut ranked: Vec<(Memory, f32)> = self
            .rows
            .iter()
            .zip(scores)
            .map(|(&i, s)| (self.memories[i].clone(), s.clamp(0.0, 1.0)))
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
        ranked
    }

    fn position(&self, id: &MemoryId) -> Option<usize> {
        self.memories.iter().position(|m| &m.id == id)
    }

    fn put(&mut self, memory: Memory, vector: Option<Vec<f32>>) {
        match self.position(&memory.id) {
            Some(i) => {
                self.memories[i] = memory;
                self.vectors[i] = vector;
            }
            None => {
                self.memories.push(memory);
                self.vectors.push(vector);
            }
        }
        self.rebuild();
    }

    fn remove(&mut self, id: &MemoryId) -> bool {
        let Some(i) = self.position(id) else {
            return false;
        };
        self.memories.remove(i);
        self.vectors.remove(i);
        self.rebuild();
        true
    }
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

/// What a save did.
#[derive(Debug, Clone)]
pub enum Saved {
    Saved(Memory),
    /// A memory at least this similar already existed; it is returned instead.
    Duplicate(Memory, f32),
}

/// Saves a memory unless a near-duplicate exists.
#[derive(Message)]
#[rtype(result = "Result<Saved, MemoryError>")]
pub struct SaveMemory {
    pub content: String,
    pub category: String,
    pub embedded: Embedded,
    pub duplicate_threshold: f32,
    pub max_per_chat: usize,
}

/// Memories ranked by similarity to a query vector.
#[derive(Message)]
#[rtype(result = "Vec<(Memory, f32)>")]
pub struct RecallMemories {
    pub query: Embedded,
    pub limit: usize,
    pub min_relevance: f32,
}

/// Every memory, oldest first.
#[derive(Message)]
#[rtype(result = "Vec<Memory>")]
pub struct ListMemories;

/// Changes a memory's content (re-embedded by the caller) or category.
#[derive(Message)]
#[rtype(result = "Result<Memory, MemoryError>")]
pub struct UpdateMemory {
    pub id: MemoryId,
    pub content: Option<String>,
    pub category: Option<String>,
    pub embedded: Option<Embedded>,
}

#[derive(Message)]
#[rtype(result = "Result<bool, MemoryError>")]
pub struct DeleteMemory {
    pub id: MemoryId,
}

/// Vectors made in the background for memories that were stale.
#[derive(Message)]
#[rtype(result = "()")]
pub(super) struct Reembedded {
    pub embedder: String,
    pub vectors: Vec<(MemoryId, String, Vec<f32>)>,
}

impl Handler<SaveMemory> for ChatSession {
    type Result = AtomicResponse<Self, Result<Saved, MemoryError>>;

    fn handle(&mut self, msg: SaveMemory, _: &mut Self::Context) -> Self::Result {
        self.touch();
        if msg.embedded.embedder != self.memories.embedder() {
            return AtomicResponse::new(Box::pin(fut::ready(Err(MemoryError::StaleVector))));
        }
        if let Some((existing, similarity)) = self.memories.ranked(&msg.embedded.vector).first()
            && *similarity >= msg.duplicate_threshold
        {
            let duplicate = Saved::Duplicate(existing.clone(), *similarity);
            return AtomicResponse::new(Box::pin(fut::ready(Ok(duplicate))));
        }
        if self.memories.len() >= msg.max_per_chat {
            let full = MemoryError::Full(msg.max_per_chat);
            return AtomicResponse::new(Box::pin(fut::ready(Err(full))));
        }
        let now = Utc::now();
        let memory = Memory {
            id: MemoryId::generate(),
            content: msg.content,
            category: msg.category,
            created_at: now,
            updated_at: now,
        };
        let row = memories::ActiveModel {
            id: Set(memory.id.clone()),
            chat_id: Set(self.chat_id.clone()),
            content: Set(memory.content.clone()),
            category: Set(memory.category.clone()),
            embedding: Set(Some(embed::to_blob(&msg.embedded.vector))),
            embedder: Set(Some(msg.embedded.embedder)),
            created_at: Set(now),
            updated_at: Set(now),
        };
        let db = self.db.clone();
        let vector = msg.embedded.vector;
        AtomicResponse::new(Box::pin(
            async move { row.insert(&db).await }.into_actor(self).map(
                move |result, act: &mut Self, _| {
                    result?;
                    act.memories.put(memory.clone(), Some(vector));
                    Ok(Saved::Saved(memory))
                },
            ),
        ))
    }
}

impl Handler<RecallMemories> for ChatSession {
    type Result = MessageResult<RecallMemories>;

    fn handle(&mut self, msg: RecallMemories, _: &mut Self::Context) -> Self::Result {
        self.touch();
        if msg.query.embedder != self.memories.embedder() {
            return MessageResult(Vec::new());
        }
        let mut ranked = self.memories.ranked(&msg.query.vector);
        ranked.retain(|(_, relevance)| *relevance >= msg.min_relevance);
        ranked.truncate(msg.limit);
        MessageResult(ranked)
    }
}

impl Handler<ListMemories> for ChatSession {
    type Result = MessageResult<ListMemories>;

    fn handle(&mut self, _: ListMemories, _: &mut Self::Context) -> Self::Result {
        self.touch();
        MessageResult(self.memories.all().to_vec())
    }
}

impl Handler<UpdateMemory> for ChatSession {
    type Result = AtomicResponse<Self, Result<Memory, MemoryError>>;

    fn handle(&mut self, msg: UpdateMemory, _: &mut Self::Context) -> Self::Result {
        self.touch();
        let Some(current) = self.memories.all().iter().find(|m| m.id == msg.id).cloned() else {
            return AtomicResponse::new(Box::pin(fut::ready(Err(MemoryError::NotFound))));
        };
        if msg
            .embedded
            .as_ref()
            .is_some_and(|e| e.embedder != self.memories.embedder())
        {
            return AtomicResponse::new(Box::pin(fut::ready(Err(MemoryError::StaleVector))));
        }
        let old_vector = self
            .memories
            .position(&msg.id)
            .and_then(|i| self.memories.vectors[i].clone());
        let mut memory = current;
        memory.updated_at = Utc::now();
        let mut row = memories::ActiveModel {
            id: sea_orm::Unchanged(memory.id.clone()),
            updated_at: Set(memory.updated_at),
            ..Default::default()
        };
        if let Some(content) = msg.content {
            memory.content = content.clone();
            row.content = Set(content);
        }
        if let Some(category) = msg.category {
            memory.category = category.clone();
            row.category = Set(category);
        }
        let vector = match msg.embedded {
            Some(embedded) => {
                row.embedding = Set(Some(embed::to_blob(&embedded.vector)));
                row.embedder = Set(Some(embedded.embedder));
                Some(embedded.vector)
            }
            None => old_vector,
        };
        let db = self.db.clone();
        AtomicResponse::new(Box::pin(
            async move { row.update(&db).await }.into_actor(self).map(
                move |result, act: &mut Self, _| {
                    result?;
                    act.memories.put(memory.clone(), vector);
                    Ok(memory)
                },
            ),
        ))
    }
}

impl Handler<DeleteMemory> for ChatSession {
    type Result = AtomicResponse<Self, Result<bool, MemoryError>>;

    fn handle(&mut self, msg: DeleteMemory, _: &mut Self::Context) -> Self::Result {
        self.touch();
        if self.memories.position(&msg.id).is_none() {
            return AtomicResponse::new(Box::pin(fut::ready(Ok(false))));
        }
        let db = self.db.clone();
        let chat_id = self.chat_id.clone();
        let id = msg.id.clone();
        AtomicResponse::new(Box::pin(
            async move {
                memories::Entity::delete_many()
                    .filter(memories::Column::Id.eq(id))
                    .filter(memories::Column::ChatId.eq(chat_id))
                    .exec(&db)
                    .await
            }
            .into_actor(self)
            .map(move |result, act: &mut Self, _| {
                result?;
                Ok(act.memories.remove(&msg.id))
            }),
        ))
    }
}

impl Handler<Reembedded> for ChatSession {
    type Result = AtomicResponse<Self, ()>;

    fn handle(&mut self, msg: Reembedded, _: &mut Self::Context) -> Self::Result {
        if msg.embedder != self.memories.embedder() {
            return AtomicResponse::new(Box::pin(fut::ready(())));
        }
        let db = self.db.clone();
        let embedder = msg.embedder.clone();
        let rows: Vec<(MemoryId, String, Vec<f32>)> = msg.vectors;
        let stored = rows.clone();
        AtomicResponse::new(Box::pin(
            async move {
                use sea_orm::sea_query::Expr;
                let mut done = Vec::new();
                for (id, content, vector) in stored {
                    // Only if the content is still what was embedded (an update may have won).
                    let updated = memories::Entity::update_many()
                        .col_expr(
                            memories::Column::Embedding,
                            Expr::value(embed::to_blob(&vector)),
                        )
                        .col_expr(memories::Column::Embedder, Expr::value(embedder.clone()))
                        .filter(memories::Column::Id.eq(id.clone()))
                        .filter(memories::Column::Content.eq(content))
                        .exec(&db)
                        .await;
                    match updated {
                        Ok(result) if result.rows_affected == 1 => done.push(id),
                        Ok(_) => {}
                        Err(err) => tracing::warn!(%err, "could not store a re-embedded memory"),
                    }
                }
                done
            }
            .into_actor(self)
            .map(move |done, act: &mut Self, _| {
                for (id, _, vector) in rows {
                    if done.contains(&id)
                        && let Some(i) = act.memories.position(&id)
                        && act.memories.vectors[i].is_none()
                    {
                        act.memories.vectors[i] = Some(vector);
                    }
                }
                act.memories.rebuild();
                tracing::info!(chat_id = %act.chat_id, count = done.len(), "re-embedded memories");
            }),
        ))
    }
}

impl ChatSession {
    /// Re-embeds stale memories with the current embedder, off the mailbox, and hands the
    /// vectors back to the actor.
    pub(super) fn reembed_memories(&self, stale: Vec<(MemoryId, String)>, ctx: &mut Context<Self>) {
        if stale.is_empty() {
            return;
        }
        let embedder = self.embedder.clone();
        let addr = ctx.address();
        actix::spawn(async move {
            let texts: Vec<String> = stale.iter().map(|(_, content)| content.clone()).collect();
            match embedder.embed(texts).await {
                Ok(vectors) => {
                    let vectors = stale
                        .into_iter()
                        .zip(vectors)
                        .map(|((id, content), vector)| (id, content, vector))
                        .collect();
                    addr.do_send(Reembedded {
                        embedder: embedder.id().to_string(),
                        vectors,
                    });
                }
                Err(err) => {
                    tracing::warn!(%err, "could not re-embed memories; will retry on next load")
                }
            }
        });
    }
}

impl From<MemoryError> for AppError {
    fn from(err: MemoryError) -> Self {
        match err {
            MemoryError::Full(max) => Self::Conflict(format!(
                "this chat already holds {max} memories, the most allowed; delete some first"
            )),
            MemoryError::NotFound => Self::NotFound("memory"),
            MemoryError::StaleVector => Self::Unavailable(err.to_string()),
            MemoryError::Database(db) => Self::Database(db),
        }
    }
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

    fn row(id: &str, vector: &[f32], embedder: &str) -> memories::Model {
        memories::Model {
            id: MemoryId::from_string(id),
            chat_id: ChatId::from_string("c"),
            content: format!("memory {id}"),
            category: "fact".into(),
            embedding: Some(embed::to_blob(vector)),
            embedder: Some(embedder.into()),
            created_at: Utc::now(),
            updated_at: Utc::now(),
        }
    }

    #[test]
    fn vectors_of_another_embedder_are_stale_and_never_ranked() {
        let rows = vec![row("a", &[1.0, 0.0], "e1"), row("b", &[0.0, 1.0], "e2")];
        let (store, stale) = MemoryStore::load(rows, "e1");
        assert_eq!(
            stale,
            vec![(MemoryId::from_string("b"), "memory b".to_string())]
        );
        let ranked = store.ranked(&[0.6, 0.8]);
        assert_eq!(ranked.len(), 1);
        assert_eq!(ranked[0].0.id, "a");
        assert!((ranked[0].1 - 0.6).abs() < 1e-6);
    }

    #[test]
    fn ranking_orders_by_cosine_and_clamps_at_zero() {
        let rows = vec![
            row("far", &[-1.0, 0.0], "e"),
            row("near", &[0.9, 0.1], "e"),
            row("mid", &[0.5, 0.5], "e"),
        ];
        let (mut store, _) = MemoryStore::load(rows, "e");
        let ids: Vec<_> = store
            .ranked(&[1.0, 0.0])
            .into_iter()
            .map(|(m, s)| (m.id, s))
            .collect();
        assert_eq!(ids[0].0, "near");
        assert_eq!(ids[1].0, "mid");
        assert_eq!(ids[2], (MemoryId::from_string("far"), 0.0));
        assert!(store.remove(&MemoryId::from_string("near")));
        assert_eq!(store.ranked(&[1.0, 0.0])[0].0.id, "mid");
    }
}
