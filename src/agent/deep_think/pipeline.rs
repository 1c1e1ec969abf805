//! `DeepThinkPlanner`: one actor per Deep Think run, spawned by the supervisor. It runs the phases
//! in the spec's order (docs/spec.md#deep-think) — discovery (target-focused mode), the plan, the
//! sub-tasks (in `DeepThinkSubtask` actors the supervisor spawns, `deep_think.concurrency` at a
//! time), a findings artifact, the synthesis — and ends the run like any other. Every phase is
//! bounded: the run's deadline and cancellation, a whole-run token budget of which
//! `synthesis_reserve_percent` is kept for the synthesis, each sub-task's own budget.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use actix::prelude::*;
use futures_util::StreamExt;
use serde_json::json;
use tokio::sync::oneshot;

use super::plan::{Plan, PlannedTask};
use super::planning::prepare;
use super::report;
use super::saving::{save_artifact, save_structured};
use super::subtask::{self, Finding, TaskStatus};
use super::{DeepThinkSpec, SpawnSubtask, emit};
use crate::agent::sources::{self, Sources};
use crate::llm::wire::{ChatMessage, Usage};
use crate::run::events::{RunError, RunErrorKind, RunEvent, StopReason};

use super::super::kernel::{LoopOutcome, RunBounds, RunSpec};
use super::super::loop_actor::{finish, run_loop};

pub struct DeepThinkPlanner {
    spec: Option<DeepThinkSpec>,
}

impl DeepThinkPlanner {
    pub fn new(spec: DeepThinkSpec) -> Self {
        Self { spec: Some(spec) }
    }
}

impl Actor for DeepThinkPlanner {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        let Some(spec) = self.spec.take() else {
            ctx.stop();
            return;
        };
        let work = async move {
            let outcome = research(&spec).await;
            finish(&spec.run, outcome).await;
        };
        ctx.spawn(work.into_actor(self).map(|(), _, ctx| ctx.stop()));
    }
}

/// The outcome of a run that ended before its report.
pub(super) fn ended(
    reason: StopReason,
    usage: Usage,
    iterations: u32,
    error: Option<RunError>,
) -> LoopOutcome {
    LoopOutcome {
        content: String::new(),
        reasoning: None,
        stop_reason: reason,
        usage,
        // Before its report, all of a Deep Think run is research.
        research_usage: usage,
        iterations,
        error,
        pause: None,
        unstored: false,
    }
}

