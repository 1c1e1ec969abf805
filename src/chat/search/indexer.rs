//! The indexer: the one writer of the chat search indexes, a task on a thread of its own (off
//! the turns' path). It takes the changes the chats' writers report, waits `BATCH_WINDOW` for
//! more, and applies them together: one commit per user touched.
//!
//! A changed chat is reconciled, not patched: its messages in the database are compared with
//! those in the index, what is missing is added and what is gone removed. So the same report
//! twice, or a report for a change already indexed, does no harm.
//!
//! It also catches up from the database, at start and every `[search] catch_up_interval_ms`: every chat whose
//! `updated_at` (set by every write of its messages) is at or after the high-water mark, less
//! `NEAR`, is reconciled unless it was at that `updated_at` already, and the mark moves to the
//! newest seen. Writes can commit later than their `updated_at` says (a transaction that began
//! first may commit last; processes' clocks differ a little), so each stretch of time is read
//! once more when the mark is `LOOKBACK` past it (the settling read): a write that committed
//! later than `NEAR` after its time is found then. At start the catch-up reads from the mark
//! less `LOOKBACK`. The mark is kept in `chat_search/position`; without it (a lost index) every
//! chat is reconciled. This is how an index finds what it was never told: messages written
//! before a crash, or by another process on the same PostgreSQL. A user's index made afresh
//! (its directory lost) reconciles all of that user's chats.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::Duration;

use chrono::{DateTime, Utc};
use entities::ids::{ChatId, MessageId, UserId};
use entities::messages::MessageRole;
use entities::{chats, messages};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbBackend, DbErr, EntityTrait, QueryFilter,
    QueryOrder, QuerySelect, QueryTrait, Statement,
};
use tokio::sync::mpsc;

use crate::os_limits::{BACKGROUND_NICE, lower_thread_priority};

use super::index::{IndexedMessage, MessageIndex, MessageIndexError};
use super::{Change, Shared};

/// How long the indexer waits, after a change, for the others of the same moment: a turn
/// writes its question and answer a few hundred milliseconds apart at best, and a search
/// should not lag by more than this.
const BATCH_WINDOW: Duration = Duration::from_millis(50);
/// The least time from one batch's start to the next's while changes keep coming: each commit
/// opens a writer, makes a segment and merges it, so a busy server (hundreds of turns a
/// second) commits a few times a second, not twenty. The first change after a quiet spell is
/// still indexed `BATCH_WINDOW` after it.
const BUSY_GAP: Duration = Duration::from_millis(500);
/// Changes one batch takes at most.
const MAX_BATCH: usize = 10_000;
/// Chats whose owner the indexer remembers (a chat's owner never changes), so a turn's
/// messages are indexed without a read; past it the memory starts again.
const MAX_KNOWN_OWNERS: usize = 100_000;
/// How far before the high-water mark each catch-up looks again: writes commit out of order (a
/// transaction that began first may commit last) and processes' clocks differ a little. A busy
/// server changes a thousand chats a second, so each catch-up reads about `NEAR` of them
/// beside the new: a few thousand, not the sixty thousand of `LOOKBACK`.
const NEAR: chrono::TimeDelta = chrono::TimeDelta::seconds(10);
/// How far before the high-water mark a write may still commit and be found: the settling read
/// looks at each stretch of time once more when the mark is this far past it.
const LOOKBACK: chrono::TimeDelta = chrono::TimeDelta::seconds(60);
/// Chats one catch-up query reads.
const PAGE: u64 = 200;
/// Message ids in one `IN (…)` list: well under SQLite's and PostgreSQL's bind limits.
const IDS_PER_QUERY: usize = 500;

