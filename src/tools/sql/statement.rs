//! What a query's text holds, read as the database's own tokenizer reads it — string literals,
//! quoted identifiers and comments told apart from code — once, front to back, with no
//! recursion or backtracking. One statement per call (`single`): anything but whitespace and
//! comments after the first `;` is refused. On PostgreSQL, calls that reach outside the
//! read-only transaction (`refused`: `COPY`, `dblink*`, large objects, other sessions, the
//! server's files and configuration) are refused before the text is sent.

/// Which tokenizer reads the text: SQLite's (`'…'`, `"…"`, `` `…` `` and `[…]`, flat
/// comments) or PostgreSQL's (`E'…'` with backslash escapes, `$tag$…$tag$`, `U&"…"`, nested
/// comments).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// What is wrong with a query's statements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum StatementProblem {
    #[error("the query holds no SQL statement")]
    Empty,
    #[error("the query holds more than one statement; send one statement per call")]
    Several,
}

/// Functions (by name, or by a prefix ending in `*`) that act outside the read-only
/// transaction: another connection (`dblink`), the server's files (large objects,
/// `pg_read_file`, directory listings), other sessions, the server's configuration.
const REFUSED_FUNCTIONS: &[&str] = &[
    "dblink*",
    "lo_*",
    "loread",
    "lowrite",
    "pg_terminate_backend",
    "pg_cancel_backend",
    "pg_reload_conf",
    "pg_rotate_logfile",
    "pg_read_file",
    "pg_read_binary_file",
    "pg_ls_*",
    "pg_stat_file",
    "pg_file_*",
    // These run SQL given as text, which this check reads as a literal.
    "query_to_xml*",
    "cursor_to_xml*",
    "ts_stat",
    "ts_rewrite",
];

/// Statements (by their first word) refused whole: `COPY` reads and writes the server's files
/// and runs programs; `DO` runs code given as a literal, which this check does not read.
const REFUSED_STATEMENTS: &[&str] = &["copy", "do"];

/// A piece of code, as the tokenizer yields it (whitespace and comments are skipped).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// An unquoted word (keyword or identifier), lowercased as PostgreSQL folds it.
    Word(String),
    /// A quoted identifier, unescaped, its case kept.
    Quoted(String),
    /// A `U&"…"` identifier holding an escape: its name is not read here.
    EscapedName,
    /// A string literal (any spelling).
    Literal,
    Semicolon,
    /// Any other character of code: an operator, a parenthesis, a digit.
    Symbol(u8),
}

/// Why a statement is refused before it reaches PostgreSQL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// A call of a function in `REFUSED_FUNCTIONS`.
    #[error(
        "the function {0} is refused: it reaches outside the read-only transaction (other \
         connections, the server's files or other sessions)"
    )]
    Function(String),
    /// A statement in `REFUSED_STATEMENTS`, by its first word in capitals.
    #[error(
        "{0} is refused: it reaches the server's files and programs, or runs code given as \
         text; use SELECT"
    )]
    Statement(String),
    /// A function named through `U&"…"` escapes, which this check does not decode.
    #[error("a function named with U&\"…\" escapes is refused: write its name plainly")]
    EscapedName,
}

/// The query's only statement (without its closing `;`), or what is wrong.
pub fn single(sql: &str, dialect: Dialect) -> Result<&str, StatementProblem> {
    let (first, rest) = split_first(sql, dialect);
    if !holds_code(first, dialect) {
        return Err(StatementProblem::Empty);
    }
    if rest.is_some_and(|rest| holds_code(rest, dialect)) {
        return Err(StatementProblem::Several);
    }
    Ok(first)
}

/// Whether `sql` holds anything but whitespace, comments and `;`s.
pub fn holds_code(sql: &str, dialect: Dialect) -> bool {
    Tokens::new(sql, dialect).any(|(token, _)| token != Token::Semicolon)
}

/// The text before the first `;` that is code, and the text after it, if there is one.
fn split_first(sql: &str, dialect: Dialect) -> (&str, Option<&str>) {
    match Tokens::new(sql, dialect).find(|(token, _)| *token == Token::Semicolon) {
        Some((_, at)) => (&sql[..at], Some(&sql[at + 1..])),
        None => (sql, None),
    }
}

