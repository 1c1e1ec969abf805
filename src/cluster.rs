//! `Cluster`: several processes on one PostgreSQL, each chat owned by one of them at a time.
//!
//! Ownership is a lease row (`leases`: key, owner, the address the owner is reached at, expiry)
//! taken in one transaction that locks the row: a process takes a key that is free, expired or
//! its own, and is told the address of the live owner otherwise. Keys are `chat:<id>` (a chat's
//! actor may run only in the process holding it) and `job:<name>` (work done once per
//! cluster: recovering what a dead process left, retention sweeps). One UPDATE renews every
//! lease the process holds, every third of the lease time; a key missing from its answer was
//! taken by another process after it expired, and its chat is stopped here. A process that
//! cannot renew for a whole lease time stops all of its chats (`holds` turns false) before
//! another may take them. Every change of owner is recorded in `lease_handovers`.
//!
//! Each lease carries an epoch, raised whenever the key changes owner. A chat's writes are
//! fenced by it (`fence`, used through `chat::ChatWriter`): each runs in a transaction that
//! first locks the chat's lease row in share mode and checks that this process still holds it,
//! unexpired, at the epoch its session started with. A process that stalled past its lease
//! and wakes after another took the chat fails that check (`Fenced`) and keeps nothing; a
//! takeover waits for a write that passed it to commit, so the new owner reads it.
//!
//! All times are the database's (`now()`), so the processes' clocks need not agree; a process
//! judges its own leases by its monotonic clock from the moment it sent the renewal, which is
//! never later than the database's. SQLite is one process: no `Cluster` is made for it.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use dashmap::DashMap;
use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend, DbErr, Statement, TransactionTrait};

/// What a process gets when it asks for a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// This process holds it. `was_ours`: it already did (the row was this process's, renewed
    /// or not); `taken_from`: the process whose expired lease it replaced; `owner_died`: that
    /// process is gone too (its process lease expired: a failover), not merely done with the
    /// key (a chat it let lapse when it went idle).
    Mine {
        was_ours: bool,
        taken_from: Option<String>,
        owner_died: bool,
    },
    /// A live process holds it, reached at this base URL.
    Elsewhere { owner: String, address: String },
}

/// How long a lease row is kept after it lapsed before `prune` deletes it.
pub const LAPSED_ROWS_KEPT: Duration = Duration::from_secs(3600);

/// Margin kept between a lease's expiry and the moment its holder stops trusting it.
const SAFETY_MARGIN: Duration = Duration::from_secs(1);

/// This process's leases, shared by clones.
#[derive(Clone)]
pub struct Cluster {
    inner: Arc<Inner>,
}

struct Inner {
    db: DatabaseConnection,
    process: String,
    address: String,
    lease: Duration,
    /// The keys this process holds, with the epoch each was taken at.
    held: DashMap<String, i64>,
    /// The monotonic clock's origin for `valid_until_ms`.
    base: Instant,
    /// Until when (milliseconds after `base`) the held leases are surely this process's.
    valid_until_ms: AtomicU64,
    forwarded: AtomicU64,
    failovers: AtomicU64,
}

/// The key of a chat's lease.
pub fn chat_key(chat_id: &str) -> String {
    format!("chat:{chat_id}")
}

/// The key of a once-per-cluster job's lease.
pub fn job_key(name: &str) -> String {
    format!("job:{name}")
}

/// The key of a process's own lease, held for as long as it runs: whether a process whose
/// chat lease expired is alive (it let the chat lapse) or dead (its work must be taken over).
pub fn process_key(process: &str) -> String {
    format!("process:{process}")
}

impl Cluster {
    /// A process called `process` (unique per start), reached at `address`.
    pub fn new(db: DatabaseConnection, process: String, address: String, lease: Duration) -> Self {
        Self {
            inner: Arc::new(Inner {
                db,
                process,
                address,
                lease,
                held: DashMap::new(),
                base: Instant::now(),
                valid_until_ms: AtomicU64::new(millis(lease.saturating_sub(SAFETY_MARGIN))),
                forwarded: AtomicU64::new(0),
                failovers: AtomicU64::new(0),
            }),
        }
    }