/// Why a batch or a catch-up failed (logged; the next catch-up tries again).
#[derive(Debug, thiserror::Error)]
enum IndexerError {
    #[error(transparent)]
    Index(#[from] MessageIndexError),
    #[error(transparent)]
    Database(#[from] DbErr),
}

/// What one user's index is to do in one commit.
#[derive(Default)]
struct UserWork {
    reconcile: BTreeSet<ChatId>,
    /// Messages a turn stored, added as they are (unless their chat is reconciled anyway).
    add: Vec<IndexedMessage>,
    remove_chats: Vec<ChatId>,
    remove_messages: Vec<MessageId>,
}

/// The indexer serving each index directory in this OS process, by the turn it started in: an
/// application started again in the same process (as tests restart one) retires the indexer
/// of the one before, so a directory never has two writers.
static SERVING: LazyLock<Mutex<HashMap<PathBuf, u64>>> = LazyLock::new(Mutex::default);
static STARTED: AtomicU64 = AtomicU64::new(0);

/// Whether the indexer started as `turn` still serves `root`: no newer one does, and the data
/// directory is still there (an application's temporary one, once it is gone, has nothing to
/// serve).
fn serves(root: &Path, turn: u64) -> bool {
    if root.parent().is_some_and(|data_dir| !data_dir.exists()) {
        return false;
    }
    let serving = SERVING.lock().unwrap_or_else(PoisonError::into_inner);
    serving.get(root) == Some(&turn)
}

/// What one commit changes in a user's index, worked out before a writer is opened.
#[derive(Default)]
struct Plan {
    remove_chats: Vec<ChatId>,
    remove_messages: Vec<MessageId>,
    add: Vec<IndexedMessage>,
}

impl Plan {
    fn is_empty(&self) -> bool {
        self.remove_chats.is_empty() && self.remove_messages.is_empty() && self.add.is_empty()
    }
}

/// Starts the indexer on a thread of its own, with a runtime of its own.
pub(super) fn start(shared: Arc<Shared>, queue: mpsc::Receiver<Change>) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let turn = STARTED.fetch_add(1, Ordering::Relaxed);
    SERVING
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(shared.root.clone(), turn);
    std::thread::Builder::new()
        .name("colloquy-chat-search".into())
        .spawn(move || {
            // Indexing and tantivy's merges come in bursts of tens of milliseconds of CPU; at
            // a lower priority (which the writer's threads inherit) they no longer hold a core
            // a turn's thread is waiting for.
            if let Err(err) = lower_thread_priority(BACKGROUND_NICE) {
                tracing::debug!(%err, "chat search: the indexer's priority was not lowered");
            }
            runtime.block_on(run(Indexer::new(shared), queue, turn))
        })?;
    Ok(())
}

/// Batches of changes, and the catch-up between them, until every handle is gone.
async fn run(mut indexer: Indexer, mut queue: mpsc::Receiver<Change>, turn: u64) {
    let mut catch_up = tokio::time::interval(indexer.shared.catch_up_every);
    catch_up.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last_batch: Option<tokio::time::Instant> = None;
    loop {
        tokio::select! {
            change = queue.recv() => {
                let Some(first) = change else { return };
                if !serves(&indexer.shared.root, turn) {
                    return;
                }
                let now = tokio::time::Instant::now();
                let paced = last_batch.map_or(now, |at| at + BUSY_GAP);
                tokio::time::sleep_until(paced.max(now + BATCH_WINDOW)).await;
                last_batch = Some(tokio::time::Instant::now());
                let mut batch = vec![first];
                while batch.len() < MAX_BATCH {
                    match queue.try_recv() {
                        Ok(change) => batch.push(change),
                        Err(_) => break,
                    }
                }
                if let Err(err) = indexer.apply(batch).await {
                    tracing::warn!(%err, "chat search: a batch was not indexed (the catch-up retries)");
                }
            }
            _ = catch_up.tick() => {
                if !serves(&indexer.shared.root, turn) {
                    return;
                }
                if let Err(err) = indexer.catch_up().await {
                    tracing::warn!(%err, "chat search: catching up failed");
                }
            }
        }
    }
}

struct Indexer {
    shared: Arc<Shared>,
    /// The newest `updated_at` caught up with; `None`: nothing yet (a fresh index).
    mark: Option<DateTime<Utc>>,
    /// Chats reconciled by catch-ups within `LOOKBACK` of the mark, at the `updated_at` they
    /// had: not reconciled again while it is the same.
    recent: HashMap<ChatId, DateTime<Utc>>,
    /// Where the settling read goes on from: every chat changed before it was read when the
    /// mark was `LOOKBACK` past its time. `None` until the first catch-up.
    settled: Option<DateTime<Utc>>,
    /// Each chat's owner, as turns reported it or the database said.
    owners: HashMap<ChatId, UserId>,
    /// Whether a turn's report is taken for all its chat has, so that the catch-up skips the
    /// chat while its `updated_at` is the one the turn set. Not before the first catch-up (a
    /// crash may have lost reports), nor from a change not queued until a catch-up begun
    /// after it is done: a report that came after one lost must not hide it.
    reports_trusted: bool,
    /// `Shared::dropped` as last looked at.
    drops_seen: u64,
}

impl Indexer {
    fn new(shared: Arc<Shared>) -> Self {
        let mark = std::fs::read_to_string(shared.root.join("position"))
            .ok()
            .and_then(|text| DateTime::parse_from_rfc3339(text.trim()).ok())
            .map(|at| at.with_timezone(&Utc));
        Self {
            shared,
            mark,
            recent: HashMap::new(),
            settled: None,
            owners: HashMap::new(),
            reports_trusted: false,
            drops_seen: 0,
        }
    }

