//! The messages a `ChatSession` takes: turns (begin, complete, pause, resume), branches,
//! history imports and reads, drafts, tool call records and the history summary.

use actix::prelude::*;
use entities::ids::{MessageId, RunId, UserId};
use entities::messages::MessageRole;
use serde_json::Value;

use super::ChatError;
use crate::chat::attachments::ImagePart;
use crate::chat::persistence;
use crate::chat::tree::MessageNode;
use crate::llm::wire::Usage;
use crate::run::events::StopReason;

/// What a new turn starts from.
#[derive(Debug, Clone)]
pub enum Turn {
    /// A new user message after `parent_id` (the active leaf when `None`), with the images
    /// it carries (attachments of this chat, checked by the caller).
    Send {
        parent_id: Option<MessageId>,
        content: String,
        images: Vec<ImagePart>,
    },
    /// A new version of user message `message_id`, as its sibling, with its images.
    Edit {
        message_id: MessageId,
        content: String,
        images: Vec<ImagePart>,
    },
    /// A new answer to the user message that assistant message `message_id` answered.
    Regenerate { message_id: MessageId },
    /// The first message of a chat just made (`opening_message`), made by the caller so that
    /// it knows the turn's start without asking (`opening_start`): a new chat's session holds
    /// nothing else. Refused (`ChatError::NotNew`) by a chat that has a message.
    Opening { node: Box<MessageNode> },
}

/// A turn's persisted start: the user message the answer will reply to, and the active path
/// up to and including it (exactly what the model is sent).
#[derive(Debug, Clone)]
pub struct TurnStarted {
    pub user_message_id: MessageId,
    /// The path to the user's message, as far back as `BeginTurn::history_budget` reaches.
    pub context: Vec<MessageNode>,
    /// The roles of the earlier messages of the path left out of `context`, oldest first.
    pub left_out: Vec<MessageRole>,
    /// Questions that were pending in this chat and are now cancelled: the conversation moved on.
    pub cancelled_asks: Vec<entities::ids::AskCorrelationId>,
    /// The chat's memories most like the user's message, as `BeginTurn::recall` asked, most
    /// similar first.
    pub memories: Vec<crate::chat::memory::Memory>,
}

/// Which of its chat's memories a turn is given: those at least `min_relevance` similar to its
/// user message, the `limit` closest.
#[derive(Debug, Clone, Copy)]
pub struct Recall {
    pub limit: usize,
    pub min_relevance: f32,
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
    /// How far back the turn's context goes, in tokens (`MessageNode::history_tokens`): the
    /// model's context window, when it is known and older messages are only dropped. A long
    /// chat's turn then costs what the window holds, not what the chat holds. `None`: the
    /// whole path.
    pub history_budget: Option<u64>,
    /// The chat itself, when it is new and not stored yet: stored first, in the turn's
    /// transaction.
    pub new_chat: Option<entities::chats::Model>,
    /// The memories to recall for the turn (`TurnStarted::memories`); `None`: none. A chat
    /// with no memory spends nothing on it: its user message is embedded only when there is
    /// something to compare it with.
    pub recall: Option<Recall>,
    /// Given the turn's start as soon as the session has it, before the write (its
    /// `cancelled_asks` still empty): a caller that overlaps its work with the write. The
    /// message's answer is still the write's outcome.
    pub taken: Option<tokio::sync::oneshot::Sender<TurnStarted>>,
    /// Told once the session has taken the turn (it fits the chat's branches), before it is
    /// written: a caller that answers then does not wait for the write (`turn::Answer`).
    pub on_accepted: Option<Accepted>,
}

/// What a `BeginTurn` calls once its turn is taken, before the write, with the user message
/// the turn answers.
pub type Accepted = Box<dyn FnOnce(&MessageId) + Send>;

/// Ends a turn: stores the assistant's answer (if any) and the run's outcome.
#[derive(Message)]
#[rtype(result = "Result<Option<MessageId>, ChatError>")]
pub struct CompleteTurn {
    pub run_id: RunId,
    pub user_message_id: MessageId,
    pub content: String,
    pub parts: Option<Value>,
    /// The model's reasoning before the answer, stored beside it (never in its content).
    pub reasoning: Option<crate::chat::tree::Reasoning>,
    /// The model that wrote the answer.
    pub model: Option<String>,
    pub stop_reason: StopReason,
    pub usage: Usage,
    pub iterations: u32,
    pub error: Option<String>,
    /// The ask whose answer this run continued from (its correlation id), completed in the
    /// same transaction.
    pub completes_ask: Option<entities::ids::AskCorrelationId>,
    /// Told the answer's id the moment the answer is durable, by the database writer itself
    /// (or why it could not be stored): a run that waits only for that hears it without
    /// waiting for the session to take the answer into its tree. The message's own reply
    /// comes once the session has.
    pub stored: Option<tokio::sync::oneshot::Sender<Result<Option<MessageId>, String>>>,
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

/// Keeps a Deep Think run's checkpoint (its plan and the findings of its finished sub-tasks).
#[derive(Message)]
#[rtype(result = "()")]
pub struct SaveDeepThink {
    pub run_id: RunId,
    pub checkpoint: serde_json::Value,
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
    pub ask: crate::chat::asks::NewAsk,
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
    /// Oldest first.
    pub messages: Vec<ImportedMessage>,
}

/// One message of an imported conversation.
#[derive(Debug, Clone)]
pub struct ImportedMessage {
    pub role: MessageRole,
    pub content: String,
    /// A user message's images, already stored as attachments of the chat.
    pub images: Vec<ImagePart>,
}

impl ImportedMessage {
    /// A message without images.
    pub fn text(role: MessageRole, content: String) -> Self {
        Self {
            role,
            content,
            images: Vec::new(),
        }
    }
}

/// Deletes a message nothing follows (a conversation item); if it was the active leaf, its
/// parent becomes the active leaf.
#[derive(Message)]
#[rtype(result = "Result<(), ChatError>")]
pub struct RemoveLeaf {
    pub message_id: MessageId,
}

/// The active branch, root first.
#[derive(Message)]
#[rtype(result = "Vec<MessageNode>")]
pub struct GetActivePath;

/// Every message with whether it is on the active branch.
#[derive(Message)]
#[rtype(result = "Vec<(MessageNode, bool)>")]
pub struct GetTree;
