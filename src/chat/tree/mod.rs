//! `BranchTree`: the in-memory tree of one chat's messages — branches from edits and
//! regenerations, the active leaf, and the paths between them. Plain data only: no I/O, no async,
//! no persistence. Every walk is iterative and bounded by the node count, so neither a deep chain
//! nor corrupt stored data (a cycle) can overflow the stack or loop forever.
//!
//! Here: the types (`MessageNode`, `TreeError`, `BranchTree`), its plain accessors and the seq
//! order. Beside it: `build` (rebuilding from stored rows, inserting, removing a subtree) and
//! `navigate` (paths, children and siblings, selecting a branch, the edit and regenerate checks).

mod build;
mod navigate;

#[cfg(test)]
mod tests;

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use entities::ids::{MessageId, RunId};
use entities::messages::MessageRole;
use serde::Serialize;

use crate::chat::attachments::{IMAGE_TOKENS, ImagePart};

/// One stored message of a chat, as a node of the branch tree.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MessageNode {
    /// The message's id, unique within the chat.
    pub id: MessageId,
    /// The message this one follows, or `None` for a root-level message.
    pub parent_id: Option<MessageId>,
    pub role: MessageRole,
    /// Plain-text content, if any.
    pub content: Option<String>,
    /// Structured content parts, if any.
    pub parts: Option<serde_json::Value>,
    /// Tool calls requested by an assistant message, if any.
    pub tool_calls: Option<serde_json::Value>,
    /// For a tool message: the id of the call it answers.
    pub tool_call_id: Option<String>,
    /// The generation run that produced this message, if any.
    pub run_id: Option<RunId>,
    /// Why generation stopped, for an assistant message.
    pub stop_reason: Option<entities::stop_reason::StopReason>,
    /// An answer's reasoning, kept for people to read: never part of what the model is sent.
    pub reasoning: Option<Reasoning>,
    /// The model that wrote an answer.
    pub model: Option<String>,
    /// Creation order within the chat, strictly increasing.
    pub seq: i64,
    /// When the message was created.
    pub created_at: DateTime<Utc>,
    /// Its size in the model's context, once counted (see [`TokenCount`]).
    #[serde(skip)]
    pub tokens: TokenCount,
}

/// A message's size in tokens, kept with the node (a message never changes once stored), so a
/// long chat's history is tokenized once per load, not once per turn. The session counts on
/// the blocking pool: a loaded chat's messages as they load, a new message as it is stored. A
/// cache: two nodes are equal whatever their counts hold.
#[derive(Debug, Clone, Default)]
pub struct TokenCount(std::sync::OnceLock<u64>);

impl TokenCount {
    /// The count, from `count` the first time.
    pub fn get_or(&self, count: impl FnOnce() -> u64) -> u64 {
        *self.0.get_or_init(count)
    }

    /// Whether the count is known already (a node counted before it was cloned keeps it).
    pub fn is_counted(&self) -> bool {
        self.0.get().is_some()
    }
}

impl MessageNode {
    /// Its tokens as a turn's history sends it: its text, and its images if it is a user's
    /// (tool messages are not sent: none). Never more than fitting counts for the same message
    /// (no per-message overhead), so history cut by these counts is never cut shorter than
    /// fitting would cut it. Counted once (see [`TokenCount`]).
    pub fn history_tokens(&self) -> u64 {
        self.tokens.get_or(|| {
            let text = || {
                let text = self.content.as_deref().unwrap_or("");
                crate::retrieval::chunk::Chunker::default()
                    .encode(text)
                    .len() as u64
            };
            match self.role {
                MessageRole::Tool => 0,
                MessageRole::User => {
                    let images = ImagePart::of_parts(self.parts.as_ref()).len() as u64;
                    text() + images * IMAGE_TOKENS
                }
                MessageRole::System | MessageRole::Assistant => text(),
            }
        })
    }
}

/// Text counted on the caller's thread: tokenizing a kilobyte costs less than the hop to the
/// blocking pool and back (two thread wake-ups), and blocks the session's arbiter for no more
/// than a wake-up would.
const COUNT_INLINE_BYTES: usize = 1024;

/// Counts the tokens of `nodes` (see [`MessageNode::history_tokens`]) on the blocking pool,
/// never on the session's arbiter, unless their text is a kilobyte at most (a turn's question
/// and answer, most often); gives them back counted. Nodes counted already cost nothing.
pub async fn count_tokens<N>(nodes: N) -> N
where
    N: AsRef<[MessageNode]> + Send + 'static,
{
    let text: usize = nodes
        .as_ref()
        .iter()
        .filter(|node| !node.tokens.is_counted())
        .map(|node| node.content.as_ref().map_or(0, String::len))
        .sum();
    if text <= COUNT_INLINE_BYTES {
        for node in nodes.as_ref() {
            node.history_tokens();
        }
        return nodes;
    }
    let counted = tokio::task::spawn_blocking(move || {
        for node in nodes.as_ref() {
            node.history_tokens();
        }
        nodes
    })
    .await;
    match counted {
        Ok(nodes) => nodes,
        // A panic while counting is the caller's own, as it was on this thread.
        Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
        Err(err) => panic!("counting was cancelled with the runtime: {err}"),
    }
}

