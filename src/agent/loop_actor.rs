//! `AgentRun`: one actor per request, running the governed agentic loop (seed 000 "Agentic
//! Loop", seed 001): stream a model turn; run the tool calls it asks for in parallel, each with
//! a timeout, the result cache, loop detection, base64 stripping and truncation; feed results
//! back; repeat up to the iteration cap, then ask for a final answer without tools. Every exit
//! has a `StopReason`. The outcome is handed to the chat's `ChatSession` to persist.

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use futures_util::StreamExt;
use futures_util::future::join_all;
use serde_json::Value;

use super::fitting::{Fitting, Unfit};
use super::governance::{
    CallKey, LoopDetector, result_preview, strip_base64_images, truncate_result,
};
use super::prompt::FINAL_ANSWER_INSTRUCTION;
use crate::chat::asks::{AskKind, NewAsk};
use crate::chat::persistence::ToolCallRecord;
use crate::chat::session::{ChatSession, CompleteTurn, RecordToolCalls, SaveDraft};
use crate::config::AgentConfig;
use crate::llm::wire::{ChatMessage, ChatRequest, FinishReason, Role, ToolCall, Usage};
use crate::llm::{LlmClient, LlmError, TurnAccumulator};
use crate::run::events::{RunError, RunEvent, StopReason};
use crate::run::log::RunLog;
use crate::tools::{ProgressKind, SharedTool, ToolError};

/// Results shared by identical calls (tool name + canonical arguments).
pub type ToolCache = moka::future::Cache<String, Value>;

/// Most entries the tool result cache holds.
pub const TOOL_CACHE_CAPACITY: u64 = 10_000;

pub fn new_tool_cache(ttl: Duration) -> ToolCache {
    moka::future::Cache::builder()
        .max_capacity(TOOL_CACHE_CAPACITY)
        .time_to_live(ttl)
        .build()
}

/// Everything one run needs.
pub struct RunSpec {
    pub log: Arc<RunLog>,
    pub llm: LlmClient,
    pub limits: AgentConfig,
    /// Model, sampling options; `messages` and `tools` are filled in per call.
    pub template: ChatRequest,
    pub messages: Vec<ChatMessage>,
    pub tools: Vec<SharedTool>,
    pub max_iterations: u32,
    pub cache: ToolCache,
    /// The chat to persist the answer to, and the user message it replies to.
    pub chat: Option<(Addr<ChatSession>, String)>,
    /// Where a resumed run left off (its messages already end with the user's answer).
    pub resume: Option<ResumePoint>,
    /// The ask whose answer this run continues from.
    pub completes_ask: Option<String>,
    /// How long a question this run asks stays answerable.
    pub ask_expiry: Duration,
    /// Research tool calls are counted against this project (API key or user).
    pub project: String,
    pub rate_limiter: Arc<super::rate_limit::ToolRateLimiter>,
    /// The answer's message parts (artifacts), filled by chat tools.
    pub parts: crate::tools::chat_context::Parts,
    /// What to do with history that outgrows the model's context.
    pub context_strategy: crate::config::ContextStrategy,
    /// The client's own tools: offered with the server's; a call of one ends the run.
    pub client_tools: Vec<crate::llm::wire::ToolDefinition>,
}

/// The loop's counters at a pause, restored on resume.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct ResumePoint {
    pub tool_rounds: u32,
    pub iterations: u32,
    pub usage: Usage,
    pub content: String,
}

/// Everything a paused run needs to continue, stored with its pending ask.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Checkpoint {
    pub messages: Vec<ChatMessage>,
    pub tool_call_id: String,
    pub user_message_id: String,
    pub point: ResumePoint,
    pub max_iterations: u32,
    /// Names of the tools the run had, re-selected on resume.
    pub tools: Vec<String>,
    pub template: ChatRequest,
    /// Message parts produced before the pause.
    #[serde(default)]
    pub parts: Vec<Value>,
    /// The project (API key, or user) the run's research calls count against, so the resumed
    /// run counts against the same one. `None` in checkpoints made before it was kept: the
    /// user, then.
    #[serde(default)]
    pub project: Option<String>,
    /// The client's own tools the run offered (Chat Completions `tools`), offered again when
    /// it goes on.
    #[serde(default)]
    pub client_tools: Vec<crate::llm::wire::ToolDefinition>,
}

