//! Re-embedding stale memories (vectors from another embedder): `ChatSession::reembed_memories`
//! embeds them off the mailbox and hands the vectors back in a `Reembedded` message, stored
//! only where the memory's content is still what was embedded.

use actix::prelude::*;
use entities::ids::MemoryId;
use entities::memories;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

use crate::chat::session::ChatSession;
use crate::retrieval::embed;

/// Vectors made in the background for memories that were stale.
#[derive(Message)]
#[rtype(result = "()")]
struct Reembedded {
    pub embedder: String,
    pub vectors: Vec<(MemoryId, String, Vec<f32>)>,
}

impl Handler<Reembedded> for ChatSession {
    type Result = AtomicResponse<Self, ()>;

    fn handle(&mut self, msg: Reembedded, _: &mut Self::Context) -> Self::Result {
        if msg.embedder != self.memories.embedder() {
            return AtomicResponse::new(Box::pin(fut::ready(())));
        }
        let writer = self.writer.clone();
        let embedder = msg.embedder.clone();
        let rows: Vec<(MemoryId, String, Vec<f32>)> = msg.vectors;
        let stored = rows.clone();
        AtomicResponse::new(Box::pin(
            async move {
                use sea_orm::sea_query::Expr;
                let write = match writer.begin().await {
                    Ok(write) => write,
                    Err(err) => {
                        tracing::warn!(%err, "could not store re-embedded memories");
                        return Vec::new();
                    }
                };
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
                        .exec(write.db())
                        .await;
                    match updated {
                        Ok(result) if result.rows_affected == 1 => done.push(id),
                        Ok(_) => {}
                        Err(err) => tracing::warn!(%err, "could not store a re-embedded memory"),
                    }
                }
                match write.commit().await {
                    Ok(()) => done,
                    Err(err) => {
                        tracing::warn!(%err, "could not store re-embedded memories");
                        Vec::new()
                    }
                }
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
    pub(in crate::chat) fn reembed_memories(
        &self,
        stale: Vec<(MemoryId, String)>,
        ctx: &mut Context<Self>,
    ) {
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
