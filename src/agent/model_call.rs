//! One model call of the loop: the request (the run's tools, or the final-answer instruction
//! once the iterations are spent), fitted to the model's context, with the stored images and
//! the images tools returned read in; the stream, its reasoning and text streamed through the
//! loop's state; and the call's usage, the upstream's or estimated. A call the server refused
//! for a reason it can be made again without — a context smaller than thought, images the
//! model cannot read — is made again, once for each.

use futures_util::StreamExt;

use super::fitting::{Fitting, Unfit};
use super::images::{InlinedImages, show_tool_images};
use super::kernel::{Interrupt, RunSpec, guarded};
use super::loop_state::{CallClock, LoopState};
use super::prompt::FINAL_ANSWER_INSTRUCTION;
use crate::llm::wire::{ChatMessage, ChatRequest, Role, ToolDefinition, Usage};
use crate::llm::{AssistantTurn, ChatStream, LlmError, TurnAccumulator};
use crate::run::events::{RunError, RunErrorKind, RunEvent, StopReason};
use crate::run::log::RunLog;

/// Why a model call ended its run: the stop reason, and the error if there is one.
pub(super) type Stopped = (StopReason, Option<RunError>);

/// The error of a run whose turn could not be saved.
fn unsaved() -> RunError {
    RunError::new(
        crate::run::events::RunErrorKind::PersistenceFailed,
        "the message could not be saved",
    )
}

fn interrupted(interrupt: Interrupt) -> Stopped {
    (interrupt.reason(), None)
}

/// What a model call answered.
pub(super) struct Answer {
    pub(super) turn: AssistantTurn,
    /// What the call cost, as the upstream reported it or estimated.
    pub(super) usage: Usage,
    /// Whether it was the run's final call, made without tools.
    pub(super) final_call: bool,
}

/// Makes one run's model calls, keeping what the run learns from them.
pub(super) struct ModelCaller {
    /// The run's tools, the server's and the client's, as the model is offered them.
    definitions: std::sync::Arc<[ToolDefinition]>,
    /// The latest turn (the user's message, and this run's exchanges after it) is never
    /// dropped to fit the context.
    latest_turn: usize,
    fitting: Fitting,
    /// Whether the model refused the images tools returned in this run: a call is made again
    /// without them once, and none is shown them after.
    images_refused: bool,
    inlined: InlinedImages,
    deadline: tokio::time::Instant,
    /// Told once the run's turn is durable (`RunSpec::written`): awaited by the first call,
    /// after its request went out and before anything is told.
    written: Option<tokio::sync::oneshot::Receiver<()>>,
    /// The run's turn was never stored: the first call told nothing and stopped.
    unstored: bool,
}

impl ModelCaller {
    /// The caller of a run over `messages` (its conversation as it starts) within `deadline`.
    pub(super) fn new(
        spec: &RunSpec,
        messages: &[ChatMessage],
        deadline: tokio::time::Instant,
    ) -> Self {
        let mut definitions: Vec<_> = spec.tools.iter().map(|t| t.definition()).collect();
        definitions.extend(spec.client_tools.iter().cloned());
        Self {
            definitions: definitions.into(),
            latest_turn: messages
                .iter()
                .rposition(|m| m.role == Role::User)
                .unwrap_or(0),
            fitting: Fitting::default(),
            images_refused: false,
            inlined: InlinedImages::default(),
            deadline,
            written: None,
            unstored: false,
        }
    }

    /// The caller of a run that waits for `written` (if any) before it tells anything.
    pub(super) fn once_written(
        mut self,
        written: Option<tokio::sync::oneshot::Receiver<()>>,
    ) -> Self {
        self.written = written;
        self
    }

    /// Whether the run's turn was never stored (its first call then stopped, telling nothing).
    pub(super) fn unstored(&self) -> bool {
        self.unstored
    }

