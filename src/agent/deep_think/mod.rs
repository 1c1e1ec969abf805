//! Deep Think (docs/spec.md#deep-think): research in phases on top of the agentic loop. A
//! `DeepThinkPlanner` actor (spawned by the supervisor) optionally explores a named site
//! first (`discovery`), asks the model for a plan (`plan`), has the supervisor spawn one
//! `DeepThinkSubtask` actor per sub-task — each the same governed loop, bounded by its own
//! iterations and token budget, research tools only (`subtask`) — and synthesizes their
//! findings notes into a cited report, saved as an artifact (`report`). Each finished
//! sub-task is checkpointed on the run's row (`checkpoint`), so a restart continues from the
//! next one.

mod checkpoint;
mod discovery;
mod pipeline;
mod plan;
mod planning;
mod report;
mod saving;
mod sources;
mod subtask;

use actix::prelude::*;
use serde_json::Value;
use tokio::sync::oneshot;

use crate::config::DeepThinkConfig;
use crate::run::events::RunEvent;
use crate::run::log::RunLog;

use super::loop_actor::RunSpec;

pub use checkpoint::{Checkpoint, MAX_RESUMPTIONS};
pub use pipeline::DeepThinkPlanner;
pub use sources::{Source, Sources};
pub use subtask::{DeepThinkSubtask, SubtaskOutcome};

/// A sub-task's bounds within its Deep Think run.
#[derive(Clone)]
pub struct SubtaskBounds {
    /// Tokens (input + output, as the upstream counts them) after which the sub-task ends.
    pub token_budget: u64,
    /// Where the URLs its tools returned are collected.
    pub sources: Sources,
}

/// Asks the supervisor to run one sub-task in a `DeepThinkSubtask` actor; its outcome comes
/// back on `reply`.
#[derive(Message)]
#[rtype(result = "()")]
pub struct SpawnSubtask {
    pub spec: RunSpec,
    pub reply: oneshot::Sender<SubtaskOutcome>,
}

/// Everything one Deep Think run needs.
pub struct DeepThinkSpec {
    /// The run as an ordinary run would have it: its log, model, prompt (`messages`), the
    /// research tools, its chat, limits and rate limiter.
    pub run: RunSpec,
    /// The user's question (the latest user message).
    pub question: String,
    pub config: DeepThinkConfig,
    /// Largest artifact content, in bytes.
    pub max_artifact_bytes: usize,
    /// Where a run cut off by a restart left off.
    pub checkpoint: Option<Checkpoint>,
    /// Who spawns sub-task actors (the supervisor).
    pub subtasks: Recipient<SpawnSubtask>,
}

/// A loop for one phase of the run `run`: its log, model, limits, cache and rate limiter, with
/// these messages and tools, no response format or tool choice of the client's, no client
/// tools, within `deadline`. `chat` is where drafts go (`None`: the text is not an answer).
fn phase(
    run: &RunSpec,
    messages: Vec<crate::llm::wire::ChatMessage>,
    tools: Vec<crate::tools::SharedTool>,
    max_iterations: u32,
    chat: bool,
    deadline: tokio::time::Instant,
) -> RunSpec {
    let mut template = run.template.clone();
    template.tool_choice = None;
    template.extra.remove("response_format");
    RunSpec {
        log: run.log.clone(),
        llm: run.llm.clone(),
        limits: run.limits.clone(),
        template,
        messages,
        tools,
        max_iterations,
        cache: run.cache.clone(),
        chat: if chat { run.chat.clone() } else { None },
        resume: None,
        completes_ask: None,
        ask_expiry: run.ask_expiry,
        project: run.project.clone(),
        rate_limiter: run.rate_limiter.clone(),
        parts: crate::tools::chat_context::Parts::default(),
        context_strategy: run.context_strategy,
        client_tools: Vec::new(),
        subtask: None,
        deadline: Some(deadline),
        metrics: run.metrics.clone(),
        // A phase's messages are Deep Think's own text: the question's images are not sent.
        attachments: None,
    }
}

/// Sends an `x_deep_think.*` event.
fn emit(log: &RunLog, name: &str, payload: Value) {
    log.push(RunEvent::Extension {
        event_type: format!("x_deep_think.{name}"),
        payload,
    });
}

#[cfg(test)]
mod tests;
