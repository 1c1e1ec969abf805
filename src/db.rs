//! The database connection: SQLite (WAL, busy timeout, foreign keys, a pool so reads run beside
//! the writer) or PostgreSQL, chosen by URL; and running the migrations. Queries live with the
//! code that owns the data, not here.

use std::time::Duration;

use migration::{Migrator, MigratorTrait};
use sea_orm::sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous};
use sea_orm::{
    ConnectOptions, ConnectionTrait, Database, DatabaseConnection, DbBackend, DbErr, Statement,
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
    let mut options = ConnectOptions::new(url);
    options
        .max_connections(config.database.max_connections)
        .min_connections(1)
        .acquire_timeout(Duration::from_secs(10))
        .sqlx_logging(false)
        .map_sqlx_sqlite_opts(move |opts| {
            opts.journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .busy_timeout(busy_timeout)
                .foreign_keys(true)
                .create_if_missing(true)
        });
    Database::connect(options).await
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
