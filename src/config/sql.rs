//! The `[sql]` section: the databases `execute_sql` may query, declared here and nowhere else
//! (an API user never names a connection), and the check that none of them is Colloquy's own
//! database. A database's URL holds its credentials: it is a secret, never printed, and no
//! message here repeats it.

use std::path::{Component, Path, PathBuf};
use std::str::FromStr;

use sea_orm::sqlx::postgres::PgConnectOptions;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;

/// The databases `execute_sql` reads, and how often their tables are listed again.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct SqlConfig {
    /// `[[sql.databases]]` entries.
    pub databases: Vec<SqlDatabaseConfig>,
    /// Seconds between readings of each database's tables and columns (the tool's description
    /// lists them): a table made meanwhile is described within this time.
    pub schema_refresh_secs: u64,
}

impl Default for SqlConfig {
    fn default() -> Self {
        Self {
            databases: Vec::new(),
            schema_refresh_secs: 600,
        }
    }
}

/// One database an agent may query.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SqlDatabaseConfig {
    /// Its name (an agent's `sql_database`): a slug of lowercase letters, digits, `-` and `_`.
    pub id: String,
    /// `postgres://user:password@host:port/database` or `sqlite:///path/to/file.db`; secret.
    pub url: SecretString,
    /// Rows a query returns at most; the rest are left out and the result says `truncated`.
    #[serde(default = "default_max_rows")]
    pub max_rows: usize,
    /// Milliseconds a statement may run (PostgreSQL's `statement_timeout`; SQLite is
    /// interrupted) before it is stopped with an error result.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// Query a PostgreSQL database even though its role is privileged (a superuser, `BYPASSRLS`,
    /// or a member of `pg_execute_server_program`, `pg_write_server_files` or
    /// `pg_read_server_files`): such a role reaches past the read-only transaction, so by
    /// default the database is not queried. Warned about at every start.
    #[serde(default)]
    pub allow_privileged_role: bool,
}

fn default_max_rows() -> usize {
    200
}

fn default_timeout_ms() -> u64 {
    5_000
}

/// Longest database id: it names the database in descriptions and logs, not a sentence.
pub const MAX_SQL_DATABASE_ID_CHARS: usize = 32;

/// Most rows `max_rows` may allow: a result must still fit a model's context, and the byte cap
/// (`agent.max_tool_result_chars`) cuts long before this anyway.
pub const MAX_SQL_ROWS: usize = 10_000;

/// Where a declared URL points, as the driver will read it.
#[derive(Debug, Clone)]
pub enum SqlTarget {
    Postgres(Box<PgConnectOptions>),
    /// A SQLite file (its path as written; `same_database` compares canonical paths).
    Sqlite(PathBuf),
}

impl SqlTarget {
    /// Reads a `postgres://`, `postgresql://` or `sqlite:` URL; the error never repeats it.
    pub fn parse(url: &str) -> Result<Self, String> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return PgConnectOptions::from_str(url)
                .map(|options| Self::Postgres(Box::new(options)))
                .map_err(|_| "is not a valid postgres:// URL".to_string());
        }
        let Some(rest) = url.strip_prefix("sqlite:") else {
            return Err("must be a postgres:// or sqlite:// URL".into());
        };
        let rest = rest.strip_prefix("//").unwrap_or(rest);
        let path = rest.split('?').next().unwrap_or_default();
        if path.is_empty() || path == ":memory:" {
            return Err("must name a SQLite file (sqlite:///path/to/file.db)".into());
        }
        Ok(Self::Sqlite(PathBuf::from(path)))
    }

    /// `PostgreSQL` or `SQLite`, for descriptions.
    pub fn dialect(&self) -> &'static str {
        match self {
            Self::Postgres(_) => "PostgreSQL",
            Self::Sqlite(_) => "SQLite",
        }
    }

    /// Whether both name the same database: the same SQLite file (paths canonicalised, or one
    /// file by device and inode: a hard link), or the same PostgreSQL server (loopback names
    /// alike, or the same socket) and database name.
    pub fn same_database(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Sqlite(a), Self::Sqlite(b)) => canonical(a) == canonical(b) || same_file(a, b),
            (Self::Postgres(a), Self::Postgres(b)) => {
                let server = match (a.get_socket(), b.get_socket()) {
                    (Some(a_socket), Some(b_socket)) => canonical(a_socket) == canonical(b_socket),
                    (None, None) => same_host(a.get_host(), b.get_host()),
                    _ => false,
                };
                // Without a database name, PostgreSQL connects to the user's namesake.
                let name =
                    |o: &PgConnectOptions| o.get_database().unwrap_or(o.get_username()).to_string();
                server && a.get_port() == b.get_port() && name(a) == name(b)
            }
            _ => false,
        }
    }
}

