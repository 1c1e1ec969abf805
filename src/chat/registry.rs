//! `ChatRegistry`: the active chats, by id. It activates a chat on first use (a `ChatSession`
//! loaded from the database, placed on one of the supervisor's pool of arbiters rather than
//! the HTTP worker that asked) and forgets a session when it stops. Cloning shares the map; it
//! is the lock-free handle HTTP handlers and the run launcher use.
//!
//! With several processes on one PostgreSQL (a `Cluster`), a chat's session starts only in the
//! process holding the chat's lease: `session` takes it first, or says which process has it
//! (`SessionError::Elsewhere`, which the HTTP layer forwards there). A chat taken over from a
//! process that died has the runs that process left `running` recovered (interrupted, their
//! drafts kept) before its session loads, and what else it left there (uploads half committed,
//! documents half processed) is handed to the takeover hook (`on_takeover`). A session that
//! stops lets its lease lapse; a lease lost (taken over after this process failed to renew it)
//! stops its session.

use entities::ids::ChatId;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use actix::prelude::*;
use dashmap::DashMap;
use sea_orm::{DatabaseConnection, DbErr};

use super::session::ChatSession;
use crate::cluster::{Claim, Cluster, chat_key};
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
    cluster: Arc<OnceLock<Cluster>>,
    /// The writer the chats' turns share on SQLite (`group_commit`); `None` on PostgreSQL.
    group_commit: Option<super::group_commit::GroupCommit>,
    /// Runs this process continues from a checkpoint (start-up): not recovered on a takeover.
    continuing: Arc<OnceLock<Vec<entities::ids::RunId>>>,
    takeover: Arc<OnceLock<TakeoverHook>>,
    taken: Arc<OnceLock<TakeoverHook>>,
    /// The chat search index the chats' writers report stored and removed messages to.
    search: Arc<OnceLock<super::search::ChatSearch>>,
    /// Chats this process made that no session has started for yet (`made_empty`): nothing
    /// but their row is stored, so their first session starts empty instead of reading.
    never_loaded: Arc<dashmap::DashSet<ChatId>>,
}

/// Most chats `never_loaded` remembers: past it, a new chat's first session reads as any does.
const MAX_NEVER_LOADED: usize = 10_000;

/// What the rest of the process does for a chat taken from a dead process (set at start-up):
/// the chat module knows runs, not documents.
pub type TakeoverHook = Box<dyn Fn(ChatId) + Send + Sync>;

/// How a session starts: from what is stored, or empty (a chat just made).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Loading {
    Stored,
    New,
}

/// Where a session started now is placed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Place {
    /// The next of the pool's arbiters, in turn.
    Pool,
    /// The caller's own arbiter, if it runs on one (else as `Pool`).
    Here,
}

/// Why a chat's session is not here.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// Another live process owns the chat; its base URL.
    #[error("chat is owned by the process at {address}")]
    Elsewhere { address: String },
    #[error(transparent)]
    Db(#[from] DbErr),
}

impl ChatRegistry {
    /// A registry placing sessions on `arbiters`, which must not be empty.
    /// `group_commit`: the writer the chats' turns write through on SQLite, if any.
    pub fn new(
        arbiters: Vec<ArbiterHandle>,
        db: DatabaseConnection,
        group_commit: Option<super::group_commit::GroupCommit>,
        idle_after: Duration,
        embedder: SharedEmbedder,
    ) -> Self {
        Self {
            sessions: Arc::new(DashMap::new()),
            arbiters: Arc::new(arbiters),
            next: Arc::new(AtomicUsize::new(0)),
            db,
            group_commit,
            idle_after,
            embedder,
            cluster: Arc::new(OnceLock::new()),
            continuing: Arc::new(OnceLock::new()),
            takeover: Arc::new(OnceLock::new()),
            taken: Arc::new(OnceLock::new()),
            search: Arc::new(OnceLock::new()),
            never_loaded: Arc::new(dashmap::DashSet::new()),
        }
    }

