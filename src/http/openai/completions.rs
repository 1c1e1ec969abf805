//! `POST /v1/chat/completions`: OpenAI's Chat Completions, streaming or not, running the
//! governed loop. `web_search_options` opts into server-side tools; `x_chat_id` runs the turn
//! inside a stored chat; without it the request runs in a fresh chat of its own (kept for
//! `http.v1_chat_retention_days` unless opened in the UI), or with `store: false` in none.
//! In a stored chat, user messages' `image_url` parts are kept as the chat's attachments
//! (`crate::http::images`), so later turns replay them.
//!
//! A request that a new chat cannot hold (client tools without `store: true`, a tool result or
//! a prefill last) runs in no chat. Client-side tools sit beside the server's: a call of one
//! ends the run with `StopReason::ToolCalls`; in a stored chat the run pauses like an ask_user
//! question (a `pending_asks` row of kind `client_tools`) until
//! `supervisor::resume::launch_tool_results` brings every result. Other OpenAI parameters are
//! passed on in `ChatRequest::extra`.

use actix_web::{HttpResponse, web};
use entities::ids::ChatId;
use entities::messages::MessageRole;
use futures_util::StreamExt;
use serde_json::{Map, Value, json};

use crate::auth::Principal;
use crate::error::{AppError, AppResult};
use crate::http::chat_api::runs::stream_run;
use crate::http::sse::{accumulate_metadata, completion_id};
use crate::llm::wire::{ChatMessage, MessageContent, Role};
use crate::run::events::RunEvent;
use crate::state::AppState;
use crate::supervisor::launch::check_message_lengths;
use crate::supervisor::launch::images::{PendingMessage, read_message, read_messages};
use crate::supervisor::resume::{ToolResult, launch_resume};
use crate::supervisor::turn::{Answer, ChatSlot, TurnRequest, TurnTarget};

/// `max_body_bytes`: this route's own JSON limit, larger than the rest's (inline images).
pub fn configure(cfg: &mut web::ServiceConfig, max_body_bytes: usize) {
    cfg.service(
        web::resource("/v1/chat/completions")
            .app_data(
                web::JsonConfig::default()
                    .limit(max_body_bytes)
                    .error_handler(crate::http::json_error),
            )
            .route(web::post().to(create)),
    );
}

mod request;

use request::CompletionRequest;

async fn create(
    principal: Principal,
    state: web::Data<AppState>,
    body: web::Json<CompletionRequest>,
) -> AppResult<HttpResponse> {
    let mut request = body.into_inner();
    if let Some(reply) = request.x_ask_user_reply.take() {
        let log = launch_resume(
            &state.launcher,
            &principal,
            None,
            &reply.correlation_id,
            reply.answer,
            Vec::new(),
        )
        .await?;
        let chat_id = log.chat_id.clone();
        if request.stream {
            return Ok(stream_run(log, 0, request.dialect()));
        }
        return collect(log, chat_id).await;
    }
    request.validate()?;
    // Servers reject an assistant message with tool calls and no `content` (llama-cpp-python's
    // templates read it): a client's null or missing content is sent as "".
    for message in &mut request.messages {
        if message.role == Role::Assistant
            && message.tool_calls.is_some()
            && message.content.is_none()
        {
            message.content = Some(MessageContent::Text(String::new()));
        }
    }
    // Before anything is stored: `store: true` imports the whole history first.
    check_message_lengths(state.config(), &request.messages)?;
    let mut options = request.options(state.llm().default_model());
    if let Some(agent) = &request.x_agent_id {
        options.agent = Some(
            state
                .launcher
                .agents
                .get_owned(principal.user_id(), agent)
                .await?,
        );
    }
    let dialect = request.dialect();
    let last_index = request.messages.len() - 1;
    let last_role = request.messages[last_index].role;
    let target = if let Some(chat_id) = &request.x_chat_id
        && last_role == Role::Tool
    {
        TurnTarget::ToolResults {
            chat_id: chat_id.clone(),
            results: trailing_tool_results(&request.messages),
            client_tools: request.client_tools()?,
        }
    } else if let Some(chat_id) = &request.x_chat_id {
        // The images are read before anything is stored, and kept only in the caller's chat.
        let limits = &state.config().attachments;
        TurnTarget::Import {
            chat: ChatSlot::Existing(chat_id.clone()),
            parent: None,
            history: Vec::new(),
            last: read_message(limits, &request.messages[last_index])?,
        }
    } else if request.in_new_chat() {
        let mut pending = read_messages(&state.config().attachments, &request.messages)?;
        let last = pending
            .pop()
            .ok_or_else(|| AppError::invalid("messages must not be empty"))?;
        let history: Vec<(MessageRole, PendingMessage)> = request.messages[..last_index]
            .iter()
            .zip(pending)
            .filter_map(|(m, read)| {
                let role = match m.role {
                    Role::System => MessageRole::System,
                    Role::User => MessageRole::User,
                    Role::Assistant => MessageRole::Assistant,
                    Role::Developer | Role::Tool => return None,
                };
                Some((role, read))
            })
            .collect();
        // Kept `v1_chat_retention_days` unless someone opens it in the UI (see `sweep`).
        TurnTarget::Import {
            chat: ChatSlot::New {
                title: None,
                ephemeral: true,
            },
            parent: None,
            history,
            last,
        }
    } else {
        TurnTarget::Unstored(request.messages)
    };
    let started = state
        .launcher
        .open(TurnRequest {
            principal,
            target,
            options,
            // A stream is answered once its chat takes the turn; a whole answer, when stored.
            answer: if request.stream {
                Answer::WhenAccepted
            } else {
                Answer::Whole
            },
        })
        .await?;
    let (log, chat_id) = (started.log, started.chat_id);
    if request.stream {
        let mut response = stream_run(log, 0, dialect);
        if let Some(chat_id) = chat_id
            && let Ok(value) = chat_id.as_str().parse()
        {
            response.headers_mut().insert(
                actix_web::http::header::HeaderName::from_static("x-chat-id"),
                value,
            );
        }
        return Ok(response);
    }
    collect(log, chat_id).await
}