    /// A new process id: `proc_` and a random suffix.
    pub fn new_process_id() -> String {
        format!("proc_{}", uuid::Uuid::new_v4().simple())
    }

    pub fn process_id(&self) -> &str {
        &self.inner.process
    }

    pub fn address(&self) -> &str {
        &self.inner.address
    }

    pub fn lease(&self) -> Duration {
        self.inner.lease
    }

    fn valid(&self) -> bool {
        millis(self.inner.base.elapsed()) < self.inner.valid_until_ms.load(Ordering::Acquire)
    }

    /// Whether this process holds `key` and can still trust it.
    pub fn holds(&self, key: &str) -> bool {
        self.inner.held.contains_key(key) && self.valid()
    }

    /// The epoch this process took `key` at, while it holds it.
    pub fn epoch(&self, key: &str) -> Option<i64> {
        self.inner.held.get(key).map(|epoch| *epoch)
    }

    /// A transaction in which `fence` has checked `key` at `epoch`: where a write of what
    /// `key` owns goes.
    pub async fn begin_fenced(
        &self,
        key: &str,
        epoch: i64,
    ) -> Result<sea_orm::DatabaseTransaction, DbErr> {
        let txn = self.inner.db.begin().await?;
        self.fence(&txn, key, epoch).await?;
        Ok(txn)
    }

    /// Checks, inside `txn`, that this process still holds `key` at `epoch` and that its lease
    /// has not expired by the database's clock; the lease row stays share-locked until `txn`
    /// ends, so no other process takes the key before what `txn` writes is committed. A check
    /// that fails is `Fenced`, and this process stops holding `key` (at that epoch).
    pub async fn fence(
        &self,
        txn: &impl ConnectionTrait,
        key: &str,
        epoch: i64,
    ) -> Result<(), DbErr> {
        let row = txn
            .query_one_raw(self.statement(
                "SELECT 1 AS held FROM leases WHERE key = $1 AND owner = $2 AND epoch = $3 \
                 AND expires_at > now() FOR SHARE",
                vec![key.into(), self.inner.process.clone().into(), epoch.into()],
            ))
            .await?;
        if row.is_some() {
            return Ok(());
        }
        self.inner.held.remove_if(key, |_, held| *held == epoch);
        Err(Fenced {
            key: key.to_string(),
            epoch,
        }
        .into())
    }

