//! A turn's life in the session: begun (the user message and the run stored, the branch
//! moved), completed (the answer and the outcome in one transaction), paused on a question
//! or on client tools, and resumed.

use actix::prelude::*;
use entities::ids::{MessageId, RunId};
use entities::messages::MessageRole;

use super::messages::{BeginTurn, CompleteTurn, PauseTurn, Recall, ResumeTurn, Turn, TurnStarted};
use super::{ChatError, ChatSession};
use crate::chat::attachments::ImagePart;
use crate::chat::persistence::{self, NewRun};
use crate::chat::tree::{BranchTree, MessageNode, TreeError};
use crate::run::events::StopReason;

impl Handler<BeginTurn> for ChatSession {
    type Result = AtomicResponse<Self, Result<TurnStarted, ChatError>>;

    fn handle(&mut self, msg: BeginTurn, _: &mut Self::Context) -> Self::Result {
        self.touch();
        let prepared = match &msg.turn {
            Turn::Send {
                parent_id,
                content,
                images,
            } => {
                let parent = match parent_id {
                    Some(id) => self
                        .tree
                        .get(id)
                        .map(|n| Some(n.id.clone()))
                        .ok_or_else(|| ChatError::Tree(TreeError::UnknownMessage(id.clone()))),
                    None => Ok(self.tree.active_leaf().cloned()),
                };
                parent.and_then(|parent| self.user_node(parent, content, images, &msg.run_id))
            }
            Turn::Edit {
                message_id,
                content,
                images,
            } => self
                .tree
                .edit_parent(message_id)
                .map_err(ChatError::from)
                .and_then(|parent| self.user_node(parent, content, images, &msg.run_id)),
            Turn::Regenerate { message_id } => self
                .tree
                .regenerate_parent(message_id)
                .map_err(ChatError::from)
                .and_then(|parent| {
                    parent
                        .ok_or_else(|| TreeError::NotAnAssistantMessage(message_id.clone()).into())
                })
                .map(|parent| (None, parent)),
            // Its start was told from the message alone: right only while the chat is empty.
            Turn::Opening { node } if self.tree.is_empty() && node.seq == self.tree.next_seq() => {
                Ok((Some(node.as_ref().clone()), node.id.clone()))
            }
            Turn::Opening { .. } => Err(ChatError::NotNew),
        };
        let (new_node, user_message_id) = match prepared {
            Ok(prepared) => prepared,
            Err(err) => return AtomicResponse::new(Box::pin(fut::ready(Err(err)))),
        };
        // Taken: nothing but the write can refuse it now.
        if let Some(accepted) = msg.on_accepted {
            accepted(&user_message_id);
        }
        let recall = self.recall_for(msg.recall, new_node.as_ref(), &user_message_id);
        let writer = self.writer.clone();
        let chat_id = self.chat_id.clone();
        let history_budget = msg.history_budget;
        let taken = msg.taken;
        let nodes: Vec<MessageNode> = new_node.into_iter().collect();
        let leaf = user_message_id.clone();
        let cancel_asks = self.may_have_asks;
        // One transaction: the chat (when the turn makes it), the message, the leaf, the run and
        // the questions it cancels.
        let (run_id, user_id, options) = (msg.run_id, msg.user_id, msg.options);
        let new_chat = msg.new_chat;
        // The run's user owns the chat: its messages go to that user's search index.
        let owner = user_id.clone();
        let db = self.db.clone();
        let write = move |nodes: Vec<MessageNode>| async move {
            // What the write cancels is read before it (a recorded write reads nothing).
            let pending = if cancel_asks {
                crate::chat::asks::pending_in(&db, &chat_id).await?
            } else {
                Vec::new()
            };
            let updated_at = persistence::updated_now();
            let (nodes, cancelled) = writer
                .transact(move |txn| {
                    Box::pin(async move {
                        let cancelled = persistence::begin_turn(
                            txn,
                            new_chat,
                            &nodes,
                            &leaf,
                            &pending,
                            NewRun {
                                id: &run_id,
                                chat_id: &chat_id,
                                user_id: &user_id,
                                user_message_id: Some(&leaf),
                                options,
                            },
                            updated_at,
                        )
                        .await?;
                        Ok((nodes, cancelled))
                    })
                })
                .await?;
            writer.messages_stored(Some(&owner), &nodes, updated_at);
            Ok::<_, sea_orm::DbErr>(cancelled)
        };
        // The user's message is embedded while its tokens are counted.
        let embedder = self.embedder.clone();
        let query = async move {
            let (recall, text) = recall?;
            match crate::retrieval::embed::embed_one(embedder.as_ref(), &text).await {
                Ok(vector) => Some((recall, vector)),
                Err(err) => {
                    tracing::warn!(%err, "could not embed the message for memory injection");
                    None
                }
            }
        };
        let counted = futures_util::future::join(crate::chat::tree::count_tokens(nodes), query);
        // The turn is applied to the tree before it is written, where nothing else sees it
        // until the write ends (the response is atomic), and taken back if the write fails:
        // so `taken` learns the turn's context without waiting for the write.
        let begun = counted.into_actor(self).map(move |(nodes, query), act, _| {
            let previous_leaf = act.tree.active_leaf().cloned();
            let applied = act.apply_turn(&nodes, &user_message_id, history_budget, query);
            let started = match applied {
                Ok(started) => started,
                Err(err) => {
                    act.take_back_turn(&nodes, previous_leaf);
                    return Err(err);
                }
            };
            if let Some(taken) = taken {
                let _ = taken.send(started.clone());
            }
            Ok((started, nodes, previous_leaf))
        });
        AtomicResponse::new(Box::pin(begun.then(move |begun, act, _| {
            let (started, nodes, previous_leaf) = match begun {
                Ok(begun) => begun,
                Err(err) => return Box::pin(fut::ready(Err(err))) as ResponseActFuture<_, _>,
            };
            let written = write(nodes.clone()).into_actor(act);
            Box::pin(written.map(move |written, act, _| match written {
                Ok(cancelled_asks) => {
                    // Every question pending in the chat was cancelled with the turn.
                    act.may_have_asks = false;
                    act.active_runs += 1;
                    Ok(TurnStarted {
                        cancelled_asks,
                        ..started
                    })
                }
                Err(err) => {
                    act.take_back_turn(&nodes, previous_leaf);
                    Err(err.into())
                }
            }))
        })))
    }
}

