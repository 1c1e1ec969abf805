//! A query on PostgreSQL: a connection of its own (closed after the call, so nothing a
//! statement did to the session — a setting, a prepared statement, an advisory lock — outlives
//! it), its role checked first (`privileges`: one that reaches the server's files or programs
//! is refused unless the operator allowed it), a transaction made `READ ONLY` with a
//! `statement_timeout`, and one statement (`statement::single`), refused before it is sent when
//! it would reach outside the transaction (`statement::refused`). The transaction is never
//! committed. A query runs wrapped so the server cuts long values (`postgres_cut`); rows are
//! read one by one until a cap is reached; values are decoded by their type's name (`cell`).

use std::time::Duration;

use futures_util::TryStreamExt;
use sea_orm::sqlx::postgres::{
    PgConnectOptions, PgConnection, PgDatabaseError, PgTypeKind, PgValueFormat, PgValueRef,
    Postgres,
};
use sea_orm::sqlx::{
    self, AssertSqlSafe, Column, ConnectOptions, Connection, Decode, Executor, SqlSafeStr,
    Statement, TypeInfo, ValueRef,
};
use serde_json::Value;

use super::postgres_cut::{self, Shape};
use super::schema::SchemaColumn;
use super::statement::{self, Dialect};
use super::table::{Limits, Table};
use super::value::{self, Cell};
use super::{QueryError, Refusal};

/// Connecting (TCP, TLS, authentication) may take this long; a server that does not answer
/// is reported unreachable well within the tool's own timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long past `statement_timeout` the client waits for the server's answer before giving
/// up on it itself (the server's own cancellation normally comes first, with its message).
const CLIENT_GRACE: Duration = Duration::from_secs(1);

/// Array items a value shows at most.
const MAX_ARRAY_ITEMS: usize = 100;

/// The session's name in `pg_stat_activity`, so an operator sees whose queries these are.
const APPLICATION_NAME: &str = "colloquy-execute-sql";

/// Runs the one statement in `sql` read-only and returns the capped result; refuses it
/// unsent when it would reach outside the transaction, or when the role is privileged and
/// `allow_privileged` is false.
pub(super) async fn query(
    options: &PgConnectOptions,
    sql: &str,
    limits: &Limits,
    allow_privileged: bool,
) -> Result<Value, QueryError> {
    let sql = statement::single(sql, Dialect::Postgres).map_err(QueryError::Statement)?;
    if let Some(refused) = statement::refused(sql) {
        return Err(QueryError::Refused(refused));
    }
    let mut connection = connect(options).await?;
    if !allow_privileged && let Err(err) = check_role(&mut connection).await {
        let _ = tokio::time::timeout(CONNECT_TIMEOUT, connection.close()).await;
        return Err(err);
    }
    let outcome = tokio::time::timeout(
        limits.timeout + CLIENT_GRACE,
        run(&mut connection, sql, limits),
    )
    .await;
    match outcome {
        Ok(result) => {
            // Ends the (uncommitted) transaction with the session.
            let _ = tokio::time::timeout(CONNECT_TIMEOUT, connection.close()).await;
            result
        }
        // The connection is dropped unread: its socket closes, and the server ends the session.
        Err(_) => Err(QueryError::Database {
            kind: Refusal::Timeout,
            message: format!(
                "the database did not answer within {} ms",
                (limits.timeout + CLIENT_GRACE).as_millis()
            ),
        }),
    }
}

async fn connect(options: &PgConnectOptions) -> Result<PgConnection, QueryError> {
    // A model's statements are not Colloquy's: the per-call log line and metrics cover them,
    // and their text (which may hold what a user typed) stays out of the log.
    let options = options
        .clone()
        .application_name(APPLICATION_NAME)
        .disable_statement_logging();
    match tokio::time::timeout(CONNECT_TIMEOUT, PgConnection::connect_with(&options)).await {
        Ok(Ok(connection)) => Ok(connection),
        Ok(Err(err)) => Err(QueryError::Unavailable(err.to_string())),
        Err(_) => Err(QueryError::Unavailable(format!(
            "connecting took longer than {CONNECT_TIMEOUT:?}"
        ))),
    }
}

async fn run(
    connection: &mut PgConnection,
    sql: &str,
    limits: &Limits,
) -> Result<Value, QueryError> {
    let begin = format!(
        "BEGIN; SET TRANSACTION READ ONLY; SET LOCAL statement_timeout = {}",
        limits.timeout.as_millis()
    );
    // Simple protocol, one round trip; the text is ours (a number is all that varies).
    sqlx::raw_sql(AssertSqlSafe(begin))
        .execute(&mut *connection)
        .await
        .map_err(failure)?;
    let prepared = connection
        .prepare(AssertSqlSafe(sql.to_string()).into_sql_str())
        .await
        .map_err(failure)?;
    let columns = prepared
        .columns()
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    let mut table = Table::new(columns, limits);
    let mut shapes: Vec<Shape> = prepared
        .columns()
        .iter()
        .map(|c| Shape::of(c.type_info()))
        .collect();
    let prepared = match postgres_cut::wrap(sql, &shapes) {
        Some(wrapped) => connection
            .prepare(AssertSqlSafe(wrapped).into_sql_str())
            .await
            .map_err(failure)?,
        None => {
            shapes.fill(Shape::Whole);
            prepared
        }
    };
    let mut rows = prepared.query().fetch(&mut *connection);
    while let Some(row) = rows.try_next().await.map_err(failure)? {
        let (values, cut) = postgres_cut::cells(&row, &shapes);
        if !table.push(values, cut) {
            break;
        }
    }
    Ok(table.into_json())
}