pub struct AgentRun {
    spec: Option<RunSpec>,
}

impl AgentRun {
    pub fn new(spec: RunSpec) -> Self {
        Self { spec: Some(spec) }
    }
}

impl Actor for AgentRun {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        let Some(spec) = self.spec.take() else {
            ctx.stop();
            return;
        };
        ctx.spawn(execute(spec).into_actor(self).map(|(), _, ctx| ctx.stop()));
    }
}

/// What the loop produced.
#[derive(Debug)]
struct LoopOutcome {
    content: String,
    stop_reason: StopReason,
    usage: Usage,
    iterations: u32,
    error: Option<RunError>,
    pause: Option<Pause>,
}

/// Where a run in a stored chat stopped to wait, with what it needs to go on.
#[derive(Debug)]
struct Pause {
    waiting: Waiting,
    messages: Vec<ChatMessage>,
    tool_rounds: u32,
}

/// What a paused run waits for.
#[derive(Debug)]
enum Waiting {
    /// The person's answer to an ask_user question.
    Answer {
        tool_call_id: String,
        question: Value,
    },
    /// The results of the client's own tools, which the model called (the last of
    /// `messages` is the call).
    ClientTools { calls: Vec<ToolCall> },
}

async fn execute(spec: RunSpec) {
    let mut outcome = run_loop(&spec).await;
    if let Some(pause) = outcome.pause.take() {
        match pause_run(&spec, &outcome, pause).await {
            Ok(()) => return,
            Err(error) => {
                outcome.stop_reason = StopReason::Interrupted;
                outcome.error = Some(error);
            }
        }
    }
    let mut assistant_message_id = None;
    let mut error = outcome.error.clone();
    if let Some((session, user_message_id)) = &spec.chat {
        let stored = session
            .send(CompleteTurn {
                run_id: spec.log.run_id.clone(),
                user_message_id: user_message_id.clone(),
                content: outcome.content.clone(),
                parts: spec.parts.to_value(),
                stop_reason: outcome.stop_reason,
                usage: outcome.usage,
                iterations: outcome.iterations,
                error: outcome.error.as_ref().map(|e| e.message.clone()),
                completes_ask: spec.completes_ask.clone(),
            })
            .await;
        match stored {
            Ok(Ok(id)) => assistant_message_id = id,
            Ok(Err(err)) => {
                tracing::error!(run_id = %spec.log.run_id, %err, "could not persist the run's answer");
                error.get_or_insert(RunError::new(
                    "persistence_failed",
                    "the answer could not be saved",
                ));
            }
            Err(err) => {
                tracing::error!(run_id = %spec.log.run_id, %err, "chat session gone before the run finished");
                error.get_or_insert(RunError::new(
                    "persistence_failed",
                    "the answer could not be saved",
                ));
            }
        }
    }
    spec.log.push(RunEvent::Finished {
        stop_reason: outcome.stop_reason,
        assistant_message_id,
        usage: outcome.usage,
        iterations: outcome.iterations,
        error,
    });
}

