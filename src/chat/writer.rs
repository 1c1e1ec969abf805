//! `ChatWriter`: where a chat's writes go. Alone (SQLite, or PostgreSQL without a cluster) it
//! is the connection itself, unchanged. With several processes it is fenced: each write runs
//! in a transaction that first checks, by `Cluster::fence`, that this process still holds the
//! chat's lease at the epoch its session started under, so a process that stalled past its
//! lease and wakes after another took the chat keeps nothing it writes. A fenced write fails
//! with `cluster::Fenced` and stops this process's session of the chat at once.

use entities::ids::{ChatId, UserId};
use sea_orm::{ConnectionTrait, DatabaseConnection, DatabaseExecutor, DbErr, TransactionTrait};

use super::group_commit::{GroupCommit, OnCommit};
use super::registry::ChatRegistry;
use crate::cluster::{Cluster, Fenced, chat_key};

/// A chat's way to the database for writing; cheap to clone.
#[derive(Clone)]
pub struct ChatWriter {
    db: DatabaseConnection,
    fence: Option<Fence>,
    /// Unfenced on SQLite: the turns' writes join a group commit (`transact`).
    group: Option<GroupCommit>,
    /// Where `messages_changed` reports to: the search index and this writer's chat.
    search: Option<(super::search::ChatSearch, ChatId)>,
}

#[derive(Clone)]
struct Fence {
    cluster: Cluster,
    registry: ChatRegistry,
    chat_id: ChatId,
    key: String,
    epoch: i64,
}

/// One write under way: the connection, or a fenced transaction. Commit it when done; dropped
/// uncommitted, a fenced write is rolled back.
pub struct Write<'a>(DatabaseExecutor<'a>);

impl ChatWriter {
    /// Writes for `chat_id` as `registry`'s process holds it now: fenced at the epoch of its
    /// lease when the registry is in a cluster (a lease it does not hold fences at 0, which
    /// no lease has, so every write fails safe).
    pub fn new(registry: &ChatRegistry, db: DatabaseConnection, chat_id: &ChatId) -> Self {
        let fence = registry.cluster().map(|cluster| {
            let key = chat_key(chat_id.as_str());
            Fence {
                epoch: cluster.epoch(&key).unwrap_or(0),
                cluster: cluster.clone(),
                registry: registry.clone(),
                chat_id: chat_id.clone(),
                key,
            }
        });
        Self {
            db,
            fence,
            group: registry.group_commit().cloned(),
            search: registry
                .search()
                .map(|search| (search.clone(), chat_id.clone())),
        }
    }

    /// Writes straight to `db`, unfenced (one process).
    pub fn unfenced(db: DatabaseConnection) -> Self {
        Self {
            db,
            fence: None,
            group: None,
            search: None,
        }
    }

    /// Tells the chat search index that this chat's messages changed (stored or removed);
    /// call once the write is committed. The index catches up off this path.
    pub fn messages_changed(&self) {
        if let Some((search, chat_id)) = &self.search {
            search.chat_changed(chat_id);
        }
    }

    /// Hands the chat search index the messages a turn just committed (of `owner`, the run's
    /// user, when known), to index as they are: no read back. `updated_at`: the chat's
    /// `updated_at` the write set.
    pub fn messages_stored(
        &self,
        owner: Option<&UserId>,
        nodes: &[super::tree::MessageNode],
        updated_at: chrono::DateTime<chrono::Utc>,
    ) {
        if let Some((search, chat_id)) = &self.search {
            search.messages_stored(chat_id, owner, nodes, updated_at);
        }
    }

    /// The epoch writes are fenced at, with a cluster.
    pub fn epoch(&self) -> Option<i64> {
        self.fence.as_ref().map(|fence| fence.epoch)
    }