    /// Remembers that `chat_id`, just made here, has nothing stored but its row, so its first
    /// session starts empty (as `new_session`'s) whenever it comes. Only for a process alone on
    /// its database: nothing writes an idle chat's messages, artifacts or memories but its
    /// session, and nothing has yet. Without a session, the chat's first turn saves its three
    /// reads.
    pub fn made_empty(&self, chat_id: &ChatId) {
        if self.cluster.get().is_none() && self.never_loaded.len() < MAX_NEVER_LOADED {
            self.never_loaded.insert(chat_id.clone());
        }
    }

    /// Reports the chats' stored and removed messages to `search`. Set once, at start-up.
    pub fn index_messages_in(&self, search: super::search::ChatSearch) {
        let _ = self.search.set(search);
    }

    /// The chat search index, once set.
    pub fn search(&self) -> Option<&super::search::ChatSearch> {
        self.search.get()
    }

    /// Called (once per takeover, after the chat's runs are recovered) for each chat this
    /// process takes from a process that died. Set once, at start-up.
    pub fn on_takeover(&self, hook: TakeoverHook) {
        let _ = self.takeover.set(hook);
    }

    /// Called (at once, before the chat's session loads) for each chat this process takes from
    /// another or takes first, whether that one died or let it lapse: what this process keeps
    /// of the chat locally (its document index) may be older than the database. Set once.
    pub fn on_taken(&self, hook: TakeoverHook) {
        let _ = self.taken.set(hook);
    }

    /// Makes chats owned through `cluster`'s leases (several processes on one PostgreSQL).
    /// Set once, before any session starts; a lease this process loses stops its session.
    /// `continuing`: the runs it goes on with from their checkpoints, which taking their chats
    /// must not recover as interrupted.
    pub fn join(&self, cluster: Cluster, continuing: Vec<entities::ids::RunId>) {
        let _ = self.continuing.set(continuing);
        let registry = self.clone();
        cluster.start_renewing(move |key| {
            if let Some(chat) = key.strip_prefix("chat:") {
                registry.stop_local(&ChatId::from_string(chat));
            }
        });
        let _ = self.cluster.set(cluster);
    }

    pub fn cluster(&self) -> Option<&Cluster> {
        self.cluster.get()
    }

    /// The writer the chats' turns share, on SQLite.
    pub fn group_commit(&self) -> Option<&super::group_commit::GroupCommit> {
        self.group_commit.as_ref()
    }

    /// The next arbiter of the pool, in turn.
    pub fn arbiter(&self) -> ArbiterHandle {
        let index = self.next.fetch_add(1, Ordering::Relaxed) % self.arbiters.len();
        self.arbiters[index].clone()
    }

    /// The arbiter a session started now goes to.
    fn arbiter_for(&self, place: Place) -> ArbiterHandle {
        match place {
            Place::Here => actix::Arbiter::try_current().unwrap_or_else(|| self.arbiter()),
            Place::Pool => self.arbiter(),
        }
    }

    /// The session for a chat, activating it if needed; with a cluster, only while this
    /// process holds the chat's lease (taken here if no live process holds it). The caller has
    /// checked ownership.
    pub async fn session(&self, chat_id: &ChatId) -> Result<Addr<ChatSession>, SessionError> {
        self.session_as(chat_id, Loading::Stored, Place::Pool).await
    }

    /// The session of a chat the caller has just made, with nothing in it yet but its row
    /// (a `/v1` request's new chat): it starts empty instead of reading the chat back.
    pub async fn new_session(&self, chat_id: &ChatId) -> Result<Addr<ChatSession>, SessionError> {
        self.session_as(chat_id, Loading::New, Place::Pool).await
    }

    /// `new_session`, the session placed on the caller's own arbiter (an HTTP worker's) when
    /// it has one: for a turn whose caller waits there beside its run for the whole answer,
    /// the turn's messages to its session and their answers then stay on one thread instead of
    /// each waking another. Later turns reach it from wherever they run, as any session.
    pub async fn new_session_here(
        &self,
        chat_id: &ChatId,
    ) -> Result<Addr<ChatSession>, SessionError> {
        self.session_as(chat_id, Loading::New, Place::Here).await
    }