async fn research(spec: &DeepThinkSpec) -> LoopOutcome {
    let run = &spec.run;
    let log = &run.log;
    let deadline = run.deadline.unwrap_or_else(|| {
        tokio::time::Instant::now() + Duration::from_secs(run.handles.limits.run_time_budget_secs)
    });
    let mut checkpoint = match &spec.checkpoint {
        Some(checkpoint) => checkpoint.clone(),
        None => match prepare(spec, deadline).await {
            Ok(checkpoint) => checkpoint,
            Err(outcome) => return outcome,
        },
    };
    checkpoint.save(run);
    let plan = checkpoint.plan.clone();
    let total = plan.subtasks.len();
    let listed: Vec<_> = plan
        .subtasks
        .iter()
        .map(|t| json!({"id": t.id, "query": t.query, "tools": t.tools}))
        .collect();
    emit(
        log,
        "plan_created",
        json!({"title": plan.title, "total_subtasks": total, "subtasks": listed,
               "plan_source": plan.source, "proposed_subtasks": plan.proposed}),
    );
    // A continued run reports what its earlier process finished, then goes on.
    for finding in &checkpoint.findings {
        announce_start(spec, &plan.subtasks[finding.index], finding.index, total);
        finding.announce(log);
    }
    let spent: u64 = tokens(&checkpoint.planning_usage)
        + checkpoint.findings.iter().map(Finding::tokens).sum::<u64>();
    let spent = Arc::new(AtomicU64::new(spent));
    let context = checkpoint
        .discovery
        .as_ref()
        .map(|d| d.context.clone())
        .unwrap_or_default();
    let pending: Vec<(usize, PlannedTask)> = plan
        .subtasks
        .iter()
        .enumerate()
        .filter(|(_, task)| !checkpoint.findings.iter().any(|f| f.id == task.id))
        .map(|(index, task)| (index, task.clone()))
        .collect();
    let runs = futures_util::stream::iter(pending)
        .map(|(index, task)| {
            let (spent, context) = (spent.clone(), context.clone());
            async move { run_subtask(spec, index, task, total, &spent, &context, deadline).await }
        })
        .buffer_unordered(spec.config.concurrency.max(1));
    futures_util::pin_mut!(runs);
    while let Some(finding) = runs.next().await {
        // A cancelled run starts nothing more and reports nothing more.
        if log.cancel.is_cancelled() {
            break;
        }
        finding.announce(log);
        checkpoint.findings.push(finding);
        checkpoint.save(run);
    }
    let (mut usage, mut iterations) = (checkpoint.planning_usage, checkpoint.planning_iterations);
    for finding in &checkpoint.findings {
        usage.add(finding.usage);
        iterations += finding.iterations;
    }
    if log.cancel.is_cancelled() {
        return ended(StopReason::Cancelled, usage, iterations, None);
    }
    let mut findings = checkpoint.findings.clone();
    findings.sort_by_key(|f| f.index);
    let discovered = checkpoint.discovery.as_ref().map(|d| d.sources.as_slice());
    let seen = sources::merge(
        discovered
            .into_iter()
            .chain(findings.iter().map(|f| f.sources.as_slice())),
    );
    let planning_tokens = tokens(&checkpoint.planning_usage);
    let research_tokens = tokens(&usage) - planning_tokens;
    // Discovery, the plan and the sub-tasks; the synthesis writes the answer.
    let research_usage = usage;
    save_structured(spec, &plan, &findings).await;
    // The synthesis's reasoning, kept with the report's message.
    let mut reasoning = None;
    let (text, stop_reason, error) = if findings.iter().all(|f| f.status == TaskStatus::Failed) {
        let message = "every sub-task failed; the report lists what happened";
        emit(log, "error", json!({"message": message}));
        let text = report::without_model(
            &plan.title,
            "The research could not be completed: every sub-task failed.",
            &findings,
        );
        log.push(RunEvent::TextDelta {
            content: text.clone(),
        });
        let error = RunError::new(RunErrorKind::DeepThinkFailed, message);
        (text, StopReason::UpstreamError, Some(error))
    } else {
        emit(
            log,
            "synthesizing",
            json!({"message": "Synthesizing final report..."}),
        );
        let outcome = run_loop(&synthesis_spec(spec, &plan, &findings, &seen, deadline)).await;
        reasoning = outcome.reasoning.clone();
        usage.add(outcome.usage);
        iterations += outcome.iterations;
        match outcome.stop_reason {
            StopReason::Cancelled => {
                return LoopOutcome {
                    usage,
                    research_usage,
                    iterations,
                    ..outcome
                };
            }
            StopReason::Completed | StopReason::Length | StopReason::MaxIterations => {
                (outcome.content, outcome.stop_reason, None)
            }
            StopReason::UpstreamError
            | StopReason::TimeBudget
            | StopReason::TokenBudget
            | StopReason::Interrupted
            | StopReason::Paused
            | StopReason::ToolCalls
            | StopReason::WorkflowFailed => {
                // The notes are not lost: the report is written from them without the model.
                let why = format!(
                    "The report could not be written by the model ({}); these are the research \
                     notes it would have used.",
                    outcome
                        .error
                        .as_ref()
                        .map_or(outcome.stop_reason.as_str(), |e| e.message.as_str())
                );
                let text = report::without_model(&plan.title, &why, &findings);
                log.push(RunEvent::TextDelta {
                    content: format!("\n\n{text}"),
                });
                let text = format!("{}\n\n{text}", outcome.content).trim().to_string();
                (text, outcome.stop_reason, outcome.error)
            }
        }
    };
    let checked = report::check(&text, &seen);
    if checked.removed > 0 {
        tracing::info!(run_id = %log.run_id, removed = checked.removed, "removed citations of sources the run never saw");
    }
    if !checked.sources_section.is_empty() {
        log.push(RunEvent::TextDelta {
            content: checked.sources_section.clone(),
        });
    }
    let name = report::artifact_name(chrono::Utc::now());
    let saved = save_artifact(spec, &name, &plan.title, &checked.report).await;
    let total_tokens = tokens(&usage);
    emit(
        log,
        "completed",
        json!({"title": plan.title, "artifact_name": saved,
               "tokens": {"planning": planning_tokens, "research": research_tokens,
                          "synthesis": total_tokens - planning_tokens - research_tokens,
                          "total": total_tokens}}),
    );
    LoopOutcome {
        content: checked.report,
        reasoning,
        stop_reason,
        usage,
        research_usage,
        iterations,
        error,
        pause: None,
        unstored: false,
    }
}

