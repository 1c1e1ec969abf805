//! Group commit for SQLite: the chats' writes that arrive together share one transaction. One
//! writer, on a thread of its own with a SQLite connection of its own (`connection`), takes
//! every write queued while its previous batch was committing, runs each in a savepoint of one
//! transaction (a write that fails is rolled back alone), commits once, and only then tells
//! each caller how its own write went. So under load a thousand turns cost a few commits
//! instead of thousands, writers never wait on SQLite's busy handler for each other, and nobody
//! is told a write is done before it is. Alone, a write is its own batch: it waits for nothing.
//!
//! A write is its statements, recorded first (`record`): the caller's sea-orm code runs on a
//! `Recorder`, which keeps each statement instead of running it. The writer then runs them
//! on its thread straight through SQLite, with no hand-off per statement to a driver thread.
//! A recorded write therefore reads nothing and learns nothing back (no rows, no counts):
//! what it needs to know is read before it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use sea_orm::sqlx::sqlite::SqliteQueryResult;
use sea_orm::{
    ConnectionTrait, DatabaseConnection, DbBackend, DbErr, ExecResult, QueryResult, Statement,
};
use tokio::sync::{mpsc, oneshot};

mod connection;

use crate::os_limits::{BACKGROUND_NICE, lower_thread_priority};

use connection::DirectConnection;

/// The most writes one transaction takes.
const MAX_BATCH: usize = 512;

/// What a caller writes: statements recorded on the `Recorder` it is given, making a `T`.
pub trait Transaction<T>:
    for<'t> FnOnce(&'t Recorder) -> BoxFuture<'t, Result<T, DbErr>> + Send + 'static
{
}

impl<T, F> Transaction<T> for F where
    F: for<'t> FnOnce(&'t Recorder) -> BoxFuture<'t, Result<T, DbErr>> + Send + 'static
{
}

/// A connection that runs nothing: it keeps the statements given to it, in order, to run
/// later as one write. Reading through it is an error; a statement's result is empty.
pub struct Recorder {
    backend: DbBackend,
    statements: Mutex<Vec<Statement>>,
}

/// Runs `work` on a `Recorder` for `backend`: what it made, and the statements it wrote.
pub async fn record<T>(
    backend: DbBackend,
    work: impl Transaction<T>,
) -> Result<(T, Vec<Statement>), DbErr> {
    let recorder = Recorder {
        backend,
        statements: Mutex::new(Vec::new()),
    };
    let made = work(&recorder).await?;
    let statements = recorder
        .statements
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    Ok((made, statements))
}

impl Recorder {
    fn keep(&self, statement: Statement) -> Result<ExecResult, DbErr> {
        self.statements
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(statement);
        // Nothing ran yet: no row was changed or inserted that this could tell of.
        Ok(SqliteQueryResult::default().into())
    }
}

fn no_reads() -> DbErr {
    DbErr::Custom("a recorded write cannot read: read what it needs before it".into())
}

#[async_trait::async_trait]
impl ConnectionTrait for Recorder {
    fn get_database_backend(&self) -> DbBackend {
        self.backend
    }

    async fn execute_raw(&self, statement: Statement) -> Result<ExecResult, DbErr> {
        self.keep(statement)
    }

    async fn execute_unprepared(&self, sql: &str) -> Result<ExecResult, DbErr> {
        self.keep(Statement::from_string(self.backend, sql))
    }

    async fn query_one_raw(&self, _: Statement) -> Result<Option<QueryResult>, DbErr> {
        Err(no_reads())
    }

    async fn query_all_raw(&self, _: Statement) -> Result<Vec<QueryResult>, DbErr> {
        Err(no_reads())
    }

    /// No `RETURNING`: a recorded insert is not read back.
    fn support_returning(&self) -> bool {
        false
    }
}

/// Called on the writer's thread with a write's outcome the moment it is known (after the
/// batch's commit, or its failure), before the caller of `write` is woken: a party that only
/// needs to know the write is durable hears it from the writer itself, without waiting for the
/// caller to pass it on.
pub type OnCommit = Box<dyn FnOnce(Result<(), &DbErr>) + Send>;

struct Job {
    statements: Vec<Statement>,
    on_commit: Option<OnCommit>,
    done: oneshot::Sender<Result<(), DbErr>>,
}

impl Job {
    /// Gives the write its outcome: first to its `on_commit`, then to its caller.
    fn answer(self, outcome: Result<(), DbErr>) {
        if let Some(on_commit) = self.on_commit {
            on_commit(outcome.as_ref().map(|_| ()));
        }
        let _ = self.done.send(outcome);
    }
}

