//! `execute_sql` (docs/spec.md#platform-tools): one read-only query over a database the operator declared in
//! `[[sql.databases]]` (configuration only), never Colloquy's own. `SqlDatabases` holds the
//! declared databases and keeps each one's tables and columns (`schema`) for the tool's
//! description, read at start-up and on a schedule; `tool` is the `Tool`; `postgres` and
//! `sqlite` run a query each on a connection of its own, read-only, under the statement timeout,
//! one statement per call (`statement`: on PostgreSQL, calls reaching outside the transaction
//! are refused, and so is a privileged role), SQLite's connection guarded (`sqlite_guard`);
//! `table` builds the capped result and turns database values into JSON (`value`). Must not:
//! reach the loop, a chat or Colloquy's own database.

mod postgres;
mod postgres_cut;
mod schema;
mod sqlite;
mod sqlite_guard;
mod statement;
mod table;
mod tool;
mod value;

#[cfg(test)]
mod tests;

use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use secrecy::ExposeSecret;
use tokio::sync::Semaphore;

use crate::config::{SqlConfig, SqlDatabaseConfig, SqlTarget};
use crate::tools::SharedTool;

pub use table::Limits;
pub use tool::ExecuteSql;

/// The tool's name.
pub const EXECUTE_SQL: &str = "execute_sql";

/// What a server needs before it can offer `execute_sql`, for refusals that say so.
pub const EXECUTE_SQL_NEEDS: &str = "a [[sql.databases]] entry in the configuration";

/// Queries one database runs at once; each has a connection of its own, so this bounds the
/// connections Colloquy opens to someone else's server.
const MAX_CONCURRENT_QUERIES: usize = 4;

/// How long a schema reading waits for its connection and its query: it runs in the
/// background, so a slow database only delays the description.
const SCHEMA_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// How soon a failed schema reading is tried again (unless the regular refresh comes first): a
/// database that was down at start-up is described soon after it comes up.
const SCHEMA_RETRY: Duration = Duration::from_secs(30);

/// Why a query gave no rows, in the words the tool result carries.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// The database refused or failed the statement: its own message.
    #[error("{message}")]
    Database { kind: Refusal, message: String },
    /// More than one statement, or none (checked before the database sees the query).
    #[error("{0}")]
    Statement(statement::StatementProblem),
    /// A statement that would reach outside the read-only transaction (checked before
    /// PostgreSQL sees it).
    #[error("{0}")]
    Refused(statement::Refused),
    /// The declared role may reach the server's files, programs or every row: the database
    /// is not queried until the operator declares another role (or `allow_privileged_role`).
    #[error("{0}")]
    Privileged(String),
    /// No connection could be made, or it broke: the cause, for the log only (it may name
    /// hosts); the model is told the database cannot be reached.
    #[error("cannot reach the database: {0}")]
    Unavailable(String),
}

/// What kind of refusal a database error is, for the error result's stable code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// A write in the read-only transaction or connection.
    ReadOnly,
    /// The statement ran past `timeout_ms`.
    Timeout,
    /// The statement does not parse.
    Syntax,
    /// A value larger than the result may hold (SQLite refuses to build it).
    TooBig,
    /// Anything else: an unknown table, a type error, a permission.
    Other,
}

/// One declared database: its settings, where it is, and its tables as last read.
pub struct SqlDatabase {
    config: SqlDatabaseConfig,
    target: SqlTarget,
    /// The tables and columns for the description; `None` until first read.
    schema: RwLock<Option<String>>,
    /// One permit per query running now.
    running: Semaphore,
}

impl SqlDatabase {
    pub fn id(&self) -> &str {
        &self.config.id
    }

    /// The row and byte caps of one result: `max_rows`, and `max_bytes` (the loop's
    /// `agent.max_tool_result_chars`, so a result is never cut mid-row).
    fn limits(&self, max_bytes: usize) -> Limits {
        Limits {
            max_rows: self.config.max_rows,
            max_bytes,
            timeout: Duration::from_millis(self.config.timeout_ms),
        }
    }

    /// Runs one query, read-only, on a connection of its own.
    async fn query(&self, sql: &str, limits: &Limits) -> Result<serde_json::Value, QueryError> {
        // The semaphore is never closed; were it, the query would run without waiting its turn.
        let _permit = self.running.acquire().await.ok();
        let result = match &self.target {
            SqlTarget::Postgres(options) => {
                postgres::query(options, sql, limits, self.config.allow_privileged_role).await
            }
            SqlTarget::Sqlite(path) => sqlite::query(path, sql, limits).await,
        };
        if let Err(QueryError::Unavailable(cause)) = &result {
            tracing::warn!(sql_database = %self.id(), %cause, "execute_sql cannot reach its database");
        }
        result
    }

