//! A query on a SQLite file: a connection of its own for each call (so a `PRAGMA` a statement
//! runs never reaches the next call), opened read-only with `PRAGMA query_only`, guarded
//! (`sqlite_guard`: no `ATTACH`, `VACUUM INTO` or extension, no value larger than the result
//! may hold), one statement only (`statement::single`: the driver would run every statement in
//! the text), and a progress handler that interrupts the statement at its deadline, as
//! PostgreSQL's `statement_timeout` would.

use std::path::Path;
use std::time::{Duration, Instant};

use futures_util::TryStreamExt;
use sea_orm::sqlx::sqlite::{SqliteConnectOptions, SqliteConnection, SqliteValueRef};
use sea_orm::sqlx::{
    self, AssertSqlSafe, Column, ConnectOptions, Connection, Decode, Executor, Row, SqlSafeStr,
    Sqlite, Statement, TypeInfo, ValueRef,
};
use serde_json::Value;

use super::schema::SchemaColumn;
use super::sqlite_guard;
use super::statement::{self, Dialect};
use super::table::{Limits, Table};
use super::value::{self, Cell};
use super::{QueryError, Refusal};

/// SQLite virtual-machine steps between two looks at the clock: often enough to stop within
/// a millisecond or so, rarely enough to cost nothing measurable.
const STEPS_PER_CHECK: i32 = 1_000;

/// SQLite's primary result codes the tool result tells apart (the low byte of the extended
/// code the driver reports).
const SQLITE_READONLY: i64 = 8;
const SQLITE_INTERRUPT: i64 = 9;
const SQLITE_TOOBIG: i64 = 18;
const SQLITE_AUTH: i64 = 23;

/// Runs the one statement in `sql` read-only and returns the capped result.
pub(super) async fn query(path: &Path, sql: &str, limits: &Limits) -> Result<Value, QueryError> {
    let sql = statement::single(sql, Dialect::Sqlite).map_err(QueryError::Statement)?;
    let mut connection = connect(path, limits.timeout).await?;
    let deadline = Instant::now() + limits.timeout;
    let mut handle = connection
        .lock_handle()
        .await
        .map_err(|err| QueryError::Unavailable(err.to_string()))?;
    handle.set_progress_handler(STEPS_PER_CHECK, move || Instant::now() < deadline);
    sqlite_guard::guard(
        handle.as_raw_handle(),
        sqlite_guard::length_cap(limits.max_bytes),
    );
    drop(handle);
    let result = run(&mut connection, sql, limits).await;
    let _ = connection.close().await;
    result
}

async fn connect(path: &Path, busy: Duration) -> Result<SqliteConnection, QueryError> {
    SqliteConnectOptions::new()
        .filename(path)
        .read_only(true)
        .create_if_missing(false)
        .pragma("query_only", "ON")
        .busy_timeout(busy)
        // A model's statements stay out of the log, as on PostgreSQL.
        .disable_statement_logging()
        .connect()
        .await
        .map_err(|err| QueryError::Unavailable(err.to_string()))
}

async fn run(
    connection: &mut SqliteConnection,
    sql: &str,
    limits: &Limits,
) -> Result<Value, QueryError> {
    let prepared = connection
        .prepare(AssertSqlSafe(sql.to_string()).into_sql_str())
        .await
        .map_err(|err| failure(err, limits))?;
    let columns = prepared
        .columns()
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    let mut table = Table::new(columns, limits);
    let mut rows = prepared.query().fetch(&mut *connection);
    while let Some(row) = rows.try_next().await.map_err(|err| failure(err, limits))? {
        let mut cut = false;
        let mut values = Vec::with_capacity(row.len());
        for index in 0..row.len() {
            let (json, was_cut) = match row.try_get_raw(index) {
                Ok(raw) => cell(raw),
                Err(_) => value::unreadable("unknown"),
            };
            cut |= was_cut;
            values.push(json);
        }
        if !table.push(values, cut) {
            break;
        }
    }
    Ok(table.into_json())
}

/// A database error as the tool result gives it: SQLite's message, classified by its result
/// code (an interruption is the deadline); any other failure means the connection broke.
fn failure(err: sqlx::Error, limits: &Limits) -> QueryError {
    let sqlx::Error::Database(err) = err else {
        return QueryError::Unavailable(err.to_string());
    };
    let primary = err
        .code()
        .and_then(|code| code.parse::<i64>().ok())
        .map(|code| code & 0xff);
    let message = err.message().to_string();
    let (kind, message) = match primary {
        Some(SQLITE_READONLY) => (Refusal::ReadOnly, message),
        Some(SQLITE_AUTH) => (
            Refusal::ReadOnly,
            format!("{message} (ATTACH, VACUUM and load_extension are refused: they open files)"),
        ),
        Some(SQLITE_TOOBIG) => (
            Refusal::TooBig,
            format!(
                "{message}: a value would pass the {} bytes a result may hold",
                sqlite_guard::length_cap(limits.max_bytes)
            ),
        ),
        Some(SQLITE_INTERRUPT) => (
            Refusal::Timeout,
            format!(
                "{message} (the statement ran past its {} ms)",
                limits.timeout.as_millis()
            ),
        ),
        _ if message.contains("syntax error") || message.contains("incomplete input") => {
            (Refusal::Syntax, message)
        }
        _ => (Refusal::Other, message),
    };
    QueryError::Database { kind, message }
}

fn decode<'r, T: Decode<'r, Sqlite>>(raw: SqliteValueRef<'r>) -> Option<T> {
    T::decode(raw).ok()
}

/// One value as JSON, by its storage class (SQLite types values, not columns).
pub(super) fn cell(raw: SqliteValueRef<'_>) -> Cell {
    if raw.is_null() {
        return (Value::Null, false);
    }
    let info = raw.type_info().into_owned();
    let read = match info.name() {
        "INTEGER" => decode::<i64>(raw).map(|n| (Value::from(n), false)),
        "REAL" => decode::<f64>(raw).map(value::float),
        "TEXT" => decode::<String>(raw).map(|s| value::text(&s)),
        "BLOB" => decode::<Vec<u8>>(raw).map(|b| value::bytes(&b)),
        _ => None,
    };
    read.unwrap_or_else(|| value::unreadable(info.name()))
}

/// The tables and views with their columns, at most `schema::MAX_COLUMNS`, read under
/// `timeout`.
pub(super) async fn schema(
    path: &Path,
    timeout: Duration,
) -> Result<Vec<SchemaColumn>, QueryError> {
    let read = async {
        let mut connection = connect(path, timeout).await?;
        let rows: Vec<(String, String, String)> = sqlx::query_as(
            "SELECT m.name, p.name, p.type FROM sqlite_master AS m \
             JOIN pragma_table_info(m.name) AS p \
             WHERE m.type IN ('table', 'view') AND m.name NOT LIKE 'sqlite_%' \
             ORDER BY m.name, p.cid LIMIT ?",
        )
        .bind(super::schema::MAX_COLUMNS as i64)
        .fetch_all(&mut connection)
        .await
        .map_err(|err| QueryError::Unavailable(err.to_string()))?;
        let _ = connection.close().await;
        Ok(rows
            .into_iter()
            .map(|(table, name, data_type)| SchemaColumn {
                table,
                name,
                data_type: if data_type.is_empty() {
                    "any".into()
                } else {
                    data_type
                },
            })
            .collect())
    };
    tokio::time::timeout(timeout, read)
        .await
        .unwrap_or_else(|_| {
            Err(QueryError::Unavailable(
                "reading the tables timed out".into(),
            ))
        })
}