/// The queue of the writer; cheap to clone. The writer ends when the last clone is dropped.
#[derive(Clone)]
pub struct GroupCommit {
    jobs: mpsc::UnboundedSender<Job>,
}

impl GroupCommit {
    /// Starts the writer on `db`'s SQLite file, on a thread of its own with a connection of
    /// its own (`connection`): `busy_timeout` is how long it waits for another connection's
    /// write, and each statement it runs is counted in `statements`. `None` when `db` is not a
    /// SQLite file (PostgreSQL, or SQLite in memory, which no second connection can share).
    pub fn start(
        db: &DatabaseConnection,
        busy_timeout: Duration,
        statements: Option<prometheus::IntCounter>,
    ) -> std::io::Result<Option<Self>> {
        Self::start_checkpointing(db, busy_timeout, statements, true)
    }

    /// `start`, with or without the checkpointer's thread (without: as if it never got the
    /// CPU, for tests).
    fn start_checkpointing(
        db: &DatabaseConnection,
        busy_timeout: Duration,
        statements: Option<prometheus::IntCounter>,
        checkpointing: bool,
    ) -> std::io::Result<Option<Self>> {
        if db.get_database_backend() != DbBackend::Sqlite {
            return Ok(None);
        }
        let options = db.get_sqlite_connection_pool().connect_options();
        let path = options.get_filename();
        if !path.is_file() {
            return Ok(None);
        }
        let open = |checkpoints: bool, counted: Option<prometheus::IntCounter>| {
            DirectConnection::open(path, busy_timeout, checkpoints, counted)
                .map_err(|err| std::io::Error::other(err.to_string()))
        };
        let connection = open(false, statements)?;
        let checkpointer = open(true, None)?;
        let pool = db.get_sqlite_connection_pool().clone();
        let (jobs, queue) = mpsc::unbounded_channel();
        // The checkpointer runs while the writer does: it stops when the writer drops `alive`.
        let (alive, writing) = std::sync::mpsc::channel::<()>();
        let restart = Arc::new(WalRestart::default());
        let asked = restart.clone();
        std::thread::Builder::new()
            .name("colloquy-writer".into())
            .spawn(move || {
                write_batches(connection, &pool, queue, &restart);
                drop(alive);
            })?;
        if checkpointing {
            std::thread::Builder::new()
                .name("colloquy-checkpoint".into())
                .spawn(move || {
                    // Each copy is a few milliseconds of `pread`s and `pwrite`s: at a lower
                    // priority they wait for a core the turns' threads leave free.
                    if let Err(err) = lower_thread_priority(BACKGROUND_NICE) {
                        tracing::debug!(%err, "the WAL checkpointer's priority was not lowered");
                    }
                    checkpoint_while(&checkpointer, &writing, &asked)
                })?;
        }
        Ok(Some(Self { jobs }))
    }

    /// Records `work`, runs it in the next batch, and gives what it made once the batch is
    /// committed: an error if `work` or one of its statements failed (nothing of it is kept)
    /// or the commit did.
    pub async fn write<T>(&self, work: impl Transaction<T>) -> Result<T, DbErr> {
        self.write_telling(work, None).await
    }

    /// `write`, also calling `on_commit` with the outcome on the writer's thread as soon as it
    /// is known (also when the write fails before it reaches the writer).
    pub async fn write_telling<T>(
        &self,
        work: impl Transaction<T>,
        on_commit: Option<OnCommit>,
    ) -> Result<T, DbErr> {
        let (made, statements) = match record(DbBackend::Sqlite, work).await {
            Ok(recorded) => recorded,
            Err(err) => {
                if let Some(on_commit) = on_commit {
                    on_commit(Err(&err));
                }
                return Err(err);
            }
        };
        let (done, outcome) = oneshot::channel();
        let job = Job {
            statements,
            on_commit,
            done,
        };
        if let Err(mpsc::error::SendError(job)) = self.jobs.send(job) {
            job.answer(Err(stopped()));
            return Err(stopped());
        }
        outcome.await.map_err(|_| stopped())??;
        Ok(made)
    }
}

fn stopped() -> DbErr {
    DbErr::Custom("the database writer has stopped".into())
}

