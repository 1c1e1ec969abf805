//! `ChatRegistry`: the active chats, by id. It activates a chat on first use (a `ChatSession`
//! loaded from the database, placed on one of the supervisor's pool of arbiters rather than
//! the HTTP worker that asked) and forgets a session when it stops. Cloning shares the map; it
//! is the lock-free handle HTTP handlers and the run launcher use.

use entities::ids::ChatId;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use actix::prelude::*;
use dashmap::DashMap;
use sea_orm::DatabaseConnection;

use super::session::ChatSession;
use crate::retrieval::embed::SharedEmbedder;

/// The active chats, by id. Cloning shares the map.
#[derive(Clone)]
pub struct ChatRegistry {
    sessions: Arc<DashMap<ChatId, Addr<ChatSession>>>,
    arbiters: Arc<Vec<ArbiterHandle>>,
    next: Arc<AtomicUsize>,
    db: DatabaseConnection,
    idle_after: Duration,
    embedder: SharedEmbedder,
}

impl ChatRegistry {
    /// A registry placing sessions on `arbiters`, which must not be empty.
    pub fn new(
        arbiters: Vec<ArbiterHandle>,
        db: DatabaseConnection,
        idle_after: Duration,
        embedder: SharedEmbedder,
    ) -> Self {
        Self {
            sessions: Arc::new(DashMap::new()),
            arbiters: Arc::new(arbiters),
            next: Arc::new(AtomicUsize::new(0)),
            db,
            idle_after,
            embedder,
        }
    }

    /// The next arbiter of the pool, in turn.
    pub fn arbiter(&self) -> ArbiterHandle {
        let index = self.next.fetch_add(1, Ordering::Relaxed) % self.arbiters.len();
        self.arbiters[index].clone()
    }

    /// The session for a chat, activating it if needed. The caller has checked ownership.
    pub fn session(&self, chat_id: &ChatId) -> Addr<ChatSession> {
        if let Some(addr) = self.sessions.get(chat_id)
            && addr.connected()
        {
            return addr.clone();
        }
        let registry = self.clone();
        let arbiter = self.arbiter();
        let chat = chat_id.clone();
        let mut entry = self
            .sessions
            .entry(chat_id.clone())
            .or_insert_with(|| Self::start(&registry, &arbiter, chat.clone()));
        if !entry.connected() {
            *entry = Self::start(&registry, &arbiter, chat);
        }
        entry.clone()
    }

    fn start(
        registry: &ChatRegistry,
        arbiter: &ArbiterHandle,
        chat_id: ChatId,
    ) -> Addr<ChatSession> {
        let db = registry.db.clone();
        let idle_after = registry.idle_after;
        let embedder = registry.embedder.clone();
        let registry = registry.clone();
        ChatSession::start_in_arbiter(arbiter, move |_| {
            ChatSession::new(chat_id, db, registry, idle_after, embedder)
        })
    }

    /// Forgets a stopped session, unless a newer one already replaced it.
    pub(super) fn remove(&self, chat_id: &ChatId, addr: &Addr<ChatSession>) {
        self.sessions
            .remove_if(chat_id, |_, current| current == addr);
    }

    /// Stops a chat's session (the chat was deleted).
    pub fn deactivate(&self, chat_id: &ChatId) {
        if let Some((_, addr)) = self.sessions.remove(chat_id) {
            addr.do_send(StopSession);
        }
    }

    pub fn is_active(&self, chat_id: &ChatId) -> bool {
        self.sessions
            .get(chat_id)
            .is_some_and(|addr| addr.connected())
    }

    pub fn active_count(&self) -> usize {
        self.sessions.len()
    }
}

/// Stops a session now.
#[derive(Message)]
#[rtype(result = "()")]
pub struct StopSession;

impl Handler<StopSession> for ChatSession {
    type Result = ();

    fn handle(&mut self, _: StopSession, ctx: &mut Self::Context) {
        ctx.stop();
    }
}
