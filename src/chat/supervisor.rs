//! `ChatSupervisor`: one per process. It activates chats on first use (a `ChatSession` loaded
//! from the database, placed on one of a pool of arbiters rather than the HTTP worker that
//! asked), keeps the registry of active chats, spawns one `AgentRun` per request, and sweeps
//! finished run logs. `ChatRegistry` is the lock-free handle HTTP handlers use.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use actix::prelude::*;
use dashmap::DashMap;
use sea_orm::DatabaseConnection;

use super::session::ChatSession;
use crate::agent::loop_actor::{AgentRun, RunSpec};
use crate::agent::run_log::RunRegistry;
use crate::embed::SharedEmbedder;

/// How often finished run logs are swept.
const SWEEP_EVERY: Duration = Duration::from_secs(30);

/// The active chats, by id. Cloning shares the map.
#[derive(Clone)]
pub struct ChatRegistry {
    sessions: Arc<DashMap<String, Addr<ChatSession>>>,
    arbiters: Arc<Vec<ArbiterHandle>>,
    next: Arc<AtomicUsize>,
    db: DatabaseConnection,
    idle_after: Duration,
    embedder: SharedEmbedder,
}

impl ChatRegistry {
    fn arbiter(&self) -> ArbiterHandle {
        let index = self.next.fetch_add(1, Ordering::Relaxed) % self.arbiters.len();
        self.arbiters[index].clone()
    }

    /// The session for a chat, activating it if needed. The caller has checked ownership.
    pub fn session(&self, chat_id: &str) -> Addr<ChatSession> {
        if let Some(addr) = self.sessions.get(chat_id)
            && addr.connected()
        {
            return addr.clone();
        }
        let registry = self.clone();
        let arbiter = self.arbiter();
        let chat = chat_id.to_string();
        let mut entry = self
            .sessions
            .entry(chat_id.to_string())
            .or_insert_with(|| Self::start(&registry, &arbiter, chat.clone()));
        if !entry.connected() {
            *entry = Self::start(&registry, &arbiter, chat);
        }
        entry.clone()
    }

    fn start(
        registry: &ChatRegistry,
        arbiter: &ArbiterHandle,
        chat_id: String,
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
    pub(super) fn remove(&self, chat_id: &str, addr: &Addr<ChatSession>) {
        self.sessions
            .remove_if(chat_id, |_, current| current == addr);
    }

    /// Stops a chat's session (the chat was deleted).
    pub fn deactivate(&self, chat_id: &str) {
        if let Some((_, addr)) = self.sessions.remove(chat_id) {
            addr.do_send(StopSession);
        }
    }

    pub fn is_active(&self, chat_id: &str) -> bool {
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

/// Starts one run of the agentic loop.
#[derive(Message)]
#[rtype(result = "()")]
pub struct SpawnRun {
    pub spec: RunSpec,
}

pub struct ChatSupervisor {
    registry: ChatRegistry,
    runs: RunRegistry,
    run_retention: Duration,
    _arbiters: Vec<Arbiter>,
}

impl ChatSupervisor {
    /// Creates the arbiter pool and the registries. Call inside an actix `System`.
    pub fn new(
        db: DatabaseConnection,
        idle_after: Duration,
        run_retention: Duration,
        embedder: SharedEmbedder,
    ) -> Self {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        let arbiters: Vec<Arbiter> = (0..threads).map(|_| Arbiter::new()).collect();
        let handles = arbiters.iter().map(Arbiter::handle).collect();
        Self {
            registry: ChatRegistry {
                sessions: Arc::new(DashMap::new()),
                arbiters: Arc::new(handles),
                next: Arc::new(AtomicUsize::new(0)),
                db,
                idle_after,
                embedder,
            },
            runs: RunRegistry::default(),
            run_retention,
            _arbiters: arbiters,
        }
    }

    pub fn registry(&self) -> ChatRegistry {
        self.registry.clone()
    }

    pub fn runs(&self) -> RunRegistry {
        self.runs.clone()
    }
}

impl Actor for ChatSupervisor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.run_interval(SWEEP_EVERY, |act, _| {
            let swept = act.runs.sweep(act.run_retention);
            if swept > 0 {
                tracing::debug!(swept, "forgot finished run logs");
            }
        });
    }

    fn stopped(&mut self, _: &mut Self::Context) {
        for arbiter in &self._arbiters {
            arbiter.stop();
        }
    }
}

impl Handler<SpawnRun> for ChatSupervisor {
    type Result = ();

    fn handle(&mut self, msg: SpawnRun, _: &mut Self::Context) {
        self.runs.insert(msg.spec.log.clone());
        let arbiter = self.registry.arbiter();
        AgentRun::start_in_arbiter(&arbiter, move |_| AgentRun::new(msg.spec));
    }
}
