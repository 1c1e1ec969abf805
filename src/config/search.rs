//! The `[search]` section: search inside chats (`chat::search`).

use serde::Deserialize;

/// How the chat search index keeps up with the database.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct SearchConfig {
    /// Milliseconds between two looks in the database for chats changed that this process
    /// was not told of (another process's, or a report dropped under load): a search on this
    /// process finds another's messages within about this long.
    pub catch_up_interval_ms: u64,
}

impl Default for SearchConfig {
    fn default() -> Self {
        Self {
            catch_up_interval_ms: 2_000,
        }
    }
}
