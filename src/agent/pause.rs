//! A paused run: what it waits for (an ask_user answer, or the client's tool results), the
//! checkpoint it resumes from, and storing both with the chat.

use entities::ids::{AskCorrelationId, MessageId};
use serde_json::Value;

use crate::chat::asks::{AskKind, NewAsk};
use crate::llm::wire::{ChatMessage, ChatRequest};
use crate::run::events::{RunError, RunErrorKind, RunEvent, StopReason};

use super::kernel::{ChatLink, ResumePoint};
use super::kernel::{LoopOutcome, Pause, RunSpec, Waiting};

/// Everything a paused run needs to continue, stored with its pending ask.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Checkpoint {
    pub messages: Vec<ChatMessage>,
    pub tool_call_id: String,
    pub user_message_id: MessageId,
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
    /// The request's `search_context_size`, which the re-selected tools are sized to again
    /// (`None` in checkpoints made before it was kept: the configured size).
    #[serde(default)]
    pub search_context_size: Option<crate::tools::SearchContextSize>,
    /// The request's `user_location`, which the re-selected tools are located near again.
    #[serde(default)]
    pub user_location: Option<crate::tools::UserLocation>,
    /// What the request asked of its tools (file_search's stores and limits, image_generation's
    /// fields), built again so on resume.
    #[serde(default)]
    pub requested: Vec<crate::tools::Requested>,
}

/// Stores what the run waits for and its checkpoint, tells the client, and ends the stream: a
/// paused run is data until its answer (or its client tools' results) comes.
pub(super) async fn pause_run(
    spec: &RunSpec,
    outcome: &LoopOutcome,
    pause: Pause,
) -> Result<(), RunError> {
    let failed = |cause: String| {
        tracing::error!(run_id = %spec.log.run_id, %cause, "could not pause the run");
        RunError {
            detail: spec
                .log
                .owner_is_admin
                .then(|| format!("the run's pause could not be saved: {cause}")),
            ..RunError::new(RunErrorKind::PauseFailed, "the question could not be saved")
        }
    };
    let Some(ChatLink {
        session,
        user_message: user_message_id,
    }) = &spec.chat
    else {
        return Err(failed("a paused run needs a stored chat".into()));
    };
    let (kind, tool_call_id, question, stop_reason) = match pause.waiting {
        Waiting::Answer {
            tool_call_id,
            question,
        } => (AskKind::AskUser, tool_call_id, question, StopReason::Paused),
        Waiting::ClientTools { calls } => {
            let first = calls.first().map(|c| c.id.clone()).unwrap_or_default();
            let question = serde_json::json!({"type": "client_tool_calls", "calls": calls});
            (AskKind::ClientTools, first, question, StopReason::ToolCalls)
        }
    };
    let correlation_id = match kind {
        AskKind::AskUser => AskCorrelationId::for_question(),
        AskKind::ClientTools => AskCorrelationId::for_client_tools(),
    };
    let checkpoint = Checkpoint {
        messages: pause.messages,
        tool_call_id: tool_call_id.clone(),
        user_message_id: user_message_id.clone(),
        point: ResumePoint {
            tool_rounds: pause.tool_rounds,
            iterations: outcome.iterations,
            usage: outcome.usage,
            research_usage: outcome.research_usage,
            content: outcome.content.clone(),
            reasoning: outcome
                .reasoning
                .as_ref()
                .map(|r| r.text.clone())
                .unwrap_or_default(),
            reasoning_ms: outcome.reasoning.as_ref().map_or(0, |r| r.duration_ms),
        },
        max_iterations: spec.max_iterations,
        tools: spec.tools.iter().map(|t| t.name().to_string()).collect(),
        template: spec.template.clone(),
        parts: spec.parts.snapshot(),
        project: Some(spec.project.clone()),
        client_tools: spec.client_tools.clone(),
        search_context_size: spec.tools.iter().find_map(|t| t.context_size()),
        user_location: spec.tools.iter().find_map(|t| t.location().cloned()),
        requested: spec.tools.iter().filter_map(|t| t.requested()).collect(),
    };
    let checkpoint = serde_json::to_value(&checkpoint).map_err(|e| failed(e.to_string()))?;
    let expires_at = chrono::Utc::now()
        + chrono::Duration::from_std(spec.handles.ask_expiry)
            .unwrap_or(chrono::Duration::hours(24));
    let ask = NewAsk {
        kind,
        correlation_id: correlation_id.clone(),
        chat_id: spec
            .log
            .chat_id
            .clone()
            .ok_or_else(|| failed("a run outside a chat cannot pause".into()))?,
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
        question["correlation_id"] = Value::String(correlation_id.to_string());
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
        research_usage: Some(outcome.research_usage),
        iterations: outcome.iterations,
        error: None,
    });
    Ok(())
}