#[cfg(test)]
impl MessageNode {
    /// A message for tests: only its place, role, text and seq, created at a fixed second.
    pub(crate) fn plain(
        id: &str,
        parent: Option<&str>,
        role: MessageRole,
        content: &str,
        seq: i64,
    ) -> Self {
        Self {
            id: MessageId::from_string(id),
            parent_id: parent.map(MessageId::from_string),
            role,
            content: Some(content.to_string()),
            parts: None,
            tool_calls: None,
            tool_call_id: None,
            run_id: None,
            stop_reason: None,
            reasoning: None,
            model: None,
            seq,
            created_at: DateTime::<Utc>::from_timestamp(1_700_000_000 + seq, 0)
                .expect("a valid timestamp"),
            tokens: TokenCount::default(),
        }
    }
}

impl PartialEq for TokenCount {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// What a model thought before it answered (`reasoning_content`, `reasoning` or a `<think>`
/// block), and for how long (each model call's start to its last reasoning, summed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Reasoning {
    pub text: String,
    pub duration_ms: u64,
}

/// Why a tree operation was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TreeError {
    /// No message with this id is in the tree.
    #[error("unknown message '{0}'")]
    UnknownMessage(MessageId),
    /// The message exists but is not a user message (only those can be edited).
    #[error("message '{0}' is not a user message")]
    NotAUserMessage(MessageId),
    /// The message exists but is not an assistant message (only those can be regenerated).
    #[error("message '{0}' is not an assistant message")]
    NotAnAssistantMessage(MessageId),
    /// A message with this id is already in the tree.
    #[error("duplicate message id '{0}'")]
    DuplicateId(MessageId),
    /// The message has replies (only a message nothing follows can be removed alone).
    #[error("message '{0}' has replies: only the last message of a branch can be deleted")]
    HasReplies(MessageId),
    /// The message's parent is not in the tree; carries the missing parent's id.
    #[error("unknown parent message '{0}'")]
    UnknownParent(MessageId),
    /// The message is part of (or hangs below) a parent cycle; carries the message's id.
    #[error("message '{0}' is part of a parent cycle")]
    Cycle(MessageId),
}

/// The tree of a chat's messages and which branch is selected.
///
/// Root-level messages (no parent) are siblings of each other. Children are kept ordered by
/// `seq` (ties broken by id). The active path runs from a root down to the active leaf.
#[derive(Debug, Clone, Default)]
pub struct BranchTree {
    /// Every message, by id.
    nodes: HashMap<MessageId, MessageNode>,
    /// Children ids of each message that has any, ordered by seq.
    children: HashMap<MessageId, Vec<MessageId>>,
    /// Root-level message ids, ordered by seq.
    roots: Vec<MessageId>,
    /// The selected leaf, `None` only when the tree is empty.
    active_leaf: Option<MessageId>,
    /// Ids on the active path, kept in step with `active_leaf`.
    active_ids: HashSet<MessageId>,
    /// The same ids in path order (root first), so a turn on the active branch need not walk
    /// its whole history to find the newest messages.
    active_order: Vec<MessageId>,
    /// Highest seq in the tree, `None` when empty.
    max_seq: Option<i64>,
}

impl BranchTree {
    /// An empty tree.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of messages in the tree.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the tree has no messages.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The message with this id, if present.
    pub fn get(&self, id: &MessageId) -> Option<&MessageNode> {
        self.nodes.get(id)
    }

    /// The selected leaf's id, `None` only when the tree is empty.
    pub fn active_leaf(&self) -> Option<&MessageId> {
        self.active_leaf.as_ref()
    }

    /// The seq for the next message: 1 + the highest seq, 1 for an empty tree.
    pub fn next_seq(&self) -> i64 {
        self.max_seq.map_or(1, |max| max.saturating_add(1))
    }
}

/// Orders nodes by seq, then id (so equal seqs from bad data still sort deterministically).
fn compare_nodes(a: &MessageNode, b: &MessageNode) -> Ordering {
    a.seq.cmp(&b.seq).then_with(|| a.id.cmp(&b.id))
}

/// [`compare_nodes`] by id; an id missing from `nodes` sorts first.
fn compare_ids(nodes: &HashMap<MessageId, MessageNode>, a: &MessageId, b: &MessageId) -> Ordering {
    let seq = |id: &MessageId| nodes.get(id).map(|n| n.seq);
    seq(a).cmp(&seq(b)).then_with(|| a.cmp(b))
}