/// The writer: a batch of what is queued, committed, and again, until every sender is gone.
/// It writes while the application's database (`pool`) is open: once that is closed (the
/// process stopping, or its database gone), every write is refused, as the pool refuses them.
fn write_batches(
    mut connection: DirectConnection,
    pool: &sea_orm::sqlx::SqlitePool,
    mut queue: mpsc::UnboundedReceiver<Job>,
    restart: &WalRestart,
) {
    let mut batch = Vec::new();
    // The WAL's length past which the writer has it start over without being asked.
    let mut too_long = BEHIND_FRAMES;
    // Whether the WAL's file has had its blocks allocated ahead (`reserve_wal`).
    let mut reserved = false;
    while let Some(first) = queue.blocking_recv() {
        // Between two batches the writer holds no lock: the moment for the WAL to start over,
        // once the checkpointer has copied nearly all of it (`checkpoint_while`), or when the
        // checkpointer is so far behind (its thread starved of CPU, or its ask lost to a
        // restart that found the WAL busy) that the WAL grew to `too_long`. A restart that
        // fails then is tried again only once the WAL grew by `RESTART_FRAMES` more, so that
        // a long read holding the WAL does not cost every batch the restart's wait.
        let frames = connection.wal_frames();
        let asked = restart.asked.swap(false, Ordering::Relaxed);
        if asked || frames > too_long {
            // The checkpointer starts no copy of its own until the WAL started over: on a
            // loaded machine its copies, one after the other, held the lock a restart needs
            // longer than the restart waits, so every restart failed and the WAL grew.
            restart.due.store(true, Ordering::SeqCst);
            match connection.restart_wal() {
                Ok(()) => {
                    restart.due.store(false, Ordering::SeqCst);
                    too_long = BEHIND_FRAMES;
                }
                Err(err) => {
                    if frames > too_long {
                        too_long = frames + RESTART_FRAMES;
                    }
                    tracing::debug!(%err, "the WAL could not start over yet; it is asked again");
                }
            }
        }
        batch.push(first);
        // No wait for more: the writes that came while the last batch was committing are the
        // next batch, so the batches grow with the load by themselves. (Waiting 200 µs for
        // company when busy cost every write that much at 1,000 turns a second, and gained no
        // throughput: with `synchronous = NORMAL` a commit has no `fsync` to share.)
        take_queued(&mut batch, &mut queue);
        if pool.is_closed() {
            for job in batch.drain(..) {
                job.answer(Err(closed()));
            }
            continue;
        }
        commit(&mut connection, &mut batch);
        if !reserved && connection.wal_frames() > RESERVE_FRAMES {
            reserved = true;
            reserve_wal_aside(connection.wal_path().to_owned());
        }
    }
}

/// Frames (about 8 MiB) past which the WAL is busy enough to have its file's blocks allocated
/// ahead (`reserve_wal`), once for the writer's life.
const RESERVE_FRAMES: u64 = if cfg!(test) { 16 } else { 2_048 };

/// `connection::reserve_wal` on a thread of its own: allocating a few hundred megabytes can
/// itself wait on the disk, and the writer must not. A failure only costs the head start.
fn reserve_wal_aside(wal: std::path::PathBuf) {
    let spawned = std::thread::Builder::new()
        .name("colloquy-wal-reserve".into())
        .spawn(move || {
            if let Err(err) = connection::reserve_wal(&wal) {
                tracing::debug!(%err, "the WAL's blocks were not allocated ahead");
            }
        });
    if let Err(err) = spawned {
        tracing::debug!(%err, "no thread to allocate the WAL's blocks ahead");
    }
}

/// Adds the writes waiting in `queue` to `batch`, up to `MAX_BATCH`.
fn take_queued(batch: &mut Vec<Job>, queue: &mut mpsc::UnboundedReceiver<Job>) {
    while batch.len() < MAX_BATCH {
        match queue.try_recv() {
            Ok(job) => batch.push(job),
            Err(_) => break,
        }
    }
}

/// How often the WAL's committed pages are copied back into the database file. Often, so
/// that each copy is short: at 1,000 turns a second a copy every 200 ms took about 20 ms of
/// `pread`s, `pwrite`s and `fsync`s, and the turns that arrived during those copies were the
/// slow ones. Every 25 ms, at the checkpointer's lower priority, a copy takes 2.3 ms (p50;
/// 5 ms p99) and the stored p99 there went from about 6 ms to 3 ms. (Shorter in unit tests,
/// whose writer writes as fast as it can.)
const CHECKPOINT_EVERY: Duration = Duration::from_millis(if cfg!(test) { 20 } else { 25 });

