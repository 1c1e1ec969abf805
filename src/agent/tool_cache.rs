//! The tool result cache every run shares: results of identical calls (tool name + canonical
//! arguments, `governance::CallKey`), kept for a while.

use std::time::Duration;

use serde_json::Value;

/// Results shared by identical calls (tool name + canonical arguments).
pub type ToolCache = moka::future::Cache<String, Value>;

/// Most entries the tool result cache holds.
pub const TOOL_CACHE_CAPACITY: u64 = 10_000;

pub fn new_tool_cache(ttl: Duration) -> ToolCache {
    moka::future::Cache::builder()
        .max_capacity(TOOL_CACHE_CAPACITY)
        .time_to_live(ttl)
        .build()
}
