//! A query's result as the model gets it, `{columns, rows, row_count, truncated}`, built row by
//! row under the caps: at most `max_rows` rows, at most `max_bytes` of JSON in all (so the
//! loop's truncation never cuts a result mid-row), each value at most `MAX_VALUE_CHARS`. What
//! a cap leaves out sets `truncated`.

use std::time::Duration;

use serde_json::{Value, json};

/// A value's characters (text) or bytes (binary) kept at most: one long document in a column
/// must not crowd out every other row.
pub const MAX_VALUE_CHARS: usize = 2_000;

/// What the result's envelope (`{"columns":…,"rows":[],"row_count":N,"truncated":false}`
/// around the columns and rows) takes, counted against `max_bytes` from the start.
const ENVELOPE_BYTES: usize = 64;

/// The caps of one call.
#[derive(Debug, Clone)]
pub struct Limits {
    pub max_rows: usize,
    pub max_bytes: usize,
    /// How long the statement may run.
    pub timeout: Duration,
}

/// A result being built.
pub struct Table {
    columns: Vec<String>,
    rows: Vec<Value>,
    bytes: usize,
    max_rows: usize,
    max_bytes: usize,
    truncated: bool,
}

impl Table {
    pub fn new(columns: Vec<String>, limits: &Limits) -> Self {
        let bytes = ENVELOPE_BYTES + json!(columns).to_string().len();
        Self {
            columns,
            rows: Vec::new(),
            bytes,
            max_rows: limits.max_rows,
            max_bytes: limits.max_bytes,
            truncated: false,
        }
    }

    /// Adds a row (its values already capped: `cut` says whether one was); false when the
    /// result is full, so the caller stops reading.
    pub fn push(&mut self, values: Vec<Value>, cut: bool) -> bool {
        if self.rows.len() >= self.max_rows {
            self.truncated = true;
            return false;
        }
        let row = Value::Array(values);
        // The row, and the comma before it.
        let size = row.to_string().len() + 1;
        if self.bytes + size > self.max_bytes {
            self.truncated = true;
            return false;
        }
        self.bytes += size;
        self.truncated |= cut;
        self.rows.push(row);
        true
    }

    pub fn into_json(self) -> Value {
        json!({
            "columns": self.columns,
            "row_count": self.rows.len(),
            "rows": self.rows,
            "truncated": self.truncated,
        })
    }
}
