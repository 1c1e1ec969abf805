//! The group commit's own SQLite connection. The writer runs every statement of a batch on its
//! thread, straight through SQLite's C API, instead of handing each one to a driver thread and
//! waiting to be woken with its result (sqlx's SQLite connections work that way, two thread
//! switches a statement). A turn's writes are a handful of short statements, so those switches,
//! not SQLite, were most of what a stored turn cost.
//!
//! A write comes as its statements (recorded, `super::record`); the writer runs a batch's
//! writes in one transaction (`BEGIN IMMEDIATE` … `COMMIT`), each straight in it or, once one
//! has failed, each in a savepoint of it. Values are bound as
//! sqlx binds them on SQLite, so what this connection writes the pool reads alike. All of the
//! group commit's unsafe code is here.

use std::collections::HashMap;
use std::ffi::{CStr, CString, c_char, c_int};
use std::path::Path;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use libsqlite3_sys as ffi;
use sea_orm::sea_query::{OptionEnum, Value};
use sea_orm::{DbErr, RuntimeErr, Statement};

/// Prepared statements kept for reuse. A turn's writes are a few dozen distinct texts (an
/// `IN (…)` list makes one per length); past this the cache starts over rather than grow.
const MAX_CACHED_STATEMENTS: usize = 256;

/// The WAL's size once it starts over, in bytes (`journal_size_limit`); small in unit tests.
/// Above what the WAL reaches before the checkpointer has it start over (`RESTART_FRAMES`,
/// 128 MiB), so that a busy WAL keeps its file and later writes overwrite blocks it already
/// has: extending the file made the writer wait (ext4's block allocation) on the checkpointer's
/// `fsync` of the same file.
pub(super) const WAL_SIZE_LIMIT: u64 = if cfg!(test) { 1 << 20 } else { 192 << 20 };

/// The longest the writer waits for readers to leave the WAL so that it can start over.
const RESTART_PATIENCE: Duration = Duration::from_millis(20);

/// A SQLite connection the writer thread alone uses; see the module's doc.
pub struct DirectConnection {
    handle: Handle,
    /// Where each statement is counted, as the pool's are (`colloquy_db_statements_total`).
    statements: Option<prometheus::IntCounter>,
    /// How long a statement waits for another connection's lock, in milliseconds.
    busy_timeout: c_int,
    /// The WAL's file (`<database>-wal`), whose blocks `reserve_wal` allocates.
    wal_path: std::path::PathBuf,
    /// The frames the WAL held after this connection's last commit, as SQLite's WAL hook tells
    /// it (without `checkpoints`; else 0). Dropped after `handle`, which calls the hook.
    wal_frames: Box<AtomicU64>,
}

/// How long `wait_briefly` sleeps before SQLite tries a lock again.
const BRIEF_WAIT: Duration = Duration::from_micros(50);

/// A busy handler: SQLite tries the lock again after `BRIEF_WAIT` while the deadline it is
/// given (an `Instant`) is ahead.
unsafe extern "C" fn wait_briefly(deadline: *mut std::ffi::c_void, _tries: c_int) -> c_int {
    // SAFETY: `restart_wal` passes its `Instant`, which outlives the call that runs this.
    let deadline = unsafe { *deadline.cast::<std::time::Instant>() };
    if std::time::Instant::now() >= deadline {
        return 0;
    }
    std::thread::sleep(BRIEF_WAIT);
    1
}

/// SQLite's WAL hook: called after each commit with the frames the WAL holds. Installing it
/// also keeps SQLite from checkpointing on commit, as `wal_autocheckpoint = 0` does.
unsafe extern "C" fn note_wal_frames(
    frames_seen: *mut std::ffi::c_void,
    _db: *mut ffi::sqlite3,
    _name: *const c_char,
    frames: c_int,
) -> c_int {
    // SAFETY: the argument is the connection's boxed counter, freed only after the handle that
    // calls this is closed.
    let frames_seen = unsafe { &*frames_seen.cast::<AtomicU64>() };
    frames_seen.store(u64::try_from(frames).unwrap_or(0), Ordering::Relaxed);
    ffi::SQLITE_OK
}

struct Handle {
    db: NonNull<ffi::sqlite3>,
    cache: HashMap<String, NonNull<ffi::sqlite3_stmt>>,
}

// SAFETY: the handle moves to the writer's thread once and is used there alone (through
// `&mut`); it is opened with SQLite's own mutexes off (`SQLITE_OPEN_NOMUTEX`), which asks for
// exactly that. No statement or pointer from it is shared.
unsafe impl Send for Handle {}

