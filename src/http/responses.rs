//! `POST /v1/responses`: OpenAI's Responses API over the same runs as Chat Completions. A
//! `web_search_preview` tool opts into server-side tools, its `x_tools` choosing them (seed
//! 000). Streams use typed `event:` lines: `response.*` for the answer, `x_*` for progress.

use std::sync::Arc;

use actix_web::{HttpResponse, web};
use actix_web_lab::sse::{Data, Event, Sse};
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::sse::{Dialect, accumulate_metadata, payloads};
use crate::agent::events::{RunEvent, StopReason};
use crate::agent::launch::{RunOptions, WebSearchOptions, launch_ephemeral};
use crate::agent::run_log::RunLog;
use crate::auth::Principal;
use crate::error::{AppError, AppResult};
use crate::llm::wire::{ChatMessage, ChatRequest, MessageContent, Role};
use crate::state::AppState;

/// Most input items one request may carry.
const MAX_INPUT_ITEMS: usize = 2_000;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/responses", web::post().to(create));
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Input {
    Text(String),
    Items(Vec<InputItem>),
}

#[derive(Deserialize)]
struct InputItem {
    role: Role,
    content: ItemContent,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ItemContent {
    Text(String),
    Parts(Vec<Value>),
}

#[derive(Deserialize)]
struct ResponsesRequest {
    model: Option<String>,
    input: Input,
    instructions: Option<String>,
    #[serde(default)]
    stream: bool,
    temperature: Option<f32>,
    top_p: Option<f32>,
    max_output_tokens: Option<u32>,
    #[serde(default)]
    tools: Vec<Value>,
}

impl ResponsesRequest {
    fn messages(&self) -> AppResult<Vec<ChatMessage>> {
        let mut messages = Vec::new();
        if let Some(instructions) = self
            .instructions
            .as_deref()
            .filter(|i| !i.trim().is_empty())
        {
            messages.push(ChatMessage::system(instructions));
        }
        match &self.input {
            Input::Text(text) => messages.push(ChatMessage::user(text.clone())),
            Input::Items(items) => {
                if items.len() > MAX_INPUT_ITEMS {
                    return Err(AppError::invalid(format!(
                        "at most {MAX_INPUT_ITEMS} input items"
                    )));
                }
                for item in items {
                    let text = match &item.content {
                        ItemContent::Text(text) => text.clone(),
                        ItemContent::Parts(parts) => MessageContent::Parts(
                            parts
                                .iter()
                                .map(|p| json!({"type": "text", "text": p["text"]}))
                                .collect(),
                        )
                        .text(),
                    };
                    messages.push(ChatMessage {
                        role: item.role,
                        content: Some(MessageContent::Text(text)),
                        tool_calls: None,
                        tool_call_id: None,
                        name: None,
                    });
                }
            }
        }
        match messages.last() {
            Some(last) if last.role == Role::User && !last.text().trim().is_empty() => Ok(messages),
            _ => Err(AppError::invalid(
                "input must end with a non-empty user message",
            )),
        }
    }

    fn options(&self, default_model: &str) -> AppResult<RunOptions> {
        let mut web_search = None;
        for tool in &self.tools {
            match tool["type"].as_str() {
                Some("web_search_preview") | Some("web_search") => {
                    web_search = Some(
                        serde_json::from_value::<WebSearchOptions>(tool.clone()).map_err(
                            |err| {
                                AppError::invalid(format!("invalid web_search_preview tool: {err}"))
                            },
                        )?,
                    );
                }
                other => {
                    return Err(AppError::invalid(format!(
                        "tool type {} is not supported; use web_search_preview for server-side tools",
                        other.unwrap_or("(missing)")
                    )));
                }
            }
        }
        let mut template = ChatRequest::new(
            self.model
                .clone()
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| default_model.to_string()),
            Vec::new(),
        );
        template.temperature = self.temperature;
        template.top_p = self.top_p;
        template.max_tokens = self.max_output_tokens;
        Ok(RunOptions {
            tools_enabled: web_search.is_some(),
            web_search,
            template: Some(template),
        })
    }
}