/// Stores what the run waits for and its checkpoint, tells the client, and ends the stream: a
/// paused run is data until its answer (or its client tools' results) comes.
async fn pause_run(spec: &RunSpec, outcome: &LoopOutcome, pause: Pause) -> Result<(), RunError> {
    let failed = |cause: String| {
        tracing::error!(run_id = %spec.log.run_id, %cause, "could not pause the run");
        RunError {
            detail: spec
                .log
                .owner_is_admin
                .then(|| format!("the run's pause could not be saved: {cause}")),
            ..RunError::new("pause_failed", "the question could not be saved")
        }
    };
    let Some((session, user_message_id)) = &spec.chat else {
        return Err(failed("a paused run needs a stored chat".into()));
    };
    let (kind, prefix, tool_call_id, question, stop_reason) = match pause.waiting {
        Waiting::Answer {
            tool_call_id,
            question,
        } => (
            AskKind::AskUser,
            "ask",
            tool_call_id,
            question,
            StopReason::Paused,
        ),
        Waiting::ClientTools { calls } => {
            let first = calls.first().map(|c| c.id.clone()).unwrap_or_default();
            let question = serde_json::json!({"type": "client_tool_calls", "calls": calls});
            (
                AskKind::ClientTools,
                "tools",
                first,
                question,
                StopReason::ToolCalls,
            )
        }
    };
    let correlation_id = format!("{prefix}_{}", uuid::Uuid::new_v4().simple());
    let checkpoint = Checkpoint {
        messages: pause.messages,
        tool_call_id: tool_call_id.clone(),
        user_message_id: user_message_id.clone(),
        point: ResumePoint {
            tool_rounds: pause.tool_rounds,
            iterations: outcome.iterations,
            usage: outcome.usage,
            content: outcome.content.clone(),
        },
        max_iterations: spec.max_iterations,
        tools: spec.tools.iter().map(|t| t.name().to_string()).collect(),
        template: spec.template.clone(),
        parts: spec.parts.snapshot(),
        project: Some(spec.project.clone()),
        client_tools: spec.client_tools.clone(),
    };
    let checkpoint = serde_json::to_value(&checkpoint).map_err(|e| failed(e.to_string()))?;
    let expires_at = chrono::Utc::now()
        + chrono::Duration::from_std(spec.ask_expiry).unwrap_or(chrono::Duration::hours(24));
    let ask = NewAsk {
        kind,
        correlation_id: correlation_id.clone(),
        chat_id: spec.log.chat_id.clone().unwrap_or_default(),
        run_id: spec.log.run_id.clone(),
        user_id: spec.log.owner_id.clone(),
        tool_call_id,
        question: question.clone(),
        checkpoint,
        expires_at,
    };
    session
        .send(crate::chat::session::PauseTurn {
            ask,
            stop_reason,
            usage: outcome.usage,
            iterations: outcome.iterations,
        })
        .await
        .map_err(|e| failed(e.to_string()))?
        .map_err(|e| failed(e.to_string()))?;
    if kind == AskKind::AskUser {
        let mut question = question;
        question["correlation_id"] = Value::String(correlation_id.clone());
        question["expires_at"] = serde_json::json!(expires_at);
        spec.log.push(RunEvent::Extension {
            event_type: "x_ask_user.question".into(),
            payload: question,
        });
        spec.log.push(RunEvent::Extension {
            event_type: "x_ask_user.pending_state".into(),
            payload: serde_json::json!({"correlation_id": correlation_id, "content": outcome.content}),
        });
    }
    spec.log.push(RunEvent::Finished {
        stop_reason,
        assistant_message_id: None,
        usage: outcome.usage,
        iterations: outcome.iterations,
        error: None,
    });
    Ok(())
}

/// While text streams, the answer so far is saved at least this often, so a crash loses at
/// most about a second of it.
const DRAFT_SAVE_INTERVAL: Duration = Duration::from_secs(1);
/// ... or as soon as this many bytes are new, whichever comes first.
const DRAFT_SAVE_BYTES: usize = 4096;

/// Bookkeeping of one run of the loop.
struct LoopState {
    started: Instant,
    content: String,
    /// When the answer's draft was last saved, and how long it was then.
    draft_saved_at: Instant,
    draft_saved_len: usize,
    usage: Usage,
    iterations: u32,
    research_calls: u32,
    sources: u32,
    research_announced: bool,
}

impl LoopState {
    fn append(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if !self.content.is_empty() && !self.content.ends_with('\n') {
            self.content.push_str("\n\n");
        }
        self.content.push_str(text);
    }

    /// Saves the answer so far (`content` and the turn's `pending` text) through the chat
    /// session when enough time or text has passed since the last save, or when `force`d.
    fn save_draft(&mut self, spec: &RunSpec, pending: &str, force: bool) {
        let Some((session, _)) = &spec.chat else {
            return;
        };
        let len = self.content.len() + pending.len();
        let new_bytes = len.saturating_sub(self.draft_saved_len);
        if new_bytes == 0
            || (!force
                && new_bytes < DRAFT_SAVE_BYTES
                && self.draft_saved_at.elapsed() < DRAFT_SAVE_INTERVAL)
        {
            return;
        }
        let mut draft = self.content.clone();
        if !pending.is_empty() {
            if !draft.is_empty() && !draft.ends_with('\n') {
                draft.push_str("\n\n");
            }
            draft.push_str(pending);
        }
        session.do_send(SaveDraft {
            run_id: spec.log.run_id.clone(),
            content: draft,
        });
        self.draft_saved_at = Instant::now();
        self.draft_saved_len = len;
    }