    /// Takes `key` if it is free, expired or already this process's; else names its owner.
    pub async fn claim(&self, key: &str) -> Result<Claim, DbErr> {
        if self.holds(key) {
            return Ok(Claim::Mine {
                was_ours: true,
                taken_from: None,
                owner_died: false,
            });
        }
        let sent = Instant::now();
        // Twice at most: a row inserted by another process between our look and our insert is
        // seen, locked, on the second look.
        // A key's first epoch is this process's clock in milliseconds, not 1: a row pruned
        // after it lapsed (`prune`) is not taken again by its last owner at an epoch it had.
        let first_epoch = chrono::Utc::now().timestamp_millis();
        for _ in 0..2 {
            let txn = self.inner.db.begin().await?;
            let current = txn
                .query_one_raw(self.statement(
                    "SELECT owner, address, epoch, expires_at, expires_at <= now() AS expired \
                     FROM leases WHERE key = $1 FOR UPDATE",
                    vec![key.into()],
                ))
                .await?;
            let claim = match current {
                None => {
                    let inserted = txn
                        .execute_raw(self.statement(
                            "INSERT INTO leases (key, owner, address, epoch, acquired_at, expires_at) \
                             VALUES ($1, $2, $3, $5, now(), \
                             now() + $4 * interval '1 millisecond') \
                             ON CONFLICT (key) DO NOTHING",
                            self.lease_values(key, first_epoch),
                        ))
                        .await?;
                    if inserted.rows_affected() == 0 {
                        txn.rollback().await?;
                        continue;
                    }
                    self.record_handover(&txn, key, None, None).await?;
                    (
                        Claim::Mine {
                            was_ours: false,
                            taken_from: None,
                            owner_died: false,
                        },
                        first_epoch,
                    )
                }
                Some(row) => {
                    let owner: String = row.try_get("", "owner")?;
                    let expired: bool = row.try_get("", "expired")?;
                    let epoch: i64 = row.try_get("", "epoch")?;
                    let mine = owner == self.inner.process;
                    // A change of owner fences out whatever the previous one still writes.
                    let epoch = if mine { epoch } else { epoch + 1 };
                    if !mine && !expired {
                        let address: String = row.try_get("", "address")?;
                        txn.rollback().await?;
                        return Ok(Claim::Elsewhere { owner, address });
                    }
                    txn.execute_raw(self.statement(
                        "UPDATE leases SET owner = $2, address = $3, epoch = $5, \
                         acquired_at = CASE WHEN owner = $2 THEN acquired_at ELSE now() END, \
                         expires_at = now() + $4 * interval '1 millisecond' WHERE key = $1",
                        self.lease_values(key, epoch),
                    ))
                    .await?;
                    let claim = if mine {
                        Claim::Mine {
                            was_ours: true,
                            taken_from: None,
                            owner_died: false,
                        }
                    } else {
                        let expires_at: chrono::DateTime<chrono::Utc> =
                            row.try_get("", "expires_at")?;
                        self.record_handover(&txn, key, Some(&owner), Some(expires_at))
                            .await?;
                        let owner_died = !self.is_alive(&txn, &owner).await?;
                        if owner_died {
                            self.inner.failovers.fetch_add(1, Ordering::Relaxed);
                        }
                        Claim::Mine {
                            was_ours: false,
                            taken_from: Some(owner),
                            owner_died,
                        }
                    };
                    (claim, epoch)
                }
            };
            let (claim, epoch) = claim;
            txn.commit().await?;
            self.inner.held.insert(key.to_string(), epoch);
            self.extend_validity(sent);
            return Ok(claim);
        }
        Err(DbErr::Custom(format!(
            "lease {key} changed hands while being taken"
        )))
    }

    /// Takes the lease of a key no process can have held yet (a chat just made): the lease
    /// and the record of its first owner in one statement. A key that exists after all is
    /// claimed as `claim` does.
    pub async fn claim_new(&self, key: &str) -> Result<Claim, DbErr> {
        if self.holds(key) {
            return self.claim(key).await;
        }
        let sent = Instant::now();
        let first_epoch = chrono::Utc::now().timestamp_millis();
        let inserted = self
            .inner
            .db
            .execute_raw(self.statement(
                "WITH taken AS (INSERT INTO leases \
                 (key, owner, address, epoch, acquired_at, expires_at) \
                 VALUES ($1, $2, $3, $5, now(), now() + $4 * interval '1 millisecond') \
                 ON CONFLICT (key) DO NOTHING RETURNING key) \
                 INSERT INTO lease_handovers (key, from_owner, from_expires_at, to_owner, at) \
                 SELECT key, NULL, NULL, $2, now() FROM taken",
                self.lease_values(key, first_epoch),
            ))
            .await?;
        if inserted.rows_affected() == 0 {
            return self.claim(key).await;
        }
        self.inner.held.insert(key.to_string(), first_epoch);
        self.extend_validity(sent);
        Ok(Claim::Mine {
            was_ours: false,
            taken_from: None,
            owner_died: false,
        })
    }

    /// Whether `process` still renews its own process lease.
    async fn is_alive(&self, db: &impl ConnectionTrait, process: &str) -> Result<bool, DbErr> {
        let row = db
            .query_one_raw(self.statement(
                "SELECT 1 AS live FROM leases WHERE key = $1 AND expires_at > now()",
                vec![process_key(process).into()],
            ))
            .await?;
        Ok(row.is_some())
    }

