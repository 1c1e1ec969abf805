//! Group commit for SQLite: the chats' writes that arrive together share one transaction. One
//! writer task, on a thread of its own, takes every write queued while its previous batch was
//! committing, runs each in a savepoint of one transaction (a write that fails is rolled back
//! alone), commits once, and only then tells each caller how its own write went. So under
//! load a thousand turns cost a few commits instead of thousands, writers never wait on
//! SQLite's busy handler for each other, and nobody is told a write is done before it is.
//! Alone, a write is its own batch: it waits for nothing.

use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use sea_orm::{DatabaseConnection, DatabaseTransaction, DbErr, TransactionTrait};
use tokio::sync::{mpsc, oneshot};

/// The most writes one transaction takes.
const MAX_BATCH: usize = 512;

/// What a caller writes: statements run on the transaction it is given, making a `T`.
pub trait Transaction<T>:
    for<'t> FnOnce(&'t DatabaseTransaction) -> BoxFuture<'t, Result<T, DbErr>> + Send + 'static
{
}

impl<T, F> Transaction<T> for F where
    F: for<'t> FnOnce(&'t DatabaseTransaction) -> BoxFuture<'t, Result<T, DbErr>> + Send + 'static
{
}

/// A write as the writer runs it: statements run on the transaction it is given.
pub type Work =
    Box<dyn for<'t> FnOnce(&'t DatabaseTransaction) -> BoxFuture<'t, Result<(), DbErr>> + Send>;

struct Job {
    work: Work,
    done: oneshot::Sender<Result<(), DbErr>>,
}

/// The queue of the writer task; cheap to clone. The task ends when the last clone is dropped.
#[derive(Clone)]
pub struct GroupCommit {
    jobs: mpsc::UnboundedSender<Job>,
}

impl GroupCommit {
    /// Starts the writer on `db` (a thread of its own).
    pub fn start(db: DatabaseConnection) -> std::io::Result<Self> {
        let (jobs, queue) = mpsc::unbounded_channel();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        std::thread::Builder::new()
            .name("colloquy-writer".into())
            .spawn(move || runtime.block_on(write_batches(db, queue)))?;
        Ok(Self { jobs })
    }

    /// Runs `work` in the next batch and gives what it made once the batch is committed: an
    /// error if `work` failed (nothing of it is kept) or the commit did.
    pub async fn write<T: Send + 'static>(&self, work: impl Transaction<T>) -> Result<T, DbErr> {
        let (made, value) = oneshot::channel();
        let (done, outcome) = oneshot::channel();
        let work: Work = Box::new(move |txn| {
            Box::pin(async move {
                let _ = made.send(work(txn).await?);
                Ok(())
            })
        });
        self.jobs.send(Job { work, done }).map_err(|_| stopped())?;
        outcome.await.map_err(|_| stopped())??;
        value.await.map_err(|_| stopped())
    }
}

fn stopped() -> DbErr {
    DbErr::Custom("the database writer has stopped".into())
}

/// The writer: a batch of what is queued, committed, and again, until every sender is gone.
async fn write_batches(db: DatabaseConnection, mut queue: mpsc::UnboundedReceiver<Job>) {
    let mut batch = Vec::new();
    while let Some(first) = queue.recv().await {
        batch.push(first);
        while batch.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        commit(&db, &mut batch).await;
    }
}

/// Runs `batch` in one transaction (each write in a savepoint when there are several), commits
/// it, and answers each write.
async fn commit(db: &DatabaseConnection, batch: &mut Vec<Job>) {
    let txn = match db.begin().await {
        Ok(txn) => txn,
        Err(err) => {
            let cause = err.to_string();
            for job in batch.drain(..) {
                let _ = job.done.send(Err(DbErr::Custom(cause.clone())));
            }
            return;
        }
    };
    let alone = batch.len() == 1;
    let mut outcomes = Vec::with_capacity(batch.len());
    for job in batch.drain(..) {
        let outcome = if alone {
            run(job.work, &txn).await
        } else {
            match txn.begin().await {
                Ok(savepoint) => match run(job.work, &savepoint).await {
                    Ok(()) => savepoint.commit().await,
                    Err(err) => {
                        let _ = savepoint.rollback().await;
                        Err(err)
                    }
                },
                Err(err) => Err(err),
            }
        };
        outcomes.push((job.done, outcome));
    }
    if alone && outcomes.iter().any(|(_, outcome)| outcome.is_err()) {
        // Its only write failed: nothing to keep.
        let _ = txn.rollback().await;
        for (done, outcome) in outcomes {
            let _ = done.send(outcome);
        }
        return;
    }
    match txn.commit().await {
        Ok(()) => {
            for (done, outcome) in outcomes {
                let _ = done.send(outcome);
            }
        }
        Err(err) => {
            let cause = format!("the commit failed: {err}");
            for (done, _) in outcomes {
                let _ = done.send(Err(DbErr::Custom(cause.clone())));
            }
        }
    }
}

/// One write, a panic in it an error like any other.
async fn run(work: Work, txn: &DatabaseTransaction) -> Result<(), DbErr> {
    let Ok(future) = std::panic::catch_unwind(AssertUnwindSafe(|| work(txn))) else {
        return Err(DbErr::Custom("a write panicked".into()));
    };
    match AssertUnwindSafe(future).catch_unwind().await {
        Ok(outcome) => outcome,
        Err(_) => Err(DbErr::Custom("a write panicked".into())),
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

    fn insert(
        n: i64,
    ) -> impl for<'t> FnOnce(&'t DatabaseTransaction) -> BoxFuture<'t, Result<i64, DbErr>> + Send + 'static
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
        let writer = GroupCommit::start(db.clone()).unwrap();
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

    #[tokio::test]
    async fn a_panicking_write_is_an_error_and_the_writer_goes_on() {
        let (_dir, db) = database().await;
        let writer = GroupCommit::start(db.clone()).unwrap();
        let panicking = writer.write(|_txn| -> BoxFuture<'_, Result<(), DbErr>> {
            Box::pin(async { panic!("boom") })
        });
        assert!(panicking.await.is_err());
        assert_eq!(writer.write(insert(7)).await.unwrap(), 7);
        assert_eq!(stored(&db).await, [7]);
    }
}