    /// Starts a write: with a cluster, a transaction in which the fence has been checked.
    pub async fn begin(&self) -> Result<Write<'_>, DbErr> {
        let Some(fence) = &self.fence else {
            return Ok(Write(DatabaseExecutor::Connection(&self.db)));
        };
        let txn = match fence.cluster.begin_fenced(&fence.key, fence.epoch).await {
            Ok(txn) => txn,
            Err(err) => {
                if Fenced::is(&err) {
                    tracing::warn!(
                        chat_id = %fence.chat_id,
                        epoch = fence.epoch,
                        "another process took this chat: its session here stops, unwritten"
                    );
                    fence.registry.fenced(&fence.chat_id, fence.epoch);
                }
                return Err(err);
            }
        };
        Ok(Write(DatabaseExecutor::OwnedTransaction(txn)))
    }
}

impl ChatWriter {
    /// Runs `work` as one transaction and gives what it made once that is committed: fenced
    /// with a cluster; on SQLite in the next group commit, with the writes of other chats
    /// that came at the same time.
    pub async fn transact<T: Send + 'static>(
        &self,
        work: impl super::group_commit::Transaction<T>,
    ) -> Result<T, DbErr> {
        self.transact_telling(work, None).await
    }

    /// `transact`, also calling `on_commit` with the outcome as soon as it is known: on
    /// SQLite's group commit, on the writer's thread right after the commit, before this
    /// returns; otherwise here, once the transaction is committed or has failed.
    pub async fn transact_telling<T: Send + 'static>(
        &self,
        work: impl super::group_commit::Transaction<T>,
        on_commit: Option<OnCommit>,
    ) -> Result<T, DbErr> {
        if let (None, Some(group)) = (&self.fence, &self.group) {
            return group.write_telling(work, on_commit).await;
        }
        let outcome = self.transact_here(work).await;
        if let Some(on_commit) = on_commit {
            on_commit(outcome.as_ref().map(|_| ()));
        }
        outcome
    }

    /// A write that needs no transaction of its own when it runs alone (one statement: a
    /// run's draft, say). On SQLite it joins the next group commit, as `transact`, so the
    /// drafts of thousands of streaming runs cost a few commits on the one writer instead of
    /// a commit each through the pool, fighting that writer for SQLite's lock. Otherwise its
    /// statements run as `begin` has them: straight on the connection, or in the fenced
    /// transaction.
    pub async fn write<T: Send + 'static>(
        &self,
        work: impl super::group_commit::Transaction<T>,
    ) -> Result<T, DbErr> {
        if let (None, Some(group)) = (&self.fence, &self.group) {
            return group.write_telling(work, None).await;
        }
        let (made, statements) =
            super::group_commit::record(self.db.get_database_backend(), work).await?;
        let write = self.begin().await?;
        for statement in statements {
            write.db().execute_raw(statement).await?;
        }
        write.commit().await?;
        Ok(made)
    }

    /// Records `work` and runs it as one transaction of its own (fenced with a cluster).
    async fn transact_here<T: Send + 'static>(
        &self,
        work: impl super::group_commit::Transaction<T>,
    ) -> Result<T, DbErr> {
        let (made, statements) =
            super::group_commit::record(self.db.get_database_backend(), work).await?;
        let txn = match self.begin().await?.0 {
            DatabaseExecutor::OwnedTransaction(txn) => txn,
            DatabaseExecutor::Connection(_) | DatabaseExecutor::Transaction(_) => {
                self.db.begin().await?
            }
        };
        for statement in statements {
            txn.execute_raw(statement).await?;
        }
        txn.commit().await?;
        Ok(made)
    }
}

impl Write<'_> {
    /// Where the write's statements go (a transaction, or the connection).
    pub fn db(&self) -> &DatabaseExecutor<'_> {
        &self.0
    }

    /// Makes the write durable.
    pub async fn commit(self) -> Result<(), DbErr> {
        match self.0 {
            DatabaseExecutor::OwnedTransaction(txn) => txn.commit().await,
            DatabaseExecutor::Connection(_) | DatabaseExecutor::Transaction(_) => Ok(()),
        }
    }
}
