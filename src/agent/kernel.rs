//! The typed kernel of a run: what one run of the loop is given (`RunSpec`, made only by
//! `RunSpec::new`, holding the server-wide `RunHandles` it shares with every other run and the
//! `RunBounds` its driver sets), where it resumes from (`ResumePoint`), what it produces
//! (`LoopOutcome`), where it may stop to wait (`Pause`, `Waiting`) and how a wait is cut short
//! (`Interrupt`, `guarded`). The loop and Deep Think both build on these types, so neither
//! needs the other's: Deep Think drives the loop by data (`RunBounds`), and nothing the loop
//! imports reaches Deep Think (the architecture test holds that).

use entities::ids::MessageId;
use std::sync::Arc;
use std::time::Duration;

use actix::Addr;
use serde_json::Value;

use super::images::ShownImages;
use super::rate_limit::ToolRateLimiter;
use super::sources::Sources;
use super::tool_cache::ToolCache;
use crate::chat::session::ChatSession;
use crate::config::{AgentConfig, ContextStrategy};
use crate::llm::LlmClient;
use crate::llm::wire::{ChatMessage, ChatRequest, ToolCall, ToolDefinition, Usage};
use crate::run::events::{RunError, StopReason};
use crate::run::log::RunLog;
use crate::tools::SharedTool;
use crate::tools::chat_context::Parts;

/// What every run on this server shares: the model client, the loop's limits, the tool
/// result cache, the research rate limit, the metrics and the chats' images.
#[derive(Clone)]
pub struct RunHandles {
    pub llm: LlmClient,
    pub limits: AgentConfig,
    pub cache: ToolCache,
    /// How long a question a run asks stays answerable.
    pub ask_expiry: Duration,
    pub rate_limiter: Arc<ToolRateLimiter>,
    pub metrics: Arc<crate::metrics::Metrics>,
    /// Where the chats' images are read from (`None`: runs carry no stored images).
    pub attachments: Option<crate::chat::attachments::Attachments>,
    /// Where images tools return (browser screenshots) are read from to show them to the
    /// model, and to which models (`None`: to none, `browser.screenshots_to_model = false`).
    pub tool_images: Option<ShownImages>,
}

/// A run's link to its stored chat: the session its answer is persisted through, and the user
/// message it replies to.
#[derive(Clone)]
pub struct ChatLink {
    pub session: Addr<ChatSession>,
    pub user_message: MessageId,
}

/// Everything one run needs. Made by `RunSpec::new` (and `phase`, which uses it); the fields
/// a run sets apart from the defaults are set on the result.
pub struct RunSpec {
    pub log: Arc<RunLog>,
    /// What this run shares with every other (a phase's without the chat's images).
    pub handles: RunHandles,
    /// Model, sampling options; `messages` and `tools` are filled in per call.
    pub template: ChatRequest,
    pub messages: Vec<ChatMessage>,
    pub tools: Vec<SharedTool>,
    pub max_iterations: u32,
    /// The chat to persist the answer to, and the user message it replies to.
    pub chat: Option<ChatLink>,
    /// Where a resumed run left off (its messages already end with the user's answer).
    pub resume: Option<ResumePoint>,
    /// The ask whose answer this run continues from.
    pub completes_ask: Option<entities::ids::AskCorrelationId>,
    /// Research tool calls are counted against this project (API key or user).
    pub project: String,
    /// The answer's message parts (artifacts), filled by chat tools.
    pub parts: Parts,
    /// What to do with history that outgrows the model's context.
    pub context_strategy: ContextStrategy,
    /// Earlier messages of the chat left out of `messages` before the run began, as too old
    /// for the model's context (fitting reports them with those it leaves out itself).
    pub history_left_out: usize,
    /// The client's own tools: offered with the server's; a call of one ends the run.
    pub client_tools: Vec<ToolDefinition>,
    /// What a driver of this loop (Deep Think) bounds it by beyond the limits; none by default.
    pub bounds: RunBounds,
    /// When the loop must stop; `None`: `limits.run_time_budget_secs` from its start (a Deep
    /// Think run's phases share the run's).
    pub deadline: Option<tokio::time::Instant>,
    /// Told once the run's turn is durable, when the run started before (`launch::begin`):
    /// its first model call goes out at once, but nothing of the run is told or stored
    /// before. Dropped unsent, the turn was never stored and the run ends so, telling only
    /// that it could not be saved.
    pub written: Option<tokio::sync::oneshot::Receiver<()>>,
}

