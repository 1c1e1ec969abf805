//! `ExecuteSql`, the `Tool` over one declared database: its description names the database,
//! its dialect, the caps and its tables and columns as last read; a call runs the query and
//! gives `{columns, rows, row_count, truncated}`, or an error result carrying the database's
//! own message under a stable code. Its results are never cached: the data changes.

use std::borrow::Cow;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::schema::MAX_SCHEMA_CHARS;
use super::statement::StatementProblem;
use super::{EXECUTE_SQL, QueryError, Refusal, SqlDatabase};
use crate::tools::schema::{add_to_description, set_keyword};
use crate::tools::{ProgressKind, ToolError, ToolFuture, TypedTool};

/// Longest query, in characters: a query a model writes is short; this bounds what is sent to
/// someone else's server.
pub const MAX_QUERY_CHARS: usize = 20_000;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Arguments {
    /// One SQL statement that only reads, e.g. "SELECT name, total FROM orders ORDER BY total
    /// DESC LIMIT 10".
    #[schemars(length(min = 1))]
    query: String,
}

/// `execute_sql` over one database.
pub struct ExecuteSql {
    database: Arc<SqlDatabase>,
    /// Bytes of JSON a result may have (the loop's `agent.max_tool_result_chars`).
    max_bytes: usize,
}

impl ExecuteSql {
    pub fn new(database: Arc<SqlDatabase>, max_bytes: usize) -> Self {
        Self {
            database,
            max_bytes,
        }
    }
}

impl TypedTool for ExecuteSql {
    type Args = Arguments;

    fn name(&self) -> &'static str {
        EXECUTE_SQL
    }

    fn description(&self) -> Cow<'_, str> {
        let database = &self.database;
        let tables = database.schema().unwrap_or_else(|| {
            "(not read yet: list them from the database's catalog, e.g. information_schema.columns \
             or sqlite_master)"
                .into()
        });
        let mut description = format!(
            "Run one read-only SQL query on the {dialect} database \"{id}\" and get \
             {{columns, rows, row_count, truncated}}. One statement per call; writes are refused; \
             at most {rows} rows are returned (truncated: true when rows or long values were \
             left out, so aggregate or filter in SQL); a statement is stopped after {ms} ms. \
             Tables and their columns:\n{tables}",
            dialect = database.target.dialect(),
            id = database.id(),
            rows = database.config.max_rows,
            ms = database.config.timeout_ms,
        );
        // The listing is bounded already; this keeps the whole description so too.
        if description.len() > MAX_SCHEMA_CHARS + 1_000 {
            let mut end = MAX_SCHEMA_CHARS + 1_000;
            while !description.is_char_boundary(end) {
                end -= 1;
            }
            description.truncate(end);
        }
        description.into()
    }

    fn parameters(&self, mut parameters: Value) -> Value {
        set_keyword(
            &mut parameters,
            "/properties/query",
            "maxLength",
            MAX_QUERY_CHARS,
        );
        add_to_description(
            &mut parameters,
            "/properties/query",
            &format!("At most {MAX_QUERY_CHARS} characters."),
        );
        parameters
    }

    fn progress(&self) -> Option<ProgressKind> {
        None
    }

    fn call_message(&self, _args: Option<&Arguments>) -> String {
        format!("Querying the {} database", self.database.id())
    }

    fn call(&self, Arguments { query }: Arguments) -> ToolFuture {
        let database = Arc::clone(&self.database);
        let limits = database.limits(self.max_bytes);
        Box::pin(async move {
            database
                .query(&query, &limits)
                .await
                .map_err(|err| tool_error(database.id(), err))
        })
    }
}

/// The error result of a failed query: the database's own message, a code per kind of
/// refusal, and what the model could do instead.
fn tool_error(database: &str, err: QueryError) -> ToolError {
    match err {
        QueryError::Database { kind, message } => {
            let (code, suggestion) = match kind {
                Refusal::ReadOnly => (
                    "sql_read_only",
                    "This database is read-only for you: query it with SELECT only.",
                ),
                Refusal::Timeout => (
                    "sql_timeout",
                    "Make the query cheaper: filter, aggregate or LIMIT it, or use indexed columns.",
                ),
                Refusal::Syntax => (
                    "sql_syntax_error",
                    "Fix the SQL (one statement per call) and call execute_sql again.",
                ),
                Refusal::TooBig => (
                    "sql_value_too_large",
                    "Select a part of the value (substr, length) instead of all of it.",
                ),
                Refusal::Other => (
                    "sql_error",
                    "Check the table and column names in the tool's description and try again.",
                ),
            };
            ToolError::new(code, message, suggestion)
        }
        QueryError::Statement(problem) => {
            let code = match problem {
                StatementProblem::Empty => "sql_syntax_error",
                StatementProblem::Several => "sql_multiple_statements",
            };
            ToolError::new(
                code,
                problem.to_string(),
                "Send exactly one SQL statement per call.",
            )
        }
        QueryError::Refused(refused) => ToolError::new(
            "sql_refused_function",
            refused.to_string(),
            "Query the database's tables with SELECT only, without that call.",
        ),
        QueryError::Privileged(why) => ToolError::new(
            "sql_privileged_role",
            format!("the database \"{database}\" is not queried: {why}"),
            "Answer without the database and say it is unavailable: the operator must declare \
             a role that may only read.",
        ),
        QueryError::Unavailable(_) => ToolError::new(
            "sql_unavailable",
            format!("the database \"{database}\" cannot be reached now"),
            "Try again later, or answer without the database and say it was unavailable.",
        ),
    }
}
