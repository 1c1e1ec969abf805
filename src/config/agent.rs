//! The sections that govern runs of the agentic loop: `[agent]` (iterations, tool timeouts and
//! caching, loop detection, budgets, the system prompt, the `ContextStrategy`), `[deep_think]`
//! and `[ask_user]`.

use serde::Deserialize;

/// Governance of the agentic loop (docs/spec.md#the-agentic-loop). "spec": the value given
/// there.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct AgentConfig {
    /// Tool-call rounds per request when the request says nothing (spec: 5).
    pub max_iterations: u32,
    /// The most rounds a request's `max_iterations` may ask for (spec: 8).
    pub max_iterations_ceiling: u32,
    /// Seconds one tool call may run before it is cancelled and reported as an error (spec: 15).
    pub tool_timeout_secs: u64,
    /// Seconds an identical call (name + canonical arguments) is served from cache (spec: 5 min).
    pub tool_cache_ttl_secs: u64,
    /// How many recent calls loop detection remembers (spec: 10).
    pub loop_detection_window: usize,
    /// How often the same call may run within that window (spec: 2).
    pub max_identical_calls: usize,
    /// Tool results longer than this many characters are truncated with a marker (spec:
    /// 10,000).
    pub max_tool_result_chars: usize,
    /// Wall-clock budget of one run in seconds, model calls and tools included.
    pub run_time_budget_secs: u64,
    /// Seconds a finished run's event log stays available for re-attaching clients.
    pub run_log_retention_secs: u64,
    /// Agents one user may have, their default agent included (200: far more than anyone
    /// keeps, few enough that one user's list stays one page).
    pub max_agents_per_user: u64,
    /// Seconds a chat may sit idle before its actor is passivated (stopped; state stays in the DB).
    pub chat_idle_secs: u64,
    /// System prompt sent first in every chat; `None` sends none.
    pub system_prompt: Option<String>,
    /// What a chat that sets none does with history that outgrows the model's context.
    pub context_strategy: ContextStrategy,
}

/// What happens to the oldest turns of a chat whose history outgrows the model's context.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ContextStrategy {
    /// They are left out of the request.
    #[default]
    Drop,
    /// The model summarises them, and the summary goes in their place.
    Summarize,
}

impl ContextStrategy {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Drop => "drop",
            Self::Summarize => "summarize",
        }
    }

    /// The strategy a stored value names; `None` for anything else.
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "drop" => Some(Self::Drop),
            "summarize" => Some(Self::Summarize),
            _ => None,
        }
    }
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            max_iterations: 5,
            max_iterations_ceiling: 8,
            tool_timeout_secs: 15,
            tool_cache_ttl_secs: 300,
            loop_detection_window: 10,
            max_identical_calls: 2,
            max_tool_result_chars: 10_000,
            run_time_budget_secs: 600,
            run_log_retention_secs: 600,
            max_agents_per_user: 200,
            chat_idle_secs: 600,
            system_prompt: None,
            context_strategy: ContextStrategy::Drop,
        }
    }
}

/// Deep Think (docs/spec.md#deep-think).
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct DeepThinkConfig {
    /// Fewest sub-tasks a plan has (spec: 3).
    pub min_subtasks: usize,
    /// Most sub-tasks a plan may have (spec: 7).
    pub max_subtasks: usize,
    /// Loop iterations per sub-task (spec: 5).
    pub subtask_iterations: u32,
    /// Tokens (input + output) per sub-task (spec: 16,000).
    pub subtask_token_budget: u64,
    /// Tokens (input + output) one whole Deep Think run may spend.
    pub token_budget: u64,
    /// The share of `token_budget` (in percent) kept for the synthesis: sub-tasks stop
    /// starting once the rest is spent.
    pub synthesis_reserve_percent: u64,
    /// Sub-tasks run at once (spec: one after another, 1).
    pub concurrency: usize,
    /// Ask for the plan with a JSON schema (`response_format`); an upstream that refuses
    /// one is asked again without it.
    pub structured_output: bool,
    /// Same-site links followed when the question names a site (3, fetch_url's most).
    pub discovery_follow: usize,
    /// The model that plans (routed like any model name); `None`: the run's.
    pub planner_model: Option<String>,
    /// The model the sub-tasks research with; `None`: the run's.
    pub subtask_model: Option<String>,
    /// The model that writes the report; `None`: the run's.
    pub synthesis_model: Option<String>,
}

impl DeepThinkConfig {
    /// The role models set, with the setting that names each.
    pub fn role_models(&self) -> impl Iterator<Item = (&'static str, &str)> {
        [
            ("deep_think.planner_model", &self.planner_model),
            ("deep_think.subtask_model", &self.subtask_model),
            ("deep_think.synthesis_model", &self.synthesis_model),
        ]
        .into_iter()
        .filter_map(|(setting, model)| model.as_deref().map(|m| (setting, m)))
    }
}

impl Default for DeepThinkConfig {
    fn default() -> Self {
        Self {
            min_subtasks: 3,
            max_subtasks: 7,
            subtask_iterations: 5,
            subtask_token_budget: 16_000,
            token_budget: 150_000,
            synthesis_reserve_percent: 15,
            concurrency: 1,
            structured_output: true,
            discovery_follow: 3,
            planner_model: None,
            subtask_model: None,
            synthesis_model: None,
        }
    }
}

/// ask_user pauses.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct AskUserConfig {
    /// Hours a question stays answerable.
    pub expiry_hours: u64,
    /// Most options one question may offer.
    pub max_options: usize,
    /// Most fields one form may have.
    pub max_fields: usize,
    /// Longest question, option, label or answer text in characters.
    pub max_text_chars: usize,
}

impl Default for AskUserConfig {
    fn default() -> Self {
        Self {
            expiry_hours: 24,
            max_options: 20,
            max_fields: 20,
            max_text_chars: 4_000,
        }
    }
}