    /// Whether the images tools return are shown to the run's model now.
    pub(super) fn shows_tool_images(&self, spec: &RunSpec) -> bool {
        !self.images_refused
            && spec
                .handles
                .tool_images
                .as_ref()
                .is_some_and(|shown| shown.to(&spec.handles.llm, &spec.template.model))
    }

    /// Calls the model over `messages` (`tool_rounds` of the run done) and streams its answer
    /// through `state`, which counts the call and its usage.
    pub(super) async fn call(
        &mut self,
        spec: &RunSpec,
        state: &mut LoopState,
        messages: &[ChatMessage],
        tool_rounds: u32,
    ) -> Result<Answer, Stopped> {
        loop {
            let final_call = !spec.tools.is_empty() && tool_rounds >= spec.max_iterations;
            let mut request = self.request(spec, messages, final_call, tool_rounds);
            let (window, revocable) = self.prepare(spec, state, &mut request).await?;
            state.iterations += 1;
            let thinking = || {
                if !spec.bounds.quiet {
                    spec.log.push(RunEvent::Thinking {
                        iteration: state.iterations,
                    });
                }
            };
            let written = self.written.take();
            if written.is_none() {
                thinking();
            }
            let mut clock = CallClock::start();
            let call = guarded(
                &spec.log,
                self.deadline,
                spec.handles.llm.chat_stream(&request),
            );
            let opened = match written {
                None => call.await,
                // The request goes out while the turn is written; its answer waits for it.
                Some(written) => match futures_util::future::join(written, call).await {
                    (Ok(()), opened) => {
                        thinking();
                        opened
                    }
                    (Err(_), _) => {
                        self.unstored = true;
                        return Err((StopReason::Interrupted, Some(unsaved())));
                    }
                },
            }
            .map_err(interrupted)?;
            let stream = match opened {
                Ok(stream) => stream,
                Err(err) if self.made_again(spec, &request, &err, window, revocable) => {
                    state.iterations -= 1;
                    continue;
                }
                Err(err) => {
                    return Err((StopReason::UpstreamError, upstream_error(&spec.log, &err)));
                }
            };
            let turn = receive(spec, state, &mut clock, stream, self.deadline).await?;
            let usage = usage_of(&request, &turn).await;
            state.usage.add(usage);
            state.append(&turn.content);
            state.append_reasoning(&turn.reasoning, &clock);
            return Ok(Answer {
                turn,
                usage,
                final_call,
            });
        }
    }

    /// The request over `messages`: with the run's tools, or the final-answer instruction.
    fn request(
        &self,
        spec: &RunSpec,
        messages: &[ChatMessage],
        final_call: bool,
        tool_rounds: u32,
    ) -> ChatRequest {
        let mut request = spec.template.clone();
        request.messages = messages.to_vec();
        if final_call {
            request
                .messages
                .push(ChatMessage::user(FINAL_ANSWER_INSTRUCTION));
        } else {
            request = request.with_tools(self.definitions.clone());
        }
        // A client's `tool_choice` forces the run's first call only (not one after a tool
        // round or a resumed pause), so the loop can end; without tools there is nothing to
        // choose.
        if request.tools.is_none() || tool_rounds > 0 {
            request.tool_choice = None;
        }
        request
    }