/// Frames (pages) past which the checkpointer has the WAL start over (`restart_wal`): about
/// 128 MiB. A WAL written without a pause is never started over by passive checkpoints, and a
/// growing one costs every commit (its file extended, block by block) and every read (a
/// longer WAL index to search). But each restart holds every write while it copies what the
/// last passive checkpoint left and `fsync`s the WAL and the database: 2–40 ms on a disk whose
/// flushes are slow. At 1,000 turns a second the WAL grows by about 100 MB a second (a commit
/// writes each page it touched, about 13), so at 32 MiB the writer stood still twice a second;
/// at 128 MiB it does every second or so. A WAL that is not under such load starts over by
/// itself: once a passive checkpoint has copied all of it, the next write starts it afresh.
/// (Small in unit tests, which write a few megabytes.)
const RESTART_FRAMES: u64 = if cfg!(test) { 64 } else { 32_768 };
/// Frames past which the writer has the WAL start over itself, unasked: the checkpointer is
/// then behind (about 256 MiB).
const BEHIND_FRAMES: u64 = 2 * RESTART_FRAMES;

/// Copies the WAL back into the database (a passive checkpoint: it waits for no reader and no
/// writer) every `CHECKPOINT_EVERY`, until `writing` says the writer has stopped. The writer
/// does not checkpoint itself, so a commit never waits for the copy and its `fsync`s. Once the
/// WAL holds more than `RESTART_FRAMES` after a passive checkpoint (nearly all of it copied
/// then), the writer is asked (`restart`) to have it start over before its next batch: from
/// this thread, the restart's wait for the writer's lock could outlast a writer that never
/// pauses, and writes wait the moment it takes either way. (Should this thread fall behind,
/// the writer restarts the WAL unasked past `BEHIND_FRAMES`: `write_batches`.)
fn checkpoint_while(
    connection: &DirectConnection,
    writing: &std::sync::mpsc::Receiver<()>,
    restart: &WalRestart,
) {
    let mut stood_down = 0;
    while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
        writing.recv_timeout(CHECKPOINT_EVERY)
    {
        // While the writer's restart is due, its own copy is left to it; but not for long,
        // should the writer have gone quiet before it could restart.
        if restart.due.load(Ordering::SeqCst) && stood_down < MAX_STOOD_DOWN {
            stood_down += 1;
            continue;
        }
        stood_down = 0;
        match connection.checkpoint() {
            Ok(frames) => {
                if frames > RESTART_FRAMES {
                    restart.asked.store(true, Ordering::Relaxed);
                }
            }
            Err(err) => tracing::warn!(%err, "the WAL checkpoint failed; the next one retries"),
        }
    }
}

/// Checkpoints the checkpointer leaves out in a row while the writer's restart is due (10 s
/// of them; 1 s in unit tests): long enough for a writer still writing to find the lock free
/// between two tries, so that the WAL does not grow while the checkpointer copies it again and
/// again (with a cap of 10, a unit test writing on a loaded machine still saw its WAL reach
/// 20–48 MB); short enough that a writer gone quiet before it could restart leaves the WAL
/// copied soon.
const MAX_STOOD_DOWN: u32 = if cfg!(test) { 50 } else { 400 };

/// Between the writer and its checkpointer: the WAL's restart, asked for and due.
#[derive(Default)]
struct WalRestart {
    /// The checkpointer asks the writer to have the WAL start over.
    asked: AtomicBool,
    /// The writer is to restart the WAL (it tried, or is trying): the checkpointer waits.
    due: AtomicBool,
}

fn closed() -> DbErr {
    DbErr::Custom("the database is closed".into())
}

/// Runs `batch` in one transaction, commits it, and answers each write. The writes run straight
/// in the transaction; only when one fails is the batch run again with each write in a
/// savepoint of its own, so that the failing one is rolled back alone. (A savepoint per write
/// made SQLite copy every page a write touched into its statement journal first: an eighth of
/// the writer's time, for failures that almost never happen.)
fn commit(connection: &mut DirectConnection, batch: &mut Vec<Job>) {
    if let Err(err) = connection.begin_batch() {
        answer_all(batch.drain(..), &err.to_string());
        return;
    }
    let straight = batch
        .iter()
        .try_for_each(|job| connection.write_unguarded(&job.statements));
    if straight.is_ok() {
        finish(
            connection,
            batch.drain(..).map(|job| (job, Ok(()))).collect(),
        );
        return;
    }
    connection.roll_back_batch();
    if let Err(err) = connection.begin_batch() {
        answer_all(batch.drain(..), &err.to_string());
        return;
    }
    let mut outcomes = Vec::with_capacity(batch.len());
    for job in batch.drain(..) {
        // A failure SQLite answered by rolling the whole transaction back ends the batch: what
        // would run now would commit on its own, outside it.
        let outcome = if connection.in_batch() {
            connection.write(&job.statements)
        } else {
            Err(DbErr::Custom(
                "the batch's transaction was rolled back".into(),
            ))
        };
        outcomes.push((job, outcome));
    }
    finish(connection, outcomes);
}