    /// Whether `key`'s lease has expired and the process that held it is gone: its work there
    /// (documents it was processing, uploads it was committing) is nobody's until taken over.
    /// A key never leased, or held by a live process, is not.
    pub async fn abandoned(&self, key: &str) -> Result<bool, DbErr> {
        let row = self
            .inner
            .db
            .query_one_raw(self.statement(
                "SELECT owner FROM leases WHERE key = $1 AND expires_at <= now()",
                vec![key.into()],
            ))
            .await?;
        match row {
            Some(row) => {
                let owner: String = row.try_get("", "owner")?;
                Ok(owner != self.inner.process && !self.is_alive(&self.inner.db, &owner).await?)
            }
            None => Ok(false),
        }
    }

    /// Takes this process's own lease (once, as it joins), renewed with its others until it
    /// stops; other processes read it to tell a dead owner from one that let a chat go idle.
    pub async fn announce(&self) -> Result<(), DbErr> {
        self.claim(&process_key(&self.inner.process))
            .await
            .map(|_| ())
    }

    async fn record_handover(
        &self,
        txn: &impl ConnectionTrait,
        key: &str,
        from: Option<&str>,
        from_expires_at: Option<chrono::DateTime<chrono::Utc>>,
    ) -> Result<(), DbErr> {
        txn.execute_raw(self.statement(
            "INSERT INTO lease_handovers (key, from_owner, from_expires_at, to_owner, at) \
             VALUES ($1, $2, $3, $4, now())",
            vec![
                key.into(),
                from.map(str::to_string).into(),
                from_expires_at.into(),
                self.inner.process.clone().into(),
            ],
        ))
        .await?;
        Ok(())
    }

    /// The address of the live process holding `key`, when that is not this one. A key nobody
    /// holds is `None` (this process may take it).
    pub async fn owner_elsewhere(&self, key: &str) -> Result<Option<String>, DbErr> {
        if self.holds(key) {
            return Ok(None);
        }
        let row = self
            .inner
            .db
            .query_one_raw(self.statement(
                "SELECT address FROM leases WHERE key = $1 AND owner <> $2 AND expires_at > now()",
                vec![key.into(), self.inner.process.clone().into()],
            ))
            .await?;
        row.map(|row| row.try_get::<String>("", "address"))
            .transpose()
    }

    /// Whether the process reached at `address` still holds its own lease (it renews it while
    /// it runs; a stalled or dead one lets it lapse).
    pub async fn address_alive(&self, address: &str) -> Result<bool, DbErr> {
        let row = self
            .inner
            .db
            .query_one_raw(self.statement(
                "SELECT 1 AS alive FROM leases WHERE address = $1 AND key LIKE $2 \
                 AND expires_at > now()",
                vec![address.into(), format!("{}%", process_key("")).into()],
            ))
            .await?;
        Ok(row.is_some())
    }

    /// Stops renewing `key` (its chat passivated, or was deleted): the lease lapses after the
    /// lease time, and until then requests for the chat still come here, where it is taken
    /// again. Not deleting the row leaves no moment in which two processes could both take it.
    pub fn let_lapse(&self, key: &str) {
        self.inner.held.remove(key);
    }

    /// Gives up every lease this process holds (it is stopping): its chats are taken at once
    /// by whichever process is asked next, instead of after the lease time.
    pub async fn release_all(&self) -> Result<u64, DbErr> {
        self.inner.held.clear();
        let done = self
            .inner
            .db
            .execute_raw(self.statement(
                "DELETE FROM leases WHERE owner = $1",
                vec![self.inner.process.clone().into()],
            ))
            .await?;
        Ok(done.rows_affected())
    }