fn tokens(usage: &Usage) -> u64 {
    usage.prompt_tokens + usage.completion_tokens
}

fn announce_start(spec: &DeepThinkSpec, task: &PlannedTask, index: usize, total: usize) {
    emit(
        &spec.run.log,
        "subtask_started",
        json!({"subtask_id": task.id, "subtask_query": task.query,
               "subtask_index": index, "total_subtasks": total}),
    );
}

/// Runs one sub-task in its actor, within what is left of the run's budgets.
async fn run_subtask(
    spec: &DeepThinkSpec,
    index: usize,
    task: PlannedTask,
    total: usize,
    spent: &AtomicU64,
    context: &str,
    deadline: tokio::time::Instant,
) -> Finding {
    let config = &spec.config;
    let log = &spec.run.log;
    announce_start(spec, &task, index, total);
    let research_budget =
        config.token_budget * (100 - config.synthesis_reserve_percent.min(100)) / 100;
    let used = spent.load(Ordering::SeqCst);
    if log.cancel.is_cancelled() {
        return Finding::skipped(&task, index, "the run was cancelled");
    }
    if tokio::time::Instant::now() >= deadline {
        return Finding::skipped(&task, index, "the run's time budget is spent");
    }
    if used >= research_budget {
        return Finding::skipped(&task, index, "the run's token budget is spent");
    }
    let sources = Sources::default();
    // A sub-task's text is its findings note, for the synthesis only, and its research is
    // part of the run's, which reports it.
    let bounds = RunBounds {
        quiet: true,
        token_budget: Some(config.subtask_token_budget.min(research_budget - used)),
        sources: Some(sources.clone()),
    };
    let mut sub = subtask::spec(
        &spec.run,
        &spec.question,
        &task,
        context,
        config.subtask_iterations,
        bounds,
        deadline,
    );
    if let Some(model) = &config.subtask_model {
        sub.template.model = model.clone();
    }
    let (reply, outcome) = oneshot::channel();
    spec.subtasks.do_send(SpawnSubtask { spec: sub, reply });
    let finding = match outcome.await {
        Ok(outcome) => subtask::finding(&task, index, outcome, sources.snapshot()),
        Err(_) => Finding::skipped(&task, index, "the sub-task's actor stopped"),
    };
    spent.fetch_add(finding.tokens(), Ordering::SeqCst);
    finding
}

/// The synthesis: one streamed model turn without tools over the notes, in the run's chat
/// (so its draft is saved as it streams).
fn synthesis_spec(
    spec: &DeepThinkSpec,
    plan: &Plan,
    findings: &[Finding],
    seen: &[sources::Source],
    deadline: tokio::time::Instant,
) -> RunSpec {
    let messages = vec![
        ChatMessage::system(report::INSTRUCTIONS),
        ChatMessage::user(report::brief(&spec.question, &plan.title, findings, seen)),
    ];
    let mut synthesis = spec.run.phase(messages, Vec::new(), 1, true, deadline);
    if let Some(model) = &spec.config.synthesis_model {
        synthesis.template.model = model.clone();
    }
    synthesis
}