/// What the connected role (the session's, and the current one if a default `role` setting
/// changed it) may do past the read-only transaction, by name: empty for a role that may only
/// do what its grants say.
async fn privileges(connection: &mut PgConnection) -> Result<Vec<&'static str>, QueryError> {
    // The session's role too: a statement may `SET ROLE` back to it (`RESET ROLE`, `set_config`).
    let held: (bool, bool, bool, bool, bool) = sqlx::query_as(
        "SELECT bool_or(rolsuper), bool_or(rolbypassrls), \
         bool_or(pg_has_role(oid, 'pg_execute_server_program', 'MEMBER')), \
         bool_or(pg_has_role(oid, 'pg_write_server_files', 'MEMBER')), \
         bool_or(pg_has_role(oid, 'pg_read_server_files', 'MEMBER')) \
         FROM pg_roles WHERE rolname IN (current_user, session_user)",
    )
    .fetch_one(&mut *connection)
    .await
    .map_err(failure)?;
    let named = [
        (held.0, "is a superuser"),
        (held.1, "bypasses row-level security (BYPASSRLS)"),
        (held.2, "is a member of pg_execute_server_program"),
        (held.3, "is a member of pg_write_server_files"),
        (held.4, "is a member of pg_read_server_files"),
    ];
    Ok(named
        .into_iter()
        .filter_map(|(has, name)| has.then_some(name))
        .collect())
}

/// Why the connected role must not be used, as the tool result and the log say it.
fn privileged(held: &[&str]) -> String {
    format!(
        "its declared role {}, which reaches past the read-only transaction (the server's files, \
         programs or every row); the operator must declare a role that may only read, or set \
         allow_privileged_role = true",
        held.join(" and ")
    )
}

/// Refuses a connection whose role is privileged.
async fn check_role(connection: &mut PgConnection) -> Result<(), QueryError> {
    let held = privileges(connection).await?;
    if held.is_empty() {
        Ok(())
    } else {
        Err(QueryError::Privileged(privileged(&held)))
    }
}

/// A database error as the tool result gives it: PostgreSQL's message (with its detail and
/// hint), classified by SQLSTATE; any other failure means the connection broke.
fn failure(err: sqlx::Error) -> QueryError {
    let sqlx::Error::Database(err) = err else {
        return QueryError::Unavailable(err.to_string());
    };
    let kind = match err.code().as_deref() {
        Some("25006") => Refusal::ReadOnly,
        Some("57014") => Refusal::Timeout,
        Some("42601") => Refusal::Syntax,
        _ => Refusal::Other,
    };
    let mut message = err.message().to_string();
    if let Some(postgres) = err.try_downcast_ref::<PgDatabaseError>() {
        if let Some(detail) = postgres.detail() {
            message.push_str(&format!(" (detail: {detail})"));
        }
        if let Some(hint) = postgres.hint() {
            message.push_str(&format!(" (hint: {hint})"));
        }
    }
    QueryError::Database { kind, message }
}

fn decode<'r, T: Decode<'r, Postgres>>(raw: PgValueRef<'r>) -> Option<T> {
    T::decode(raw).ok()
}

fn array<'r, T>(raw: PgValueRef<'r>, each: impl Fn(T) -> Cell) -> Option<Cell>
where
    Vec<Option<T>>: Decode<'r, Postgres>,
{
    let items: Vec<Option<T>> = decode(raw)?;
    let mut cut = items.len() > MAX_ARRAY_ITEMS;
    let mut values = Vec::new();
    for item in items.into_iter().take(MAX_ARRAY_ITEMS) {
        let (json, was_cut) = item.map_or((Value::Null, false), &each);
        cut |= was_cut;
        values.push(json);
    }
    Some((Value::Array(values), cut))
}

