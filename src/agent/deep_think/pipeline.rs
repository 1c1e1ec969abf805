//! `DeepThinkPlanner`: one actor per Deep Think run, spawned by the supervisor. It runs the
//! phases in seed 000's order — discovery (target-focused mode), the plan, the sub-tasks (in
//! `DeepThinkSubtask` actors the supervisor spawns, `deep_think.concurrency` at a time), a
//! findings artifact, the synthesis — and ends the run like any other. Every phase is bounded:
//! the run's deadline and cancellation, a whole-run token budget of which
//! `synthesis_reserve_percent` is kept for the synthesis, each sub-task's own budget.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use actix::prelude::*;
use futures_util::StreamExt;
use serde_json::json;
use tokio::sync::oneshot;

use super::checkpoint::Checkpoint;
use super::discovery::{self, Discovery};
use super::plan::{self, Plan, PlannedTask};
use super::report;
use super::sources::{self, Sources};
use super::subtask::{self, Finding, TaskStatus};
use super::{DeepThinkSpec, SpawnSubtask, SubtaskBounds, emit};
use crate::chat::artifacts::{self, ArtifactError, CreateArtifact, NewArtifact};
use crate::llm::wire::{ChatMessage, Usage};
use crate::run::events::{RunError, RunEvent, StopReason};

use super::super::loop_actor::{LoopOutcome, RunSpec, finish, guarded, run_loop, upstream_error};

/// Longest stretch of earlier conversation the planner is shown, in characters.
const MAX_HISTORY_CHARS: usize = 4_000;

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
fn ended(
    reason: StopReason,
    usage: Usage,
    iterations: u32,
    error: Option<RunError>,
) -> LoopOutcome {
    LoopOutcome {
        content: String::new(),
        stop_reason: reason,
        usage,
        iterations,
        error,
        pause: None,
    }
}

