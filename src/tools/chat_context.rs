//! What chat-scoped tools (artifacts, memory, file_search) reach: the chat's session, the
//! run's event log, the run's message parts, the embedder and the limits. Built per run.

use entities::ids::ChatId;
use std::sync::{Arc, Mutex};

use actix::Addr;
use serde_json::Value;

use crate::chat::session::ChatSession;
use crate::config::Config;
use crate::retrieval::embed::SharedEmbedder;
use crate::run::log::RunLog;

/// The parts of the assistant message a run is producing (deliverables are parts:
/// docs/spec.md#metadata-and-parts).
/// An artifact appears once, at the latest version the run wrote.
#[derive(Debug, Clone, Default)]
pub struct Parts(Arc<Mutex<Vec<Value>>>);

impl Parts {
    pub fn from_vec(parts: Vec<Value>) -> Self {
        Self(Arc::new(Mutex::new(parts)))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Value>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Adds a part, replacing an earlier part for the same artifact.
    pub fn upsert(&self, part: Value) {
        let mut parts = self.lock();
        let same =
            |p: &Value| p.get("artifact_id").is_some() && p["artifact_id"] == part["artifact_id"];
        match parts.iter_mut().find(|p| same(p)) {
            Some(existing) => *existing = part,
            None => parts.push(part),
        }
    }

    pub fn snapshot(&self) -> Vec<Value> {
        self.lock().clone()
    }

    /// The parts for the stored message; `None` when there are none.
    pub fn to_value(&self) -> Option<Value> {
        let parts = self.snapshot();
        (!parts.is_empty()).then_some(Value::Array(parts))
    }
}

/// The session of the chat a run is planned in. A turn is planned before anything is stored,
/// before a new chat (and so its session) exists; the slot is filled when the turn begins, before
/// the run starts, so a tool always finds it.
#[derive(Clone, Default)]
pub struct SessionSlot(Arc<std::sync::OnceLock<Addr<ChatSession>>>);

impl SessionSlot {
    /// A slot already holding `session`.
    pub fn of(session: Addr<ChatSession>) -> Self {
        let slot = Self::default();
        slot.bind(session);
        slot
    }

    /// Fills the slot (once: a second session is ignored, as a turn begins once).
    pub fn bind(&self, session: Addr<ChatSession>) {
        let _ = self.0.set(session);
    }

    /// The session, once the turn has begun.
    pub fn get(&self) -> Option<&Addr<ChatSession>> {
        self.0.get()
    }
}

pub struct ChatContext {
    pub chat_id: ChatId,
    pub session: SessionSlot,
    pub log: Arc<RunLog>,
    pub parts: Parts,
    pub embedder: SharedEmbedder,
    pub config: Arc<Config>,
}

impl ChatContext {
    /// The chat's session; a tool running before its turn began (never, by construction) is
    /// told the chat is unavailable.
    pub fn session(&self) -> Result<&Addr<ChatSession>, super::ToolError> {
        self.session.get().ok_or_else(|| {
            super::ToolError::new(
                "chat_unavailable",
                "the chat's turn has not begun",
                "Call the tool again.",
            )
        })
    }

    /// Reports a feature event (`x_artifact.created`, …) to the run's subscribers.
    pub fn emit(&self, event_type: &str, payload: Value) {
        self.log.emit(event_type, payload);
    }
}

/// The chat is restarting; the model may simply retry.
pub fn session_gone(err: actix::MailboxError) -> super::ToolError {
    super::ToolError::new(
        "chat_unavailable",
        format!("the chat is restarting: {err}"),
        "Call the tool again.",
    )
}
