//! `RunEvent`: everything a run reports, in one internal type, and `StopReason`: every way a
//! run can end. Wire encodings (Chat Completions chunks, the chat API's tool events, the `x_*`
//! typed lines) live in `http::sse`; nothing here is stored in message history
//! (docs/spec.md#metadata-and-parts). `RunError` carries a `RunErrorKind`: whose fault a
//! failure is, with its HTTP status and stable code, matched without wildcard.

use entities::ids::MessageId;
use serde::Serialize;
use serde_json::Value;

use crate::llm::LlmError;
use crate::llm::wire::Usage;

pub use entities::stop_reason::StopReason;

#[derive(Debug, Clone, PartialEq)]
pub enum RunEvent {
    /// The run began.
    Started { user_message_id: Option<MessageId> },
    /// An iteration of the loop is about to call the model (the "thinking" step of
    /// docs/spec.md#the-agentic-loop; on the chat API's stream only).
    Thinking { iteration: u32 },
    /// Text from the model.
    TextDelta { content: String },
    /// Reasoning from the model (its `reasoning_content` / `reasoning`, or a `<think>` block),
    /// never part of the answer's text. `elapsed_ms`: how long the run has been reasoning so
    /// far, this delta included (from each model call's start to its last reasoning, summed).
    ReasoningDelta { content: String, elapsed_ms: u64 },
    /// A tool call is about to run (the chat API's `tool_call`, docs/spec.md#tool-events, and
    /// `x_research.<kind>`, docs/spec.md#research-events, with `arguments` as JSON text: a research
    /// tool's own kind, `x_research.tool_call` with `tool_name` and `message` for any other tool
    /// without an event family of its own).
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
    /// A tool call finished (the chat API's `tool_result`; `x_research.result` for a call its
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
    /// The research phase is over (`x_research.complete`, docs/spec.md#research-events).
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
    /// Whose fault, with its stable code (serialized as `code`) and HTTP status.
    #[serde(rename = "code")]
    pub kind: RunErrorKind,
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
    pub fn new(kind: RunErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            detail: None,
        }
    }

    /// The stable code clients match on.
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }

    /// What the run's reader is shown.
    pub fn shown(&self) -> &str {
        self.detail.as_deref().unwrap_or(&self.message)
    }
}

/// Why a run failed, and so whose fault it is: the model server's (`Upstream*`, the context
/// and image refusals), ours (`PersistenceFailed`, `PauseFailed`, `DeepThinkFailed`: 500), a
/// workflow's (`WorkflowFailed`: a step failed; 500, as the step's own cause is in the
/// message and the `x_workflow.*` events), or a stop a stored run recorded (`Stopped`, replayed from its row, which keeps only the stop
/// reason). Each carries its stable code and HTTP status; never change an existing code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunErrorKind {
    UpstreamUnreachable,
    UpstreamTimeout,
    UpstreamRateLimited,
    /// The upstream refused the request itself (bad model name, bad parameters).
    UpstreamRejected,
    UpstreamError,
    UpstreamInvalidResponse,
    UpstreamStreamError,
    UpstreamStreamTruncated,
    /// The conversation does not fit the model's context, even fitted.
    ContextLengthExceeded,
    /// The model cannot read the message's images.
    ModelCannotReadImages,
    /// The answer could not be saved, or a turn already answered (`turn::Answer`) could not
    /// be stored.
    PersistenceFailed,
    /// A question (or client tool calls) could not be saved for the run to pause on.
    PauseFailed,
    /// Deep Think could not research: every sub-task failed.
    DeepThinkFailed,
    /// A workflow run of its own stopped at a step that failed (`StopReason::WorkflowFailed`).
    WorkflowFailed,
    /// A stored run that ended with an error for this (non-upstream) stop reason.
    Stopped(StopReason),
}

impl RunErrorKind {
    /// Every kind but `Stopped`, for the tests.
    #[cfg(test)]
    pub(crate) const FIXED: [Self; 14] = [
        Self::UpstreamUnreachable,
        Self::UpstreamTimeout,
        Self::UpstreamRateLimited,
        Self::UpstreamRejected,
        Self::UpstreamError,
        Self::UpstreamInvalidResponse,
        Self::UpstreamStreamError,
        Self::UpstreamStreamTruncated,
        Self::ContextLengthExceeded,
        Self::ModelCannotReadImages,
        Self::PersistenceFailed,
        Self::PauseFailed,
        Self::DeepThinkFailed,
        Self::WorkflowFailed,
    ];