    /// Applies a batch of reported changes.
    async fn apply(&mut self, batch: Vec<Change>) -> Result<(), IndexerError> {
        let drops = self.shared.dropped.load(Ordering::SeqCst);
        if drops != self.drops_seen {
            self.drops_seen = drops;
            self.reports_trusted = false;
        }
        let mut work: BTreeMap<UserId, UserWork> = BTreeMap::new();
        let mut changed = BTreeSet::new();
        let mut deleted_users = BTreeSet::new();
        let mut stored: Vec<(ChatId, Vec<IndexedMessage>, DateTime<Utc>)> = Vec::new();
        for change in batch {
            match change {
                Change::Chat(chat_id) => {
                    changed.insert(chat_id);
                }
                Change::Stored {
                    chat_id,
                    owner,
                    messages,
                    updated_at,
                } => {
                    if let Some(owner) = owner {
                        self.remember_owner(&chat_id, owner);
                    }
                    stored.push((chat_id, messages, updated_at));
                }
                Change::ChatDeleted { owner, chat_id } => {
                    work.entry(owner).or_default().remove_chats.push(chat_id);
                }
                Change::UserDeleted(user) => {
                    deleted_users.insert(user);
                }
                Change::Stale { owner, messages } => {
                    work.entry(owner)
                        .or_default()
                        .remove_messages
                        .extend(messages);
                }
            }
        }
        // A turn's messages go in as they are when the chat's owner is known; otherwise (a
        // turn completed after a restart) the chat is reconciled. Each chat's `updated_at`, as
        // its turns set it (the later last): once they are in, the catch-up need not look at
        // it again unless it changed since.
        let mut seen = Vec::new();
        for (chat_id, messages, updated_at) in stored {
            if changed.contains(&chat_id) {
                continue;
            }
            match self.owners.get(&chat_id) {
                Some(owner) => {
                    work.entry(owner.clone()).or_default().add.extend(messages);
                    if self.reports_trusted {
                        seen.push((owner.clone(), chat_id, updated_at));
                    }
                }
                None => {
                    changed.insert(chat_id);
                }
            }
        }
        let changed: Vec<ChatId> = changed.into_iter().collect();
        // Each chat's `updated_at`, read before its messages are: once reconciled, the next
        // catch-up need not look at it again unless it changed since.
        for ids in changed.chunks(IDS_PER_QUERY) {
            let owners: Vec<(ChatId, UserId, DateTime<Utc>)> = chats::Entity::find()
                .select_only()
                .column(chats::Column::Id)
                .column(chats::Column::UserId)
                .column(chats::Column::UpdatedAt)
                .filter(chats::Column::Id.is_in(ids.iter().cloned()))
                .into_tuple()
                .all(&self.shared.db)
                .await?;
            for (chat_id, owner, updated_at) in owners {
                self.remember_owner(&chat_id, owner.clone());
                work.entry(owner.clone())
                    .or_default()
                    .reconcile
                    .insert(chat_id.clone());
                seen.push((owner, chat_id, updated_at));
            }
        }
        for user in &deleted_users {
            work.remove(user);
            self.forget_user(user);
        }
        for (user, work) in work {
            self.write(&user, work).await?;
            for (_, chat_id, updated_at) in seen.iter().filter(|(owner, ..)| *owner == user) {
                self.recent.insert(chat_id.clone(), *updated_at);
            }
        }
        Ok(())
    }

    fn remember_owner(&mut self, chat_id: &ChatId, owner: UserId) {
        if self.owners.len() >= MAX_KNOWN_OWNERS && !self.owners.contains_key(chat_id) {
            self.owners.clear();
        }
        self.owners.insert(chat_id.clone(), owner);
    }

