//! `AgentRun`: one actor per request, running the governed agentic loop
//! (docs/spec.md#the-agentic-loop): stream a model turn; run the tool calls it asks for in
//! parallel, each with a timeout, the result cache, loop detection, base64 stripping and
//! truncation; feed results back; repeat up to the iteration cap, then ask for a final answer
//! without tools. Every exit has a `StopReason`. The outcome is handed to the chat's `ChatSession`
//! to persist.

use std::time::{Duration, Instant};

use actix::prelude::*;
use futures_util::StreamExt;

use super::fitting::{Fitting, Unfit};
use super::governance::LoopDetector;
use super::prompt::FINAL_ANSWER_INSTRUCTION;
use crate::chat::session::CompleteTurn;
use crate::llm::wire::{ChatMessage, FinishReason, Role, ToolCall};
use crate::llm::{LlmError, TurnAccumulator};
use crate::run::events::{RunError, RunErrorKind, RunEvent, StopReason};
use crate::run::log::RunLog;

use super::kernel::{LoopOutcome, Pause, RunSpec, Waiting, guarded};
use super::loop_state::{CallClock, LoopState};
use super::pause::pause_run;
use super::tool_round::run_tools;

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
    finish(&spec, outcome).await;
}

/// Ends a run: hands its answer to the chat's session to persist, then logs `Finished`.
pub(super) async fn finish(spec: &RunSpec, outcome: LoopOutcome) {
    spec.metrics.run_finished(outcome.stop_reason.as_str());
    let mut assistant_message_id = None;
    let mut error = outcome.error.clone();
    if let Some((session, user_message_id)) = &spec.chat {
        let stored = session
            .send(CompleteTurn {
                run_id: spec.log.run_id.clone(),
                user_message_id: user_message_id.clone(),
                content: outcome.content.clone(),
                parts: spec.parts.to_value(),
                reasoning: outcome.reasoning.clone(),
                model: Some(spec.log.model.clone()),
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
                    RunErrorKind::PersistenceFailed,
                    "the answer could not be saved",
                ));
            }
            Err(err) => {
                tracing::error!(run_id = %spec.log.run_id, %err, "chat session gone before the run finished");
                error.get_or_insert(RunError::new(
                    RunErrorKind::PersistenceFailed,
                    "the answer could not be saved",
                ));
            }
        }
    }
    spec.log.push(RunEvent::Finished {
        stop_reason: outcome.stop_reason,
        assistant_message_id,
        usage: outcome.usage,
        research_usage: Some(outcome.research_usage),
        iterations: outcome.iterations,
        error,
    });
}

/// The run's error for an upstream failure: the public summary, and the whole cause (which
/// names the upstream's address) only for an admin's run. The cause is logged either way.
pub(super) fn upstream_error(log: &RunLog, err: &LlmError) -> Option<RunError> {
    tracing::warn!(run_id = %log.run_id, error = %err, "the model server failed");
    Some(RunError {
        detail: log.owner_is_admin.then(|| err.to_string()),
        ..RunError::new(err.into(), err.public_message())
    })
}