    /// The stable code clients match on.
    pub fn code(self) -> &'static str {
        match self {
            Self::UpstreamUnreachable => "upstream_unreachable",
            Self::UpstreamTimeout => "upstream_timeout",
            Self::UpstreamRateLimited => "upstream_rate_limited",
            Self::UpstreamRejected => "upstream_rejected",
            Self::UpstreamError => "upstream_error",
            Self::UpstreamInvalidResponse => "upstream_invalid_response",
            Self::UpstreamStreamError => "upstream_stream_error",
            Self::UpstreamStreamTruncated => "upstream_stream_truncated",
            Self::ContextLengthExceeded => "context_length_exceeded",
            Self::ModelCannotReadImages => "model_cannot_read_images",
            Self::PersistenceFailed => "persistence_failed",
            Self::PauseFailed => "pause_failed",
            Self::DeepThinkFailed => "deep_think_failed",
            Self::WorkflowFailed => "workflow_failed",
            Self::Stopped(reason) => reason.as_str(),
        }
    }

    /// The HTTP status of a request whose run failed so before answering anything.
    pub fn status(self) -> u16 {
        match self {
            Self::UpstreamRejected | Self::ContextLengthExceeded | Self::ModelCannotReadImages => {
                400
            }
            Self::UpstreamTimeout => 504,
            Self::UpstreamRateLimited => 503,
            Self::UpstreamUnreachable
            | Self::UpstreamError
            | Self::UpstreamInvalidResponse
            | Self::UpstreamStreamError
            | Self::UpstreamStreamTruncated => 502,
            Self::PersistenceFailed
            | Self::PauseFailed
            | Self::DeepThinkFailed
            | Self::WorkflowFailed => 500,
            Self::Stopped(reason) => match reason {
                StopReason::UpstreamError => 502,
                StopReason::Cancelled => 409,
                StopReason::TimeBudget | StopReason::TokenBudget => 504,
                StopReason::Interrupted => 503,
                StopReason::Completed
                | StopReason::MaxIterations
                | StopReason::Length
                | StopReason::Paused
                | StopReason::ToolCalls
                | StopReason::WorkflowFailed => 500,
            },
        }
    }

    /// Whether the model server is to blame.
    pub fn is_upstream(self) -> bool {
        match self {
            Self::UpstreamUnreachable
            | Self::UpstreamTimeout
            | Self::UpstreamRateLimited
            | Self::UpstreamRejected
            | Self::UpstreamError
            | Self::UpstreamInvalidResponse
            | Self::UpstreamStreamError
            | Self::UpstreamStreamTruncated
            | Self::ContextLengthExceeded
            | Self::ModelCannotReadImages => true,
            Self::PersistenceFailed
            | Self::PauseFailed
            | Self::DeepThinkFailed
            | Self::WorkflowFailed => false,
            Self::Stopped(reason) => reason == StopReason::UpstreamError,
        }
    }

    /// The kind a stored run's stop reason stands for (the row keeps no other).
    pub fn stored(reason: StopReason) -> Self {
        match reason {
            StopReason::UpstreamError => Self::UpstreamError,
            StopReason::WorkflowFailed => Self::WorkflowFailed,
            other => Self::Stopped(other),
        }
    }
}

impl From<&LlmError> for RunErrorKind {
    fn from(err: &LlmError) -> Self {
        match err {
            LlmError::Connect(_) => Self::UpstreamUnreachable,
            LlmError::Timeout(_) => Self::UpstreamTimeout,
            LlmError::RateLimited { .. } => Self::UpstreamRateLimited,
            LlmError::Status { .. } if err.status().is_client_error() => Self::UpstreamRejected,
            LlmError::Status { .. } => Self::UpstreamError,
            LlmError::InvalidResponse(_) => Self::UpstreamInvalidResponse,
            LlmError::StreamError(_) => Self::UpstreamStreamError,
            LlmError::StreamTruncated(_) => Self::UpstreamStreamTruncated,
            LlmError::ContextOverflow { .. } => Self::ContextLengthExceeded,
            LlmError::ImagesUnsupported { .. } => Self::ModelCannotReadImages,
            // A model no server serves any more (the configuration changed under a paused run).
            LlmError::UnknownModel { .. } => Self::UpstreamRejected,
        }
    }
}

impl Serialize for RunErrorKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.code())
    }
}

/// The progress event a tool announces when it starts (docs/spec.md#research-events).
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