impl DirectConnection {
    /// Opens the database file at `path` (it must exist: the migrations made it) in WAL mode
    /// with the pool's settings: `synchronous = NORMAL`, foreign keys on, `busy_timeout` to
    /// wait for another connection's write, and `temp_store = MEMORY`. The last matters most
    /// here: a batch's savepoints journal the pages they change, and past 64 KiB SQLite spills
    /// that journal to a temporary file, made and deleted by every batch. Without `checkpoints`, its commits leave the
    /// WAL's checkpoints to another connection (`checkpoint`).
    pub fn open(
        path: &Path,
        busy_timeout: Duration,
        checkpoints: bool,
        statements: Option<prometheus::IntCounter>,
    ) -> Result<Self, DbErr> {
        let name = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| DbErr::Custom(format!("a NUL in the path {}", path.display())))?;
        let mut db = std::ptr::null_mut();
        let flags = ffi::SQLITE_OPEN_READWRITE | ffi::SQLITE_OPEN_NOMUTEX;
        // SAFETY: `name` is NUL-terminated and lives through the call; `db` receives a handle
        // (even on failure, when it must still be closed: `Handle`'s drop does).
        let code = unsafe { ffi::sqlite3_open_v2(name.as_ptr(), &mut db, flags, std::ptr::null()) };
        let Some(db) = NonNull::new(db) else {
            return Err(DbErr::Custom(
                "SQLite could not allocate a connection".into(),
            ));
        };
        let handle = Handle {
            db,
            cache: HashMap::new(),
        };
        if code != ffi::SQLITE_OK {
            return Err(handle.error(code));
        }
        let timeout = c_int::try_from(busy_timeout.as_millis()).unwrap_or(c_int::MAX);
        // SAFETY: a live handle, held alone.
        unsafe { ffi::sqlite3_busy_timeout(db.as_ptr(), timeout) };
        handle.exec(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; \
             PRAGMA temp_store = MEMORY",
        )?;
        let wal_frames = Box::new(AtomicU64::new(0));
        if !checkpoints {
            handle.exec("PRAGMA wal_autocheckpoint = 0")?;
            // SAFETY: a live handle held alone; the counter outlives it (`wal_frames`).
            unsafe {
                ffi::sqlite3_wal_hook(
                    db.as_ptr(),
                    Some(note_wal_frames),
                    std::ptr::from_ref::<AtomicU64>(&wal_frames)
                        .cast_mut()
                        .cast(),
                );
            }
        }
        // Once the WAL starts over (`restart_wal`), the file is cut back to this: reused, not
        // grown again from nothing, and never holding more disk than a burst needed.
        handle.exec(&format!("PRAGMA journal_size_limit = {WAL_SIZE_LIMIT}"))?;
        let mut wal_path = path.as_os_str().to_owned();
        wal_path.push("-wal");
        Ok(Self {
            handle,
            statements,
            busy_timeout: timeout,
            wal_path: wal_path.into(),
            wal_frames,
        })
    }

    /// The WAL's file, whose blocks `reserve_wal` allocates.
    pub fn wal_path(&self) -> &Path {
        &self.wal_path
    }

    /// The frames the WAL held after this connection's last commit (0 with `checkpoints`).
    pub fn wal_frames(&self) -> u64 {
        self.wal_frames.load(Ordering::Relaxed)
    }

    /// A passive checkpoint: copies what the WAL holds into the database file as far as no
    /// reader still needs it, waiting for nobody. Gives the frames the WAL holds.
    pub fn checkpoint(&self) -> Result<u64, DbErr> {
        self.handle.wal_checkpoint(ffi::SQLITE_CHECKPOINT_PASSIVE)
    }

    /// A checkpoint after which the next write starts the WAL over from its beginning, for
    /// the writer between two batches: it copies what is left and waits for readers still
    /// reading the WAL, new writes waiting meanwhile. It waits `RESTART_PATIENCE` at most, not
    /// the busy timeout: a long read (an export, a catch-up) must not hold every write; it is
    /// then `Err` (busy), and the WAL starts over at a later try. Passive checkpoints alone
    /// never let a WAL written without a pause start over: it would grow while the load lasts.
    ///
    /// The wait for readers is `wait_briefly`, not SQLite's busy timeout, which sleeps 1 ms,
    /// then 2 ms, then 5 ms: a turn's read lasts well under a millisecond, and with one still
    /// in the WAL those sleeps held every write 3–8 ms.
    pub fn restart_wal(&self) -> Result<(), DbErr> {
        self.restart_wal_within(RESTART_PATIENCE)
    }

    /// `restart_wal`, waiting `patience` at most.
    fn restart_wal_within(&self, patience: Duration) -> Result<(), DbErr> {
        let db = self.handle.db.as_ptr();
        let mut deadline = std::time::Instant::now() + patience;
        // SAFETY: a live handle, held alone; `deadline` outlives the checkpoint, the only
        // call that may run the handler, and the handler is replaced right after it.
        unsafe {
            ffi::sqlite3_busy_handler(
                db,
                Some(wait_briefly),
                std::ptr::from_mut(&mut deadline).cast(),
            )
        };
        let restarted = self.handle.wal_checkpoint(ffi::SQLITE_CHECKPOINT_RESTART);
        // SAFETY: as above; this replaces `wait_briefly`.
        unsafe { ffi::sqlite3_busy_timeout(db, self.busy_timeout) };
        restarted.map(drop)
    }

    /// Starts a batch's transaction, taking the write lock now (waiting up to the busy
    /// timeout).
    pub fn begin_batch(&mut self) -> Result<(), DbErr> {
        self.handle.run_sql("BEGIN IMMEDIATE")
    }

    /// Commits the batch: once this returns `Ok`, every write in it is durable as SQLite's
    /// WAL makes it. On failure the transaction is rolled back.
    pub fn commit_batch(&mut self) -> Result<(), DbErr> {
        let committed = self.handle.run_sql("COMMIT");
        if committed.is_err() && !self.handle.autocommit() {
            let _ = self.handle.exec("ROLLBACK");
        }
        committed
    }

    /// Whether the batch's transaction is still open: SQLite rolls a whole transaction back
    /// on some failures (a full disk, for one), and what runs after that must not commit alone.
    pub fn in_batch(&self) -> bool {
        !self.handle.autocommit()
    }

    /// Rolls the batch's transaction back, if SQLite has not already.
    pub fn roll_back_batch(&mut self) {
        if self.in_batch() {
            let _ = self.handle.exec("ROLLBACK");
        }
    }

    /// Runs one write, `statements` in order, straight in the batch's transaction: at the
    /// first that fails, what it wrote so far stays in the transaction, which is then to be
    /// rolled back whole (`roll_back_batch`).
    pub fn write_unguarded(&mut self, statements: &[Statement]) -> Result<(), DbErr> {
        statements.iter().try_for_each(|statement| {
            if let Some(counter) = &self.statements {
                counter.inc();
            }
            tracing::trace!(target: "colloquy::sql", sql = %statement.sql, "on the writer");
            self.handle.run(statement)
        })
    }

    /// Runs one write, `statements` in order, in a savepoint of the batch: kept if every one
    /// succeeds, rolled back whole at the first that fails.
    pub fn write(&mut self, statements: &[Statement]) -> Result<(), DbErr> {
        self.handle.run_sql("SAVEPOINT write")?;
        let outcome = self
            .write_unguarded(statements)
            .and_then(|()| self.handle.run_sql("RELEASE write"));
        // Failed (even at its release): nothing of it may reach the batch's commit.
        if outcome.is_err() && self.in_batch() {
            let _ = self.handle.exec("ROLLBACK TO write; RELEASE write");
        }
        outcome
    }
}