/// Why PostgreSQL must not see `sql`, if it must not: a statement in `REFUSED_STATEMENTS`, or
/// a call of a function in `REFUSED_FUNCTIONS` — by its plain, quoted or schema-qualified name,
/// in any case.
pub fn refused(sql: &str) -> Option<Refused> {
    let mut previous: Option<Token> = None;
    for (index, (token, _)) in Tokens::new(sql, Dialect::Postgres).enumerate() {
        if index == 0
            && let Token::Word(word) = &token
            && REFUSED_STATEMENTS.contains(&word.as_str())
        {
            return Some(Refused::Statement(word.to_uppercase()));
        }
        if token == Token::Symbol(b'(') {
            match previous.take() {
                Some(Token::Word(name) | Token::Quoted(name)) if is_refused(&name) => {
                    return Some(Refused::Function(name));
                }
                Some(Token::EscapedName) => return Some(Refused::EscapedName),
                _ => {}
            }
        }
        previous = Some(token);
    }
    None
}

/// Whether the statement is a query PostgreSQL can read as a subquery (`SELECT`, `WITH`,
/// `VALUES` or `TABLE`, perhaps in parentheses), rather than `SHOW`, `EXPLAIN` and the like.
pub fn is_query(sql: &str) -> bool {
    let first =
        Tokens::new(sql, Dialect::Postgres).find(|(token, _)| *token != Token::Symbol(b'('));
    matches!(first, Some((Token::Word(word), _)) if matches!(word.as_str(), "select" | "with" | "values" | "table"))
}

/// Whether `name` (case-insensitively) is one of `REFUSED_FUNCTIONS`.
fn is_refused(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    REFUSED_FUNCTIONS
        .iter()
        .any(|refused| match refused.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == *refused,
        })
}

/// The tokens of a text, each with the byte offset it starts at.
struct Tokens<'a> {
    sql: &'a str,
    bytes: &'a [u8],
    at: usize,
    dialect: Dialect,
}

impl<'a> Tokens<'a> {
    fn new(sql: &'a str, dialect: Dialect) -> Self {
        Self {
            sql,
            bytes: sql.as_bytes(),
            at: 0,
            dialect,
        }
    }

    /// The next token from `at` on, and where the one after it may start.
    fn read(&self, at: usize) -> (Token, usize) {
        let bytes = self.bytes;
        let next = bytes.get(at + 1).copied();
        let postgres = self.dialect == Dialect::Postgres;
        match bytes[at] {
            b';' => (Token::Semicolon, at + 1),
            b'\'' => (Token::Literal, quoted_end(bytes, at, b'\'')),
            b'"' => {
                let end = quoted_end(bytes, at, b'"');
                (Token::Quoted(unquote(&self.sql[at..end])), end)
            }
            b'`' if !postgres => {
                let end = quoted_end(bytes, at, b'`');
                (Token::Quoted(unquote(&self.sql[at..end])), end)
            }
            b'[' if !postgres => (Token::Quoted(String::new()), bracket_end(bytes, at)),
            b'e' | b'E' if postgres && next == Some(b'\'') => {
                (Token::Literal, escaped_end(bytes, at + 1))
            }
            b'u' | b'U' if postgres && next == Some(b'&') => self.unicode(at),
            b'$' if postgres => match dollar_tag(bytes, at) {
                Some(tag) => (Token::Literal, dollar_end(bytes, at, tag)),
                None => (Token::Symbol(b'$'), at + 1),
            },
            b if b.is_ascii_alphabetic() || b == b'_' || b >= 0x80 => {
                let end = word_end(bytes, at);
                (Token::Word(self.sql[at..end].to_lowercase()), end)
            }
            b => (Token::Symbol(b), at + 1),
        }
    }

    /// A `U&'…'` literal or `U&"…"` identifier at `at` (a bare `U` otherwise).
    fn unicode(&self, at: usize) -> (Token, usize) {
        match self.bytes.get(at + 2) {
            Some(b'\'') => (Token::Literal, quoted_end(self.bytes, at + 2, b'\'')),
            Some(b'"') => {
                let end = quoted_end(self.bytes, at + 2, b'"');
                let name = unquote(&self.sql[at + 2..end]);
                if name.contains('\\') {
                    (Token::EscapedName, end)
                } else {
                    (Token::Quoted(name), end)
                }
            }
            _ => {
                let end = word_end(self.bytes, at);
                (Token::Word(self.sql[at..end].to_lowercase()), end)
            }
        }
    }

    /// Past the whitespace and comments from `at` on.
    fn skip_blank(&self, mut at: usize) -> usize {
        let bytes = self.bytes;
        while at < bytes.len() {
            at = match bytes[at] {
                b if b.is_ascii_whitespace() => at + 1,
                b'-' if bytes.get(at + 1) == Some(&b'-') => line_end(bytes, at),
                b'/' if bytes.get(at + 1) == Some(&b'*') => {
                    comment_end(bytes, at, self.dialect == Dialect::Postgres)
                }
                _ => return at,
            };
        }
        at
    }
}