    /// Fits `request` to the model's context, then reads its images in. Returns the model's
    /// context window, if known, and whether the request shows images tools returned that
    /// the model may refuse (and the call be made again without them).
    async fn prepare(
        &mut self,
        spec: &RunSpec,
        state: &mut LoopState,
        request: &mut ChatRequest,
    ) -> Result<(Option<u32>, bool), Stopped> {
        let (log, llm, deadline) = (&spec.log, &spec.handles.llm, self.deadline);
        let window = guarded(log, deadline, llm.context_length(&request.model))
            .await
            .map_err(interrupted)?;
        if let Some(window) = window {
            let fitted = self.fitting.fit(
                spec,
                deadline,
                &mut state.usage,
                request,
                self.latest_turn,
                window,
            );
            match fitted.await {
                Ok(()) => {}
                Err(Unfit::TooLarge(too_large)) => {
                    let error =
                        RunError::new(RunErrorKind::ContextLengthExceeded, too_large.message());
                    return Err((StopReason::UpstreamError, Some(error)));
                }
                Err(Unfit::Interrupted(interrupt)) => return Err(interrupted(interrupt)),
            }
        }
        // The stored images go in last, after fitting counted each as a fixed cost.
        if let (Some(attachments), Some(chat_id)) = (&spec.handles.attachments, &log.chat_id) {
            let inlined = self.inlined.inline(request, attachments, chat_id);
            guarded(log, deadline, inlined).await.map_err(interrupted)?;
        }
        let mut revocable = false;
        if let (Some(shown), Some(chat_id)) = (&spec.handles.tool_images, &log.chat_id) {
            let showing = show_tool_images(request, shown, llm, chat_id, self.images_refused);
            revocable = guarded(log, deadline, showing).await.map_err(interrupted)?;
        }
        Ok((window, revocable))
    }

    /// Whether the call the server refused with `err` is made again: once it told how large
    /// its context is (fitted to it then), or once the model refused the images tools
    /// returned it was shown (not shown any more then).
    fn made_again(
        &mut self,
        spec: &RunSpec,
        request: &ChatRequest,
        err: &LlmError,
        window: Option<u32>,
        revocable: bool,
    ) -> bool {
        let (run_id, model) = (&spec.log.run_id, &request.model);
        match err {
            LlmError::ContextOverflow {
                context_length: Some(size),
                ..
            } if !self.fitting.learnt && window != Some(*size) => {
                tracing::info!(%run_id, %model, size, "learnt the model's context window from its error");
                spec.handles.llm.learn_context_length(model, *size);
                self.fitting.learnt = true;
                true
            }
            LlmError::ImagesUnsupported { .. } if revocable && !self.images_refused => {
                tracing::info!(%run_id, %model, "the model refused the images tools returned; not showing it any more");
                spec.handles.llm.learn_refuses_images(model);
                self.images_refused = true;
                true
            }
            _ => false,
        }
    }
}

/// Reads the model's answer from `stream`, streaming it through `state`; what came before an
/// interruption or a broken stream is kept.
async fn receive(
    spec: &RunSpec,
    state: &mut LoopState,
    clock: &mut CallClock,
    mut stream: ChatStream,
    deadline: tokio::time::Instant,
) -> Result<AssistantTurn, Stopped> {
    let mut turn = TurnAccumulator::default();
    loop {
        let next = match guarded(&spec.log, deadline, stream.next()).await {
            Ok(next) => next,
            Err(interrupt) => {
                // Dropping the stream drops the upstream request.
                drop(stream);
                state.append(turn.content());
                state.append_reasoning(turn.reasoning(), clock);
                return Err(interrupted(interrupt));
            }
        };
        match next {
            None => {
                // What the `<think>` splitter held back until the end.
                let rest = turn.close();
                state.stream(spec, clock, rest, turn.content());
                return Ok(turn.finish());
            }
            Some(Ok(chunk)) => {
                let split = turn.push(&chunk);
                state.stream(spec, clock, split, turn.content());
            }
            Some(Err(err)) => {
                state.append(turn.content());
                state.append_reasoning(turn.reasoning(), clock);
                return Err((StopReason::UpstreamError, upstream_error(&spec.log, &err)));
            }
        }
    }
}

/// What a call cost: the upstream's count, or (none reported) an estimate of the request and
/// everything the answer generated, reasoning included.
async fn usage_of(request: &ChatRequest, turn: &AssistantTurn) -> Usage {
    match turn.usage {
        Some(usage) if super::usage::is_real(Some(&usage)) => usage,
        _ => {
            let (request, content, calls) = (
                request.clone(),
                format!("{}{}", turn.reasoning, turn.content),
                turn.tool_calls.clone(),
            );
            tokio::task::spawn_blocking(move || super::usage::estimate(&request, &content, &calls))
                .await
                .unwrap_or_default()
        }
    }
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