    /// Drops `user`'s index, open and on disk.
    fn forget_user(&self, user: &UserId) {
        self.shared.open.remove(user);
        let dir = self.shared.user_dir(user);
        if let Err(err) = std::fs::remove_dir_all(&dir)
            && err.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(%err, dir = %dir.display(), "chat search: a deleted user's index stays");
        }
    }

    /// `user`'s index, opened; made only when there is something of theirs to index (then
    /// all their chats are to be reconciled). `None`: none, and nothing to index.
    async fn index_of(
        &self,
        user: &UserId,
        work: &mut UserWork,
    ) -> Result<Option<Arc<MessageIndex>>, IndexerError> {
        if let Some(index) = self.shared.open.get(user) {
            return Ok(Some(index.clone()));
        }
        let dir = self.shared.user_dir(user);
        let index = match MessageIndex::open_existing(&dir, self.shared.stemming)? {
            Some(index) => index,
            None => {
                if !has_searchable_messages(&self.shared.db, user).await? {
                    return Ok(None);
                }
                let (index, _) = MessageIndex::open_or_create(&dir, self.shared.stemming)?;
                // A new index, or one lost: everything of the user's is to be indexed.
                work.reconcile
                    .extend(chat_ids_of(&self.shared.db, user).await?);
                index
            }
        };
        let index = Arc::new(index);
        self.shared.open.insert(user.clone(), index.clone());
        Ok(Some(index))
    }

    /// Applies `work` to `user`'s index in one commit; whether anything changed. Nothing is
    /// written (no writer opened) when nothing is to change.
    async fn write(&self, user: &UserId, mut work: UserWork) -> Result<bool, IndexerError> {
        let Some(index) = self.index_of(user, &mut work).await? else {
            return Ok(false);
        };
        let mut plan = Plan::default();
        for chat_id in work.remove_chats {
            if !index.messages_of_chat(&chat_id)?.is_empty() {
                plan.remove_chats.push(chat_id);
            }
        }
        plan.remove_messages = work.remove_messages;
        self.reconcile(&index, &work.reconcile, &mut plan).await?;
        for message in work.add {
            let reconciled = work.reconcile.contains(&message.chat_id);
            if !reconciled && !plan.remove_chats.contains(&message.chat_id) {
                // Removed first, so a message reported twice (or caught up meanwhile) is
                // indexed once: a delete applies to what was added before it.
                plan.remove_messages.push(message.id.clone());
                plan.add.push(message);
            }
        }
        if plan.is_empty() {
            return Ok(false);
        }
        let mut writer = index.writer()?;
        for chat_id in &plan.remove_chats {
            index.remove_chat(&writer, chat_id);
        }
        for message_id in &plan.remove_messages {
            index.remove_message(&writer, message_id);
        }
        for message in &plan.add {
            index.add(&writer, message)?;
        }
        writer.commit().map_err(MessageIndexError::from)?;
        // Merges of the small segments commits make finish here, so segments stay few.
        writer
            .wait_merging_threads()
            .map_err(MessageIndexError::from)?;
        index.reload()?;
        Ok(true)
    }

    /// Plans adding the searchable messages of `chats` the index lacks, and removing those
    /// the database no longer has. The database is read a few hundred chats a query, not a
    /// query a chat: a busy server's catch-up reconciles thousands of chats.
    async fn reconcile(
        &self,
        index: &MessageIndex,
        chats: &BTreeSet<ChatId>,
        plan: &mut Plan,
    ) -> Result<(), IndexerError> {
        let chats: Vec<ChatId> = chats.iter().cloned().collect();
        let mut stored: HashMap<ChatId, BTreeSet<MessageId>> = HashMap::new();
        for ids in chats.chunks(IDS_PER_QUERY) {
            let rows: Vec<(MessageId, ChatId)> = searchable(messages::Entity::find())
                .select_only()
                .column(messages::Column::Id)
                .column(messages::Column::ChatId)
                .filter(messages::Column::ChatId.is_in(ids.iter().cloned()))
                .into_tuple()
                .all(&self.shared.db)
                .await?;
            for (message_id, chat_id) in rows {
                stored.entry(chat_id).or_default().insert(message_id);
            }
        }
        let mut missing: Vec<MessageId> = Vec::new();
        for chat_id in &chats {
            let stored = stored.remove(chat_id).unwrap_or_default();
            let indexed = index.messages_of_chat(chat_id)?;
            plan.remove_messages
                .extend(indexed.iter().filter(|id| !stored.contains(*id)).cloned());
            missing.extend(stored.into_iter().filter(|id| !indexed.contains(id)));
        }
        for ids in missing.chunks(IDS_PER_QUERY) {
            let rows = messages::Entity::find()
                .filter(messages::Column::Id.is_in(ids.iter().cloned()))
                .all(&self.shared.db)
                .await?;
            for row in rows {
                let Some(text) = row.content.filter(|text| !text.trim().is_empty()) else {
                    continue;
                };
                plan.add.push(IndexedMessage {
                    id: row.id,
                    chat_id: row.chat_id,
                    role: row.role,
                    text,
                    created_at: row.created_at,
                });
            }
        }
        Ok(())
    }