    fn announce_research(&mut self, log: &RunLog) {
        if self.research_calls == 0 || self.research_announced {
            return;
        }
        self.research_announced = true;
        log.push(RunEvent::ResearchComplete {
            elapsed_ms: self.started.elapsed().as_millis() as u64,
            input_tokens: self.usage.prompt_tokens,
            output_tokens: self.usage.completion_tokens,
            iterations: self.iterations,
            sources: self.sources,
        });
    }

    fn stop(
        mut self,
        log: &RunLog,
        stop_reason: StopReason,
        error: Option<RunError>,
    ) -> LoopOutcome {
        self.announce_research(log);
        LoopOutcome {
            content: self.content,
            stop_reason,
            usage: self.usage,
            iterations: self.iterations,
            error,
            pause: None,
        }
    }
}

/// The run's error for an upstream failure: the public summary, and the whole cause (which
/// names the upstream's address) only for an admin's run. The cause is logged either way.
fn upstream_error(log: &RunLog, err: &LlmError) -> Option<RunError> {
    tracing::warn!(run_id = %log.run_id, error = %err, "the model server failed");
    Some(RunError {
        detail: log.owner_is_admin.then(|| err.to_string()),
        ..RunError::new(err.code(), err.public_message())
    })
}

/// How a wait inside the loop ended.
pub(super) enum Interrupt {
    Cancelled,
    OutOfTime,
}

impl Interrupt {
    fn reason(&self) -> StopReason {
        match self {
            Self::Cancelled => StopReason::Cancelled,
            Self::OutOfTime => StopReason::TimeBudget,
        }
    }
}

/// Waits for `future` unless the run is cancelled or out of time first.
pub(super) async fn guarded<F: std::future::Future>(
    log: &RunLog,
    deadline: tokio::time::Instant,
    future: F,
) -> Result<F::Output, Interrupt> {
    tokio::select! {
        biased;
        () = log.cancel.cancelled() => Err(Interrupt::Cancelled),
        () = tokio::time::sleep_until(deadline) => Err(Interrupt::OutOfTime),
        output = future => Ok(output),
    }
}