/// One value as JSON, by its type's name; a type not read here gets a note saying to cast it.
pub(super) fn cell(raw: PgValueRef<'_>) -> Cell {
    if raw.is_null() {
        return (Value::Null, false);
    }
    let info = raw.type_info().into_owned();
    let name = info.name();
    if raw.format() == PgValueFormat::Text || matches!(info.kind(), PgTypeKind::Enum(_)) {
        // An enum's binary form is its label.
        return raw
            .as_str()
            .map(value::text)
            .unwrap_or_else(|_| value::unreadable(name));
    }
    let number = |n: i64| (Value::from(n), false);
    let text = |s: String| value::text(&s);
    let read = match name {
        "BOOL" => decode::<bool>(raw).map(|b| (Value::Bool(b), false)),
        "INT2" => decode::<i16>(raw).map(|n| number(n.into())),
        "INT4" => decode::<i32>(raw).map(|n| number(n.into())),
        "INT8" => decode::<i64>(raw).map(number),
        "OID" => decode::<sqlx::postgres::types::Oid>(raw).map(|o| number(o.0.into())),
        "FLOAT4" => decode::<f32>(raw).map(|f| value::float(f.into())),
        "FLOAT8" => decode::<f64>(raw).map(value::float),
        "NUMERIC" => raw
            .as_bytes()
            .ok()
            .and_then(value::pg_numeric)
            .map(|written| value::decimal(&written)),
        "TEXT" | "VARCHAR" | "BPCHAR" | "NAME" | "XML" | "citext" | "UNKNOWN" => {
            decode::<String>(raw).map(text)
        }
        "BYTEA" => decode::<Vec<u8>>(raw).map(|b| value::bytes(&b)),
        "UUID" => decode::<uuid::Uuid>(raw).map(|u| (Value::String(u.to_string()), false)),
        "JSON" | "JSONB" => decode::<Value>(raw).map(|json| {
            let written = json.to_string();
            if written.len() > super::table::MAX_VALUE_CHARS {
                value::text(&written)
            } else {
                (json, false)
            }
        }),
        "DATE" => decode::<chrono::NaiveDate>(raw).map(|d| (Value::String(d.to_string()), false)),
        "TIME" => decode::<chrono::NaiveTime>(raw)
            .map(|t| (Value::String(t.format("%H:%M:%S%.f").to_string()), false)),
        "TIMESTAMP" => decode::<chrono::NaiveDateTime>(raw).map(|t| {
            let written = t.format("%Y-%m-%dT%H:%M:%S%.f").to_string();
            (Value::String(written), false)
        }),
        "TIMESTAMPTZ" => decode::<chrono::DateTime<chrono::Utc>>(raw).map(|t| {
            let written = t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true);
            (Value::String(written), false)
        }),
        "INTERVAL" => decode::<sqlx::postgres::types::PgInterval>(raw).map(|i| {
            let seconds = i.microseconds as f64 / 1e6;
            let written = format!("P{}M{}DT{seconds}S", i.months, i.days);
            (Value::String(written), false)
        }),
        "VOID" => Some((Value::Null, false)),
        "BOOL[]" => array::<bool>(raw, |b| (Value::Bool(b), false)),
        "INT2[]" => array::<i16>(raw, |n| number(n.into())),
        "INT4[]" => array::<i32>(raw, |n| number(n.into())),
        "INT8[]" => array::<i64>(raw, number),
        "FLOAT4[]" => array::<f32>(raw, |f| value::float(f.into())),
        "FLOAT8[]" => array::<f64>(raw, value::float),
        "TEXT[]" | "VARCHAR[]" | "BPCHAR[]" | "NAME[]" => array::<String>(raw, text),
        "UUID[]" => array::<uuid::Uuid>(raw, |u| (Value::String(u.to_string()), false)),
        _ => None,
    };
    read.unwrap_or_else(|| value::unreadable(name))
}

/// The tables and columns the connecting role can see (PostgreSQL lists only those it has a
/// privilege on), at most `schema::MAX_COLUMNS`, read-only under `timeout`. A privileged role
/// is refused (`QueryError::Privileged`), or, with `allow_privileged`, warned about: the
/// read-only transaction is then the only wall.
pub(super) async fn schema(
    id: &str,
    options: &PgConnectOptions,
    timeout: Duration,
    allow_privileged: bool,
) -> Result<Vec<SchemaColumn>, QueryError> {
    let read = async {
        let mut connection = connect(options).await?;
        let held = privileges(&mut connection).await?;
        if !held.is_empty() {
            if !allow_privileged {
                let _ = connection.close().await;
                return Err(QueryError::Privileged(privileged(&held)));
            }
            tracing::warn!(
                sql_database = %id,
                privileges = %held.join(", "),
                "an execute_sql database is reached with a privileged role (allow_privileged_role): \
                 the read-only transaction and the refused calls are the only walls"
            );
        }
        sqlx::raw_sql("BEGIN; SET TRANSACTION READ ONLY")
            .execute(&mut connection)
            .await
            .map_err(failure)?;
        let rows: Vec<(String, String, String, String)> = sqlx::query_as(
            // An enum or other user-defined type by its own name, an array by its element's.
            "SELECT table_schema::text, table_name::text, column_name::text, \
             CASE data_type WHEN 'USER-DEFINED' THEN udt_name::text \
             WHEN 'ARRAY' THEN ltrim(udt_name::text, '_') || '[]' ELSE data_type::text END \
             FROM information_schema.columns \
             WHERE table_schema NOT IN ('pg_catalog', 'information_schema') \
             ORDER BY table_schema, table_name, ordinal_position LIMIT $1",
        )
        .bind(super::schema::MAX_COLUMNS as i64)
        .fetch_all(&mut connection)
        .await
        .map_err(failure)?;
        let _ = connection.close().await;
        Ok(rows
            .into_iter()
            .map(|(schema, table, name, data_type)| SchemaColumn {
                table: if schema == "public" {
                    table
                } else {
                    format!("{schema}.{table}")
                },
                name,
                data_type,
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
