//! `AgentRun`: one actor per request, running the governed agentic loop
//! (docs/spec.md#the-agentic-loop): stream a model turn (`model_call`); run the tool calls it
//! asks for in parallel, each with a timeout, the result cache, loop detection, base64
//! stripping and truncation (`tool_round`); feed results back, with the images the tools
//! returned; repeat up to the iteration cap, then ask for a final answer without tools. Every
//! exit has a `StopReason`. The loop knows no tool and no driver: what bounds it is data on
//! its `RunSpec`. The outcome is handed to the chat's `ChatSession` to persist.

use std::time::Duration;

use actix::prelude::*;

use super::governance::LoopDetector;
use crate::chat::session::CompleteTurn;
use crate::llm::AssistantTurn;
use crate::llm::wire::{ChatMessage, FinishReason, ToolCall};
use crate::run::events::{RunError, RunErrorKind, RunEvent, StopReason};

use super::images::images_returned;
use super::kernel::{ChatLink, LoopOutcome, Pause, RunSpec, Waiting, guarded};
use super::loop_state::LoopState;
use super::model_call::ModelCaller;
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

async fn execute(mut spec: RunSpec) {
    let written = spec.written.take();
    let mut outcome = run_loop_once_written(&spec, written).await;
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
    spec.handles
        .metrics
        .run_finished(outcome.stop_reason.as_str());
    let mut assistant_message_id = None;
    let mut error = outcome.error.clone();
    if let Some(ChatLink {
        session,
        user_message: user_message_id,
    }) = &spec.chat
        && !outcome.unstored
    {
        // The writer tells the run once the answer is durable; the session takes the answer
        // into its tree meanwhile, off the run's way.
        let (told, stored) = tokio::sync::oneshot::channel();
        session.do_send(CompleteTurn {
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
            stored: Some(told),
        });
        match stored.await {
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

/// The loop: a model call; the tool calls it asks for, as one round; their results (and the
/// images they returned) fed back; again, until the model answers without tools, the
/// iterations are spent, a bound or interruption stops it, or it pauses.
pub(super) async fn run_loop(spec: &RunSpec) -> LoopOutcome {
    run_loop_once_written(spec, None).await
}

/// `run_loop` for a run that started before its turn was written (`RunSpec::written`).
async fn run_loop_once_written(
    spec: &RunSpec,
    written: Option<tokio::sync::oneshot::Receiver<()>>,
) -> LoopOutcome {
    let log = &spec.log;
    let limits = &spec.handles.limits;
    let deadline = spec.deadline.unwrap_or_else(|| {
        tokio::time::Instant::now() + Duration::from_secs(limits.run_time_budget_secs)
    });
    let resume = spec.resume.clone().unwrap_or_default();
    let mut tool_rounds = resume.tool_rounds;
    // A quiet loop's research is its driver's to report.
    let mut state = LoopState::resumed(resume, spec.bounds.quiet);
    let mut detector = LoopDetector::new(limits.loop_detection_window, limits.max_identical_calls);
    let mut messages = spec.messages.clone();
    let mut caller = ModelCaller::new(spec, &messages, deadline).once_written(written);
    loop {
        let answer = match caller.call(spec, &mut state, &messages, tool_rounds).await {
            Ok(answer) => answer,
            Err((reason, error)) => {
                let mut outcome = state.stop(log, reason, error);
                outcome.unstored = caller.unstored();
                return outcome;
            }
        };
        let turn = &answer.turn;
        let spent = state.usage.prompt_tokens + state.usage.completion_tokens;
        if spec
            .bounds
            .token_budget
            .is_some_and(|budget| spent >= budget)
            && !turn.tool_calls.is_empty()
        {
            return state.stop(log, StopReason::TokenBudget, None);
        }
        if turn.tool_calls.is_empty() || answer.final_call {
            let reason = if answer.final_call {
                StopReason::MaxIterations
            } else if turn.finish_reason == Some(FinishReason::Length) {
                StopReason::Length
            } else {
                StopReason::Completed
            };
            return state.stop(log, reason, None);
        }
        let client_calls = client_calls(spec, &turn.tool_calls);
        if !client_calls.is_empty() {
            return wait_for_client(spec, state, messages, tool_rounds, turn, client_calls);
        }
        // A turn that asked for the server's tools is research, not the answer.
        state.research_usage.add(answer.usage);
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
        // The images the tools returned, shown to a model that reads them after the results.
        let returned = match caller.shows_tool_images(spec) {
            true => images_returned(&spec.tools, &turn.tool_calls, &results),
            false => None,
        };
        for (call, text) in turn.tool_calls.iter().zip(results) {
            if let Some(text) = text {
                messages.push(ChatMessage::tool_result(call.id.clone(), text));
            }
        }
        messages.extend(returned);
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

/// The calls of `calls` that are of the client's own tools.
fn client_calls(spec: &RunSpec, calls: &[ToolCall]) -> Vec<ToolCall> {
    calls
        .iter()
        .filter(|call| {
            spec.client_tools
                .iter()
                .any(|tool| tool.function.name == call.function.name)
        })
        .cloned()
        .collect()
}

/// A call of a client's tool ends the run: the client runs it and continues the conversation
/// with its result (server-side calls of the same turn are not run; the model may ask for
/// them again then).
fn wait_for_client(
    spec: &RunSpec,
    state: LoopState,
    mut messages: Vec<ChatMessage>,
    tool_rounds: u32,
    turn: &AssistantTurn,
    client_calls: Vec<ToolCall>,
) -> LoopOutcome {
    spec.log.push(RunEvent::ClientToolCalls {
        calls: client_calls.clone(),
    });
    let mut outcome = state.stop(&spec.log, StopReason::ToolCalls, None);
    // In a stored chat the run waits for the results, which come with the client's next
    // request there; a run without a chat is over (the client sends the whole conversation
    // again).
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
    outcome
}