async fn run_loop(spec: &RunSpec) -> LoopOutcome {
    let log = &spec.log;
    let deadline =
        tokio::time::Instant::now() + Duration::from_secs(spec.limits.run_time_budget_secs);
    let resume = spec.resume.clone().unwrap_or_default();
    let mut state = LoopState {
        started: Instant::now(),
        draft_saved_at: Instant::now(),
        draft_saved_len: resume.content.len(),
        content: resume.content,
        usage: resume.usage,
        iterations: resume.iterations,
        research_calls: 0,
        sources: 0,
        research_announced: false,
    };
    let mut detector = LoopDetector::new(
        spec.limits.loop_detection_window,
        spec.limits.max_identical_calls,
    );
    let mut definitions: Vec<_> = spec.tools.iter().map(|t| t.definition()).collect();
    definitions.extend(spec.client_tools.iter().cloned());
    let mut messages = spec.messages.clone();
    let mut tool_rounds = resume.tool_rounds;
    // The latest turn (the user's message, and this run's exchanges after it) is never
    // dropped to fit the context.
    let latest_turn = messages
        .iter()
        .rposition(|m| m.role == Role::User)
        .unwrap_or(0);
    let mut fitting = Fitting::default();
    loop {
        let final_call = !spec.tools.is_empty() && tool_rounds >= spec.max_iterations;
        let mut request = spec.template.clone();
        request.messages = messages.clone();
        if final_call {
            request
                .messages
                .push(ChatMessage::user(FINAL_ANSWER_INSTRUCTION));
        } else {
            request = request.with_tools(definitions.clone());
        }
        // A client's `tool_choice` forces the run's first call only (not one after a tool
        // round or a resumed pause), so the loop can end; without tools there is nothing to
        // choose.
        if request.tools.is_none() || tool_rounds > 0 {
            request.tool_choice = None;
        }
        let window = match guarded(log, deadline, spec.llm.context_length(&request.model)).await {
            Ok(window) => window,
            Err(interrupt) => return state.stop(log, interrupt.reason(), None),
        };
        if let Some(window) = window {
            let fitted = fitting
                .fit(
                    spec,
                    deadline,
                    &mut state.usage,
                    &mut request,
                    latest_turn,
                    window,
                )
                .await;
            match fitted {
                Ok(()) => {}
                Err(Unfit::TooLarge(too_large)) => {
                    let error = RunError::new("context_length_exceeded", too_large.message());
                    return state.stop(log, StopReason::UpstreamError, Some(error));
                }
                Err(Unfit::Interrupted(interrupt)) => {
                    return state.stop(log, interrupt.reason(), None);
                }
            }
        }
        state.iterations += 1;
        let opened = match guarded(log, deadline, spec.llm.chat_stream(&request)).await {
            Ok(opened) => opened,
            Err(interrupt) => return state.stop(log, interrupt.reason(), None),
        };
        let mut stream = match opened {
            Ok(stream) => stream,
            // The server told how large its context is: fit the request to it and try once
            // more.
            Err(LlmError::ContextOverflow {
                context_length: Some(size),
                ..
            }) if !fitting.learnt && window != Some(size) => {
                tracing::info!(run_id = %log.run_id, model = %request.model, size, "learnt the model's context window from its error");
                spec.llm.learn_context_length(&request.model, size);
                fitting.learnt = true;
                state.iterations -= 1;
                continue;
            }
            Err(err) => {
                let error = upstream_error(log, &err);
                return state.stop(log, StopReason::UpstreamError, error);
            }
        };
        let mut turn = TurnAccumulator::default();
        loop {
            let next = match guarded(log, deadline, stream.next()).await {
                Ok(next) => next,
                Err(interrupt) => {
                    // Dropping the stream drops the upstream request.
                    drop(stream);
                    state.append(turn.content());
                    return state.stop(log, interrupt.reason(), None);
                }
            };
            match next {
                None => break,
                Some(Ok(chunk)) => {
                    if let Some(text) = turn.push(&chunk) {
                        state.announce_research(log);
                        log.push(RunEvent::TextDelta { content: text });
                        state.save_draft(spec, turn.content(), false);
                    }
                }
                Some(Err(err)) => {
                    state.append(turn.content());
                    let error = upstream_error(log, &err);
                    return state.stop(log, StopReason::UpstreamError, error);
                }
            }
        }
        let turn = turn.finish();
        let usage = match turn.usage {
            Some(usage) if super::usage::is_real(Some(&usage)) => usage,
            _ => {
                let (request, content, calls) = (
                    request.clone(),
                    turn.content.clone(),
                    turn.tool_calls.clone(),
                );
                tokio::task::spawn_blocking(move || {
                    super::usage::estimate(&request, &content, &calls)
                })
                .await
                .unwrap_or_default()
            }
        };
        state.usage.add(usage);
        state.append(&turn.content);
        if turn.tool_calls.is_empty() || final_call {
            let reason = if final_call {
                StopReason::MaxIterations
            } else if turn.finish_reason == Some(FinishReason::Length) {
                StopReason::Length
            } else {
                StopReason::Completed
            };
            return state.stop(log, reason, None);
        }
        // A call of a client's tool ends the run: the client runs it and continues the
        // conversation with its result (server-side calls of the same turn are not run; the
        // model may ask for them again then).
        let client_calls: Vec<ToolCall> = turn
            .tool_calls
            .iter()
            .filter(|call| {
                spec.client_tools
                    .iter()
                    .any(|tool| tool.function.name == call.function.name)
            })
            .cloned()
            .collect();
        if !client_calls.is_empty() {
            log.push(RunEvent::ClientToolCalls {
                calls: client_calls.clone(),
            });
            let mut outcome = state.stop(log, StopReason::ToolCalls, None);
            // In a stored chat the run waits for the results, which come with the client's
            // next request there; a run without a chat is over (the client sends the whole
            // conversation again).
            if spec.chat.is_some() {
                messages.push(ChatMessage::assistant_with_tools(
                    Some(turn.content.clone()),
                    client_calls.clone(),
                ));
                outcome.pause = Some(Pause {
                    waiting: Waiting::ClientTools {
                        calls: client_calls,
                    },
                    messages,
                    tool_rounds,
                });
            }
            return outcome;
        }
        // Tools may take a while: what was said before them is saved first.
        state.save_draft(spec, "", true);
        messages.push(ChatMessage::assistant_with_tools(
            Some(turn.content.clone()),
            turn.tool_calls.clone(),
        ));
        let round = run_tools(spec, &turn.tool_calls, &mut detector, &mut state);
        let (results, pause) = match guarded(log, deadline, round).await {
            Ok(results) => results,
            // Dropping the round drops every running tool call.
            Err(interrupt) => return state.stop(log, interrupt.reason(), None),
        };
        for (call, text) in turn.tool_calls.iter().zip(results) {
            if let Some(text) = text {
                messages.push(ChatMessage::tool_result(call.id.clone(), text));
            }
        }
        tool_rounds += 1;
        if let Some((tool_call_id, question)) = pause {
            let mut outcome = state.stop(log, StopReason::Paused, None);
            outcome.pause = Some(Pause {
                waiting: Waiting::Answer {
                    tool_call_id,
                    question,
                },
                messages,
                tool_rounds,
            });
            return outcome;
        }
    }
}

