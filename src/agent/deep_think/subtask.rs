//! `DeepThinkSubtask`: one sub-task, in its own actor, through the same governed loop as any
//! run (tool timeouts, the cache, loop detection, the rate limit, fitting), with research tools
//! only, its own iteration cap and token budget, and its text kept out of the stream: it is the
//! findings note the synthesis reads.

use actix::prelude::*;
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use super::emit;
use super::plan::PlannedTask;
use crate::agent::sources::Source;
use crate::llm::wire::{ChatMessage, Usage};
use crate::run::events::{RunError, StopReason};

use super::super::kernel::{RunBounds, RunSpec};
use super::super::loop_actor::run_loop;

/// The sub-task's instructions.
const INSTRUCTIONS: &str = "You research one part of a larger question, using the tools. \
    Search, read the most relevant pages, and stop when you can answer your part. Then write a \
    compact findings note: the key facts as short bullet points, each followed by the URL it \
    came from. Use only what the tools returned; say what you could not find.";

/// What a sub-task's actor reports.
#[derive(Debug)]
pub struct SubtaskOutcome {
    pub content: String,
    pub stop_reason: StopReason,
    pub usage: Usage,
    pub iterations: u32,
    pub error: Option<RunError>,
}

pub struct DeepThinkSubtask {
    work: Option<(RunSpec, oneshot::Sender<SubtaskOutcome>)>,
}

impl DeepThinkSubtask {
    pub fn new(spec: RunSpec, reply: oneshot::Sender<SubtaskOutcome>) -> Self {
        Self {
            work: Some((spec, reply)),
        }
    }
}

impl Actor for DeepThinkSubtask {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        let Some((spec, reply)) = self.work.take() else {
            ctx.stop();
            return;
        };
        let work = async move {
            let outcome = run_loop(&spec).await;
            // The planner may be gone (cancelled); nothing is waiting then.
            let _ = reply.send(SubtaskOutcome {
                content: outcome.content,
                stop_reason: outcome.stop_reason,
                usage: outcome.usage,
                iterations: outcome.iterations,
                error: outcome.error,
            });
        };
        ctx.spawn(work.into_actor(self).map(|(), _, ctx| ctx.stop()));
    }
}

/// How a sub-task ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Completed,
    /// Its token budget was spent before it finished; its note holds what it had.
    BudgetExhausted,
    Failed,
}

impl TaskStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::BudgetExhausted => "budget_exhausted",
            Self::Failed => "failed",
        }
    }
}

/// A finished sub-task: what the synthesis reads, and what a checkpoint keeps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub id: String,
    pub index: usize,
    pub query: String,
    pub status: TaskStatus,
    pub note: String,
    pub sources: Vec<Source>,
    pub usage: Usage,
    pub iterations: u32,
    pub error: Option<String>,
}

impl Finding {
    /// A sub-task that never ran.
    pub fn skipped(task: &PlannedTask, index: usize, reason: &str) -> Self {
        Self {
            id: task.id.clone(),
            index,
            query: task.query.clone(),
            status: TaskStatus::Failed,
            note: String::new(),
            sources: Vec::new(),
            usage: Usage::default(),
            iterations: 0,
            error: Some(reason.to_string()),
        }
    }

    pub fn tokens(&self) -> u64 {
        self.usage.prompt_tokens + self.usage.completion_tokens
    }

    /// `subtask_completed`, for this finding.
    pub fn announce(&self, log: &crate::run::log::RunLog) {
        let mut payload = serde_json::json!({
            "subtask_id": self.id,
            "subtask_index": self.index,
            "status": self.status.as_str(),
            "sources": self.sources.len(),
            "tokens": self.tokens(),
        });
        if let Some(error) = &self.error {
            payload["error"] = error.clone().into();
        }
        emit(log, "subtask_completed", payload);
    }
}

/// The loop a sub-task runs: the run's model, limits and rate limiter, `task`'s tools among
/// the run's research tools, no chat (its text is not an answer), `bounds`.
pub fn spec(
    run: &RunSpec,
    question: &str,
    task: &PlannedTask,
    context: &str,
    iterations: u32,
    bounds: RunBounds,
    deadline: tokio::time::Instant,
) -> RunSpec {
    let tools = run
        .tools
        .iter()
        .filter(|tool| task.tools.iter().any(|name| name == tool.name()))
        .cloned()
        .collect();
    let mut brief = format!(
        "The overall question: {question}\n\nYour part: {}",
        task.query
    );
    if !context.is_empty() {
        brief.push_str("\n\n");
        brief.push_str(context);
    }
    let messages = vec![ChatMessage::system(INSTRUCTIONS), ChatMessage::user(brief)];
    let mut spec = run.phase(messages, tools, iterations, false, deadline);
    spec.bounds = bounds;
    spec
}

/// The finding of a sub-task that ran: its note lists the URLs its tools actually returned.
pub fn finding(
    task: &PlannedTask,
    index: usize,
    outcome: SubtaskOutcome,
    sources: Vec<Source>,
) -> Finding {
    let status = match outcome.stop_reason {
        StopReason::TokenBudget => TaskStatus::BudgetExhausted,
        StopReason::UpstreamError
        | StopReason::Interrupted
        | StopReason::Cancelled
        | StopReason::WorkflowFailed => TaskStatus::Failed,
        StopReason::TimeBudget if outcome.content.trim().is_empty() => TaskStatus::Failed,
        StopReason::Completed
        | StopReason::MaxIterations
        | StopReason::Length
        | StopReason::TimeBudget
        | StopReason::Paused
        | StopReason::ToolCalls => TaskStatus::Completed,
    };
    let error = match status {
        TaskStatus::Failed => Some(outcome.error.map_or_else(
            || format!("the sub-task stopped: {}", outcome.stop_reason.as_str()),
            |e| e.message,
        )),
        TaskStatus::BudgetExhausted | TaskStatus::Completed => None,
    };
    let mut note = outcome.content.trim().to_string();
    if status == TaskStatus::BudgetExhausted && note.is_empty() {
        note = "(The sub-task's token budget ran out before it wrote a summary.)".into();
    }
    Finding {
        id: task.id.clone(),
        index,
        query: task.query.clone(),
        status,
        note,
        sources,
        usage: outcome.usage,
        iterations: outcome.iterations,
        error,
    }
}