/// The `role: "tool"` messages that end a conversation: the results of the client tool calls
/// the last answer made.
fn trailing_tool_results(messages: &[ChatMessage]) -> Vec<ToolResult> {
    let mut results: Vec<ToolResult> = messages
        .iter()
        .rev()
        .take_while(|m| m.role == Role::Tool)
        .map(|m| ToolResult {
            tool_call_id: m.tool_call_id.clone().unwrap_or_default(),
            content: m.text(),
        })
        .collect();
    results.reverse();
    results
}

/// The answer's message: its text, its reasoning as DeepSeek's `reasoning_content` (when the
/// model reasoned), and the client tools the model called (then the text may be `null`, as
/// OpenAI's is).
fn message(content: String, reasoning: &str, tool_calls: Option<Value>) -> Value {
    let mut message = match tool_calls {
        Some(calls) => json!({"role": "assistant",
            "content": if content.is_empty() { Value::Null } else { json!(content) },
            "tool_calls": calls}),
        None => json!({"role": "assistant", "content": content}),
    };
    if !reasoning.is_empty() {
        message["reasoning_content"] = json!(reasoning);
    }
    message
}

/// Waits for the run and answers in one JSON body, with the progress events accumulated in
/// `x_metadata`, one list per kind (docs/spec.md#metadata-and-parts, renamed: OpenAI's `metadata`
/// is a map of strings, and SDKs reject lists there), and the reasoning accumulated from all its
/// deltas as `x_metadata.thinking`.
async fn collect(
    log: std::sync::Arc<crate::run::log::RunLog>,
    chat_id: Option<ChatId>,
) -> AppResult<HttpResponse> {
    let mut events = Box::pin(log.whole());
    let mut content = String::new();
    let mut thinking = String::new();
    let mut metadata: Map<String, Value> = Map::new();
    let mut tool_calls: Option<Value> = None;
    // The artifacts the run made, each as it ended up (`message.x_artifacts`).
    let mut artifacts: Vec<Value> = Vec::new();
    while let Some((_, event)) = events.next().await {
        match event.as_ref() {
            RunEvent::TextDelta { content: text } => content.push_str(text),
            RunEvent::ReasoningDelta { content: text, .. } => thinking.push_str(text),
            RunEvent::ClientToolCalls { calls } => tool_calls = Some(json!(calls)),
            RunEvent::Extension {
                event_type,
                payload,
            } if event_type.starts_with("x_artifact.") => {
                accumulate_metadata(&mut metadata, &log, event.as_ref());
                if let Some(part) = crate::chat::artifacts::deliverable_of(payload) {
                    match artifacts
                        .iter_mut()
                        .find(|a| a["identifier"] == part["identifier"])
                    {
                        Some(kept) => *kept = part,
                        None => artifacts.push(part),
                    }
                }
            }
            RunEvent::Finished {
                stop_reason,
                usage,
                error,
                assistant_message_id,
                iterations,
                ..
            } => {
                if let Some(error) = error
                    && content.is_empty()
                {
                    return Err(crate::http::run_failure::run_failure(error));
                }
                let mut body = json!({
                    "id": completion_id(&log),
                    "object": "chat.completion",
                    "created": log.created,
                    "model": log.model,
                    "choices": [{
                        "index": 0,
                        "message": message(content, &thinking, tool_calls),
                        "finish_reason": if error.is_some() { "error" } else { stop_reason.finish_reason() },
                    }],
                    "usage": usage,
                    // Not `metadata`: OpenAI's is a map of strings, which SDKs check.
                    "x_metadata": metadata,
                    "x_stop_reason": stop_reason,
                    "x_iterations": iterations,
                });
                if !thinking.is_empty() {
                    body["x_metadata"]["thinking"] = json!(thinking);
                }
                if !artifacts.is_empty() {
                    body["choices"][0]["message"]["x_artifacts"] = json!(artifacts);
                }
                if let Some(chat_id) = &chat_id {
                    body["x_chat_id"] = json!(chat_id);
                    body["x_message_id"] = json!(assistant_message_id);
                }
                return Ok(HttpResponse::Ok().json(body));
            }
            other => accumulate_metadata(&mut metadata, &log, other),
        }
    }
    Err(AppError::internal(anyhow::anyhow!(
        "run ended without finishing"
    )))
}