/// A call ready to run, or already answered by the governance rules.
enum Planned {
    Run {
        tool: SharedTool,
        arguments: Value,
        key: CallKey,
    },
    Answered(Result<Value, ToolError>),
}

/// Runs one model turn's tool calls concurrently; returns the text fed back for each, in order
/// (`None` for the question the run pauses on), and that question if there is one.
async fn run_tools(
    spec: &RunSpec,
    calls: &[ToolCall],
    detector: &mut LoopDetector,
    state: &mut LoopState,
) -> (Vec<Option<String>>, Option<(String, Value)>) {
    let log = &spec.log;
    let planned: Vec<(Option<SharedTool>, Planned)> = calls
        .iter()
        .map(|call| plan_call(spec, call, detector))
        .collect();
    for ((tool, plan), call) in planned.iter().zip(calls) {
        let arguments = match plan {
            Planned::Run { arguments, .. } => arguments.clone(),
            // Arguments that are not JSON are kept as their raw text, so the event shows what
            // the model sent.
            Planned::Answered(_) => serde_json::from_str(&call.function.arguments)
                .unwrap_or_else(|_| Value::String(call.function.arguments.clone())),
        };
        log.push(RunEvent::ToolCall {
            id: call.id.clone(),
            name: call.function.name.clone(),
            arguments,
            progress: tool.as_ref().and_then(|t| t.progress()),
        });
    }
    let timeout = Duration::from_secs(spec.limits.tool_timeout_secs);
    let runs = planned.into_iter().zip(calls).map(|((tool, plan), call)| {
        let cache = spec.cache.clone();
        async move {
            let result = match plan {
                Planned::Answered(result) => result,
                Planned::Run {
                    tool,
                    arguments,
                    key,
                } => execute_call(&tool, &call.id, arguments, key, &cache, timeout).await,
            };
            (tool, call, result)
        }
    });
    let mut texts = Vec::with_capacity(calls.len());
    let mut records = Vec::with_capacity(calls.len());
    let mut pause = None;
    for (tool, call, result) in join_all(runs).await {
        let pauses = tool.as_ref().is_some_and(|t| t.pauses());
        let result = match result {
            Ok(question) if pauses && pause.is_none() => {
                pause = Some((call.id.clone(), question));
                texts.push(None);
                continue;
            }
            Ok(_) if pauses => Err(ToolError::new(
                "one_question_at_a_time",
                "only one question can be asked at a time",
                "Ask one question, wait for the answer, then ask the next.",
            )),
            other => other,
        };
        let progress = tool.as_ref().and_then(|t| t.progress());
        let research = progress.is_some();
        let (mut value, success, error) = match result {
            Ok(value) => (value, true, None),
            Err(err) => (err.to_result(), false, Some(err.message.clone())),
        };
        strip_base64_images(&mut value);
        if research {
            state.research_calls += 1;
            if success && progress != Some(ProgressKind::Calculating) {
                state.sources += count_sources(&value);
            }
        }
        let (text, _) = truncate_result(&value.to_string(), spec.limits.max_tool_result_chars);
        let preview = result_preview(&value);
        records.push(ToolCallRecord {
            id: call.id.clone(),
            name: call.function.name.clone(),
            arguments: recorded_arguments(&call.function.arguments),
            success,
            preview: preview.clone(),
            error: error.clone(),
        });
        log.push(RunEvent::ToolResult {
            tool_call_id: call.id.clone(),
            name: call.function.name.clone(),
            success,
            preview,
            result: value,
            error,
            research,
        });
        texts.push(Some(text));
    }
    if let Some((session, _)) = &spec.chat
        && !records.is_empty()
    {
        session.do_send(RecordToolCalls {
            run_id: log.run_id.clone(),
            calls: records,
        });
    }
    (texts, pause)
}

