//! The `[cluster]` section: how processes sharing one PostgreSQL find each other and how long
//! a chat's owner keeps it without renewing. It matters only with a PostgreSQL URL; SQLite is
//! one process.

use serde::Deserialize;

/// Several processes on one PostgreSQL.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct ClusterConfig {
    /// The base URL the other processes reach this one at (`http://10.0.0.5:8080`): requests
    /// for the chats it owns are forwarded there. Defaults to `http://{bind}` (with a bind to
    /// every interface, the loopback address: set it whenever processes run on several hosts).
    pub advertise_url: Option<String>,
    /// Seconds a lease lasts without renewal: how long the chats of a process that died wait
    /// before another takes them over. Renewed every third of it.
    pub lease_secs: u64,
    /// Seconds a forwarded request may take to connect to its owner before the client is told
    /// to retry (a 503 with `Retry-After`).
    pub forward_connect_timeout_secs: u64,
    /// Seconds a forwarded request waits for its owner to start answering (the headers; a
    /// stream then runs as long as it runs) before it asks whether the owner is still alive: if
    /// its process lease has lapsed (stalled or dead), the client gets 503
    /// `chat_owner_unresponsive` with `Retry-After`; a live owner is waited for again (a long
    /// non-streamed answer is not cut off). Default: `lease_secs` + 5.
    pub forward_timeout_secs: Option<u64>,
    /// Days the record of each change of a lease's owner (`lease_handovers`) is kept before the
    /// hourly prune deletes it (lease rows themselves go an hour after they lapse).
    pub handover_retention_days: u64,
}

impl ClusterConfig {
    /// `forward_timeout_secs`, or its default.
    pub fn forward_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(
            self.forward_timeout_secs
                .unwrap_or(self.lease_secs.saturating_add(5)),
        )
    }
}

impl Default for ClusterConfig {
    fn default() -> Self {
        Self {
            advertise_url: None,
            lease_secs: 10,
            forward_connect_timeout_secs: 2,
            forward_timeout_secs: None,
            handover_retention_days: 7,
        }
    }
}