impl Handle {
    /// Runs `sql` (one or more statements, no parameters, no rows).
    fn exec(&self, sql: &str) -> Result<(), DbErr> {
        let text = CString::new(sql).map_err(|_| DbErr::Custom("a NUL in SQL".into()))?;
        // SAFETY: a live handle held alone; `text` is NUL-terminated and outlives the call;
        // no callback and no error buffer are passed.
        let code = unsafe {
            ffi::sqlite3_exec(
                self.db.as_ptr(),
                text.as_ptr(),
                None,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        if code == ffi::SQLITE_OK {
            Ok(())
        } else {
            Err(self.error(code))
        }
    }

    /// A checkpoint of the main database in `mode`; the frames the WAL holds after it.
    fn wal_checkpoint(&self, mode: c_int) -> Result<u64, DbErr> {
        let (mut log, mut copied): (c_int, c_int) = (0, 0);
        // SAFETY: a live handle held alone; a null name means the main database; both out
        // pointers are to locals that outlive the call.
        let code = unsafe {
            ffi::sqlite3_wal_checkpoint_v2(
                self.db.as_ptr(),
                std::ptr::null(),
                mode,
                &mut log,
                &mut copied,
            )
        };
        match code {
            ffi::SQLITE_OK => Ok(u64::try_from(log).unwrap_or(0)),
            code => Err(self.error(code)),
        }
    }

    fn autocommit(&self) -> bool {
        // SAFETY: a live handle held alone.
        unsafe { ffi::sqlite3_get_autocommit(self.db.as_ptr()) != 0 }
    }

    /// The connection's last error, as sea-orm reports an execution error.
    fn error(&self, code: c_int) -> DbErr {
        // SAFETY: a live handle; SQLite's message is NUL-terminated and valid until the next
        // call on the handle, and is copied here before it.
        let message = unsafe { CStr::from_ptr(ffi::sqlite3_errmsg(self.db.as_ptr())) }
            .to_string_lossy()
            .into_owned();
        DbErr::Exec(RuntimeErr::Internal(format!(
            "SQLite error {code}: {message}"
        )))
    }

    /// The prepared statement for `sql`, from the cache or prepared now.
    fn prepare(&mut self, sql: &str) -> Result<NonNull<ffi::sqlite3_stmt>, DbErr> {
        if let Some(statement) = self.cache.get(sql) {
            return Ok(*statement);
        }
        if self.cache.len() >= MAX_CACHED_STATEMENTS {
            for (_, statement) in self.cache.drain() {
                // SAFETY: a statement of this handle, not in use (the lock is held), and
                // forgotten here with the cache entry.
                unsafe { ffi::sqlite3_finalize(statement.as_ptr()) };
            }
        }
        let length = c_int::try_from(sql.len())
            .map_err(|_| DbErr::Custom("a statement too long for SQLite".into()))?;
        let mut statement = std::ptr::null_mut();
        // SAFETY: `sql` is valid for `length` bytes through the call (SQLite copies what it
        // keeps); `statement` receives the prepared statement or null.
        let code = unsafe {
            ffi::sqlite3_prepare_v3(
                self.db.as_ptr(),
                sql.as_ptr().cast::<c_char>(),
                length,
                ffi::SQLITE_PREPARE_PERSISTENT as _,
                &mut statement,
                std::ptr::null_mut(),
            )
        };
        if code != ffi::SQLITE_OK {
            return Err(self.error(code));
        }
        let statement = NonNull::new(statement)
            .ok_or_else(|| DbErr::Custom(format!("no statement in {sql:?}")))?;
        self.cache.insert(sql.to_string(), statement);
        Ok(statement)
    }

    /// Runs `statement` to its end; rows it gives are passed over.
    fn run(&mut self, statement: &Statement) -> Result<(), DbErr> {
        let values = statement.values.as_ref().map_or(&[][..], |v| &v.0[..]);
        self.run_bound(&statement.sql, values)
    }

    /// Runs `sql`, one statement without parameters, prepared once (a batch's `BEGIN`, its
    /// savepoints, its `COMMIT`: parsed once, not once per batch and write).
    fn run_sql(&mut self, sql: &str) -> Result<(), DbErr> {
        self.run_bound(sql, &[])
    }

    /// Runs `sql` with `values` bound, to its end; rows it gives are passed over.
    fn run_bound(&mut self, sql: &str, values: &[Value]) -> Result<(), DbErr> {
        let prepared = self.prepare(sql)?;
        let stmt = prepared.as_ptr();
        let outcome = self.bind(stmt, values).and_then(|()| {
            loop {
                // SAFETY: a prepared statement of this live handle, bound above.
                match unsafe { ffi::sqlite3_step(stmt) } {
                    ffi::SQLITE_ROW => {}
                    ffi::SQLITE_DONE => return Ok(()),
                    code => return Err(self.error(code)),
                }
            }
        });
        // SAFETY: the statement is ours; reset for its next use and its bindings (copies,
        // `SQLITE_TRANSIENT`) cleared.
        unsafe {
            ffi::sqlite3_reset(stmt);
            ffi::sqlite3_clear_bindings(stmt);
        }
        outcome
    }

    /// Binds `values` to `stmt`'s parameters 1…n, each as sqlx binds it on SQLite.
    fn bind(&self, stmt: *mut ffi::sqlite3_stmt, values: &[Value]) -> Result<(), DbErr> {
        for (index, value) in values.iter().enumerate() {
            let index = c_int::try_from(index + 1)
                .map_err(|_| DbErr::Custom("too many parameters".into()))?;
            let code = match Bound::of(value)? {
                // SAFETY (each arm): `stmt` is a statement of this live handle, `index` one of
                // its parameters (SQLite checks the range); text and blobs are copied by SQLite
                // (`SQLITE_TRANSIENT`) before the call returns.
                Bound::Null => unsafe { ffi::sqlite3_bind_null(stmt, index) },
                Bound::Integer(n) => unsafe { ffi::sqlite3_bind_int64(stmt, index, n) },
                Bound::Real(x) => unsafe { ffi::sqlite3_bind_double(stmt, index, x) },
                Bound::Text(text) => unsafe {
                    ffi::sqlite3_bind_text64(
                        stmt,
                        index,
                        text.as_ptr().cast::<c_char>(),
                        text.len() as u64,
                        ffi::SQLITE_TRANSIENT(),
                        ffi::SQLITE_UTF8 as _,
                    )
                },
                Bound::Blob(bytes) => unsafe {
                    ffi::sqlite3_bind_blob64(
                        stmt,
                        index,
                        bytes.as_ptr().cast(),
                        bytes.len() as u64,
                        ffi::SQLITE_TRANSIENT(),
                    )
                },
            };
            if code != ffi::SQLITE_OK {
                return Err(self.error(code));
            }
        }
        Ok(())
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: the statements and the handle are this connection's and used by nobody
        // else any more; each is finalized once, then the handle closed.
        unsafe {
            for (_, statement) in self.cache.drain() {
                ffi::sqlite3_finalize(statement.as_ptr());
            }
            ffi::sqlite3_close(self.db.as_ptr());
        }
    }
}

/// A value as SQLite stores it.
enum Bound<'a> {
    Null,
    Integer(i64),
    Real(f64),
    Text(std::borrow::Cow<'a, str>),
    Blob(&'a [u8]),
}

impl<'a> Bound<'a> {
    /// `value` as sqlx's SQLite driver binds it (`sea-query-sqlx`): booleans and integers as
    /// integers, floats as reals, JSON as its text, dates and times as text in sqlx's formats.
    fn of(value: &'a Value) -> Result<Self, DbErr> {
        use chrono::SecondsFormat;
        use std::borrow::Cow;
        let integer = |n: Option<i64>| n.map_or(Bound::Null, Bound::Integer);
        let text = |s: Option<String>| s.map_or(Bound::Null, |s| Bound::Text(Cow::Owned(s)));
        Ok(match value {
            Value::Bool(b) => integer(b.map(i64::from)),
            Value::TinyInt(n) => integer(n.map(i64::from)),
            Value::SmallInt(n) => integer(n.map(i64::from)),
            Value::Int(n) => integer(n.map(i64::from)),
            Value::BigInt(n) => integer(*n),
            Value::TinyUnsigned(n) => integer(n.map(i64::from)),
            Value::SmallUnsigned(n) => integer(n.map(i64::from)),
            Value::Unsigned(n) => integer(n.map(i64::from)),
            Value::BigUnsigned(n) => match n {
                Some(n) => Bound::Integer(
                    i64::try_from(*n)
                        .map_err(|_| DbErr::Custom(format!("{n} is past SQLite's integers")))?,
                ),
                None => Bound::Null,
            },
            Value::Float(x) => x.map_or(Bound::Null, |x| Bound::Real(f64::from(x))),
            Value::Double(x) => x.map_or(Bound::Null, Bound::Real),
            Value::String(s) => s
                .as_deref()
                .map_or(Bound::Null, |s| Bound::Text(Cow::Borrowed(s))),
            Value::Enum(e) => match e {
                OptionEnum::Some(v) => Bound::Text(Cow::Borrowed(v.value.as_ref())),
                OptionEnum::None(_) => Bound::Null,
            },
            Value::Char(c) => text(c.map(String::from)),
            Value::Bytes(b) => b.as_deref().map_or(Bound::Null, Bound::Blob),
            Value::Json(j) => match j {
                Some(j) => Bound::Text(Cow::Owned(
                    serde_json::to_string(j).map_err(|err| DbErr::Json(err.to_string()))?,
                )),
                None => Bound::Null,
            },
            Value::ChronoDate(d) => text(d.map(|d| d.format("%F").to_string())),
            Value::ChronoTime(t) => text(t.map(|t| t.format("%T%.f").to_string())),
            Value::ChronoDateTime(t) => text(t.map(|t| t.format("%F %T%.f").to_string())),
            Value::ChronoDateTimeUtc(t) => {
                text(t.map(|t| t.to_rfc3339_opts(SecondsFormat::AutoSi, false)))
            }
            Value::ChronoDateTimeLocal(t) => {
                text(t.map(|t| t.to_rfc3339_opts(SecondsFormat::AutoSi, false)))
            }
            Value::ChronoDateTimeWithTimeZone(t) => {
                text(t.map(|t| t.to_rfc3339_opts(SecondsFormat::AutoSi, false)))
            }
            Value::Uuid(u) => u
                .as_ref()
                .map_or(Bound::Null, |u| Bound::Blob(u.as_bytes())),
            other => {
                return Err(DbErr::Custom(format!(
                    "the writer cannot bind {other:?} on SQLite"
                )));
            }
        })
    }
}

/// Allocates the blocks of the WAL file at `wal_path` up to `WAL_SIZE_LIMIT`, ahead of the
/// writes that will fill them (Linux's `fallocate`, keeping the file's length: SQLite sees
/// nothing). A WAL that grows block by block has ext4 allocate each block as the writer writes
/// it, under a lock the checkpointer's `fsync` of the same file holds: the writer, and every
/// write queued behind it, waited 10–46 ms at a time (`perf`'s `sched_switch`) while a busy
/// WAL first grew. Called once a WAL is busy, so an idle server's stays small; on a thread of
/// its own, as allocating a few hundred megabytes can itself wait on the disk.
#[cfg(target_os = "linux")]
pub fn reserve_wal(wal_path: &Path) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let file = std::fs::OpenOptions::new().write(true).open(wal_path)?;
    let length = libc::off_t::try_from(WAL_SIZE_LIMIT).unwrap_or(libc::off_t::MAX);
    // SAFETY: a file descriptor open for writing, which `file` keeps open through the call.
    let code = unsafe { libc::fallocate(file.as_raw_fd(), libc::FALLOC_FL_KEEP_SIZE, 0, length) };
    if code != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
pub fn reserve_wal(_wal_path: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sea_orm::{ConnectionTrait, DbBackend, TransactionTrait};

    fn insert(connection: &mut DirectConnection, n: i64) {
        connection.begin_batch().unwrap();
        connection
            .write_unguarded(&[Statement::from_sql_and_values(
                DbBackend::Sqlite,
                "INSERT INTO t (n) VALUES (?)",
                [n.into()],
            )])
            .unwrap();
        connection.commit_batch().unwrap();
    }

    /// A restart waits for a reader still in the WAL, trying again until the reader has gone,
    /// and gives up once its patience is spent.
    #[tokio::test]
    async fn a_wal_restart_waits_for_a_reader_to_leave_and_no_longer_than_its_patience() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let url = format!("sqlite://{}?mode=rwc", path.display());
        let db = sea_orm::Database::connect(url).await.unwrap();
        db.execute_unprepared("CREATE TABLE t (n INTEGER PRIMARY KEY)")
            .await
            .unwrap();
        let mut connection = DirectConnection::open(&path, Duration::from_secs(5), false, None)
            .expect("the writer's connection");
        insert(&mut connection, 1);
        // A reader whose snapshot is in the WAL holds one of its read marks.
        let reader = db.begin().await.unwrap();
        let count = Statement::from_string(DbBackend::Sqlite, "SELECT count(*) AS n FROM t");
        let row = reader.query_one_raw(count.clone()).await.unwrap().unwrap();
        assert_eq!(row.try_get::<i64>("", "n").unwrap(), 1);
        insert(&mut connection, 2);
        let frames_before = connection.wal_frames();
        assert!(frames_before >= 2, "{frames_before}");

        let started = std::time::Instant::now();
        assert!(connection.restart_wal().is_err(), "a reader is in the WAL");
        assert!(started.elapsed() >= RESTART_PATIENCE);

        // The reader leaves while a (more patient) restart waits: the restart goes through.
        let restarting = std::thread::spawn(move || {
            let restarted = connection.restart_wal_within(Duration::from_secs(30));
            (restarted, connection)
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        reader.commit().await.unwrap();
        let (restarted, mut connection) = tokio::task::spawn_blocking(move || restarting.join())
            .await
            .unwrap()
            .unwrap();
        restarted.expect("the restart went through once the reader had gone");
        // The WAL started over: the next write begins it again, and everything reads back.
        insert(&mut connection, 3);
        assert!(connection.wal_frames() < frames_before);
        let row = db.query_one_raw(count).await.unwrap().unwrap();
        assert_eq!(row.try_get::<i64>("", "n").unwrap(), 3);
    }
}