    async fn session_as(
        &self,
        chat_id: &ChatId,
        loading: Loading,
        place: Place,
    ) -> Result<Addr<ChatSession>, SessionError> {
        if let Some(cluster) = self.cluster.get() {
            let key = chat_key(chat_id.as_str());
            if !cluster.holds(&key) {
                let claimed = match loading {
                    Loading::New => cluster.claim_new(&key).await?,
                    Loading::Stored => cluster.claim(&key).await?,
                };
                match claimed {
                    Claim::Elsewhere { address, .. } => {
                        // Another process has it: a session left here must not go on.
                        self.stop_local(chat_id);
                        return Err(SessionError::Elsewhere { address });
                    }
                    // This process's own lease, renewed late: its runs are live, not orphans.
                    Claim::Mine { was_ours: true, .. } => {}
                    Claim::Mine {
                        taken_from,
                        owner_died,
                        ..
                    } => {
                        match &taken_from {
                            Some(from) if owner_died => {
                                tracing::warn!(%chat_id, %from, "took over a chat whose owner died");
                            }
                            Some(from) => {
                                tracing::debug!(%chat_id, %from, "took a chat its owner let lapse");
                            }
                            None => {}
                        }
                        // What a dead or stopped owner left running becomes interrupted,
                        // keeping its draft, before the session loads (as after a restart).
                        // A chat just made has nothing to repair.
                        self.stop_local(chat_id);
                        if loading == Loading::New {
                            return Ok(self.local_session(chat_id, loading, place));
                        }
                        if let Some(hook) = self.taken.get() {
                            hook(chat_id.clone());
                        }
                        let continuing = self.continuing.get().map_or(&[][..], Vec::as_slice);
                        super::recovery::recover_chat_runs(&self.db, chat_id, continuing).await?;
                        if owner_died && let Some(hook) = self.takeover.get() {
                            hook(chat_id.clone());
                        }
                    }
                }
            }
        }
        Ok(self.local_session(chat_id, loading, place))
    }

    /// Whether this process may serve `chat_id` now: it holds the chat's lease, or no live
    /// process does (then it takes it). `Elsewhere` names the owner.
    pub async fn claim(&self, chat_id: &ChatId) -> Result<(), SessionError> {
        self.session(chat_id).await.map(|_| ())
    }

    /// Writes for `chat_id` outside its session (an answer claimed for a paused run), fenced at
    /// the epoch this process holds the chat at now; claim it first.
    pub fn writer(&self, chat_id: &ChatId) -> super::writer::ChatWriter {
        // Written outside its session: its first session, if still to come, reads.
        self.never_loaded.remove(chat_id);
        super::writer::ChatWriter::new(self, self.db.clone(), chat_id)
    }

    /// With a cluster, takes the chat's lease (as `claim`) for work outside its session that
    /// must not be repaired under a live process (an upload being committed); without one,
    /// nothing: a single process needs no lease, and no session is started for it.
    pub async fn own(&self, chat_id: &ChatId) -> Result<(), SessionError> {
        if self.cluster.get().is_some() {
            self.claim(chat_id).await?;
        }
        Ok(())
    }

    /// The session without a cluster's lease (unit tests have no cluster).
    #[cfg(test)]
    pub(crate) fn session_unclustered(&self, chat_id: &ChatId) -> Addr<ChatSession> {
        self.local_session(chat_id, Loading::Stored, Place::Pool)
    }

    fn local_session(&self, chat_id: &ChatId, loading: Loading, place: Place) -> Addr<ChatSession> {
        if let Some(addr) = self.sessions.get(chat_id)
            && addr.connected()
        {
            return addr.clone();
        }
        let registry = self.clone();
        let arbiter = self.arbiter_for(place);
        let chat = chat_id.clone();
        // A chat made here and never loaded has only its row: it starts empty.
        let first_loading = |chat_id: &ChatId| match self.never_loaded.remove(chat_id) {
            Some(_) => Loading::New,
            None => loading,
        };
        let mut entry = self.sessions.entry(chat_id.clone()).or_insert_with(|| {
            Self::start(&registry, &arbiter, chat.clone(), first_loading(&chat))
        });
        if !entry.connected() {
            let loading = first_loading(&chat);
            *entry = Self::start(&registry, &arbiter, chat, loading);
        }
        entry.clone()
    }