async fn create(
    principal: Principal,
    state: web::Data<AppState>,
    body: web::Json<ResponsesRequest>,
) -> AppResult<HttpResponse> {
    let request = body.into_inner();
    let messages = request.messages()?;
    let options = request.options(state.llm.default_model())?;
    let log = launch_ephemeral(&state, &principal, messages, options)?;
    if request.stream {
        return Ok(stream(log));
    }
    let mut events = Box::pin(log.subscribe(0));
    let mut text = String::new();
    let mut metadata: Map<String, Value> = Map::new();
    while let Some((_, event)) = events.next().await {
        match event.as_ref() {
            RunEvent::TextDelta { content } => text.push_str(content),
            RunEvent::Finished {
                stop_reason,
                usage,
                error,
                ..
            } => {
                if let Some(error) = error
                    && text.is_empty()
                {
                    return Err(super::completions::run_failure(error));
                }
                let mut body = response_object(&log, *stop_reason, &text);
                body["usage"] = json!({"input_tokens": usage.prompt_tokens,
                    "output_tokens": usage.completion_tokens, "total_tokens": usage.total_tokens});
                body["metadata"] = Value::Object(metadata);
                return Ok(HttpResponse::Ok().json(body));
            }
            other => accumulate_metadata(&mut metadata, &log, other),
        }
    }
    Err(AppError::internal(anyhow::anyhow!(
        "run ended without finishing"
    )))
}

fn message_id(log: &RunLog) -> String {
    format!("msg_{}", log.run_id)
}

/// The response object, as `response.completed` and a non-streaming answer carry it.
fn response_object(log: &RunLog, stop_reason: StopReason, text: &str) -> Value {
    let status = match stop_reason {
        StopReason::Completed | StopReason::MaxIterations | StopReason::Paused => "completed",
        StopReason::UpstreamError | StopReason::Interrupted => "failed",
        StopReason::Length | StopReason::Cancelled | StopReason::TimeBudget => "incomplete",
    };
    json!({
        "id": format!("resp_{}", log.run_id),
        "object": "response",
        "created_at": log.created,
        "model": log.model,
        "status": status,
        "output": [{
            "type": "message",
            "id": message_id(log),
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }],
        "output_text": text,
        "x_stop_reason": stop_reason,
    })
}

fn typed(name: &str, payload: Value) -> Event {
    Event::Data(Data::new(payload.to_string()).event(name.to_string()))
}

/// The run as a Responses stream.
fn stream(log: Arc<RunLog>) -> HttpResponse {
    let source = log.clone();
    let frames = log
        .subscribe(0)
        .scan(String::new(), move |text, (_, event)| {
            let log = &source;
            let mut out = Vec::new();
            match event.as_ref() {
                RunEvent::Started { .. } => {
                    let mut response = response_object(log, StopReason::Completed, "");
                    response["status"] = json!("in_progress");
                    response["output"] = json!([]);
                    out.push(typed("response.created", json!({"type": "response.created", "response": response})));
                }
                RunEvent::TextDelta { content } => {
                    text.push_str(content);
                    out.push(typed(
                        "response.output_text.delta",
                        json!({"type": "response.output_text.delta", "item_id": message_id(log),
                               "output_index": 0, "content_index": 0, "delta": content}),
                    ));
                }
                RunEvent::Finished {
                    stop_reason,
                    usage,
                    error,
                    ..
                } => {
                    if let Some(error) = error {
                        out.push(typed("error", json!({"type": "error", "code": error.code, "message": error.message})));
                    }
                    out.push(typed(
                        "response.output_text.done",
                        json!({"type": "response.output_text.done", "item_id": message_id(log),
                               "output_index": 0, "content_index": 0, "text": text}),
                    ));
                    let mut response = response_object(log, *stop_reason, text);
                    response["usage"] = json!({"input_tokens": usage.prompt_tokens,
                        "output_tokens": usage.completion_tokens, "total_tokens": usage.total_tokens});
                    out.push(typed("response.completed", json!({"type": "response.completed", "response": response})));
                }
                other => {
                    for (_, payload) in payloads(Dialect::OpenAi, log, other) {
                        if let Some(kind) = payload["type"].as_str().map(str::to_string) {
                            out.push(typed(&kind, payload));
                        }
                    }
                }
            }
            futures_util::future::ready(Some(futures_util::stream::iter(out)))
        })
        .flatten();
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("cache-control", "no-cache"))
        .insert_header(("x-run-id", log.run_id.as_str()))
        .body(Sse::from_infallible_stream(frames))
}