impl Iterator for Tokens<'_> {
    type Item = (Token, usize);

    fn next(&mut self) -> Option<Self::Item> {
        let start = self.skip_blank(self.at);
        if start >= self.bytes.len() {
            self.at = start;
            return None;
        }
        let (token, end) = self.read(start);
        self.at = end;
        Some((token, start))
    }
}

/// A quoted name's text: the quotes taken off, a doubled quote made one.
fn unquote(quoted: &str) -> String {
    let mut chars = quoted.chars();
    let Some(quote) = chars.next() else {
        return String::new();
    };
    let inner = chars.as_str();
    let inner = inner.strip_suffix(quote).unwrap_or(inner);
    let doubled: String = [quote, quote].iter().collect();
    inner.replace(&doubled, &quote.to_string())
}

/// Past the end of the word starting at `at` (letters, digits, `_`, `$`, and non-ASCII).
fn word_end(bytes: &[u8], at: usize) -> usize {
    bytes[at..]
        .iter()
        .position(|&b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80))
        .map_or(bytes.len(), |offset| at + offset)
}

/// Past the end of the `--` comment starting at `at`.
fn line_end(bytes: &[u8], at: usize) -> usize {
    bytes[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |offset| at + offset + 1)
}

/// Past the end of the `/* */` comment starting at `at` (the end of the text if unclosed);
/// `nested` (PostgreSQL) counts inner `/*` so each needs its own `*/`.
fn comment_end(bytes: &[u8], at: usize, nested: bool) -> usize {
    let mut depth = 0usize;
    let mut next = at;
    while next + 1 < bytes.len() {
        match (bytes[next], bytes[next + 1]) {
            (b'/', b'*') if nested || depth == 0 => {
                depth += 1;
                next += 2;
            }
            (b'*', b'/') => {
                depth -= 1;
                next += 2;
                if depth == 0 {
                    return next;
                }
            }
            _ => next += 1,
        }
    }
    bytes.len()
}

/// Past the literal or identifier opened by `quote` at `at`; a doubled quote is one quote
/// character inside it, as SQL writes it.
fn quoted_end(bytes: &[u8], at: usize, quote: u8) -> usize {
    let mut next = at + 1;
    while next < bytes.len() {
        if bytes[next] == quote {
            if bytes.get(next + 1) == Some(&quote) {
                next += 2;
                continue;
            }
            return next + 1;
        }
        next += 1;
    }
    bytes.len()
}

/// Past PostgreSQL's `E'…'` literal whose quote is at `at`: a backslash escapes the next
/// character, and a doubled quote is one quote.
fn escaped_end(bytes: &[u8], at: usize) -> usize {
    let mut next = at + 1;
    while next < bytes.len() {
        match bytes[next] {
            b'\\' => next += 2,
            b'\'' if bytes.get(next + 1) == Some(&b'\'') => next += 2,
            b'\'' => return next + 1,
            _ => next += 1,
        }
    }
    bytes.len()
}

/// The `$tag$` opening a dollar-quoted literal at `at`, if one does (a `$1` parameter or a
/// `$` inside a word does not).
fn dollar_tag(bytes: &[u8], at: usize) -> Option<&[u8]> {
    let close = bytes[at + 1..].iter().position(|&b| b == b'$')? + at + 1;
    let tag = &bytes[at + 1..close];
    let starts_well = tag
        .first()
        .is_none_or(|&b| b.is_ascii_alphabetic() || b == b'_' || b >= 0x80);
    let rest_well = tag
        .iter()
        .all(|&b| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80);
    (starts_well && rest_well).then_some(&bytes[at..=close])
}

/// Past the literal opened by `tag` (`$…$`, delimiters included) at `at`: it ends at the next
/// `tag`.
fn dollar_end(bytes: &[u8], at: usize, tag: &[u8]) -> usize {
    let body = at + tag.len();
    bytes[body..]
        .windows(tag.len())
        .position(|window| window == tag)
        .map_or(bytes.len(), |offset| body + offset + tag.len())
}

/// Past the `[identifier]` opened at `at` (SQLite's MS-style quoting; no escapes inside).
fn bracket_end(bytes: &[u8], at: usize) -> usize {
    bytes[at + 1..]
        .iter()
        .position(|&b| b == b']')
        .map_or(bytes.len(), |offset| at + 1 + offset + 1)
}

#[cfg(test)]
#[path = "statement_tests.rs"]
mod tests;
