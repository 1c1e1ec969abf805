//! The `[schedules]` section: how often each process looks for due schedules, how late a
//! firing may start before it counts as missed, how many failures in a row pause a schedule,
//! how many schedules and workflows a user may have — and one test-only switch.

use serde::Deserialize;

/// Schedules' and workflows' settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct SchedulesConfig {
    /// Milliseconds between two looks for due schedules (each a small indexed query): a
    /// schedule fires within this much of its due time.
    pub poll_interval_ms: u64,
    /// Seconds after its due time a firing may still start; a due time older than this when a
    /// server looks (it was down) is missed, and follows the schedule's policy.
    pub missed_grace_secs: u64,
    /// Failures in a row after which a schedule pauses itself, saying why.
    pub max_consecutive_failures: u32,
    /// Schedules one user may have.
    pub max_per_user: u64,
    /// Workflows one user may have.
    pub max_workflows_per_user: u64,
    /// TEST ONLY: accept a sixth, leading seconds field in cron expressions, so a test's
    /// schedule is due within seconds. Never set it in production (a schedule firing every
    /// second is rarely wanted, and five fields is the standard); start-up logs an error-level
    /// line while it is on.
    pub test_only_seconds_field: bool,
}

impl Default for SchedulesConfig {
    fn default() -> Self {
        Self {
            poll_interval_ms: 1_000,
            missed_grace_secs: 60,
            max_consecutive_failures: 3,
            max_per_user: 50,
            max_workflows_per_user: 100,
            test_only_seconds_field: false,
        }
    }
}