impl ChatSession {
    /// Applies a turn to the tree: its new user message (`nodes`) inserted and the branch
    /// moved to `user_message_id`; returns its start, with the memories `query` recalls (its
    /// cancelled questions are the write's to tell).
    fn apply_turn(
        &mut self,
        nodes: &[MessageNode],
        user_message_id: &MessageId,
        history_budget: Option<u64>,
        query: Option<(Recall, Vec<f32>)>,
    ) -> Result<TurnStarted, ChatError> {
        for node in nodes {
            self.tree.insert(node.clone())?;
        }
        self.tree.switch_to(user_message_id)?;
        let (path, left_out) =
            self.tree
                .context_path(user_message_id, history_budget, MessageNode::history_tokens)?;
        let memories = query
            .map(|(recall, vector)| {
                self.memories
                    .recall(&vector, recall.limit, recall.min_relevance)
                    .into_iter()
                    .map(|(memory, _)| memory)
                    .collect()
            })
            .unwrap_or_default();
        Ok(TurnStarted {
            user_message_id: user_message_id.clone(),
            context: path.into_iter().cloned().collect(),
            left_out: left_out.iter().map(|node| node.role).collect(),
            cancelled_asks: Vec::new(),
            memories,
        })
    }

    /// Takes back a turn `apply_turn` applied and its write refused: its new message leaves
    /// the tree and the branch goes back to `previous_leaf`.
    fn take_back_turn(&mut self, nodes: &[MessageNode], previous_leaf: Option<MessageId>) {
        for node in nodes {
            if self.tree.get(&node.id).is_some() {
                let _ = self.tree.remove_subtree(&node.id);
            }
        }
        if let Some(leaf) = previous_leaf {
            let _ = self.tree.switch_to(&leaf);
        }
    }