    /// Reconciles every chat changed since the mark (less `NEAR`; at the first catch-up, less
    /// `LOOKBACK`), then the settling read; then keeps the mark.
    async fn catch_up(&mut self) -> Result<(), IndexerError> {
        let drops = self.shared.dropped.load(Ordering::SeqCst);
        let first = self.settled.is_none();
        let back = if first { LOOKBACK } else { NEAR };
        let from = self.mark.map(|mark| mark - back);
        let mut wrote = self.read_changed(from, None).await?;
        if let Some(mark) = self.mark {
            let horizon = mark - LOOKBACK;
            match self.settled {
                Some(settled) if settled < horizon => {
                    wrote |= self.read_changed(Some(settled), Some(horizon)).await?;
                    self.settled = Some(horizon);
                }
                Some(_) => {}
                // The first catch-up read everything from before the horizon.
                None => self.settled = Some(horizon),
            }
            self.recent.retain(|_, at| *at >= horizon);
        }
        // Kept with what was written: a catch-up that wrote nothing writes no file either (an
        // older mark only means more chats compared at the next start).
        if wrote {
            self.keep_mark();
        }
        // Every change not queued before this catch-up began is found now.
        if self.shared.dropped.load(Ordering::SeqCst) == drops {
            self.drops_seen = drops;
            self.reports_trusted = true;
        }
        Ok(())
    }

    /// Reconciles every chat whose `updated_at` is at or after `from` (`None`: every chat) and
    /// before `until`, unless it was reconciled at that `updated_at`; then moves the mark to the
    /// newest seen (not when a page fails: what it did not reconcile stays ahead of the mark).
    /// Whether anything was written.
    async fn read_changed(
        &mut self,
        from: Option<DateTime<Utc>>,
        until: Option<DateTime<Utc>>,
    ) -> Result<bool, IndexerError> {
        let mut cursor: Option<(DateTime<Utc>, ChatId)> = None;
        let mut newest = self.mark;
        let mut wrote = false;
        loop {
            let page = changed_page(self.shared.db.get_database_backend(), from, until, &cursor);
            let rows = self
                .shared
                .db
                .query_all_raw(page)
                .await?
                .iter()
                .map(|row| row.try_get_many_by_index::<(ChatId, UserId, DateTime<Utc>)>())
                .collect::<Result<Vec<_>, _>>()?;
            let full = rows.len() as u64 == PAGE;
            let mut work: BTreeMap<UserId, UserWork> = BTreeMap::new();
            for (chat_id, owner, updated_at) in &rows {
                newest = newest.max(Some(*updated_at));
                if self.recent.get(chat_id) != Some(updated_at) {
                    work.entry(owner.clone())
                        .or_default()
                        .reconcile
                        .insert(chat_id.clone());
                }
            }
            for (user, work) in work {
                wrote |= self.write(&user, work).await?;
            }
            for (chat_id, _, updated_at) in &rows {
                self.recent.insert(chat_id.clone(), *updated_at);
            }
            cursor = rows.last().map(|(id, _, at)| (*at, id.clone()));
            if !full {
                self.mark = newest;
                return Ok(wrote);
            }
        }
    }

    fn keep_mark(&self) {
        let Some(mark) = self.mark else { return };
        let kept = std::fs::create_dir_all(&self.shared.root)
            .and_then(|()| std::fs::write(self.shared.root.join("position"), mark.to_rfc3339()));
        if let Err(err) = kept {
            tracing::warn!(%err, "chat search: the high-water mark was not kept");
        }
    }
}

/// The index a catch-up page is read from (migration 000045).
const BY_UPDATE: &str = "idx_chats_updated_at_id";