/// Commits the batch's transaction and answers each write: its outcome once committed, else
/// the commit's failure.
fn finish(connection: &mut DirectConnection, outcomes: Vec<(Job, Result<(), DbErr>)>) {
    match connection.commit_batch() {
        Ok(()) => {
            for (job, outcome) in outcomes {
                job.answer(outcome);
            }
        }
        Err(err) => answer_all(
            outcomes.into_iter().map(|(job, _)| job),
            &format!("the commit failed: {err}"),
        ),
    }
}

/// Answers every write of `jobs` with the failure `cause`.
fn answer_all(jobs: impl Iterator<Item = Job>, cause: &str) {
    for job in jobs {
        job.answer(Err(DbErr::Custom(cause.to_string())));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sea_orm::{ConnectionTrait, Statement};

    async fn database() -> (tempfile::TempDir, DatabaseConnection) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("t.db").display());
        let db = sea_orm::Database::connect(url).await.unwrap();
        db.execute_unprepared("CREATE TABLE t (n INTEGER PRIMARY KEY)")
            .await
            .unwrap();
        (dir, db)
    }

    fn writer(db: &DatabaseConnection) -> GroupCommit {
        GroupCommit::start(db, Duration::from_secs(5), None)
            .unwrap()
            .expect("a SQLite file has a group commit")
    }

    fn insert(
        n: i64,
    ) -> impl for<'t> FnOnce(&'t Recorder) -> BoxFuture<'t, Result<i64, DbErr>> + Send + 'static
    {
        move |txn| {
            Box::pin(async move {
                txn.execute_raw(Statement::from_sql_and_values(
                    txn.get_database_backend(),
                    "INSERT INTO t (n) VALUES (?)",
                    [n.into()],
                ))
                .await?;
                Ok(n)
            })
        }
    }

    async fn stored(db: &DatabaseConnection) -> Vec<i64> {
        db.query_all_raw(Statement::from_string(
            db.get_database_backend(),
            "SELECT n FROM t ORDER BY n",
        ))
        .await
        .unwrap()
        .iter()
        .map(|row| row.try_get::<i64>("", "n").unwrap())
        .collect()
    }

    #[tokio::test]
    async fn writes_sent_together_are_kept_and_a_failing_one_alone_is_not() {
        let (_dir, db) = database().await;
        let writer = writer(&db);
        // 1 twice: the second fails (its key is taken) and only it is rolled back.
        let writes = [1, 2, 1, 3].map(|n| writer.write(insert(n)));
        let outcomes = futures_util::future::join_all(writes).await;
        let made: Vec<Option<i64>> = outcomes.into_iter().map(Result::ok).collect();
        assert_eq!(made.iter().filter(|m| m.is_none()).count(), 1, "{made:?}");
        assert_eq!(stored(&db).await, [1, 2, 3]);
        // Alone, a failing write fails and leaves nothing.
        assert!(writer.write(insert(2)).await.is_err());
        assert_eq!(writer.write(insert(4)).await.unwrap(), 4);
        assert_eq!(stored(&db).await, [1, 2, 3, 4]);
    }

    /// One batch whose second write fails: it runs straight first, is rolled back whole at
    /// the failure, and runs again write by write, so the others are committed and the failing
    /// one alone is not (its own first statement included).
    #[tokio::test]
    async fn a_batch_with_a_failing_write_keeps_every_other_write() {
        let (dir, db) = database().await;
        let mut connection = DirectConnection::open(
            &dir.path().join("t.db"),
            Duration::from_secs(5),
            false,
            None,
        )
        .unwrap();
        let statement = |sql: &str| Statement::from_string(DbBackend::Sqlite, sql);
        let job = |sqls: &[&str]| {
            let (done, answer) = oneshot::channel();
            let job = Job {
                statements: sqls.iter().map(|sql| statement(sql)).collect(),
                on_commit: None,
                done,
            };
            (job, answer)
        };
        let writes = [
            job(&["INSERT INTO t (n) VALUES (1)"]),
            job(&[
                "INSERT INTO t (n) VALUES (2)",
                "INSERT INTO t (n) VALUES (1)",
            ]),
            job(&["INSERT INTO t (n) VALUES (3)"]),
            job(&[
                "INSERT INTO t (n) VALUES (4)",
                "INSERT INTO t (n) VALUES (5)",
            ]),
        ];
        let (mut batch, answers): (Vec<Job>, Vec<_>) = writes.into_iter().unzip();
        commit(&mut connection, &mut batch);
        assert!(batch.is_empty());
        let mut outcomes = Vec::new();
        for answer in answers {
            outcomes.push(answer.await.unwrap().is_ok());
        }
        assert_eq!(outcomes, [true, false, true, true]);
        assert_eq!(stored(&db).await, [1, 3, 4, 5]);
        // And a batch where nothing fails commits straight.
        let (write, answer) = job(&["INSERT INTO t (n) VALUES (6)"]);
        let mut batch = vec![write];
        commit(&mut connection, &mut batch);
        assert!(answer.await.unwrap().is_ok());
        assert_eq!(stored(&db).await, [1, 3, 4, 5, 6]);
    }

    #[tokio::test]
    async fn a_write_whose_second_statement_fails_keeps_nothing_and_the_writer_goes_on() {
        let (_dir, db) = database().await;
        let writer = writer(&db);
        let failing = writer.write(|txn: &Recorder| -> BoxFuture<'_, Result<(), DbErr>> {
            Box::pin(async move {
                insert(5)(txn).await?;
                txn.execute_unprepared("INSERT INTO no_such_table VALUES (1)")
                    .await?;
                Ok(())
            })
        });
        let err = failing.await.unwrap_err();
        assert!(err.to_string().contains("no_such_table"), "{err}");
        assert_eq!(writer.write(insert(7)).await.unwrap(), 7);
        assert_eq!(stored(&db).await, [7]);
    }

    /// `on_commit` hears each write's outcome before the write's caller is answered: its
    /// commit, the failure of its statements, or the failure of its recording.
    #[tokio::test]
    async fn on_commit_hears_a_writes_outcome_before_its_caller() {
        let (_dir, db) = database().await;
        let writer = writer(&db);
        let heard = std::sync::Arc::new(Mutex::new(Vec::<String>::new()));
        let tell = || -> Option<OnCommit> {
            let heard = heard.clone();
            Some(Box::new(move |outcome: Result<(), &DbErr>| {
                let said = outcome.map_or_else(ToString::to_string, |()| "committed".into());
                heard.lock().unwrap().push(said);
            }))
        };
        let said = |n: usize| heard.lock().unwrap().get(n).cloned();
        assert_eq!(writer.write_telling(insert(1), tell()).await.unwrap(), 1);
        assert_eq!(said(0).as_deref(), Some("committed"));
        assert!(writer.write_telling(insert(1), tell()).await.is_err());
        assert!(said(1).unwrap().contains("UNIQUE"), "{:?}", said(1));
        let reading = writer.write_telling(
            |txn: &Recorder| -> BoxFuture<'_, Result<(), DbErr>> {
                Box::pin(async move {
                    txn.query_one_raw(Statement::from_string(DbBackend::Sqlite, "SELECT 1"))
                        .await?;
                    Ok(())
                })
            },
            tell(),
        );
        assert!(reading.await.is_err());
        assert!(said(2).unwrap().contains("cannot read"), "{:?}", said(2));
        assert_eq!(stored(&db).await, [1]);
    }

    /// The rows in the tests' table `big`, as `db` reads them.
    async fn rows_in_big(db: &DatabaseConnection) -> i64 {
        db.query_one_raw(Statement::from_string(
            DbBackend::Sqlite,
            "SELECT count(*) AS n FROM big",
        ))
        .await
        .unwrap()
        .unwrap()
        .try_get("", "n")
        .unwrap()
    }

    /// Writes `writes` writes of four 2 KiB rows into `big`, each committed before the next
    /// starts; gives the WAL's largest size seen after a write, and the bytes of rows written.
    async fn write_rows_watching_the_wal(
        writer: &GroupCommit,
        dir: &std::path::Path,
        writes: usize,
    ) -> (u64, u64) {
        let wal = dir.join("t.db-wal");
        let body = "x".repeat(2048);
        let (mut largest, mut written) = (0, 0);
        for _ in 0..writes {
            let row = body.clone();
            writer
                .write(move |txn: &Recorder| -> BoxFuture<'_, Result<(), DbErr>> {
                    Box::pin(async move {
                        for _ in 0..4 {
                            txn.execute_raw(Statement::from_sql_and_values(
                                DbBackend::Sqlite,
                                "INSERT INTO big (body) VALUES (?)",
                                [row.clone().into()],
                            ))
                            .await?;
                        }
                        Ok(())
                    })
                })
                .await
                .unwrap();
            written += 4 * body.len() as u64;
            largest = largest.max(std::fs::metadata(&wal).map_or(0, |m| m.len()));
        }
        (largest, written)
    }

    /// Written without a pause, the WAL still starts over: passive checkpoints alone never let
    /// it, and it grew for as long as the writes went on (half a gigabyte in a few seconds of
    /// a thousand turns a second).
    #[tokio::test]
    async fn a_wal_written_without_a_pause_starts_over_and_stays_bounded() {
        let (dir, db) = database().await;
        db.execute_unprepared("CREATE TABLE big (body TEXT)")
            .await
            .unwrap();
        let writer = writer(&db);
        // About 48 MiB of rows, each write committed before the next starts.
        let (largest, written) = write_rows_watching_the_wal(&writer, dir.path(), 6_000).await;
        assert_eq!(rows_in_big(&db).await, 24_000);
        assert!(written > 40 << 20, "{written}");
        assert!(
            largest < 16 << 20,
            "the WAL grew to {largest} bytes for {written} bytes of rows"
        );
    }

    /// Once busy, the WAL's file has its blocks allocated ahead, up to the size it is kept at,
    /// without its length changing (SQLite reads nothing new), and what was written reads back.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_busy_wal_has_its_blocks_allocated_ahead_and_reads_as_before() {
        use std::os::unix::fs::MetadataExt;
        let (dir, db) = database().await;
        db.execute_unprepared("CREATE TABLE big (body TEXT)")
            .await
            .unwrap();
        let wal = dir.path().join("t.db-wal");
        let allocated = || std::fs::metadata(&wal).map_or(0, |m| m.blocks() * 512);
        assert!(allocated() < connection::WAL_SIZE_LIMIT, "{}", allocated());
        let writer = writer(&db);
        write_rows_watching_the_wal(&writer, dir.path(), 20).await;
        // A thread of its own allocates them, soon after.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while allocated() < connection::WAL_SIZE_LIMIT && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let metadata = std::fs::metadata(&wal).unwrap();
        assert!(
            metadata.blocks() * 512 >= connection::WAL_SIZE_LIMIT,
            "{} bytes allocated",
            metadata.blocks() * 512
        );
        assert!(
            metadata.len() < connection::WAL_SIZE_LIMIT,
            "{}",
            metadata.len()
        );
        assert_eq!(rows_in_big(&db).await, 80);
        // A connection opened afresh reads it all as well.
        let url = format!("sqlite://{}?mode=rw", dir.path().join("t.db").display());
        let fresh = sea_orm::Database::connect(url).await.unwrap();
        assert_eq!(rows_in_big(&fresh).await, 80);
    }

    /// Without its checkpointer (a thread starved of CPU on a loaded machine), the writer
    /// still has the WAL start over once it is far too long: it does not grow with the writes.
    #[tokio::test]
    async fn a_wal_whose_checkpointer_never_runs_still_stays_bounded() {
        let (dir, db) = database().await;
        db.execute_unprepared("CREATE TABLE big (body TEXT)")
            .await
            .unwrap();
        let writer = GroupCommit::start_checkpointing(&db, Duration::from_secs(5), None, false)
            .unwrap()
            .unwrap();
        let (largest, written) = write_rows_watching_the_wal(&writer, dir.path(), 3_000).await;
        assert!(written > 20 << 20, "{written}");
        assert!(
            largest < 8 << 20,
            "the WAL grew to {largest} bytes for {written} bytes of rows"
        );
    }

    #[tokio::test]
    async fn once_the_database_is_closed_the_writer_refuses_every_write() {
        let (_dir, db) = database().await;
        let writer = writer(&db);
        assert_eq!(writer.write(insert(1)).await.unwrap(), 1);
        db.get_sqlite_connection_pool().close().await;
        let err = writer.write(insert(2)).await.unwrap_err();
        assert!(err.to_string().contains("closed"), "{err}");
    }

    /// The writer leaves checkpoints to its checkpointer, which copies the WAL into the
    /// database file: what the writer committed reaches the file without a commit waiting.
    #[tokio::test]
    async fn what_the_writer_commits_is_checkpointed_into_the_database_file() {
        let (dir, db) = database().await;
        let writer = writer(&db);
        let file = dir.path().join("t.db");
        let before = std::fs::metadata(&file).unwrap().len();
        db.execute_unprepared("CREATE TABLE big (body TEXT)")
            .await
            .unwrap();
        let body = "x".repeat(1024);
        for _ in 0..20 {
            let body = body.clone();
            writer
                .write(move |txn: &Recorder| -> BoxFuture<'_, Result<(), DbErr>> {
                    Box::pin(async move {
                        for _ in 0..100 {
                            txn.execute_raw(Statement::from_sql_and_values(
                                DbBackend::Sqlite,
                                "INSERT INTO big (body) VALUES (?)",
                                [body.clone().into()],
                            ))
                            .await?;
                        }
                        Ok(())
                    })
                })
                .await
                .unwrap();
        }
        // 2,000 rows of 1 KiB: about 2 MiB, in the WAL until a checkpoint copies them.
        let mut size = before;
        for _ in 0..50 {
            size = std::fs::metadata(&file).unwrap().len();
            if size > before + 1_500_000 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the database file stayed at {size} bytes (from {before}): no checkpoint");
    }

    #[tokio::test]
    async fn a_recorded_write_cannot_read_and_nothing_of_it_runs() {
        let (_dir, db) = database().await;
        let writer = writer(&db);
        let reading = writer.write(|txn: &Recorder| -> BoxFuture<'_, Result<(), DbErr>> {
            Box::pin(async move {
                insert(1)(txn).await?;
                txn.query_all_raw(Statement::from_string(
                    txn.get_database_backend(),
                    "SELECT n FROM t",
                ))
                .await?;
                Ok(())
            })
        });
        let err = reading.await.unwrap_err();
        assert!(err.to_string().contains("cannot read"), "{err}");
        assert!(stored(&db).await.is_empty());
    }

    /// What the writer's connection binds reads back through the pool (sqlx) as the pool would
    /// have written it: each kind of value a turn writes.
    #[tokio::test]
    async fn values_written_by_the_writer_read_back_as_sqlx_writes_them() {
        use chrono::{TimeZone, Utc};
        use sea_orm::Value;
        let (_dir, db) = database().await;
        db.execute_unprepared(
            "CREATE TABLE v (k TEXT PRIMARY KEY, at TEXT, doc TEXT, flag BOOLEAN, count BIGINT, \
             small INTEGER, ratio REAL, raw BLOB, gone TEXT)",
        )
        .await
        .unwrap();
        let at = Utc.with_ymd_and_hms(2026, 11, 29, 21, 30, 5).unwrap()
            + chrono::Duration::nanoseconds(123_456_789);
        let doc = serde_json::json!({"a": [1, "two", null], "é": true});
        let values = |key: &str| -> Vec<Value> {
            vec![
                key.into(),
                at.into(),
                doc.clone().into(),
                true.into(),
                (i64::MAX - 1).into(),
                (-7i32).into(),
                0.25f64.into(),
                vec![0u8, 255, 1].into(),
                Option::<String>::None.into(),
            ]
        };
        let sql = "INSERT INTO v VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
        let direct = values("direct");
        writer(&db)
            .write(move |txn: &Recorder| -> BoxFuture<'_, Result<(), DbErr>> {
                Box::pin(async move {
                    txn.execute_raw(Statement::from_sql_and_values(
                        DbBackend::Sqlite,
                        sql,
                        direct,
                    ))
                    .await?;
                    Ok(())
                })
            })
            .await
            .unwrap();
        db.execute_raw(Statement::from_sql_and_values(
            DbBackend::Sqlite,
            sql,
            values("pool"),
        ))
        .await
        .unwrap();
        let rows = db
            .query_all_raw(Statement::from_string(
                DbBackend::Sqlite,
                "SELECT k, at, doc, flag, count, small, ratio, raw, gone, \
                 typeof(at) || typeof(doc) || typeof(flag) || typeof(raw) || typeof(gone) AS kinds \
                 FROM v ORDER BY k",
            ))
            .await
            .unwrap();
        assert_eq!(rows.len(), 2);
        let read = |row: &sea_orm::QueryResult| {
            (
                row.try_get::<chrono::DateTime<Utc>>("", "at").unwrap(),
                row.try_get::<serde_json::Value>("", "doc").unwrap(),
                row.try_get::<bool>("", "flag").unwrap(),
                row.try_get::<i64>("", "count").unwrap(),
                row.try_get::<i32>("", "small").unwrap(),
                row.try_get::<f64>("", "ratio").unwrap(),
                row.try_get::<Vec<u8>>("", "raw").unwrap(),
                row.try_get::<Option<String>>("", "gone").unwrap(),
                row.try_get::<String>("", "kinds").unwrap(),
            )
        };
        let (direct, pool) = (read(&rows[0]), read(&rows[1]));
        assert_eq!(direct, pool);
        assert_eq!(direct.0, at);
        assert_eq!(direct.1, doc);
        assert_eq!(direct.8, "texttextintegerblobnull");
        // Byte for byte the same text: a date sorts and compares alike, whoever wrote it.
        let texts = db
            .query_all_raw(Statement::from_string(
                DbBackend::Sqlite,
                "SELECT at || doc AS text FROM v ORDER BY k",
            ))
            .await
            .unwrap();
        let texts: Vec<String> = texts
            .iter()
            .map(|r| r.try_get("", "text").unwrap())
            .collect();
        assert_eq!(texts[0], texts[1]);
    }
}
