//! `ChatSession`: the actor that owns one active chat — its branch tree of messages — and is
//! the single writer for it. Every change is persisted before it is acknowledged (handlers
//! that write are `AtomicResponse`s, so no other message interleaves; a turn's start may be
//! handed to its door before its write, `BeginTurn::taken`, but never told as stored, and is
//! taken back if the write fails). It never waits on a
//! model or a tool: runs report back with `CompleteTurn`. Idle sessions stop themselves.
//!
//! Here: the actor, its loading and idling; its messages are in `messages`, and their
//! handlers by concern in `turns` (starting, ending, pausing and resuming turns), `branches`
//! (switching, importing, reading the tree) and `records` (drafts, tool call records, the
//! history summary).

use std::time::{Duration, Instant};

use actix::prelude::*;
use chrono::Utc;
use entities::ids::{ChatId, MessageId};
use entities::messages::MessageRole;
use sea_orm::{DatabaseConnection, DbErr};

use super::persistence;
use super::registry::ChatRegistry;
use super::tree::{BranchTree, MessageNode, TreeError};
use super::writer::ChatWriter;
use crate::retrieval::embed::SharedEmbedder;

/// How often an idle check runs.
mod branches;
mod messages;
mod records;
mod turns;

pub use messages::{
    Accepted, BeginTurn, CompleteTurn, GetActivePath, GetTree, ImportHistory, ImportedMessage,
    LoadHistorySummary, PauseTurn, Recall, RecordToolCalls, RemoveLeaf, ResumeTurn, SaveDeepThink,
    SaveDraft, StoreHistorySummary, SwitchBranch, Turn, TurnStarted,
};
pub use turns::{opening_message, opening_start};