/// A page of the chats whose `updated_at` is at or after `from` and before `until`, after
/// `cursor`, by `updated_at` then id: read in `BY_UPDATE`'s order, not sorted. SQLite is told
/// the index (`INDEXED BY`): without statistics its planner may choose to scan the table and
/// sort it, which costs a page as much as the whole table; PostgreSQL's planner has them.
fn changed_page(
    backend: DbBackend,
    from: Option<DateTime<Utc>>,
    until: Option<DateTime<Utc>>,
    cursor: &Option<(DateTime<Utc>, ChatId)>,
) -> Statement {
    let mut page = chats::Entity::find()
        .select_only()
        .column(chats::Column::Id)
        .column(chats::Column::UserId)
        .column(chats::Column::UpdatedAt)
        .order_by_asc(chats::Column::UpdatedAt)
        .order_by_asc(chats::Column::Id)
        .limit(PAGE);
    if let Some(from) = from {
        page = page.filter(chats::Column::UpdatedAt.gte(from));
    }
    if let Some(until) = until {
        page = page.filter(chats::Column::UpdatedAt.lt(until));
    }
    if let Some((at, id)) = cursor {
        page = page.filter(
            Condition::any().add(chats::Column::UpdatedAt.gt(*at)).add(
                Condition::all()
                    .add(chats::Column::UpdatedAt.eq(*at))
                    .add(chats::Column::Id.gt(id.clone())),
            ),
        );
    }
    let mut statement = page.build(backend);
    if backend == DbBackend::Sqlite {
        statement.sql = statement.sql.replacen(
            r#"FROM "chats""#,
            &format!(r#"FROM "chats" INDEXED BY "{BY_UPDATE}""#),
            1,
        );
    }
    statement
}

/// The messages a search can find: people's and the answers', with text.
fn searchable(select: sea_orm::Select<messages::Entity>) -> sea_orm::Select<messages::Entity> {
    select
        .filter(messages::Column::Role.is_in([MessageRole::User, MessageRole::Assistant]))
        .filter(messages::Column::Content.is_not_null())
        .filter(messages::Column::Content.ne(""))
}

/// Whether `user` has any message a search could find.
async fn has_searchable_messages(
    db: &sea_orm::DatabaseConnection,
    user: &UserId,
) -> Result<bool, DbErr> {
    let found: Option<MessageId> = searchable(messages::Entity::find())
        .select_only()
        .column(messages::Column::Id)
        .inner_join(chats::Entity)
        .filter(chats::Column::UserId.eq(user.clone()))
        .into_tuple()
        .one(db)
        .await?;
    Ok(found.is_some())
}

/// Every chat of `user`.
async fn chat_ids_of(
    db: &sea_orm::DatabaseConnection,
    user: &UserId,
) -> Result<Vec<ChatId>, DbErr> {
    chats::Entity::find()
        .select_only()
        .column(chats::Column::Id)
        .filter(chats::Column::UserId.eq(user.clone()))
        .into_tuple()
        .all(db)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    /// A fresh database under `dir`, migrated, and the configuration it was opened with.
    async fn migrated_database(dir: &Path) -> (Config, sea_orm::DatabaseConnection) {
        let config = Config {
            data_dir: dir.to_path_buf(),
            ..Config::default()
        };
        let db = crate::db::connect(&config).await.unwrap();
        crate::db::migrate(&db).await.unwrap();
        (config, db)
    }

    /// An indexer over a fresh database with user `user_1` and their chat `chat_1`, driven by
    /// hand (no thread, no queue).
    async fn indexer_over_one_chat(dir: &Path) -> Indexer {
        let (_, db) = migrated_database(dir).await;
        for sql in [
            "INSERT INTO users (id, username, created_at) VALUES ('user_1', 'one', '2026-01-01T00:00:00Z')",
            "INSERT INTO chats (id, user_id, title, created_at, updated_at) \
             VALUES ('chat_1', 'user_1', 'a chat', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')",
        ] {
            db.execute_raw(Statement::from_string(db.get_database_backend(), sql))
                .await
                .unwrap();
        }
        Indexer::new(Arc::new(Shared {
            root: dir.join("chat_search"),
            stemming: crate::retrieval::Stemming::default(),
            catch_up_every: Duration::from_secs(3600),
            db,
            open: dashmap::DashMap::new(),
            dropped: AtomicU64::new(0),
        }))
    }

    /// Writes a user message saying `text` to `chat_1` (its chat's `updated_at` set to
    /// `updated_at`, when given, as every write of the app's does), as a turn or another
    /// process would; the message as a report would carry it.
    async fn write(
        indexer: &Indexer,
        text: &str,
        updated_at: Option<DateTime<Utc>>,
    ) -> IndexedMessage {
        use sea_orm::{ActiveModelTrait, Set};
        let chat_id = ChatId::from_string("chat_1");
        let message = messages::ActiveModel {
            id: Set(MessageId::generate()),
            chat_id: Set(chat_id.clone()),
            parent_id: Set(None),
            role: Set(MessageRole::User),
            content: Set(Some(text.into())),
            parts: Set(None),
            tool_calls: Set(None),
            tool_call_id: Set(None),
            run_id: Set(None),
            stop_reason: Set(None),
            reasoning: Set(None),
            reasoning_ms: Set(None),
            model: Set(None),
            seq: Set(0),
            created_at: Set(Utc::now()),
        }
        .insert(&indexer.shared.db)
        .await
        .unwrap();
        if let Some(updated_at) = updated_at {
            chats::Entity::update_many()
                .col_expr(
                    chats::Column::UpdatedAt,
                    sea_orm::sea_query::Expr::value(updated_at),
                )
                .filter(chats::Column::Id.eq(chat_id.clone()))
                .exec(&indexer.shared.db)
                .await
                .unwrap();
        }
        IndexedMessage {
            id: message.id,
            chat_id,
            role: MessageRole::User,
            text: text.into(),
            created_at: message.created_at,
        }
    }

    /// What `write` wrote, reported as a turn reports it.
    fn reported(message: &IndexedMessage, updated_at: DateTime<Utc>) -> Change {
        Change::Stored {
            chat_id: message.chat_id.clone(),
            owner: Some(UserId::from_string("user_1")),
            messages: vec![message.clone()],
            updated_at,
        }
    }

    /// The messages of `chat_1` in the index.
    fn indexed(indexer: &Indexer) -> std::collections::HashSet<MessageId> {
        let index = indexer
            .shared
            .open
            .get(&UserId::from_string("user_1"))
            .unwrap()
            .clone();
        index
            .messages_of_chat(&ChatId::from_string("chat_1"))
            .unwrap()
    }

    /// The indexer's thread runs below the turns' priority (and so do the threads its tantivy
    /// writers start, which inherit it): its bursts of indexing and merging no longer hold a
    /// core a turn waits for.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn the_indexer_runs_below_the_turns_priority() {
        let dir = tempfile::tempdir().unwrap();
        let (config, db) = migrated_database(dir.path()).await;
        let search = super::super::ChatSearch::start(
            db,
            dir.path(),
            crate::retrieval::Stemming::default(),
            &config.search,
        )
        .unwrap();
        // Other tests' indexers may have just started: each lowers its priority first thing.
        let expected = (crate::os_limits::own_nice() + BACKGROUND_NICE).min(19);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let nices = loop {
            let nices = crate::os_limits::nice_of_threads("colloquy-chat-s");
            let done = !nices.is_empty() && nices.iter().all(|nice| *nice == expected);
            if done || std::time::Instant::now() > deadline {
                break nices;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        assert!(!nices.is_empty(), "no indexer thread");
        assert!(nices.iter().all(|nice| *nice == expected), "{nices:?}");
        drop(search);
    }

    /// A chat whose last write a turn reported is not read again by the catch-ups (a busy
    /// server's catch-up reconciled every chat its turns had just indexed) until its
    /// `updated_at` moves; then all it lacks is indexed.
    #[tokio::test]
    async fn a_reported_turn_spares_the_catch_up_its_chat_until_the_chat_changes_again() {
        let dir = tempfile::tempdir().unwrap();
        let mut indexer = indexer_over_one_chat(dir.path()).await;
        let first = write(
            &indexer,
            "alpha",
            Some(crate::chat::persistence::updated_now()),
        )
        .await;
        indexer.catch_up().await.unwrap();
        assert_eq!(indexed(&indexer), [first.id.clone()].into());

        let at = crate::chat::persistence::updated_now();
        let turn = write(&indexer, "bravo", Some(at)).await;
        indexer.apply(vec![reported(&turn, at)]).await.unwrap();
        // Written behind the indexer's back without moving `updated_at` (no write of the
        // app's does that): the catch-up does not look, so it is not found.
        let unseen = write(&indexer, "charlie", None).await;
        indexer.catch_up().await.unwrap();
        assert_eq!(
            indexed(&indexer),
            [first.id.clone(), turn.id.clone()].into()
        );

        // The chat changes again: the next catch-up reconciles it whole.
        let later = write(
            &indexer,
            "delta",
            Some(crate::chat::persistence::updated_now()),
        )
        .await;
        indexer.catch_up().await.unwrap();
        assert_eq!(
            indexed(&indexer),
            [first.id, turn.id, unseen.id, later.id].into()
        );
    }

    /// A report is not taken for all its chat has before the first catch-up (reports a crash
    /// lost) nor after a change was not queued, until a catch-up begun after it: a write whose
    /// report was lost is found though a later one was reported.
    #[tokio::test]
    async fn a_report_after_a_lost_one_does_not_hide_the_write_it_lost() {
        for lost_before_start in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let mut indexer = indexer_over_one_chat(dir.path()).await;
            // The user's index is made: by a report, or by the first catch-up.
            let at = crate::chat::persistence::updated_now();
            let first = write(&indexer, "alpha", Some(at)).await;
            if lost_before_start {
                indexer.apply(vec![reported(&first, at)]).await.unwrap();
            } else {
                indexer.catch_up().await.unwrap();
                assert!(indexer.reports_trusted);
            }
            // A turn's write whose report is lost: by a crash before the indexer started, or
            // not queued.
            let lost = write(
                &indexer,
                "lost",
                Some(crate::chat::persistence::updated_now()),
            )
            .await;
            if !lost_before_start {
                indexer.shared.dropped.fetch_add(1, Ordering::SeqCst);
            }
            let at = crate::chat::persistence::updated_now();
            let turn = write(&indexer, "bravo", Some(at)).await;
            indexer.apply(vec![reported(&turn, at)]).await.unwrap();
            assert!(!indexed(&indexer).contains(&lost.id));
            indexer.catch_up().await.unwrap();
            let indexed = indexed(&indexer);
            assert!(
                indexed.contains(&lost.id) && indexed.contains(&turn.id),
                "lost before start: {lost_before_start}"
            );
            // That catch-up found everything: reports are taken again.
            assert!(indexer.reports_trusted);
        }
    }

    /// The catch-up's pages are read from an index in their order: before
    /// `idx_chats_updated_at_id`, each page scanned every chat and sorted the recent ones, so a
    /// busy server's catch-up read the whole table hundreds of times each time.
    #[tokio::test]
    async fn a_catch_up_page_is_read_from_an_index_in_its_order_not_scanned_and_sorted() {
        let dir = tempfile::tempdir().unwrap();
        let (_, db) = migrated_database(dir.path()).await;
        // A table of some size: on an empty one SQLite may rightly scan and sort.
        let backend = db.get_database_backend();
        for sql in [
            "INSERT INTO users (id, username, created_at) VALUES ('user_1', 'one', '2026-01-01T00:00:00Z')",
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000) \
             INSERT INTO chats (id, user_id, title, created_at, updated_at) \
             SELECT 'chat_' || i, 'user_1', 'a chat', '2026-01-01T00:00:00Z', \
             strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || i || ' seconds') FROM n",
        ] {
            db.execute_raw(Statement::from_string(backend, sql))
                .await
                .unwrap();
        }
        let at = Utc::now();
        let cursor = Some((at, ChatId::from_string("chat_x")));
        for (from, until, cursor) in [
            (Some(at), None, &None),
            (Some(at), None, &cursor),
            (Some(at), Some(at), &cursor),
            (None, None, &None),
        ] {
            let page = changed_page(backend, from, until, cursor);
            let plan = db
                .query_all_raw(Statement::from_sql_and_values(
                    backend,
                    format!("EXPLAIN QUERY PLAN {}", page.sql),
                    page.values.map(|values| values.0).unwrap_or_default(),
                ))
                .await
                .unwrap();
            let plan: Vec<String> = plan
                .iter()
                .map(|row| row.try_get_by::<String, _>("detail").unwrap())
                .collect();
            let plan = plan.join("; ");
            assert!(
                plan.contains(BY_UPDATE) && !plan.contains("TEMP B-TREE"),
                "the page {} is planned as: {plan}",
                page.sql
            );
        }
    }
}