async fn research(spec: &DeepThinkSpec) -> LoopOutcome {
    let run = &spec.run;
    let log = &run.log;
    let deadline = run.deadline.unwrap_or_else(|| {
        tokio::time::Instant::now() + Duration::from_secs(run.limits.run_time_budget_secs)
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
    save_structured(spec, &plan, &findings).await;
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
        let error = RunError::new("deep_think_failed", message);
        (text, StopReason::UpstreamError, Some(error))
    } else {
        emit(
            log,
            "synthesizing",
            json!({"message": "Synthesizing final report..."}),
        );
        let outcome = run_loop(&synthesis_spec(spec, &plan, &findings, &seen, deadline)).await;
        usage.add(outcome.usage);
        iterations += outcome.iterations;
        match outcome.stop_reason {
            StopReason::Cancelled => {
                return LoopOutcome {
                    usage,
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
            | StopReason::ToolCalls => {
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
        stop_reason,
        usage,
        iterations,
        error,
        pause: None,
    }
}

fn tokens(usage: &Usage) -> u64 {
    usage.prompt_tokens + usage.completion_tokens
}

/// Discovery (when the question names a site) and the plan: the run's first checkpoint.
async fn prepare(
    spec: &DeepThinkSpec,
    deadline: tokio::time::Instant,
) -> Result<Checkpoint, LoopOutcome> {
    let run = &spec.run;
    let log = &run.log;
    let mut usage = Usage::default();
    let mut iterations = 0;
    let mut found: Option<Discovery> = None;
    if let Some(target) = discovery::target(&spec.question) {
        emit(
            log,
            "discovery_started",
            json!({"mode": "target_focused",
                   "message": format!("Exploring {target} before planning...")}),
        );
        let explored = discovery::discover(log, &run.tools, &target, spec.config.discovery_follow);
        match guarded(log, deadline, explored).await {
            Err(interrupt) => return Err(ended(interrupt.reason(), usage, 0, None)),
            Ok(explored) => {
                let explored = explored.unwrap_or_else(|| Discovery {
                    target: target.clone(),
                    ..Discovery::default()
                });
                emit(
                    log,
                    "discovery_completed",
                    json!({"pages_fetched": explored.pages_fetched,
                           "site_map": explored.site_map,
                           "message": format!("Read {} page(s) of {target}.", explored.pages_fetched)}),
                );
                found = Some(explored);
            }
        }
    }
    let tools: Vec<String> = run.tools.iter().map(|t| t.name().to_string()).collect();
    let planned = make_plan(spec, found.as_ref(), &tools, &mut usage, &mut iterations);
    let plan = match guarded(log, deadline, planned).await {
        Err(interrupt) => return Err(ended(interrupt.reason(), usage, iterations, None)),
        Ok(Err(error)) => {
            emit(log, "error", json!({"message": error.message}));
            return Err(ended(
                StopReason::UpstreamError,
                usage,
                iterations,
                Some(error),
            ));
        }
        Ok(Ok(plan)) => plan,
    };
    Ok(Checkpoint {
        question: spec.question.clone(),
        model: log.model.clone(),
        project: run.project.clone(),
        owner_is_admin: log.owner_is_admin,
        tools,
        plan,
        discovery: found,
        findings: Vec::new(),
        planning_usage: usage,
        planning_iterations: iterations,
        resumptions: 0,
    })
}

/// What the planner is told: the question, the conversation before it, and what discovery
/// found.
fn planner_brief(spec: &DeepThinkSpec, found: Option<&Discovery>) -> String {
    let mut earlier: Vec<String> = spec
        .run
        .messages
        .iter()
        .filter(|m| m.role != crate::llm::wire::Role::System)
        .map(|m| {
            let who = if m.role == crate::llm::wire::Role::User {
                "User"
            } else {
                "Assistant"
            };
            format!("{who}: {}", m.text())
        })
        .collect();
    earlier.pop();
    let mut history = String::new();
    for line in earlier.iter().rev() {
        if history.len() + line.len() > MAX_HISTORY_CHARS {
            break;
        }
        history = format!("{line}\n{history}");
    }
    let mut brief = String::new();
    if !history.is_empty() {
        brief.push_str(&format!("The conversation so far:\n{history}\n"));
    }
    brief.push_str(&format!(
        "Plan research for this question: {}",
        spec.question
    ));
    if let Some(found) = found {
        brief.push_str(&format!(
            "\n\nThe question names {}; it was read first. Build the plan on what was found:\n{}\n\nPages:\n{}",
            found.target, found.site_map, found.context
        ));
    }
    brief
}

/// Asks for a plan: with the plan's JSON schema when `structured_output` is on (and again
/// without it if the upstream refuses the schema), once more with the reason if the answer
/// cannot be read, then the fallback plan.
async fn make_plan(
    spec: &DeepThinkSpec,
    found: Option<&Discovery>,
    tools: &[String],
    usage: &mut Usage,
    iterations: &mut u32,
) -> Result<Plan, RunError> {
    let run = &spec.run;
    let config = &spec.config;
    let (min, max) = (config.min_subtasks, config.max_subtasks);
    let mut messages = vec![
        ChatMessage::system(plan::instructions(tools, min, max)),
        ChatMessage::user(planner_brief(spec, found)),
    ];
    let mut structured = config.structured_output;
    let mut attempts = 0;
    while attempts < 2 {
        let mut request = run.template.clone();
        request.messages = messages.clone();
        request.tools = None;
        request.tool_choice = None;
        if structured {
            request.extra.insert(
                "response_format".into(),
                json!({"type": "json_schema", "json_schema": {"name": "deep_think_plan",
                       "strict": true, "schema": plan::schema(tools, max)}}),
            );
        }
        *iterations += 1;
        let completion = match run.llm.chat(&request).await {
            Ok(completion) => completion,
            Err(err) if structured && err.code() == "upstream_rejected" => {
                tracing::info!(run_id = %run.log.run_id, error = %err, "the upstream refused a JSON schema; planning without one");
                structured = false;
                continue;
            }
            Err(err) => {
                return Err(upstream_error(&run.log, &err)
                    .unwrap_or_else(|| RunError::new(err.code(), err.public_message())));
            }
        };
        attempts += 1;
        let answer = completion
            .choices
            .first()
            .map(|c| c.message.text())
            .unwrap_or_default();
        usage.add(match completion.usage {
            Some(reported) if crate::agent::usage::is_real(Some(&reported)) => reported,
            _ => crate::agent::usage::estimate(&request, &answer, &[]),
        });
        match plan::parse(&answer, tools, min, max, &spec.question) {
            Ok(mut plan) => {
                if attempts > 1 {
                    plan.source = "retried".into();
                }
                return Ok(plan);
            }
            Err(reason) => {
                tracing::info!(run_id = %run.log.run_id, %reason, attempts, "an unusable plan");
                messages.push(ChatMessage::assistant(answer));
                messages.push(ChatMessage::user(format!(
                    "That plan cannot be used: {reason}. Answer again with only the JSON \
                     object: a title and {min} to {max} sub-tasks, each with an id, a query and \
                     its tools."
                )));
            }
        }
    }
    Ok(plan::fallback(&spec.question, tools))
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
    let bounds = SubtaskBounds {
        token_budget: config.subtask_token_budget.min(research_budget - used),
        sources: sources.clone(),
    };
    let sub = subtask::spec(
        &spec.run,
        &spec.question,
        &task,
        context,
        config.subtask_iterations,
        bounds,
        deadline,
    );
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
    super::phase(&spec.run, messages, Vec::new(), 1, true, deadline)
}

/// Saves a structured artifact from the notes, and says so: a comparison table when the
/// sub-tasks give the same attributes of several things, else a findings list when the notes
/// hold enough bullet points.
async fn save_structured(spec: &DeepThinkSpec, plan: &Plan, findings: &[Finding]) {
    let (kind, suffix, what, content) =
        if let Some(table) = report::comparison_table(&plan.title, findings) {
            (
                "comparison_table",
                "comparison",
                "a comparison table",
                table,
            )
        } else if let Some(list) = report::findings_list(&plan.title, findings, 3) {
            ("findings_list", "findings", "a list", list)
        } else {
            return;
        };
    let name = report::artifact_name(chrono::Utc::now()).replace(".md", &format!("-{suffix}.md"));
    let title = format!("{}: {suffix}", plan.title);
    if save_artifact(spec, &name, &title, &content).await.is_some() {
        emit(
            &spec.run.log,
            "artifact_created",
            json!({"artifact_type": kind, "artifact_title": title,
                   "message": format!("Saved the sub-tasks' findings as {what}.")}),
        );
    }
}

/// Saves `content` as a markdown artifact of the run's chat (a message part of its answer);
/// returns the identifier it got, `None` outside a chat or when it could not be saved.
async fn save_artifact(
    spec: &DeepThinkSpec,
    name: &str,
    title: &str,
    content: &str,
) -> Option<String> {
    let run = &spec.run;
    let (session, _) = run.chat.as_ref()?;
    let content = cut_to_bytes(content, spec.max_artifact_bytes);
    let title = plan::shorten(title, artifacts::MAX_TITLE_CHARS);
    let mut identifier = name.to_string();
    for attempt in 2..=5 {
        let saved = session
            .send(CreateArtifact(NewArtifact {
                identifier: identifier.clone(),
                title: title.clone(),
                mime_type: "text/markdown".into(),
                language: None,
                content: content.to_string(),
            }))
            .await;
        match saved {
            Ok(Ok(head)) => {
                run.log.push(RunEvent::Extension {
                    event_type: "x_artifact.created".into(),
                    payload: json!({"identifier": head.identifier, "title": head.title,
                                    "version": head.version}),
                });
                run.parts.upsert(artifacts::part(&head, content));
                return Some(head.identifier);
            }
            Ok(Err(ArtifactError::Exists(_))) => {
                identifier = name.replace(".md", &format!("-{attempt}.md"));
            }
            Ok(Err(err)) => {
                tracing::error!(run_id = %run.log.run_id, %err, "could not save a Deep Think artifact");
                return None;
            }
            Err(err) => {
                tracing::error!(run_id = %run.log.run_id, %err, "the chat went away before a Deep Think artifact was saved");
                return None;
            }
        }
    }
    None
}

/// `text` cut to at most `max` bytes at a character boundary.
fn cut_to_bytes(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
