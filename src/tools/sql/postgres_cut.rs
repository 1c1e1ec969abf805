//! Long PostgreSQL values cut in the server, so Colloquy never reads one whole (the driver
//! reads each row whole): once the statement is prepared and its columns' types are known,
//! a query (`SELECT`, `WITH`, `VALUES`, `TABLE`) runs wrapped as
//! `SELECT <each column, cut> FROM (SELECT * FROM (<statement>) … OFFSET 0) AS q(c1, …)`. Text and binary columns travel
//! as their first `MAX_VALUE_CHARS` characters (bytes: half that) with their full length; JSON,
//! arrays and every other type whole when their text is short, else as cut text; fixed-size
//! types as they are. Other statements (`SHOW`, `EXPLAIN`), whose output is small, run as
//! written.

use sea_orm::sqlx::postgres::{PgRow, PgTypeInfo, PgTypeKind, PgValueRef};
use sea_orm::sqlx::{Decode, Postgres, Row, TypeInfo, ValueRef};
use serde_json::Value;

use super::postgres::cell;
use super::statement;
use super::table::MAX_VALUE_CHARS;
use super::value::{self, Cell};

/// Bytes of text up to which a JSON, array or other value travels whole (and is shown as its
/// type, not as text): enough for any value the result would show uncut.
const WHOLE_BYTES: usize = MAX_VALUE_CHARS * 4;

/// How one column travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// As it is: a fixed-size (or small) type, or a statement that is not wrapped.
    Whole,
    /// Its first characters, then its length in characters.
    Text,
    /// Its first bytes, then its length in bytes.
    Bytes,
    /// Itself when its text is at most `WHOLE_BYTES`, then its text's first characters and
    /// length in characters.
    Structured,
}

impl Shape {
    /// How a column of type `info` travels in a wrapped statement.
    pub fn of(info: &PgTypeInfo) -> Self {
        if matches!(info.kind(), PgTypeKind::Enum(_)) {
            return Self::Whole;
        }
        match info.name() {
            "BOOL" | "INT2" | "INT4" | "INT8" | "OID" | "FLOAT4" | "FLOAT8" | "NUMERIC"
            | "MONEY" | "UUID" | "DATE" | "TIME" | "TIMETZ" | "TIMESTAMP" | "TIMESTAMPTZ"
            | "INTERVAL" | "VOID" | "\"CHAR\"" | "CHAR" | "INET" | "CIDR" | "MACADDR" => {
                Self::Whole
            }
            "TEXT" | "VARCHAR" | "BPCHAR" | "NAME" | "XML" | "citext" | "UNKNOWN" => Self::Text,
            "BYTEA" => Self::Bytes,
            _ => Self::Structured,
        }
    }

    /// The values a row carries for a column of this shape.
    fn width(self) -> usize {
        match self {
            Self::Whole => 1,
            Self::Text | Self::Bytes => 2,
            Self::Structured => 3,
        }
    }

    /// The expressions that carry column `name` in the wrapped statement.
    fn select(self, name: &str) -> String {
        let chars = MAX_VALUE_CHARS;
        let bytes = MAX_VALUE_CHARS / 2;
        match self {
            Self::Whole => name.to_string(),
            Self::Text => format!("left({name}::text, {chars}), char_length({name}::text)"),
            Self::Bytes => format!("substring({name} from 1 for {bytes}), octet_length({name})"),
            Self::Structured => format!(
                "CASE WHEN octet_length({name}::text) <= {WHOLE_BYTES} THEN {name} END, \
                 left({name}::text, {chars}), char_length({name}::text)"
            ),
        }
    }
}

/// `sql` wrapped so the server cuts each column as `shapes` say; `None` when it is not a query
/// a subquery can hold, or has no columns (it then runs as written, every column `Whole`).
pub(super) fn wrap(sql: &str, shapes: &[Shape]) -> Option<String> {
    if shapes.is_empty() || !statement::is_query(sql) {
        return None;
    }
    let names: Vec<String> = (1..=shapes.len()).map(|n| format!("c{n}")).collect();
    let selected: Vec<String> = shapes
        .iter()
        .zip(&names)
        .map(|(shape, name)| shape.select(name))
        .collect();
    // The statement on lines of its own, so a trailing `--` comment ends before `)`; `OFFSET 0`
    // keeps the planner from pulling the statement up, which would compute a value once for
    // each expression that reads it.
    Some(format!(
        "SELECT {} FROM (SELECT * FROM (\n{sql}\n) AS statement OFFSET 0) AS q({})",
        selected.join(", "),
        names.join(", ")
    ))
}

/// A row's values as JSON, read as `shapes` say, and whether one was cut.
pub fn cells(row: &PgRow, shapes: &[Shape]) -> (Vec<Value>, bool) {
    let mut cut = false;
    let mut values = Vec::with_capacity(shapes.len());
    let mut at = 0;
    for &shape in shapes {
        let (json, was_cut) = match shape {
            Shape::Whole => raw(row, at).map_or_else(|| value::unreadable("unknown"), cell),
            Shape::Text => start_of_text(row, at),
            Shape::Bytes => start_of_bytes(row, at),
            Shape::Structured => match raw(row, at) {
                Some(whole) if !whole.is_null() => cell(whole),
                _ => start_of_text(row, at + 1),
            },
        };
        at += shape.width();
        cut |= was_cut;
        values.push(json);
    }
    (values, cut)
}

fn raw(row: &PgRow, index: usize) -> Option<PgValueRef<'_>> {
    row.try_get_raw(index).ok()
}

fn decoded<'r, T: Decode<'r, Postgres>>(row: &'r PgRow, index: usize) -> Option<T> {
    let raw = raw(row, index)?;
    if raw.is_null() {
        return None;
    }
    T::decode(raw).ok()
}

/// Text cut in the server (at `at`) and its length in characters (at `at + 1`).
fn start_of_text(row: &PgRow, at: usize) -> Cell {
    match (decoded::<String>(row, at), decoded::<i32>(row, at + 1)) {
        (Some(start), Some(total)) => {
            value::text_start(&start, usize::try_from(total).unwrap_or(0))
        }
        _ => (Value::Null, false),
    }
}

/// Bytes cut in the server (at `at`) and their length (at `at + 1`).
fn start_of_bytes(row: &PgRow, at: usize) -> Cell {
    match (decoded::<Vec<u8>>(row, at), decoded::<i32>(row, at + 1)) {
        (Some(start), Some(total)) => {
            value::bytes_start(&start, usize::try_from(total).unwrap_or(0))
        }
        _ => (Value::Null, false),
    }
}
