//! What a session keeps for its runs beside the messages: the draft of an answer still
//! streaming, the record of a run's tool calls, and the chat's history summary.

use actix::prelude::*;

use super::ChatSession;
use super::messages::{
    LoadHistorySummary, RecordToolCalls, SaveDeepThink, SaveDraft, StoreHistorySummary,
};
use crate::chat::persistence;

impl Handler<SaveDraft> for ChatSession {
    type Result = AtomicResponse<Self, ()>;

    fn handle(&mut self, msg: SaveDraft, _: &mut Self::Context) -> Self::Result {
        self.touch();
        let writer = self.writer.clone();
        AtomicResponse::new(Box::pin(
            async move {
                let run_id = msg.run_id.clone();
                let saved = writer
                    .write(move |txn| {
                        Box::pin(async move {
                            crate::chat::recovery::save_draft(txn, &run_id, &msg.content).await
                        })
                    })
                    .await;
                if let Err(err) = saved {
                    tracing::warn!(run_id = %msg.run_id, %err, "could not save a run's draft");
                }
            }
            .into_actor(self),
        ))
    }
}

impl Handler<SaveDeepThink> for ChatSession {
    type Result = AtomicResponse<Self, ()>;

    /// Atomic, so checkpoints are written in the order they were made.
    fn handle(&mut self, msg: SaveDeepThink, _: &mut Self::Context) -> Self::Result {
        self.touch();
        let writer = self.writer.clone();
        AtomicResponse::new(Box::pin(
            async move {
                let run_id = msg.run_id.clone();
                let saved = writer
                    .write(move |txn| {
                        Box::pin(async move {
                            persistence::save_deep_think(txn, &run_id, msg.checkpoint).await
                        })
                    })
                    .await;
                if let Err(err) = saved {
                    tracing::warn!(run_id = %msg.run_id, %err, "could not save a Deep Think checkpoint");
                }
            }
            .into_actor(self),
        ))
    }
}

impl Handler<RecordToolCalls> for ChatSession {
    type Result = AtomicResponse<Self, ()>;

    /// Atomic, so two rounds of one run append in order.
    fn handle(&mut self, msg: RecordToolCalls, _: &mut Self::Context) -> Self::Result {
        self.touch();
        let writer = self.writer.clone();
        AtomicResponse::new(Box::pin(
            async move {
                let recorded = async {
                    let write = writer.begin().await?;
                    persistence::append_tool_calls(write.db(), &msg.run_id, msg.calls).await?;
                    write.commit().await
                };
                if let Err(err) = recorded.await {
                    tracing::warn!(run_id = %msg.run_id, %err, "could not record a run's tool calls");
                }
            }
            .into_actor(self),
        ))
    }
}

impl Handler<LoadHistorySummary> for ChatSession {
    type Result = ResponseFuture<Option<persistence::HistorySummary>>;

    fn handle(&mut self, _: LoadHistorySummary, _: &mut Self::Context) -> Self::Result {
        self.touch();
        let (db, chat_id) = (self.db.clone(), self.chat_id.clone());
        Box::pin(async move {
            persistence::history_summary(&db, &chat_id)
                .await
                .unwrap_or_else(|err| {
                    tracing::warn!(%chat_id, %err, "could not read the chat's history summary");
                    None
                })
        })
    }
}

impl Handler<StoreHistorySummary> for ChatSession {
    type Result = AtomicResponse<Self, ()>;

    fn handle(&mut self, msg: StoreHistorySummary, _: &mut Self::Context) -> Self::Result {
        self.touch();
        let (writer, chat_id) = (self.writer.clone(), self.chat_id.clone());
        AtomicResponse::new(Box::pin(
            async move {
                let summary_chat = chat_id.clone();
                let kept = writer
                    .write(move |txn| {
                        Box::pin(async move {
                            persistence::store_history_summary(txn, &summary_chat, &msg.0).await
                        })
                    })
                    .await;
                if let Err(err) = kept {
                    tracing::warn!(%chat_id, %err, "could not keep the chat's history summary");
                }
            }
            .into_actor(self),
        ))
    }
}