pub(super) async fn run_loop(spec: &RunSpec) -> LoopOutcome {
    let log = &spec.log;
    let deadline = spec.deadline.unwrap_or_else(|| {
        tokio::time::Instant::now() + Duration::from_secs(spec.limits.run_time_budget_secs)
    });
    let resume = spec.resume.clone().unwrap_or_default();
    let mut state = LoopState {
        started: Instant::now(),
        draft_saved_at: Instant::now(),
        draft_saved_len: resume.content.len(),
        content: resume.content,
        reasoning: resume.reasoning,
        reasoning_ms: resume.reasoning_ms,
        usage: resume.usage,
        research_usage: resume.research_usage,
        iterations: resume.iterations,
        research_calls: 0,
        sources: 0,
        // A sub-task's research is part of its Deep Think run's, which reports it.
        research_announced: spec.subtask.is_some(),
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
    // Whether the model refused screenshots in this run: a call is made again without them
    // once.
    let mut screenshots_refused = false;
    let mut images = super::images::InlinedImages::default();
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
                    let error =
                        RunError::new(RunErrorKind::ContextLengthExceeded, too_large.message());
                    return state.stop(log, StopReason::UpstreamError, Some(error));
                }
                Err(Unfit::Interrupted(interrupt)) => {
                    return state.stop(log, interrupt.reason(), None);
                }
            }
        }
        // The stored images go in last, after fitting counted each as a fixed cost.
        if let (Some(attachments), Some(chat_id)) = (&spec.attachments, &log.chat_id) {
            let inlined = images.inline(&mut request, attachments, chat_id);
            if let Err(interrupt) = guarded(log, deadline, inlined).await {
                return state.stop(log, interrupt.reason(), None);
            }
        }
        // Whether this call shows the model screenshots it may refuse (and be made again
        // without them).
        let mut screenshots_shown = false;
        if let (Some(shown), Some(chat_id)) = (&spec.screenshots, &log.chat_id) {
            let refused = screenshots_refused;
            let showing =
                super::images::show_screenshots(&mut request, shown, &spec.llm, chat_id, refused);
            match guarded(log, deadline, showing).await {
                Ok(revocable) => screenshots_shown = revocable,
                Err(interrupt) => return state.stop(log, interrupt.reason(), None),
            }
        }
        state.iterations += 1;
        if spec.subtask.is_none() {
            log.push(RunEvent::Thinking {
                iteration: state.iterations,
            });
        }
        let mut clock = CallClock::start();
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
            // The model cannot read the screenshots it was shown: it is not shown any more, and
            // this call is made again without them.
            Err(LlmError::ImagesUnsupported { .. })
                if screenshots_shown && !screenshots_refused =>
            {
                tracing::info!(run_id = %log.run_id, model = %request.model, "the model refused screenshots; not showing it any more");
                spec.llm.learn_refuses_images(&request.model);
                screenshots_refused = true;
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
                    state.append_reasoning(turn.reasoning(), &clock);
                    return state.stop(log, interrupt.reason(), None);
                }
            };
            match next {
                None => {
                    // What the `<think>` splitter held back until the end.
                    let rest = turn.close();
                    state.stream(spec, &mut clock, rest, turn.content());
                    break;
                }
                Some(Ok(chunk)) => {
                    let split = turn.push(&chunk);
                    state.stream(spec, &mut clock, split, turn.content());
                }
                Some(Err(err)) => {
                    state.append(turn.content());
                    state.append_reasoning(turn.reasoning(), &clock);
                    let error = upstream_error(log, &err);
                    return state.stop(log, StopReason::UpstreamError, error);
                }
            }
        }
        let turn = turn.finish();
        let usage = match turn.usage {
            Some(usage) if super::usage::is_real(Some(&usage)) => usage,
            _ => {
                // The reasoning was generated too.
                let (request, content, calls) = (
                    request.clone(),
                    format!("{}{}", turn.reasoning, turn.content),
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
        state.append_reasoning(&turn.reasoning, &clock);
        let spent = state.usage.prompt_tokens + state.usage.completion_tokens;
        if let Some(bounds) = &spec.subtask
            && spent >= bounds.token_budget
            && !turn.tool_calls.is_empty()
        {
            return state.stop(log, StopReason::TokenBudget, None);
        }
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
        // A turn that asked for the server's tools is research, not the answer.
        state.research_usage.add(usage);
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
        // Screenshots a model that reads images is shown, after the results that took them.
        let taken = match &spec.screenshots {
            Some(shown) if shown.to(&spec.llm, &spec.template.model) && !screenshots_refused => {
                super::images::screenshots_taken(&turn.tool_calls, &results)
            }
            _ => None,
        };
        for (call, text) in turn.tool_calls.iter().zip(results) {
            if let Some(text) = text {
                messages.push(ChatMessage::tool_result(call.id.clone(), text));
            }
        }
        messages.extend(taken);
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