    /// The chat keys some live process holds (start-up leaves their runs alone).
    pub async fn live_chat_keys(&self) -> Result<HashSet<String>, DbErr> {
        let rows = self
            .inner
            .db
            .query_all_raw(self.statement(
                "SELECT key FROM leases WHERE key LIKE 'chat:%' AND expires_at > now()",
                vec![],
            ))
            .await?;
        rows.iter()
            .map(|row| row.try_get::<String>("", "key"))
            .collect()
    }

    /// Renews every lease this process holds; returns the keys it lost (taken by another
    /// process after they expired), which it no longer holds.
    pub async fn renew(&self) -> Result<Vec<String>, DbErr> {
        let sent = Instant::now();
        let held: Vec<String> = self.inner.held.iter().map(|k| k.key().clone()).collect();
        if held.is_empty() {
            self.extend_validity(sent);
            return Ok(Vec::new());
        }
        // Keys hold no newline (ids and job names), so one text parameter carries them all.
        let rows = self
            .inner
            .db
            .query_all_raw(self.statement(
                "UPDATE leases SET expires_at = now() + $2 * interval '1 millisecond' \
                 WHERE owner = $1 AND key = ANY(string_to_array($3, E'\\n')) RETURNING key",
                vec![
                    self.inner.process.clone().into(),
                    self.lease_ms().into(),
                    held.join("\n").into(),
                ],
            ))
            .await?;
        let kept: HashSet<String> = rows
            .iter()
            .map(|row| row.try_get::<String>("", "key"))
            .collect::<Result<_, _>>()?;
        let lost: Vec<String> = held
            .into_iter()
            .filter(|key| !kept.contains(key) && self.inner.held.contains_key(key))
            .collect();
        for key in &lost {
            self.inner.held.remove(key);
        }
        self.extend_validity(sent);
        Ok(lost)
    }

    /// Every lease is given up: this process stops trusting them (renewal failed too long).
    fn drop_all(&self) -> Vec<String> {
        let all: Vec<String> = self.inner.held.iter().map(|k| k.key().clone()).collect();
        self.inner.held.clear();
        all
    }

    fn extend_validity(&self, sent: Instant) {
        let until = sent.saturating_duration_since(self.inner.base)
            + self.inner.lease.saturating_sub(SAFETY_MARGIN);
        self.inner
            .valid_until_ms
            .fetch_max(millis(until), Ordering::AcqRel);
    }

