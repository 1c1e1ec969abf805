//! `MiniLmError` (what could not be loaded, written or run, and where), the `Context` helper
//! that prefixes a cause with what was being done, and the `fail!`/`bail!` macros.

/// Why the model could not be loaded, written or run; the message says what and where.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct MiniLmError(pub(super) String);

pub(super) type Result<T, E = MiniLmError> = std::result::Result<T, E>;

impl From<candle_core::Error> for MiniLmError {
    fn from(err: candle_core::Error) -> Self {
        Self(err.to_string())
    }
}

impl From<serde_json::Error> for MiniLmError {
    fn from(err: serde_json::Error) -> Self {
        Self(err.to_string())
    }
}

impl From<std::io::Error> for MiniLmError {
    fn from(err: std::io::Error) -> Self {
        Self(err.to_string())
    }
}

/// A failure's cause, prefixed with what was being done.
pub(super) trait Context<T> {
    fn with_context(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E: std::fmt::Display> Context<T> for std::result::Result<T, E> {
    fn with_context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|err| MiniLmError(format!("{}: {err}", what())))
    }
}

/// A `MiniLmError` with a formatted message.
macro_rules! fail {
    ($($arg:tt)*) => { MiniLmError(format!($($arg)*)) };
}

/// Returns a `MiniLmError` with a formatted message.
macro_rules! bail {
    ($($arg:tt)*) => { return Err(fail!($($arg)*)) };
}
