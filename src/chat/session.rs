//! `ChatSession`: the actor that owns one active chat — its branch tree of messages — and is
//! the single writer for it. Every change is persisted before it is acknowledged (handlers
//! that write are `AtomicResponse`s, so no other message interleaves). It never waits on a
//! model or a tool: runs report back with `CompleteTurn`. Idle sessions stop themselves.

use std::time::{Duration, Instant};

use actix::prelude::*;
use chrono::Utc;
use entities::ids::{ChatId, MessageId, RunId, UserId};
use entities::messages::MessageRole;
use sea_orm::{DatabaseConnection, DbErr};
use serde_json::Value;

use super::persistence::{self, NewRun};
use super::registry::ChatRegistry;
use super::tree::{BranchTree, MessageNode, TreeError};
use crate::llm::wire::Usage;
use crate::retrieval::embed::SharedEmbedder;
use crate::run::events::StopReason;

/// How often an idle check runs.
const IDLE_CHECK_EVERY: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum ChatError {
    #[error(transparent)]
    Tree(#[from] TreeError),
    #[error("database error: {0}")]
    Database(#[from] DbErr),
    #[error("message content must not be empty")]
    EmptyContent,
}

/// What a new turn starts from.
#[derive(Debug, Clone)]
pub enum Turn {
    /// A new user message after `parent_id` (the active leaf when `None`).
    Send {
        parent_id: Option<MessageId>,
        content: String,
    },
    /// A new version of user message `message_id`, as its sibling.
    Edit {
        message_id: MessageId,
        content: String,
    },
    /// A new answer to the user message that assistant message `message_id` answered.
    Regenerate { message_id: MessageId },
}

/// A turn's persisted start: the user message the answer will reply to, and the active path
/// up to and including it (exactly what the model is sent).
#[derive(Debug, Clone)]
pub struct TurnStarted {
    pub user_message_id: MessageId,
    pub context: Vec<MessageNode>,
    /// Questions that were pending in this chat and are now cancelled: the conversation moved on.
    pub cancelled_asks: Vec<String>,
}

/// Starts a turn: stores the user message (send, edit) and the run row, and moves the active
/// branch.
#[derive(Message)]
#[rtype(result = "Result<TurnStarted, ChatError>")]
pub struct BeginTurn {
    pub turn: Turn,
    pub run_id: RunId,
    pub user_id: UserId,
    pub options: Option<Value>,
}

/// Ends a turn: stores the assistant's answer (if any) and the run's outcome.
#[derive(Message)]
#[rtype(result = "Result<Option<MessageId>, ChatError>")]
pub struct CompleteTurn {
    pub run_id: RunId,
    pub user_message_id: MessageId,
    pub content: String,
    pub parts: Option<Value>,
    pub stop_reason: StopReason,
    pub usage: Usage,
    pub iterations: u32,
    pub error: Option<String>,
    /// The ask whose answer this run continued from (its correlation id), completed in the
    /// same transaction.
    pub completes_ask: Option<String>,
}

/// Saves the answer text a running run has streamed so far, so a crash does not lose it.
/// Sent about once a second while text streams; a draft arriving after the run finished is
/// ignored.
#[derive(Message)]
#[rtype(result = "()")]
pub struct SaveDraft {
    pub run_id: RunId,
    pub content: String,
}

/// Adds a round of tool calls to the run's record (shown under its answer after a reload).
#[derive(Message)]
#[rtype(result = "()")]
pub struct RecordToolCalls {
    pub run_id: RunId,
    pub calls: Vec<persistence::ToolCallRecord>,
}

/// The chat's kept summary of its oldest history (`None` if none, or unreadable).
#[derive(Message)]
#[rtype(result = "Option<persistence::HistorySummary>")]
pub struct LoadHistorySummary;

/// Keeps a new summary of the chat's oldest history.
#[derive(Message)]
#[rtype(result = "()")]
pub struct StoreHistorySummary(pub persistence::HistorySummary);

/// Pauses a run on a question, or on the client's tool calls: stores the pending ask and
/// marks the run paused, with `stop_reason` (`paused` or `tool_calls`).
#[derive(Message)]
#[rtype(result = "Result<(), ChatError>")]
pub struct PauseTurn {
    pub ask: super::asks::NewAsk,
    pub stop_reason: StopReason,
    pub usage: Usage,
    pub iterations: u32,
}

/// Marks a paused run running again (its question was answered).
#[derive(Message)]
#[rtype(result = "Result<(), ChatError>")]
pub struct ResumeTurn {
    pub run_id: RunId,
}

/// Selects the branch that contains `message_id` (its latest leaf becomes active).
#[derive(Message)]
#[rtype(result = "Result<MessageId, ChatError>")]
pub struct SwitchBranch {
    pub message_id: MessageId,
}

/// Stores a conversation given whole (an OpenAI request with `store: true`) as a chain.
#[derive(Message)]
#[rtype(result = "Result<Option<MessageId>, ChatError>")]
pub struct ImportHistory {
    /// (role, content) pairs, oldest first.
    pub messages: Vec<(MessageRole, String)>,
}

/// The active branch, root first.
#[derive(Message)]
#[rtype(result = "Vec<MessageNode>")]
pub struct GetActivePath;

/// Every message with whether it is on the active branch.
#[derive(Message)]
#[rtype(result = "Vec<(MessageNode, bool)>")]
pub struct GetTree;

pub struct ChatSession {
    pub(super) chat_id: ChatId,
    pub(super) db: DatabaseConnection,
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
            seq: self.tree.next_seq(),
            created_at: Utc::now(),
        }
    }

    /// Persists `nodes` and the new leaf, then applies them to the tree.
    fn persist(
        &mut self,
        nodes: Vec<MessageNode>,
        leaf: Option<MessageId>,
    ) -> impl ActorFuture<Self, Output = Result<(), ChatError>> + use<> {
        let db = self.db.clone();
        let chat_id = self.chat_id.clone();
        let stored = nodes.clone();
        let stored_leaf = leaf.clone();
        async move {
            persistence::store_messages(&db, &chat_id, &stored, stored_leaf.as_ref()).await
        }
        .into_actor(self)
        .map(move |result, act: &mut Self, _| {
            result?;
            for node in nodes {
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
        let db = self.db.clone();
        let chat_id = self.chat_id.clone();
        // `wait` holds every other message until the chat is loaded.
        ctx.wait(
            async move {
                let messages = persistence::load_messages(&db, &chat_id).await?;
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

impl Handler<BeginTurn> for ChatSession {
    type Result = AtomicResponse<Self, Result<TurnStarted, ChatError>>;

    fn handle(&mut self, msg: BeginTurn, _: &mut Self::Context) -> Self::Result {
        self.touch();
        let prepared = match &msg.turn {
            Turn::Send { parent_id, content } => {
                let parent = match parent_id {
                    Some(id) => self
                        .tree
                        .get(id)
                        .map(|n| Some(n.id.clone()))
                        .ok_or_else(|| ChatError::Tree(TreeError::UnknownMessage(id.clone()))),
                    None => Ok(self.tree.active_leaf().cloned()),
                };
                parent.and_then(|parent| self.user_node(parent, content, &msg.run_id))
            }
            Turn::Edit {
                message_id,
                content,
            } => self
                .tree
                .edit_parent(message_id)
                .map_err(ChatError::from)
                .and_then(|parent| self.user_node(parent, content, &msg.run_id)),
            Turn::Regenerate { message_id } => self
                .tree
                .regenerate_parent(message_id)
                .map_err(ChatError::from)
                .and_then(|parent| {
                    parent
                        .ok_or_else(|| TreeError::NotAnAssistantMessage(message_id.clone()).into())
                })
                .map(|parent| (None, parent)),
        };
        let (new_node, user_message_id) = match prepared {
            Ok(prepared) => prepared,
            Err(err) => return AtomicResponse::new(Box::pin(fut::ready(Err(err)))),
        };
        let db = self.db.clone();
        let chat_id = self.chat_id.clone();
        let run_user_message = user_message_id.clone();
        let nodes: Vec<MessageNode> = new_node.into_iter().collect();
        let persist = self.persist(nodes, Some(user_message_id.clone()));
        let record_run = async move {
            persistence::insert_run(
                &db,
                NewRun {
                    id: &msg.run_id,
                    chat_id: &chat_id,
                    user_id: &msg.user_id,
                    user_message_id: Some(&run_user_message),
                    options: msg.options,
                },
            )
            .await?;
            super::asks::cancel_pending(&db, &chat_id).await
        }
        .into_actor(self);
        AtomicResponse::new(Box::pin(persist.then(move |stored, act, _| {
            let context = stored.and_then(|()| {
                Ok(act
                    .tree
                    .path_to(&user_message_id)?
                    .into_iter()
                    .cloned()
                    .collect::<Vec<_>>())
            });
            record_run.map(move |recorded, act: &mut Self, _| {
                let context = context?;
                let cancelled_asks = recorded?;
                act.active_runs += 1;
                Ok(TurnStarted {
                    user_message_id,
                    context,
                    cancelled_asks,
                })
            })
        })))
    }
}

impl ChatSession {
    /// A new user message under `parent`; returns it and its id.
    fn user_node(
        &self,
        parent: Option<MessageId>,
        content: &str,
        run_id: &RunId,
    ) -> Result<(Option<MessageNode>, MessageId), ChatError> {
        if content.trim().is_empty() {
            return Err(ChatError::EmptyContent);
        }
        let mut node = self.node(parent, MessageRole::User, Some(content.to_string()));
        node.run_id = Some(run_id.clone());
        let id = node.id.clone();
        Ok((Some(node), id))
    }
}

impl Handler<CompleteTurn> for ChatSession {
    type Result = AtomicResponse<Self, Result<Option<MessageId>, ChatError>>;

    fn handle(&mut self, msg: CompleteTurn, _: &mut Self::Context) -> Self::Result {
        self.touch();
        self.active_runs = self.active_runs.saturating_sub(1);
        // A turn that ended without text is still answered on its branch (its run holds the
        // error), so the history never has a question left hanging and roles alternate.
        let ended_early = !matches!(msg.stop_reason, StopReason::Completed | StopReason::Paused);
        let has_answer = !msg.content.is_empty() || msg.parts.is_some() || ended_early;
        let answer = has_answer.then(|| {
            let mut node = self.node(
                Some(msg.user_message_id.clone()),
                MessageRole::Assistant,
                Some(msg.content.clone()),
            );
            node.parts = msg.parts.clone();
            node.run_id = Some(msg.run_id.clone());
            node.stop_reason = Some(msg.stop_reason.as_str().to_string());
            node
        });
        let answer_id = answer.as_ref().map(|n| n.id.clone());
        // The answer becomes the active leaf only if the user is still on that branch.
        let leaf = if self.tree.is_on_active_path(&msg.user_message_id) {
            answer_id.clone()
        } else {
            self.tree.active_leaf().cloned()
        };
        let nodes: Vec<MessageNode> = answer.into_iter().collect();
        let run = persistence::FinishedRun {
            id: msg.run_id.clone(),
            status: msg.stop_reason.run_status(),
            stop_reason: msg.stop_reason.as_str(),
            assistant_message_id: answer_id.clone(),
            iterations: msg.iterations,
            input_tokens: msg.usage.prompt_tokens,
            output_tokens: msg.usage.completion_tokens,
            error: msg.error.clone(),
        };
        let db = self.db.clone();
        let chat_id = self.chat_id.clone();
        let stored = nodes.clone();
        let stored_leaf = leaf.clone();
        AtomicResponse::new(Box::pin(
            async move {
                persistence::complete_turn(
                    &db,
                    &chat_id,
                    &stored,
                    stored_leaf.as_ref(),
                    run,
                    msg.completes_ask.as_deref(),
                )
                .await
            }
            .into_actor(self)
            .map(move |result, act, _| {
                result?;
                let inserted = !nodes.is_empty();
                for node in nodes {
                    act.tree.insert(node)?;
                }
                if inserted && let Some(leaf) = leaf {
                    act.tree.switch_to(&leaf)?;
                }
                Ok(answer_id)
            }),
        ))
    }
}

impl Handler<PauseTurn> for ChatSession {
    type Result = AtomicResponse<Self, Result<(), ChatError>>;

    fn handle(&mut self, msg: PauseTurn, _: &mut Self::Context) -> Self::Result {
        self.touch();
        self.active_runs = self.active_runs.saturating_sub(1);
        let db = self.db.clone();
        let run = persistence::FinishedRun {
            id: msg.ask.run_id.clone(),
            status: StopReason::Paused.run_status(),
            stop_reason: msg.stop_reason.as_str(),
            assistant_message_id: None,
            iterations: msg.iterations,
            input_tokens: msg.usage.prompt_tokens,
            output_tokens: msg.usage.completion_tokens,
            error: None,
        };
        AtomicResponse::new(Box::pin(
            async move { persistence::pause_run(&db, msg.ask, run).await }
                .into_actor(self)
                .map(|result, _, _| result.map_err(ChatError::from)),
        ))
    }
}

impl Handler<SaveDraft> for ChatSession {
    type Result = AtomicResponse<Self, ()>;

    fn handle(&mut self, msg: SaveDraft, _: &mut Self::Context) -> Self::Result {
        self.touch();
        let db = self.db.clone();
        AtomicResponse::new(Box::pin(
            async move {
                if let Err(err) = super::recovery::save_draft(&db, &msg.run_id, &msg.content).await
                {
                    tracing::warn!(run_id = %msg.run_id, %err, "could not save a run's draft");
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
        let db = self.db.clone();
        AtomicResponse::new(Box::pin(
            async move {
                if let Err(err) = persistence::append_tool_calls(&db, &msg.run_id, msg.calls).await
                {
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
        let (db, chat_id) = (self.db.clone(), self.chat_id.clone());
        AtomicResponse::new(Box::pin(
            async move {
                if let Err(err) = persistence::store_history_summary(&db, &chat_id, &msg.0).await {
                    tracing::warn!(%chat_id, %err, "could not keep the chat's history summary");
                }
            }
            .into_actor(self),
        ))
    }
}

impl Handler<ResumeTurn> for ChatSession {
    type Result = AtomicResponse<Self, Result<(), ChatError>>;

    fn handle(&mut self, msg: ResumeTurn, _: &mut Self::Context) -> Self::Result {
        self.touch();
        let db = self.db.clone();
        AtomicResponse::new(Box::pin(
            async move { persistence::resume_run(&db, &msg.run_id).await }
                .into_actor(self)
                .map(|result, act, _| {
                    result?;
                    act.active_runs += 1;
                    Ok(())
                }),
        ))
    }
}

impl Handler<SwitchBranch> for ChatSession {
    type Result = AtomicResponse<Self, Result<MessageId, ChatError>>;

    fn handle(&mut self, msg: SwitchBranch, _: &mut Self::Context) -> Self::Result {
        self.touch();
        let leaf = match self.tree.latest_leaf_under(&msg.message_id) {
            Ok(leaf) => leaf.clone(),
            Err(err) => return AtomicResponse::new(Box::pin(fut::ready(Err(err.into())))),
        };
        let db = self.db.clone();
        let chat_id = self.chat_id.clone();
        let stored_leaf = leaf.clone();
        AtomicResponse::new(Box::pin(
            async move { persistence::set_active_leaf(&db, &chat_id, Some(&stored_leaf)).await }
                .into_actor(self)
                .map(move |result, act, _| {
                    result?;
                    act.tree.switch_to(&leaf)?;
                    Ok(leaf)
                }),
        ))
    }
}

impl Handler<ImportHistory> for ChatSession {
    type Result = AtomicResponse<Self, Result<Option<MessageId>, ChatError>>;

    fn handle(&mut self, msg: ImportHistory, _: &mut Self::Context) -> Self::Result {
        self.touch();
        let mut parent = self.tree.active_leaf().cloned();
        let mut nodes = Vec::with_capacity(msg.messages.len());
        for (seq, (role, content)) in (self.tree.next_seq()..).zip(msg.messages) {
            let mut node = self.node(parent.clone(), role, Some(content));
            node.seq = seq;
            parent = Some(node.id.clone());
            nodes.push(node);
        }
        let leaf = parent.clone();
        AtomicResponse::new(Box::pin(
            self.persist(nodes, leaf)
                .map(move |result, _, _| result.map(|()| parent)),
        ))
    }
}

impl Handler<GetActivePath> for ChatSession {
    type Result = MessageResult<GetActivePath>;

    fn handle(&mut self, _: GetActivePath, _: &mut Self::Context) -> Self::Result {
        self.touch();
        MessageResult(self.tree.active_path().into_iter().cloned().collect())
    }
}

impl Handler<GetTree> for ChatSession {
    type Result = MessageResult<GetTree>;

    fn handle(&mut self, _: GetTree, _: &mut Self::Context) -> Self::Result {
        self.touch();
        MessageResult(
            self.tree
                .nodes_in_order()
                .into_iter()
                .map(|node| (node.clone(), self.tree.is_on_active_path(&node.id)))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests;