    /// Renews every third of the lease time, for good; `lost` is told each key this process no
    /// longer holds (taken over, or not renewed in time).
    pub fn start_renewing(&self, lost: impl Fn(&str) + Send + 'static) {
        let cluster = self.clone();
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(cluster.inner.lease / 3);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                // A database that hangs is a renewal that failed, not a loop that waits.
                let renewed = tokio::time::timeout(cluster.inner.lease / 3, cluster.renew())
                    .await
                    .unwrap_or_else(|_| Err(DbErr::Custom("renewing the leases timed out".into())));
                let gone = match renewed {
                    Ok(gone) => gone,
                    Err(err) if cluster.valid() => {
                        tracing::warn!(%err, "could not renew this process's leases; retrying");
                        continue;
                    }
                    Err(err) => {
                        tracing::error!(
                            %err,
                            "could not renew this process's leases for a whole lease time: \
                             its chats are stopped so another process may take them"
                        );
                        cluster.drop_all()
                    }
                };
                for key in gone {
                    tracing::warn!(%key, "a lease this process held was taken over");
                    lost(&key);
                }
            }
        });
    }

    /// Deletes the record of changes of owner older than `handovers_for`, and lease rows that
    /// lapsed more than `LAPSED_ROWS_KEPT` ago (chats gone idle, processes that stopped): the
    /// bookkeeping stays as large as the live cluster, not its history. Returns both counts.
    pub async fn prune(&self, handovers_for: Duration) -> Result<(u64, u64), DbErr> {
        let ms = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        let handovers = self
            .inner
            .db
            .execute_raw(self.statement(
                "DELETE FROM lease_handovers WHERE at < now() - $1 * interval '1 millisecond'",
                vec![ms(handovers_for).into()],
            ))
            .await?
            .rows_affected();
        let leases = self
            .inner
            .db
            .execute_raw(self.statement(
                "DELETE FROM leases WHERE expires_at < now() - $1 * interval '1 millisecond'",
                vec![ms(LAPSED_ROWS_KEPT).into()],
            ))
            .await?
            .rows_affected();
        Ok((handovers, leases))
    }

    /// Counts a request forwarded to another process.
    pub fn note_forwarded(&self) {
        self.inner.forwarded.fetch_add(1, Ordering::Relaxed);
    }

    /// What `/health/ready` and `/metrics` show.
    pub fn stats(&self) -> ClusterStats {
        let held: Vec<String> = self.inner.held.iter().map(|k| k.key().clone()).collect();
        ClusterStats {
            chat_leases: held.iter().filter(|k| k.starts_with("chat:")).count() as u64,
            job_leases: held.iter().filter(|k| k.starts_with("job:")).count() as u64,
            forwarded: self.inner.forwarded.load(Ordering::Relaxed),
            failovers: self.inner.failovers.load(Ordering::Relaxed),
        }
    }

    fn lease_ms(&self) -> i64 {
        i64::try_from(self.inner.lease.as_millis()).unwrap_or(i64::MAX)
    }

    /// The values of a lease row this process takes at `epoch`: `$1` the key, `$2` this
    /// process, `$3` its address, `$4` the lease in ms, `$5` the epoch.
    fn lease_values(&self, key: &str, epoch: i64) -> Vec<sea_orm::Value> {
        vec![
            key.into(),
            self.inner.process.clone().into(),
            self.inner.address.clone().into(),
            self.lease_ms().into(),
            epoch.into(),
        ]
    }

    fn statement(&self, sql: &str, values: Vec<sea_orm::Value>) -> Statement {
        Statement::from_sql_and_values(DbBackend::Postgres, sql, values)
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Whether this process is the one to do the once-per-cluster `job` now: always without a
/// cluster; with one, only while it holds the job's lease (taken here if no live process does).
pub async fn is_mine(cluster: Option<&Cluster>, job: &str) -> bool {
    let Some(cluster) = cluster else {
        return true;
    };
    match cluster.claim(&job_key(job)).await {
        Ok(Claim::Mine { .. }) => true,
        Ok(Claim::Elsewhere { .. }) => false,
        Err(err) => {
            tracing::warn!(%err, job, "cannot tell which process does a job; not doing it now");
            false
        }
    }
}

/// A write refused because this process no longer holds its chat's lease at the epoch the
/// write was made under: another process took the chat (or the lease expired) meanwhile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("fenced: this process no longer holds {key} (epoch {epoch})")]
pub struct Fenced {
    pub key: String,
    pub epoch: i64,
}

/// The prefix a `Fenced` error carries inside a `DbErr`.
const FENCED: &str = "fenced: ";

impl From<Fenced> for DbErr {
    fn from(fenced: Fenced) -> Self {
        DbErr::Custom(format!("{FENCED}{}\n{}", fenced.key, fenced.epoch))
    }
}

impl Fenced {
    /// Whether a database error is a write refused by the fence.
    pub fn is(err: &DbErr) -> bool {
        Self::parse(err).is_some()
    }

    /// The refusal a database error carries, if it is one.
    pub fn parse(err: &DbErr) -> Option<Self> {
        let DbErr::Custom(message) = err else {
            return None;
        };
        let (key, epoch) = message.strip_prefix(FENCED)?.split_once('\n')?;
        Some(Self {
            key: key.to_string(),
            epoch: epoch.parse().ok()?,
        })
    }
}

/// A process's share of the cluster.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct ClusterStats {
    pub chat_leases: u64,
    pub job_leases: u64,
    pub forwarded: u64,
    pub failovers: u64,
}
