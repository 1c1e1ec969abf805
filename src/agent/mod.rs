//! Runs of the agentic loop: `AgentRun` (one actor per request), the loop's governance rules,
//! prompt assembly, the `RunEvent` type, the run event log clients subscribe to, and usage
//! estimates for upstreams that report none. It talks to chats only through messages to their
//! `ChatSession`.

pub mod context;
pub mod fitting;
pub mod governance;
pub mod loop_actor;
pub mod prompt;
pub mod rate_limit;
pub mod summary;
pub mod usage;
