//! Runs of the agentic loop: `AgentRun` (one actor per request), the loop's governance rules,
//! context fitting and summaries, prompt assembly, stored images and the images tools return
//! read into model requests, and usage estimates for upstreams that report none. It reports
//! through `crate::run` (events, the run log) and talks to chats only through messages to
//! their `ChatSession`; `crate::supervisor` starts it.
//!
//! By concern: `kernel` (what a run is given and produces), `loop_actor` (`AgentRun`, the
//! loop), `model_call` (one model call), `tool_round` (one round of calls), `tool_cache`,
//! `governance` (call keys and loop detection, base64 images, truncation, previews),
//! `rate_limit`, `pause` (waiting for an ask_user answer or client tool results),
//! `loop_state`, `fitting` (with `context` and `summary`), `prompt`, `images`, `usage`,
//! `sources`, `test_support` (tests only) and `deep_think` (`DeepThinkPlanner`,
//! `DeepThinkSubtask`) and `workflow` (a workflow's steps under the same governance,
//! `WorkflowRun`), which drive the loop. No two of them import each other.

pub mod context;
pub mod deep_think;
pub mod fitting;
pub mod governance;
pub mod images;
pub mod kernel;
pub mod loop_actor;
mod loop_state;
mod model_call;
pub mod pause;
pub mod prompt;
pub mod rate_limit;
pub mod sources;
pub mod summary;
#[cfg(test)]
pub(crate) mod test_support;
pub mod tool_cache;
pub mod tool_round;
pub mod usage;
pub mod workflow;