/// Longest argument text kept in a run's record of its tool calls.
const RECORDED_ARGUMENTS_CHARS: usize = 1_000;

/// A call's arguments as recorded: the JSON object when short, else its text shortened.
fn recorded_arguments(raw: &str) -> Value {
    let (short, truncated) = truncate_result(raw, RECORDED_ARGUMENTS_CHARS);
    if !truncated && let Ok(value) = serde_json::from_str::<Value>(raw) {
        return value;
    }
    Value::String(short)
}

/// How many sources a research result cites: its result or page entries, or one.
fn count_sources(value: &Value) -> u32 {
    ["results", "pages"]
        .iter()
        .find_map(|field| value.get(*field).and_then(Value::as_array))
        .map_or(1, |items| items.len() as u32)
}

/// Applies the rules that need no execution: known tool, valid JSON, loop detection.
fn plan_call(
    spec: &RunSpec,
    call: &ToolCall,
    detector: &mut LoopDetector,
) -> (Option<SharedTool>, Planned) {
    let name = &call.function.name;
    let Some(tool) = spec.tools.iter().find(|t| t.name() == name).cloned() else {
        let error = ToolError::new(
            "unknown_tool",
            format!("there is no tool named {name:?}"),
            "Call only the tools listed in this request.",
        );
        return (None, Planned::Answered(Err(error)));
    };
    let arguments: Value = match serde_json::from_str(&call.function.arguments) {
        Ok(value @ Value::Object(_)) => value,
        Ok(_) | Err(_) => {
            let error = ToolError::invalid_arguments(format!(
                "the arguments of {name} are not a JSON object: {}",
                truncate_result(&call.function.arguments, 200).0
            ));
            return (Some(tool), Planned::Answered(Err(error)));
        }
    };
    let key = CallKey::new(name, &arguments);
    // A result the cache will serve costs no research call, so it does not count.
    let cached = tool.cacheable() && spec.cache.contains_key(key.as_str());
    if tool.progress().is_some()
        && !cached
        && let Err(seconds) = spec.rate_limiter.check(&spec.project)
    {
        let error = ToolError::new(
            "rate_limited",
            format!("Research tool rate limit exceeded. Try again in {seconds} seconds."),
            "Answer with what you have, or wait before calling research tools again.",
        );
        return (Some(tool), Planned::Answered(Err(error)));
    }
    if let Err(seen) = detector.check(&key) {
        let error = ToolError::new(
            "repeated_call",
            format!(
                "{name} was already called {seen} times with these exact arguments in this run"
            ),
            "Use the results you already have, change the arguments, or answer the user now.",
        );
        return (Some(tool), Planned::Answered(Err(error)));
    }
    (
        Some(tool.clone()),
        Planned::Run {
            tool,
            arguments,
            key,
        },
    )
}

/// Runs one call with its timeout, serving and filling the cache.
async fn execute_call(
    tool: &SharedTool,
    call_id: &str,
    arguments: Value,
    key: CallKey,
    cache: &ToolCache,
    timeout: Duration,
) -> Result<Value, ToolError> {
    let cacheable = tool.cacheable();
    if cacheable && let Some(hit) = cache.get(key.as_str()).await {
        return Ok(hit);
    }
    let result = match tokio::time::timeout(timeout, tool.run_call(call_id, arguments)).await {
        Ok(result) => result,
        Err(_) => Err(ToolError::new(
            "timeout",
            format!(
                "{} did not finish within {} seconds",
                tool.name(),
                timeout.as_secs()
            ),
            "Try a simpler request, or answer with what you have.",
        )),
    };
    if cacheable && let Ok(value) = &result {
        cache.insert(key.as_str().to_string(), value.clone()).await;
    }
    result
}