const IDLE_CHECK_EVERY: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum ChatError {
    #[error(transparent)]
    Tree(#[from] TreeError),
    #[error("database error: {0}")]
    Database(DbErr),
    /// This process no longer owns the chat (another took it over): nothing was written.
    #[error(transparent)]
    Fenced(crate::cluster::Fenced),
    #[error("message content must not be empty")]
    EmptyContent,
    /// A chat's opening message (`Turn::Opening`) came to a chat that has messages already.
    #[error("the chat already has messages: its first message was given as if it had none")]
    NotNew,
}

impl From<DbErr> for ChatError {
    fn from(err: DbErr) -> Self {
        match crate::cluster::Fenced::parse(&err) {
            Some(fenced) => Self::Fenced(fenced),
            None => Self::Database(err),
        }
    }
}

/// A new message of the tree: a fresh id, `seq`, made now.
fn new_node(
    parent_id: Option<MessageId>,
    role: MessageRole,
    content: Option<String>,
    seq: i64,
) -> MessageNode {
    MessageNode {
        id: MessageId::generate(),
        parent_id,
        role,
        content,
        parts: None,
        tool_calls: None,
        tool_call_id: None,
        run_id: None,
        stop_reason: None,
        reasoning: None,
        model: None,
        seq,
        created_at: Utc::now(),
        tokens: Default::default(),
    }
}

pub struct ChatSession {
    pub(super) chat_id: ChatId,
    pub(super) db: DatabaseConnection,
    /// Every write of the chat goes through it (fenced with a cluster).
    pub(super) writer: ChatWriter,
    tree: BranchTree,
    /// Model-made artifacts by identifier (see `artifacts`).
    pub(super) artifacts: super::artifacts::Directory,
    /// Memories and their vector matrix (see `memory`).
    pub(super) memories: super::memory::MemoryStore,
    pub(super) embedder: SharedEmbedder,
    registry: ChatRegistry,
    active_runs: usize,
    last_activity: Instant,
    idle_after: Duration,
    /// Whether `started` reads the chat back (false for a chat just made, which holds nothing).
    load: bool,
    /// Whether a question may be pending in the chat (a turn then cancels it): not in a chat
    /// just made, nor after a turn cancelled them, until a run pauses on one.
    pub(super) may_have_asks: bool,
}

impl ChatSession {
    pub fn new(
        chat_id: ChatId,
        db: DatabaseConnection,
        registry: ChatRegistry,
        idle_after: Duration,
        embedder: SharedEmbedder,
    ) -> Self {
        Self {
            writer: ChatWriter::new(&registry, db.clone(), &chat_id),
            chat_id,
            db,
            tree: BranchTree::new(),
            artifacts: Default::default(),
            memories: super::memory::MemoryStore::default(),
            embedder,
            registry,
            active_runs: 0,
            last_activity: Instant::now(),
            idle_after,
            load: true,
            may_have_asks: true,
        }
    }

    /// The session of a chat just made, which holds no message, artifact or memory yet: it
    /// starts empty, without reading them back.
    pub fn new_chat(self) -> Self {
        // Its memories are those of the embedder it runs with, as a loaded store's are.
        let (memories, _) = super::memory::MemoryStore::load(Vec::new(), self.embedder.id());
        Self {
            load: false,
            may_have_asks: false,
            memories,
            ..self
        }
    }

    pub(super) fn touch(&mut self) {
        self.last_activity = Instant::now();
    }

    fn node(
        &self,
        parent_id: Option<MessageId>,
        role: MessageRole,
        content: Option<String>,
    ) -> MessageNode {
        new_node(parent_id, role, content, self.tree.next_seq())
    }

    /// Persists `nodes` and the new leaf, then applies them to the tree.
    fn persist(
        &mut self,
        nodes: Vec<MessageNode>,
        leaf: Option<MessageId>,
    ) -> impl ActorFuture<Self, Output = Result<(), ChatError>> + use<> {
        let writer = self.writer.clone();
        let chat_id = self.chat_id.clone();
        let stored = nodes;
        let stored_leaf = leaf.clone();
        async move {
            let write = writer.begin().await?;
            persistence::store_messages(write.db(), &chat_id, &stored, stored_leaf.as_ref())
                .await?;
            write.commit().await?;
            writer.messages_changed();
            Ok::<_, DbErr>(crate::chat::tree::count_tokens(stored).await)
        }
        .into_actor(self)
        .map(move |result, act: &mut Self, _| {
            for node in result? {
                act.tree.insert(node)?;
            }
            if let Some(leaf) = leaf {
                act.tree.switch_to(&leaf)?;
            }
            Ok(())
        })
    }
}

impl Actor for ChatSession {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        if self.load {
            self.load(ctx);
        }
        ctx.run_interval(IDLE_CHECK_EVERY.min(self.idle_after), |act, ctx| {
            if act.active_runs == 0 && act.last_activity.elapsed() >= act.idle_after {
                tracing::debug!(chat_id = %act.chat_id, "passivating idle chat");
                ctx.stop();
            }
        });
    }

    fn stopped(&mut self, ctx: &mut Self::Context) {
        self.registry.remove(&self.chat_id, &ctx.address());
    }
}

impl ChatSession {
    /// Reads the chat's messages, artifacts and memories before any other message is handled.
    fn load(&mut self, ctx: &mut Context<Self>) {
        let db = self.db.clone();
        let chat_id = self.chat_id.clone();
        // `wait` holds every other message until the chat is loaded.
        ctx.wait(
            async move {
                let (nodes, leaf) = persistence::load_messages(&db, &chat_id).await?;
                let messages = (crate::chat::tree::count_tokens(nodes).await, leaf);
                let artifacts = super::artifacts::load_directory(&db, &chat_id).await?;
                let memories = super::memory::load_rows(&db, &chat_id).await?;
                Ok::<_, DbErr>((messages, artifacts, memories))
            }
            .into_actor(self)
            .map(|loaded, act, ctx| {
                let built = loaded.map_err(ChatError::from).and_then(
                    |((nodes, leaf), artifacts, memories)| {
                        let tree = BranchTree::from_nodes(nodes, leaf.as_ref())?;
                        Ok((tree, artifacts, memories))
                    },
                );
                match built {
                    Ok((tree, artifacts, memories)) => {
                        act.tree = tree;
                        act.artifacts = artifacts;
                        let (store, stale) =
                            super::memory::MemoryStore::load(memories, act.embedder.id());
                        act.memories = store;
                        act.reembed_memories(stale, ctx);
                    }
                    Err(err) => {
                        tracing::error!(chat_id = %act.chat_id, %err, "cannot load chat");
                        ctx.stop();
                    }
                }
            }),
        );
    }
}

#[cfg(test)]
mod tests;