impl RunSpec {
    /// A run logging to `log`, over `messages` with `tools`, from `template` (model and
    /// options): outside any chat, not resumed, the configured iteration cap, research counted
    /// against the run's owner, the default context strategy, no client tools, no bounds or
    /// deadline of its own.
    pub fn new(
        handles: RunHandles,
        log: Arc<RunLog>,
        template: ChatRequest,
        messages: Vec<ChatMessage>,
        tools: Vec<SharedTool>,
    ) -> Self {
        Self {
            project: log.owner_id.to_string(),
            log,
            max_iterations: handles.limits.max_iterations,
            handles,
            template,
            messages,
            tools,
            chat: None,
            resume: None,
            completes_ask: None,
            parts: Parts::default(),
            context_strategy: ContextStrategy::default(),
            history_left_out: 0,
            client_tools: Vec::new(),
            bounds: RunBounds::default(),
            deadline: None,
            written: None,
        }
    }

    /// A loop for one phase of this run (Deep Think's): its log, model, limits, cache and rate
    /// limiter, with these messages and tools, no response format or tool choice of the
    /// client's, no client tools, within `deadline`. `chat` is where drafts go (`false`: the
    /// text is not an answer).
    pub fn phase(
        &self,
        messages: Vec<ChatMessage>,
        tools: Vec<SharedTool>,
        max_iterations: u32,
        chat: bool,
        deadline: tokio::time::Instant,
    ) -> Self {
        let mut template = self.template.clone();
        template.tool_choice = None;
        template.extra.remove("response_format");
        let handles = RunHandles {
            // A phase's messages are Deep Think's own text: the question's images are not sent.
            attachments: None,
            tool_images: None,
            ..self.handles.clone()
        };
        let mut phase = Self::new(handles, self.log.clone(), template, messages, tools);
        phase.max_iterations = max_iterations;
        phase.chat = if chat { self.chat.clone() } else { None };
        phase.project = self.project.clone();
        phase.context_strategy = self.context_strategy;
        phase.deadline = Some(deadline);
        phase
    }
}

/// What a loop's driver bounds it by beyond the server's limits, as data the loop applies
/// without knowing the driver (Deep Think's sub-tasks set them). The default bounds nothing.
#[derive(Clone, Default)]
pub struct RunBounds {
    /// The loop's text and reasoning are for its driver only: it streams no thinking,
    /// reasoning, text or research-complete events (the driver reports the research).
    pub quiet: bool,
    /// Tokens (input + output, as the upstream counts them) after which the loop ends rather
    /// than run the tools a turn asked for.
    pub token_budget: Option<u64>,
    /// Where the URLs its tools returned are collected.
    pub sources: Option<Sources>,
}

/// The loop's counters at a pause, restored on resume.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct ResumePoint {
    pub tool_rounds: u32,
    pub iterations: u32,
    pub usage: Usage,
    /// The part of `usage` spent on tool rounds (absent in checkpoints made before it was kept).
    #[serde(default)]
    pub research_usage: Usage,
    pub content: String,
    /// The reasoning before the pause, and how long it took (none in older checkpoints).
    #[serde(default)]
    pub reasoning: String,
    #[serde(default)]
    pub reasoning_ms: u64,
}

/// What the loop produced.
#[derive(Debug)]
pub(super) struct LoopOutcome {
    pub(super) content: String,
    pub(super) reasoning: Option<crate::chat::tree::Reasoning>,
    pub(super) stop_reason: StopReason,
    pub(super) usage: Usage,
    /// The part of `usage` spent on research (tool rounds; Deep Think's phases before its
    /// report).
    pub(super) research_usage: Usage,
    pub(super) iterations: u32,
    pub(super) error: Option<RunError>,
    pub(super) pause: Option<Pause>,
    /// The run's turn was never stored (`RunSpec::written` said so): nothing of it is.
    pub(super) unstored: bool,
}

/// Where a run in a stored chat stopped to wait, with what it needs to go on.
#[derive(Debug)]
pub(super) struct Pause {
    pub(super) waiting: Waiting,
    pub(super) messages: Vec<ChatMessage>,
    pub(super) tool_rounds: u32,
}

/// What a paused run waits for.
#[derive(Debug)]
pub(super) enum Waiting {
    /// The person's answer to an ask_user question.
    Answer {
        tool_call_id: String,
        question: Value,
    },
    /// The results of the client's own tools, which the model called (the last of
    /// `messages` is the call).
    ClientTools { calls: Vec<ToolCall> },
}

/// How a wait inside the loop ended.
pub(super) enum Interrupt {
    Cancelled,
    OutOfTime,
}

impl Interrupt {
    pub(super) fn reason(&self) -> StopReason {
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
