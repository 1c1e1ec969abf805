//! A provider's model list and health, learnt from its `/v1/models` and kept a while: the
//! models of a provider that declares none, and whether it answered, for routing, the model
//! picker and `/health/ready`. A check is bounded by `PROBE_TIMEOUT`, so a server that hangs
//! delays nobody long.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::llm::LlmError;
use crate::llm::client::Upstream;

/// Longest a provider's `/v1/models` may take before it counts as down.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// What the last check of a provider found.
#[derive(Default)]
pub(super) struct Listing {
    last: Mutex<Option<Checked>>,
    /// Serialises checks, so concurrent requests ask the server once.
    checking: tokio::sync::Mutex<()>,
}

struct Checked {
    at: Instant,
    /// The models it listed last time it answered (kept while it is down).
    models: Vec<String>,
    /// Why the last check failed.
    error: Option<LlmError>,
}

/// A provider's health as the admin page and `/health/ready` show it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ProviderStatus {
    pub id: String,
    /// `ok`, `unreachable` or `unchecked`.
    pub status: &'static str,
    /// How many models it serves, as far as is known.
    pub models: usize,
    /// Why it is unreachable (for admins only: it may name an internal address).
    #[serde(skip)]
    pub error: Option<String>,
}

impl Listing {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Checked>> {
        // A panic while holding this lock leaves a plain value behind: still usable.
        self.last
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The models it listed when it last answered.
    pub(super) fn models(&self) -> Vec<String> {
        self.lock()
            .as_ref()
            .map(|c| c.models.clone())
            .unwrap_or_default()
    }

    /// Whether its last check succeeded (`true` before any: not known to be down).
    pub(super) fn reachable(&self) -> bool {
        self.lock().as_ref().is_none_or(|c| c.error.is_none())
    }

    /// Why its last check failed, if it did.
    pub(super) fn error(&self) -> Option<LlmError> {
        self.lock().as_ref().and_then(|c| c.error.clone())
    }

    pub(super) fn status(&self, id: &str, models: usize) -> ProviderStatus {
        let last = self.lock();
        let (status, error) = match last.as_ref() {
            None => ("unchecked", None),
            Some(Checked { error: None, .. }) => ("ok", None),
            Some(Checked {
                error: Some(err), ..
            }) => ("unreachable", Some(err.to_string())),
        };
        ProviderStatus {
            id: id.to_string(),
            status,
            models,
            error,
        }
    }

    fn fresh(&self, max_age: Duration) -> bool {
        self.lock()
            .as_ref()
            .is_some_and(|c| c.at.elapsed() < max_age)
    }

    /// Asks `upstream` for its models unless the last answer is younger than `max_age`.
    pub(super) async fn refresh(&self, upstream: &Upstream, max_age: Duration) {
        if self.fresh(max_age) {
            return;
        }
        let _one_at_a_time = self.checking.lock().await;
        if self.fresh(max_age) {
            return;
        }
        let answer = match tokio::time::timeout(PROBE_TIMEOUT, upstream.models()).await {
            Ok(answer) => answer,
            Err(_) => Err(LlmError::Timeout(format!(
                "no model list within {} s",
                PROBE_TIMEOUT.as_secs()
            ))),
        };
        let mut last = self.lock();
        let kept = last.take().map(|c| c.models).unwrap_or_default();
        *last = Some(match answer {
            Ok(list) => Checked {
                at: Instant::now(),
                models: list.data.into_iter().map(|m| m.id).collect(),
                error: None,
            },
            Err(err) => {
                tracing::warn!(%err, "a model server did not list its models");
                Checked {
                    at: Instant::now(),
                    models: kept,
                    error: Some(err),
                }
            }
        });
    }
}