    fn start(
        registry: &ChatRegistry,
        arbiter: &ArbiterHandle,
        chat_id: ChatId,
        loading: Loading,
    ) -> Addr<ChatSession> {
        let db = registry.db.clone();
        let idle_after = registry.idle_after;
        let embedder = registry.embedder.clone();
        let registry = registry.clone();
        ChatSession::start_in_arbiter(arbiter, move |_| {
            let session = ChatSession::new(chat_id, db, registry, idle_after, embedder);
            match loading {
                Loading::Stored => session,
                Loading::New => session.new_chat(),
            }
        })
    }

    /// Forgets a stopped session, unless a newer one already replaced it; its lease lapses.
    pub(super) fn remove(&self, chat_id: &ChatId, addr: &Addr<ChatSession>) {
        let removed = self
            .sessions
            .remove_if(chat_id, |_, current| current == addr)
            .is_some();
        if removed && let Some(cluster) = self.cluster.get() {
            cluster.let_lapse(&chat_key(chat_id.as_str()));
        }
    }

    /// Stops a chat's session (the chat was deleted); its lease lapses.
    pub fn deactivate(&self, chat_id: &ChatId) {
        self.never_loaded.remove(chat_id);
        self.stop_local(chat_id);
        if let Some(cluster) = self.cluster.get() {
            cluster.let_lapse(&chat_key(chat_id.as_str()));
        }
    }

    /// A write of this process's session of `chat_id`, fenced at `epoch`, was refused: another
    /// process took the chat. The session stops at once, unless it is already a newer one
    /// (this process took the chat again, at a later epoch).
    pub(super) fn fenced(&self, chat_id: &ChatId, epoch: i64) {
        let newer = self
            .cluster
            .get()
            .and_then(|cluster| cluster.epoch(&chat_key(chat_id.as_str())))
            .is_some_and(|held| held != epoch);
        if !newer {
            self.stop_local(chat_id);
        }
    }

    /// Stops this process's session of a chat, if it has one.
    fn stop_local(&self, chat_id: &ChatId) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieval::embed::hash::HashEmbedder;

    /// Asks a session which thread it runs on.
    struct WhichThread;

    impl Message for WhichThread {
        type Result = std::thread::ThreadId;
    }

    impl Handler<WhichThread> for ChatSession {
        type Result = MessageResult<WhichThread>;

        fn handle(&mut self, _: WhichThread, _: &mut Self::Context) -> Self::Result {
            MessageResult(std::thread::current().id())
        }
    }

    /// The thread `arbiter` runs its work on.
    async fn thread_of(arbiter: &ArbiterHandle) -> std::thread::ThreadId {
        let (tell, told) = tokio::sync::oneshot::channel();
        assert!(arbiter.spawn_fn(move || {
            let _ = tell.send(std::thread::current().id());
        }));
        told.await.unwrap()
    }

    #[actix::test]
    async fn a_new_session_here_runs_on_the_callers_arbiter_and_others_on_the_pool() {
        let pool = actix::Arbiter::new();
        let caller = actix::Arbiter::new();
        let db = sea_orm::Database::connect("sqlite::memory:").await.unwrap();
        let registry = ChatRegistry::new(
            vec![pool.handle()],
            db,
            None,
            Duration::from_secs(600),
            Arc::new(HashEmbedder::default()),
        );
        let (here, pooled) = (ChatId::generate(), ChatId::generate());
        let (tell, told) = tokio::sync::oneshot::channel();
        let (placing, chats) = (registry.clone(), (here.clone(), pooled.clone()));
        assert!(caller.spawn(async move {
            let sessions = (
                placing.new_session_here(&chats.0).await.unwrap(),
                placing.new_session(&chats.1).await.unwrap(),
            );
            let _ = tell.send(sessions);
        }));
        let (session_here, session_pooled) = told.await.unwrap();
        let caller_thread = thread_of(&caller.handle()).await;
        let pool_thread = thread_of(&pool.handle()).await;
        assert_ne!(caller_thread, pool_thread);
        assert_eq!(session_here.send(WhichThread).await.unwrap(), caller_thread);
        assert_eq!(session_pooled.send(WhichThread).await.unwrap(), pool_thread);
        // Found again from anywhere, where it is.
        let again = registry.new_session(&here).await.unwrap();
        assert_eq!(again.send(WhichThread).await.unwrap(), caller_thread);
        pool.stop();
        caller.stop();
    }
}