/// Whether both paths reach one existing file, by its device and inode (so a hard link is
/// caught, which no path comparison sees).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

fn same_host(a: &str, b: &str) -> bool {
    let loopback = |host: &str| {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        host.eq_ignore_ascii_case("localhost")
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    };
    a.eq_ignore_ascii_case(b) || (loopback(a) && loopback(b))
}

/// `path` with symbolic links resolved as far as it exists (a database not made yet is compared
/// by its directory), `.` and `..` taken out of the rest.
fn canonical(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(resolved) = existing.canonicalize() {
            let mut full = resolved;
            for part in rest.iter().rev() {
                full.push(part);
            }
            return full;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => break,
        }
    }
    let mut lexical = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::ParentDir => {
                lexical.pop();
            }
            Component::CurDir => {}
            other => lexical.push(other),
        }
    }
    lexical
}

impl SqlConfig {
    /// What is wrong with these databases, if anything: ids that are not unique slugs, URLs
    /// that are neither PostgreSQL nor a SQLite file, limits out of range, a timeout the tool
    /// timeout (`tool_timeout_secs`) would cut first, or a URL naming Colloquy's own database
    /// (`own_url`).
    pub fn problem(&self, own_url: &str, tool_timeout_secs: u64) -> Option<String> {
        if self.schema_refresh_secs == 0 {
            return Some("sql.schema_refresh_secs must be at least 1".into());
        }
        let own = SqlTarget::parse(own_url).ok();
        let mut seen = std::collections::BTreeSet::new();
        for database in &self.databases {
            let id = &database.id;
            let slug = !id.is_empty()
                && id.chars().count() <= MAX_SQL_DATABASE_ID_CHARS
                && id
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
            if !slug {
                return Some(format!(
                    "sql database id {id:?} must be 1 to {MAX_SQL_DATABASE_ID_CHARS} lowercase \
                     letters, digits, '-' or '_'"
                ));
            }
            if !seen.insert(id.as_str()) {
                return Some(format!("sql database id {id:?} is declared twice"));
            }
            let target = match SqlTarget::parse(database.url.expose_secret()) {
                Ok(target) => target,
                Err(problem) => return Some(format!("sql database {id:?}: url {problem}")),
            };
            if own.as_ref().is_some_and(|own| own.same_database(&target)) {
                return Some(format!(
                    "sql database {id:?}: its url points at Colloquy's own database, which \
                     execute_sql may never read"
                ));
            }
            if database.max_rows == 0 || database.max_rows > MAX_SQL_ROWS {
                return Some(format!(
                    "sql database {id:?}: max_rows must be between 1 and {MAX_SQL_ROWS}"
                ));
            }
            if database.timeout_ms == 0 || database.timeout_ms >= tool_timeout_secs * 1000 {
                return Some(format!(
                    "sql database {id:?}: timeout_ms must be at least 1 and below \
                     agent.tool_timeout_secs ({tool_timeout_secs} s), or the call is cut off \
                     before the database can say why"
                ));
            }
        }
        None
    }
}

#[cfg(test)]
#[path = "sql_tests.rs"]
mod tests;
