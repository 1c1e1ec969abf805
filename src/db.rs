//! The database connection: SQLite (WAL, busy timeout, foreign keys, a pool so reads run beside
//! the writer) or PostgreSQL, chosen by URL; and running the migrations. Queries live with the
//! code that owns the data, not here.

use std::time::Duration;

use entities::ids::UserId;
use migration::{Migrator, MigratorTrait};
use sea_orm::sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous};
use sea_orm::{
    ConnectOptions, ConnectionTrait, Database, DatabaseConnection, DatabaseTransaction, DbBackend,
    DbErr, Statement, TransactionTrait,
};

use crate::config::Config;

/// Connects to the configured database, creating the SQLite file (and its directory) if needed.
pub async fn connect(config: &Config) -> Result<DatabaseConnection, DbErr> {
    let url = config.database_url();
    if url.starts_with("sqlite:") {
        std::fs::create_dir_all(&config.data_dir).map_err(|err| {
            DbErr::Custom(format!(
                "cannot create data directory {}: {err}",
                config.data_dir.display()
            ))
        })?;
    }
    let busy_timeout = Duration::from_millis(config.database.busy_timeout_ms);
    let pool_size = config.database.pool_size(url.starts_with("postgres"));
    let mut options = ConnectOptions::new(url);
    options
        .max_connections(pool_size)
        .min_connections(1)
        .acquire_timeout(Duration::from_secs(10))
        .sqlx_logging(false)
        .map_sqlx_sqlite_opts(move |opts| {
            opts.journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .busy_timeout(busy_timeout)
                .foreign_keys(true)
                // Statement and savepoint journals in memory, not in a file made and deleted
                // by each transaction.
                .pragma("temp_store", "memory")
                .create_if_missing(true)
        });
    Database::connect(options).await
}

/// Counts every statement run on `db` into `counter` — on every clone made after, and inside
/// transactions, too (sea-orm's metric callback) — and logs each at trace level under the
/// `colloquy::sql` target (`RUST_LOG=colloquy::sql=trace` lists what a request costs). Call it
/// before `db` is cloned.
pub fn count_statements(db: &mut DatabaseConnection, counter: prometheus::IntCounter) {
    db.set_metric_callback(move |info| {
        counter.inc();
        tracing::trace!(
            target: "colloquy::sql",
            micros = u64::try_from(info.elapsed.as_micros()).unwrap_or(u64::MAX),
            failed = info.failed,
            sql = %info.statement.sql,
        );
    });
}

/// Brings the schema up to date. On PostgreSQL, processes started at once take turns (an
/// advisory lock held on a connection of its own), so that only one applies each migration.
pub async fn migrate(db: &DatabaseConnection) -> Result<(), DbErr> {
    if db.get_database_backend() != DbBackend::Postgres {
        return Migrator::up(db, None).await;
    }
    let own = db.get_postgres_connection_pool().clone();
    let single = sea_orm::SqlxPostgresConnector::from_sqlx_postgres_pool(
        sea_orm::sqlx::postgres::PgPoolOptions::new()
            .max_connections(1)
            .connect_with((*own.connect_options()).clone())
            .await
            .map_err(|err| DbErr::Custom(format!("cannot connect to migrate: {err}")))?,
    );
    let lock = |sql: &str| Statement::from_string(DbBackend::Postgres, sql.to_string());
    single
        .execute_raw(lock(&format!("SELECT pg_advisory_lock({MIGRATION_LOCK})")))
        .await?;
    let migrated = Migrator::up(&single, None).await;
    let unlocked = single
        .execute_raw(lock(&format!(
            "SELECT pg_advisory_unlock({MIGRATION_LOCK})"
        )))
        .await;
    single.close().await?;
    migrated?;
    unlocked.map(|_| ())
}

/// The advisory lock key processes take turns migrating under (any fixed number; "colloquy"
/// in ASCII).
const MIGRATION_LOCK: i64 = 0x636f_6c6c_6f71_7579;

/// A transaction that holds `user`'s row lock until it commits or is dropped: a per-user cap
/// (schedules, workflows, agents, knowledge bases, API keys) counts and inserts inside one, so
/// requests racing for the last place take turns, in this process and in any other on the same
/// database. PostgreSQL locks the user's row (`FOR UPDATE`; a count after it sees what the
/// previous holder committed); SQLite has one writer, so the transaction's first statement is
/// a write (to the user's row, changing nothing), which waits (the busy timeout) for the
/// writer before it. Keep the transaction short: on SQLite it holds the database's write lock.
pub async fn lock_user(
    db: &DatabaseConnection,
    user: &UserId,
) -> Result<DatabaseTransaction, DbErr> {
    let txn = db.begin().await?;
    let backend = txn.get_database_backend();
    let sql = match backend {
        DbBackend::Postgres => "SELECT id FROM users WHERE id = $1 FOR UPDATE",
        _ => "UPDATE users SET is_admin = is_admin WHERE id = ?",
    };
    txn.execute_raw(Statement::from_sql_and_values(
        backend,
        sql,
        [user.as_str().into()],
    ))
    .await?;
    Ok(txn)
}

/// One page of a list: at most `limit` rows after skipping `offset`. Per-user lists (schedules,
/// workflows, agents, knowledge bases, API keys) page with it, so nothing past a cap, or past
/// one page, is out of reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    pub limit: u64,
    pub offset: u64,
}

impl Page {
    /// A page large enough for everything a user may have under the default caps; what asks
    /// for no page gets this one.
    pub const DEFAULT_LIMIT: u64 = 200;
    /// The largest page one request may ask for.
    pub const MAX_LIMIT: u64 = 500;

    /// The first `DEFAULT_LIMIT` rows.
    pub const FIRST: Page = Page {
        limit: Self::DEFAULT_LIMIT,
        offset: 0,
    };
}

/// Whether the database answers (readiness).
pub async fn ping(db: &DatabaseConnection) -> Result<(), DbErr> {
    db.ping().await
}

/// The database's own size, where it can say it (PostgreSQL; a SQLite file is in the data
/// directory).
pub async fn database_bytes(db: &DatabaseConnection) -> Option<u64> {
    use sea_orm::{ConnectionTrait, DbBackend, Statement};
    if db.get_database_backend() != DbBackend::Postgres {
        return None;
    }
    let row = db
        .query_one_raw(Statement::from_string(
            DbBackend::Postgres,
            "SELECT pg_database_size(current_database()) AS bytes",
        ))
        .await
        .ok()??;
    row.try_get::<i64>("", "bytes")
        .ok()
        .map(|b| b.max(0) as u64)
}

/// The time by the database's clock: on PostgreSQL, which several processes share, its
/// `now()`, so decisions they take in turn (a schedule's due time, a claim's age) agree
/// whatever their own clocks say; SQLite's one process uses its own.
pub async fn now(db: &impl ConnectionTrait) -> Result<chrono::DateTime<chrono::Utc>, DbErr> {
    if db.get_database_backend() != DbBackend::Postgres {
        return Ok(chrono::Utc::now());
    }
    let row = db
        .query_one_raw(Statement::from_string(
            DbBackend::Postgres,
            "SELECT clock_timestamp() AS now",
        ))
        .await?
        .ok_or_else(|| DbErr::Custom("the database did not tell its time".into()))?;
    row.try_get("", "now")
}