    /// What a turn recalls its memories by, when it asked to (`recall`) and the chat has a
    /// memory to recall: the text of its user message (`new_node`, else `user_message_id`,
    /// the message a regenerated answer replies to).
    fn recall_for(
        &self,
        recall: Option<Recall>,
        new_node: Option<&MessageNode>,
        user_message_id: &MessageId,
    ) -> Option<(Recall, String)> {
        let recall = recall.filter(|recall| recall.limit > 0)?;
        if !self.memories.recallable() {
            return None;
        }
        let text = new_node
            .or_else(|| self.tree.get(user_message_id))?
            .content
            .clone()?;
        (!text.trim().is_empty()).then_some((recall, text))
    }

    /// A new user message under `parent` (text, images, or both); returns it and its id.
    fn user_node(
        &self,
        parent: Option<MessageId>,
        content: &str,
        images: &[ImagePart],
        run_id: &RunId,
    ) -> Result<(Option<MessageNode>, MessageId), ChatError> {
        let node = user_message(parent, self.tree.next_seq(), content, images, run_id)?;
        let id = node.id.clone();
        Ok((Some(node), id))
    }
}

/// A new user message of run `run_id` under `parent`, numbered `seq`.
fn user_message(
    parent: Option<MessageId>,
    seq: i64,
    content: &str,
    images: &[ImagePart],
    run_id: &RunId,
) -> Result<MessageNode, ChatError> {
    if content.trim().is_empty() && images.is_empty() {
        return Err(ChatError::EmptyContent);
    }
    let mut node = super::new_node(parent, MessageRole::User, Some(content.to_string()), seq);
    node.parts = ImagePart::parts_of(images);
    node.run_id = Some(run_id.clone());
    Ok(node)
}

/// The first message of a chat just made, for `Turn::Opening`: numbered as an empty chat's
/// first.
pub fn opening_message(
    content: &str,
    images: &[ImagePart],
    run_id: &RunId,
) -> Result<MessageNode, ChatError> {
    user_message(None, BranchTree::new().next_seq(), content, images, run_id)
}

/// The start of the turn an empty chat takes with `Turn::Opening { node }`, known without
/// asking it: the one message as its context (within `history_budget` as any turn's is), no
/// memory to recall (a new chat has none) and no question to cancel. The message's tokens are
/// counted here, once, off the session's thread (a long one on the blocking pool, as the session
/// would): it is given back counted, for the session to take without counting it again.
pub async fn opening_start(
    node: MessageNode,
    history_budget: Option<u64>,
) -> Result<(MessageNode, TurnStarted), ChatError> {
    let [node] = crate::chat::tree::count_tokens([node]).await;
    let mut tree = BranchTree::new();
    tree.insert(node.clone())?;
    tree.switch_to(&node.id)?;
    let (path, left_out) =
        tree.context_path(&node.id, history_budget, MessageNode::history_tokens)?;
    let started = TurnStarted {
        user_message_id: node.id.clone(),
        context: path.into_iter().cloned().collect(),
        left_out: left_out.iter().map(|node| node.role).collect(),
        cancelled_asks: Vec::new(),
        memories: Vec::new(),
    };
    Ok((node, started))
}

impl Handler<CompleteTurn> for ChatSession {
    type Result = AtomicResponse<Self, Result<Option<MessageId>, ChatError>>;

