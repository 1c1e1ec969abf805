//! The session's memory messages — save (refusing near-duplicates and a full chat), recall,
//! list, update, delete — and their `ChatSession` handlers, each persisting before it changes
//! the `MemoryStore`.

use actix::prelude::*;
use chrono::Utc;
use entities::ids::MemoryId;
use entities::memories;
use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, Set};

use super::{Embedded, Memory, MemoryError};
use crate::chat::session::ChatSession;
use crate::retrieval::embed;

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
    /// Memories at least that similar that the caller read as other facts
    /// (`distinct_lookalikes`); any other at or above the threshold is a duplicate.
    pub distinct: Vec<MemoryId>,
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

impl Handler<SaveMemory> for ChatSession {
    type Result = AtomicResponse<Self, Result<Saved, MemoryError>>;

    fn handle(&mut self, msg: SaveMemory, _: &mut Self::Context) -> Self::Result {
        self.touch();
        if msg.embedded.embedder != self.memories.embedder() {
            return AtomicResponse::new(Box::pin(fut::ready(Err(MemoryError::StaleVector))));
        }
        if let Some((existing, similarity)) = self
            .memories
            .ranked(&msg.embedded.vector)
            .into_iter()
            .take_while(|(_, similarity)| *similarity >= msg.duplicate_threshold)
            .find(|(memory, _)| !msg.distinct.contains(&memory.id))
            .as_ref()
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
        let writer = self.writer.clone();
        let vector = msg.embedded.vector;
        AtomicResponse::new(Box::pin(
            async move {
                let write = writer.begin().await?;
                row.insert(write.db()).await?;
                write.commit().await
            }
            .into_actor(self)
            .map(move |result, act: &mut Self, _| {
                result?;
                act.memories.put(memory.clone(), Some(vector));
                Ok(Saved::Saved(memory))
            }),
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
        MessageResult(
            self.memories
                .recall(&msg.query.vector, msg.limit, msg.min_relevance),
        )
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
        let writer = self.writer.clone();
        AtomicResponse::new(Box::pin(
            async move {
                let write = writer.begin().await?;
                row.update(write.db()).await?;
                write.commit().await
            }
            .into_actor(self)
            .map(move |result, act: &mut Self, _| {
                result?;
                act.memories.put(memory.clone(), vector);
                Ok(memory)
            }),
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
        let writer = self.writer.clone();
        let chat_id = self.chat_id.clone();
        let id = msg.id.clone();
        AtomicResponse::new(Box::pin(
            async move {
                let write = writer.begin().await?;
                memories::Entity::delete_many()
                    .filter(memories::Column::Id.eq(id))
                    .filter(memories::Column::ChatId.eq(chat_id))
                    .exec(write.db())
                    .await?;
                write.commit().await
            }
            .into_actor(self)
            .map(move |result, act: &mut Self, _| {
                result?;
                Ok(act.memories.remove(&msg.id))
            }),
        ))
    }
}