    /// The tables and columns as last read, if they were.
    fn schema(&self) -> Option<String> {
        self.schema
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Reads the tables and columns now and keeps them; false when they could not be read.
    async fn refresh_schema(&self) -> bool {
        let read = match &self.target {
            SqlTarget::Postgres(options) => {
                let allow = self.config.allow_privileged_role;
                postgres::schema(self.id(), options, SCHEMA_READ_TIMEOUT, allow).await
            }
            SqlTarget::Sqlite(path) => sqlite::schema(path, SCHEMA_READ_TIMEOUT).await,
        };
        match read {
            Ok(columns) => {
                let text = schema::describe(&columns);
                *self
                    .schema
                    .write()
                    .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(text);
                true
            }
            Err(QueryError::Privileged(why)) => {
                tracing::error!(sql_database = %self.id(), %why, "execute_sql refuses this database");
                *self
                    .schema
                    .write()
                    .unwrap_or_else(|poisoned| poisoned.into_inner()) =
                    Some(format!("(none: the database is unavailable, {why})"));
                true
            }
            Err(err) => {
                tracing::warn!(sql_database = %self.id(), %err, "cannot read the database's tables");
                false
            }
        }
    }
}

/// The declared databases. Cheap to clone; `start` begins reading their tables.
#[derive(Clone, Default)]
pub struct SqlDatabases {
    databases: Arc<Vec<Arc<SqlDatabase>>>,
}

/// Why an agent gets no database.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DatabaseChoice {
    #[error("no SQL database is declared on this server (it needs {EXECUTE_SQL_NEEDS})")]
    NoneDeclared,
    #[error("sql_database {0:?} is not declared on this server; the declared ones are {1}")]
    Unknown(String, String),
    #[error("several SQL databases are declared ({0}): name the agent's one in sql_database")]
    Ambiguous(String),
}

impl SqlDatabases {
    /// The databases `config` declares (validated: ids unique, URLs readable), each with a
    /// task that reads its tables now and every `schema_refresh_secs`; a task ends when the
    /// registry is dropped.
    pub fn start(config: &SqlConfig) -> Self {
        let refresh = Duration::from_secs(config.schema_refresh_secs);
        let databases: Vec<Arc<SqlDatabase>> = config
            .databases
            .iter()
            .filter_map(|declared| {
                let target = match SqlTarget::parse(declared.url.expose_secret()) {
                    Ok(target) => target,
                    Err(problem) => {
                        // Validation refuses such a URL first; never a panic here.
                        tracing::error!(sql_database = %declared.id, %problem, "sql database left out");
                        return None;
                    }
                };
                Some(Arc::new(SqlDatabase {
                    config: declared.clone(),
                    target,
                    schema: RwLock::new(None),
                    running: Semaphore::new(MAX_CONCURRENT_QUERIES),
                }))
            })
            .collect();
        for database in &databases {
            if database.config.allow_privileged_role {
                tracing::warn!(
                    sql_database = %database.id(),
                    "allow_privileged_role is set: execute_sql may query this database with a \
                     role that reaches the server's files and programs"
                );
            }
            tokio::spawn(keep_schema(Arc::downgrade(database), refresh));
        }
        Self {
            databases: Arc::new(databases),
        }
    }

    /// Whether any database is declared.
    pub fn is_empty(&self) -> bool {
        self.databases.is_empty()
    }

    fn ids(&self) -> String {
        let ids: Vec<&str> = self.databases.iter().map(|d| d.id()).collect();
        ids.join(", ")
    }

    /// The database an agent naming `named` (its `sql_database`) queries: that one, or the
    /// only one declared when it names none.
    pub fn choose(&self, named: Option<&str>) -> Result<Arc<SqlDatabase>, DatabaseChoice> {
        if self.databases.is_empty() {
            return Err(DatabaseChoice::NoneDeclared);
        }
        match named {
            Some(id) => self
                .databases
                .iter()
                .find(|d| d.id() == id)
                .cloned()
                .ok_or_else(|| DatabaseChoice::Unknown(id.to_string(), self.ids())),
            None if self.databases.len() == 1 => Ok(Arc::clone(&self.databases[0])),
            None => Err(DatabaseChoice::Ambiguous(self.ids())),
        }
    }

    /// `execute_sql` over the database `choose` gives, with results capped at `max_bytes`;
    /// `None` when there is none.
    pub fn tool(&self, named: Option<&str>, max_bytes: usize) -> Option<SharedTool> {
        let database = self.choose(named).ok()?;
        Some(Arc::new(ExecuteSql::new(database, max_bytes)))
    }
}

/// Reads a database's tables now and then every `refresh` (sooner after a failure), while the
/// registry holding it lives.
async fn keep_schema(database: Weak<SqlDatabase>, refresh: Duration) {
    loop {
        let Some(strong) = database.upgrade() else {
            return;
        };
        let read = strong.refresh_schema().await;
        drop(strong);
        let wait = if read {
            refresh
        } else {
            refresh.min(SCHEMA_RETRY)
        };
        tokio::time::sleep(wait).await;
    }
}