    fn handle(&mut self, mut msg: CompleteTurn, _: &mut Self::Context) -> Self::Result {
        self.touch();
        self.active_runs = self.active_runs.saturating_sub(1);
        // A turn that ended without text is still answered on its branch (its run holds the
        // error), so the history never has a question left hanging and roles alternate.
        let ended_early = !matches!(msg.stop_reason, StopReason::Completed | StopReason::Paused);
        let has_answer = !msg.content.is_empty()
            || msg.parts.is_some()
            || msg.reasoning.is_some()
            || ended_early;
        let answer = has_answer.then(|| {
            let mut node = self.node(
                Some(msg.user_message_id.clone()),
                MessageRole::Assistant,
                Some(msg.content.clone()),
            );
            node.parts = msg.parts.clone();
            node.reasoning = msg.reasoning.clone();
            node.model = msg.model.clone();
            node.run_id = Some(msg.run_id.clone());
            node.stop_reason = Some(msg.stop_reason);
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
            stop_reason: msg.stop_reason,
            assistant_message_id: answer_id.clone(),
            iterations: msg.iterations,
            input_tokens: msg.usage.prompt_tokens,
            output_tokens: msg.usage.completion_tokens,
            error: msg.error.clone(),
        };
        let writer = self.writer.clone();
        let chat_id = self.chat_id.clone();
        let stored_leaf = leaf.clone();
        let on_commit = msg.stored.take().map(|stored| {
            let answer_id = answer_id.clone();
            Box::new(move |outcome: Result<(), &sea_orm::DbErr>| {
                let _ = stored.send(outcome.map(|()| answer_id).map_err(ToString::to_string));
            }) as crate::chat::group_commit::OnCommit
        });
        AtomicResponse::new(Box::pin(
            async move {
                let completes_ask = msg.completes_ask;
                let updated_at = persistence::updated_now();
                let nodes = writer
                    .transact_telling(
                        move |txn| {
                            Box::pin(async move {
                                persistence::complete_turn(
                                    txn,
                                    &chat_id,
                                    &nodes,
                                    stored_leaf.as_ref(),
                                    run,
                                    completes_ask.as_ref(),
                                    updated_at,
                                )
                                .await?;
                                Ok(nodes)
                            })
                        },
                        on_commit,
                    )
                    .await?;
                writer.messages_stored(None, &nodes, updated_at);
                Ok::<_, sea_orm::DbErr>(crate::chat::tree::count_tokens(nodes).await)
            }
            .into_actor(self)
            .map(move |result, act, _| {
                let nodes = result?;
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
        self.may_have_asks = true;
        let writer = self.writer.clone();
        let run = persistence::FinishedRun {
            id: msg.ask.run_id.clone(),
            status: StopReason::Paused.run_status(),
            stop_reason: msg.stop_reason,
            assistant_message_id: None,
            iterations: msg.iterations,
            input_tokens: msg.usage.prompt_tokens,
            output_tokens: msg.usage.completion_tokens,
            error: None,
        };
        AtomicResponse::new(Box::pin(
            async move {
                let ask = msg.ask;
                writer
                    .transact(move |txn| Box::pin(persistence::pause_run(txn, ask, run)))
                    .await
            }
            .into_actor(self)
            .map(|result, _, _| result.map_err(ChatError::from)),
        ))
    }
}

impl Handler<ResumeTurn> for ChatSession {
    type Result = AtomicResponse<Self, Result<(), ChatError>>;

    fn handle(&mut self, msg: ResumeTurn, _: &mut Self::Context) -> Self::Result {
        self.touch();
        let writer = self.writer.clone();
        AtomicResponse::new(Box::pin(
            async move {
                writer
                    .write(move |txn| {
                        Box::pin(async move { persistence::resume_run(txn, &msg.run_id).await })
                    })
                    .await
            }
            .into_actor(self)
            .map(|result, act, _| {
                result?;
                act.active_runs += 1;
                Ok(())
            }),
        ))
    }
}
