//! One statement per call. PostgreSQL refuses a second statement itself (a prepared statement
//! holds one command); SQLite's driver would run every statement in the text, so the text is
//! read here as SQLite's tokenizer reads it — string literals, quoted identifiers and comments
//! skipped — and anything but whitespace and comments after the first `;` is refused. Reads
//! the text once, front to back: no recursion, no backtracking.

/// What is wrong with a query's statements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum StatementProblem {
    #[error("the query holds no SQL statement")]
    Empty,
    #[error("the query holds more than one statement; send one statement per call")]
    Several,
}

/// The query's only statement (without its closing `;`), or what is wrong.
pub fn single(sql: &str) -> Result<&str, StatementProblem> {
    let (first, rest) = split_first(sql);
    if !holds_code(first) {
        return Err(StatementProblem::Empty);
    }
    if rest.is_some_and(holds_code) {
        return Err(StatementProblem::Several);
    }
    Ok(first)
}

/// Whether `sql` holds anything but whitespace, comments and `;`s.
pub fn holds_code(sql: &str) -> bool {
    let bytes = sql.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b if b.is_ascii_whitespace() || b == b';' => at += 1,
            b'-' if bytes.get(at + 1) == Some(&b'-') => at = line_end(bytes, at),
            b'/' if bytes.get(at + 1) == Some(&b'*') => at = comment_end(bytes, at),
            _ => return true,
        }
    }
    false
}

/// The text before the first `;` that is code (not in a literal, identifier or comment), and
/// the text after it, if there is such a `;`.
fn split_first(sql: &str) -> (&str, Option<&str>) {
    let bytes = sql.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        at = match bytes[at] {
            b';' => return (&sql[..at], Some(&sql[at + 1..])),
            b'-' if bytes.get(at + 1) == Some(&b'-') => line_end(bytes, at),
            b'/' if bytes.get(at + 1) == Some(&b'*') => comment_end(bytes, at),
            quote @ (b'\'' | b'"' | b'`') => quoted_end(bytes, at, quote),
            b'[' => bracket_end(bytes, at),
            _ => at + 1,
        };
    }
    (sql, None)
}

/// Past the end of the `--` comment starting at `at`.
fn line_end(bytes: &[u8], at: usize) -> usize {
    bytes[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |offset| at + offset + 1)
}

/// Past the end of the `/* */` comment starting at `at` (the end of the text if unclosed).
fn comment_end(bytes: &[u8], at: usize) -> usize {
    bytes[at + 2..]
        .windows(2)
        .position(|pair| pair == b"*/")
        .map_or(bytes.len(), |offset| at + 2 + offset + 2)
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

/// Past the `[identifier]` opened at `at` (SQLite's MS-style quoting; no escapes inside).
fn bracket_end(bytes: &[u8], at: usize) -> usize {
    bytes[at + 1..]
        .iter()
        .position(|&b| b == b']')
        .map_or(bytes.len(), |offset| at + 1 + offset + 1)
}
