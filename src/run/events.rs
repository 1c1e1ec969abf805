//! `RunEvent`: everything a run reports, in one internal type, and `StopReason`: every way a
//! run can end. Wire encodings (Chat Completions chunks, seed 001's tool events, the `x_*`
//! typed lines) live in `http::sse`; nothing here is stored in message history (seed 003).

use entities::ids::MessageId;
use entities::runs::RunStatus;
use serde::Serialize;
use serde_json::Value;

use crate::llm::wire::Usage;

/// Why a run ended. Recorded on the run row and sent as the last event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model answered without asking for more tools.
    Completed,
    /// The iteration cap was reached; the model gave a final answer without tools.
    MaxIterations,
    /// The model hit its output token limit.
    Length,
    /// A client cancelled the run.
    Cancelled,
    /// The run's wall-clock budget ran out.
    TimeBudget,
    /// The upstream model failed.
    UpstreamError,
    /// The process stopped while the run was in flight.
    Interrupted,
    /// The model asked the user a question; the run continues when the answer arrives.
    Paused,
    /// The model called a tool of the client's (Chat Completions `tools`): the client runs it
    /// and continues the conversation with its result.
    ToolCalls,
    /// A token budget (a Deep Think sub-task's) was spent.
    TokenBudget,
}

impl StopReason {
    /// Every stop reason, for parsing a stored one.
    const ALL: [Self; 10] = [
        Self::Completed,
        Self::MaxIterations,
        Self::Length,
        Self::Cancelled,
        Self::TimeBudget,
        Self::UpstreamError,
        Self::Interrupted,
        Self::Paused,
        Self::ToolCalls,
        Self::TokenBudget,
    ];

    /// The stop reason a run row records as `code`.
    pub fn from_code(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|reason| reason.as_str() == code)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::MaxIterations => "max_iterations",
            Self::Length => "length",
            Self::Cancelled => "cancelled",
            Self::TimeBudget => "time_budget",
            Self::UpstreamError => "upstream_error",
            Self::Interrupted => "interrupted",
            Self::Paused => "paused",
            Self::ToolCalls => "tool_calls",
            Self::TokenBudget => "token_budget",
        }
    }

    /// The run row's status for this stop.
    pub fn run_status(self) -> RunStatus {
        match self {
            Self::Completed
            | Self::MaxIterations
            | Self::Length
            | Self::TimeBudget
            | Self::TokenBudget
            | Self::ToolCalls => RunStatus::Completed,
            Self::Cancelled => RunStatus::Cancelled,
            Self::UpstreamError => RunStatus::Failed,
            Self::Interrupted => RunStatus::Interrupted,
            Self::Paused => RunStatus::Paused,
        }
    }

    /// OpenAI's `finish_reason` for the last chunk.
    pub fn finish_reason(self) -> &'static str {
        match self {
            Self::Length => "length",
            Self::ToolCalls => "tool_calls",
            _ => "stop",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum RunEvent {
    /// The run began.
    Started { user_message_id: Option<MessageId> },
    /// An iteration of the loop is about to call the model (seed 001's "thinking" step; on
    /// the chat API's stream only).
    Thinking { iteration: u32 },
    /// Text from the model.
    TextDelta { content: String },
    /// Reasoning from the model (its `reasoning_content` / `reasoning`, or a `<think>` block),
    /// never part of the answer's text. `elapsed_ms`: how long the run has been reasoning so
    /// far, this delta included (from each model call's start to its last reasoning, summed).
    ReasoningDelta { content: String, elapsed_ms: u64 },
    /// A tool call is about to run (seed 001 `tool_call`, and seed 000's `x_research.<kind>`
    /// with `arguments` as JSON text: a research tool's own kind, `x_research.tool_call` with
    /// `tool_name` and `message` for any other tool without an event family of its own).
    ToolCall {
        id: String,
        name: String,
        arguments: Value,
        /// The `x_research.*` event announcing it; `None` for tools with their own events.
        progress: Option<ProgressKind>,
        /// What a person reads while it runs (`Tool::call_message`); `None` for a call of no
        /// known tool.
        message: Option<String>,
    },
    /// A tool call finished (seed 001 `tool_result`; `x_research.result` for a call its
    /// `ToolCall` announced with an `x_research.*` event).
    ToolResult {
        tool_call_id: String,
        name: String,
        success: bool,
        result: Value,
        preview: String,
        error: Option<String>,
        /// Whether the call was announced as research (`ToolCall::progress` was set).
        research: bool,
    },
    /// The research phase is over (seed 000 `x_research.complete`).
    ResearchComplete {
        elapsed_ms: u64,
        input_tokens: u64,
        output_tokens: u64,
        iterations: u32,
        sources: u32,
    },
    /// The model called tools of the client's: sent as OpenAI's `tool_calls` deltas, just
    /// before `Finished` with `StopReason::ToolCalls`.
    ClientToolCalls {
        calls: Vec<crate::llm::wire::ToolCall>,
    },
    /// A typed event owned by a feature (artifacts, ask_user, ...): sent as a `data:` line
    /// `{"type": event_type, ...payload}`.
    Extension { event_type: String, payload: Value },
    /// The run ended. Always the last event.
    Finished {
        stop_reason: StopReason,
        assistant_message_id: Option<MessageId>,
        usage: Usage,
        /// The part of `usage` spent on research: model calls that asked for tools, and a
        /// Deep Think run's discovery, plan and sub-tasks (the rest wrote the answer).
        /// `None` when it is not known (a finished run replayed from its stored row).
        research_usage: Option<Usage>,
        iterations: u32,
        error: Option<RunError>,
    },
}

/// An error that ended a run, as clients see it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunError {
    pub code: String,
    /// What anyone may read (and what is stored with the run): never the upstream's address
    /// or the body of its server-side errors.
    pub message: String,
    /// The whole cause, kept only when the run's reader is an admin; shown instead of
    /// `message`.
    #[serde(skip)]
    pub detail: Option<String>,
}

impl RunError {
    /// An error with nothing to hide.
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
            detail: None,
        }
    }

    /// What the run's reader is shown.
    pub fn shown(&self) -> &str {
        self.detail.as_deref().unwrap_or(&self.message)
    }
}

/// The progress event a tool announces when it starts (seed 000 "Research Events").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressKind {
    Searching,
    Reading,
    CodeSearching,
    Calculating,
    /// Any other tool (MCP tools; chat tools without their own events, such as memory):
    /// `x_research.tool_call`.
    Other,
}

impl ProgressKind {
    pub fn event_type(self) -> &'static str {
        match self {
            Self::Searching => "x_research.searching",
            Self::Reading => "x_research.reading",
            Self::CodeSearching => "x_research.code_searching",
            Self::Calculating => "x_research.calculating",
            Self::Other => "x_research.tool_call",
        }
    }
}
