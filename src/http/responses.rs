//! `POST /v1/responses`: OpenAI's Responses API over the same runs as Chat Completions. A
//! `web_search_preview` tool opts into server-side tools, its `x_tools` choosing them (seed
//! 000). `x_chat_id` runs the request as a turn of a stored chat, whose documents the model
//! may search: a `file_search` tool (seed 002) needs it, and each search becomes a
//! `file_search_call` output item, its passages' `chunk_text` included only when `include`
//! names `file_search_call.results`. Streams use typed `event:` lines: `response.*` for the
//! answer, `x_*` for progress.

use entities::ids::ChatId;
use std::sync::Arc;

use actix_web::{HttpResponse, web};
use actix_web_lab::sse::{Data, Event, Sse};
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::sse::{Dialect, accumulate_metadata, payloads};
use crate::auth::Principal;
use crate::chat::session::Turn;
use crate::error::{AppError, AppResult};
use crate::llm::wire::{ChatMessage, ChatRequest, MessageContent, Role};
use crate::run::events::{RunEvent, StopReason};
use crate::run::log::RunLog;
use crate::state::AppState;
use crate::supervisor::launch::{
    RunOptions, WebSearchOptions, check_message_lengths, launch_chat_turn, launch_ephemeral,
};
use crate::tools::file_search;

/// Most input items one request may carry.
const MAX_INPUT_ITEMS: usize = 2_000;
/// The `include` value that puts passages' text in `file_search_call` items (seed 002).
const INCLUDE_FILE_SEARCH_RESULTS: &str = "file_search_call.results";

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
    #[serde(default)]
    include: Vec<String>,
    /// Run as a turn of this stored chat (its history is the context).
    x_chat_id: Option<ChatId>,
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
                // The chat's tools, file_search among them once it has searchable documents,
                // come with every turn of a stored chat.
                Some("file_search") if self.x_chat_id.is_some() => {}
                Some("file_search") => {
                    return Err(AppError::invalid(
                        "file_search searches a chat's uploaded documents: send x_chat_id with \
                         the chat's id",
                    ));
                }
                other => {
                    return Err(AppError::invalid(format!(
                        "tool type {} is not supported; use web_search_preview for server-side \
                         tools, or file_search with x_chat_id",
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
            client_tools: Vec::new(),
        })
    }
}

async fn create(
    principal: Principal,
    state: web::Data<AppState>,
    body: web::Json<ResponsesRequest>,
) -> AppResult<HttpResponse> {
    let request = body.into_inner();
    let mut messages = request.messages()?;
    check_message_lengths(&state.config, &messages)?;
    let options = request.options(state.llm.default_model())?;
    if let Some(unknown) = request
        .include
        .iter()
        .find(|value| value.as_str() != INCLUDE_FILE_SEARCH_RESULTS)
    {
        return Err(AppError::invalid(format!(
            "include value {unknown:?} is not supported; the one known is \
             {INCLUDE_FILE_SEARCH_RESULTS:?}"
        )));
    }
    let include_results = !request.include.is_empty();
    let log = match &request.x_chat_id {
        Some(chat_id) => {
            // The chat's history is the context; the request's last user message is the turn.
            let content = messages
                .pop()
                .map(|message| message.text())
                .ok_or_else(|| AppError::invalid("input must end with a user message"))?;
            let turn = Turn::Send {
                parent_id: None,
                content,
            };
            launch_chat_turn(&state.launcher, &principal, chat_id, turn, options).await?
        }
        None => launch_ephemeral(&state.launcher, &principal, messages, options)?,
    };
    if request.stream {
        return Ok(stream(log, include_results));
    }
    let mut events = Box::pin(log.subscribe(0));
    let mut output = Output::new(include_results);
    let mut metadata: Map<String, Value> = Map::new();
    while let Some((_, event)) = events.next().await {
        output.observe(event.as_ref());
        match event.as_ref() {
            RunEvent::Finished {
                stop_reason,
                usage,
                error,
                ..
            } => {
                if let Some(error) = error
                    && output.text.is_empty()
                {
                    return Err(super::completions::run_failure(error));
                }
                let mut body = response_object(&log, *stop_reason, &output);
                body["usage"] = responses_usage(usage);
                body["metadata"] = Value::Object(metadata);
                if let Some(chat_id) = &log.chat_id {
                    body["x_chat_id"] = json!(chat_id);
                }
                return Ok(HttpResponse::Ok().json(body));
            }
            RunEvent::TextDelta { .. } => {}
            other => accumulate_metadata(&mut metadata, &log, other),
        }
    }
    Err(AppError::internal(anyhow::anyhow!(
        "run ended without finishing"
    )))
}

/// The response's output items as a run's events build them: one `file_search_call` per
/// search, in call order, and the assistant message, placed where its first text came (last
/// when there was none).
struct Output {
    include_results: bool,
    items: Vec<OutputItem>,
    /// The message's place in `items`, once text has come.
    message_index: Option<usize>,
    text: String,
}

enum OutputItem {
    Message,
    FileSearch {
        id: String,
        call_id: String,
        query: Value,
        status: &'static str,
        results: Option<Value>,
    },
}

impl Output {
    fn new(include_results: bool) -> Self {
        Self {
            include_results,
            items: Vec::new(),
            message_index: None,
            text: String::new(),
        }
    }

    fn observe(&mut self, event: &RunEvent) {
        match event {
            RunEvent::TextDelta { content } => {
                self.message_index();
                self.text.push_str(content);
            }
            RunEvent::ToolCall {
                id,
                name,
                arguments,
                ..
            } if name == "file_search" => self.items.push(OutputItem::FileSearch {
                id: file_search::item_id(id),
                call_id: id.clone(),
                query: arguments["query"].clone(),
                status: "in_progress",
                results: None,
            }),
            RunEvent::ToolResult {
                tool_call_id,
                name,
                success,
                result,
                ..
            } if name == "file_search" => {
                let include_results = self.include_results;
                for item in &mut self.items {
                    if let OutputItem::FileSearch {
                        call_id,
                        status,
                        results,
                        ..
                    } = item
                        && call_id == tool_call_id
                    {
                        *status = if *success { "completed" } else { "failed" };
                        *results = success.then(|| passages(result, include_results));
                    }
                }
            }
            _ => {}
        }
    }

    /// The message's output index, placing it now if it has none yet.
    fn message_index(&mut self) -> usize {
        *self.message_index.get_or_insert_with(|| {
            self.items.push(OutputItem::Message);
            self.items.len() - 1
        })
    }

    /// The output index of the file_search item `item_id`.
    fn index_of(&self, item_id: &str) -> Option<usize> {
        self.items
            .iter()
            .position(|item| matches!(item, OutputItem::FileSearch { id, .. } if id == item_id))
    }

    fn to_json(&self, log: &RunLog) -> Value {
        let message = json!({
            "type": "message",
            "id": message_id(log),
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": self.text, "annotations": []}],
        });
        let mut items: Vec<Value> = self
            .items
            .iter()
            .map(|item| match item {
                OutputItem::Message => message.clone(),
                OutputItem::FileSearch {
                    id,
                    query,
                    status,
                    results,
                    ..
                } => json!({
                    "type": "file_search_call",
                    "id": id,
                    "status": status,
                    "queries": [query],
                    "results": results,
                }),
            })
            .collect();
        if self.message_index.is_none() {
            items.push(message);
        }
        Value::Array(items)
    }
}

/// A file_search result's passages, without their text unless asked for.
fn passages(result: &Value, include_text: bool) -> Value {
    let mut results = result["results"].clone();
    if !include_text && let Some(list) = results.as_array_mut() {
        for passage in list {
            if let Some(fields) = passage.as_object_mut() {
                fields.remove("chunk_text");
            }
        }
    }
    results
}

fn message_id(log: &RunLog) -> String {
    format!("msg_{}", log.run_id)
}

/// The response object, as `response.completed` and a non-streaming answer carry it.
fn response_object(log: &RunLog, stop_reason: StopReason, output: &Output) -> Value {
    let status = match stop_reason {
        StopReason::Completed
        | StopReason::MaxIterations
        | StopReason::Paused
        | StopReason::ToolCalls => "completed",
        StopReason::UpstreamError | StopReason::Interrupted => "failed",
        StopReason::Length | StopReason::Cancelled | StopReason::TimeBudget => "incomplete",
    };
    json!({
        "id": format!("resp_{}", log.run_id),
        "object": "response",
        "created_at": log.created,
        "model": log.model,
        "status": status,
        "output": output.to_json(log),
        "output_text": output.text,
        "x_stop_reason": stop_reason,
    })
}

fn typed(name: &str, payload: Value) -> Event {
    Event::Data(Data::new(payload.to_string()).event(name.to_string()))
}

/// The run as a Responses stream.
fn stream(log: Arc<RunLog>, include_results: bool) -> HttpResponse {
    let source = log.clone();
    let frames = log
        .subscribe(0)
        .scan(Output::new(include_results), move |output, (_, event)| {
            let log = &source;
            let mut out = Vec::new();
            output.observe(event.as_ref());
            match event.as_ref() {
                RunEvent::Started { .. } => {
                    let mut response = response_object(log, StopReason::Completed, output);
                    response["status"] = json!("in_progress");
                    response["output"] = json!([]);
                    if let Some(chat_id) = &log.chat_id {
                        response["x_chat_id"] = json!(chat_id);
                    }
                    out.push(typed("response.created", json!({"type": "response.created", "response": response})));
                }
                RunEvent::TextDelta { content } => {
                    out.push(typed(
                        "response.output_text.delta",
                        json!({"type": "response.output_text.delta", "item_id": message_id(log),
                               "output_index": output.message_index(), "content_index": 0, "delta": content}),
                    ));
                }
                RunEvent::Finished {
                    stop_reason,
                    usage,
                    error,
                    ..
                } => {
                    if let Some(error) = error {
                        out.push(typed("error", json!({"type": "error", "code": error.code, "message": error.shown()})));
                    }
                    let message_index = output.message_index.unwrap_or(output.items.len());
                    out.push(typed(
                        "response.output_text.done",
                        json!({"type": "response.output_text.done", "item_id": message_id(log),
                               "output_index": message_index, "content_index": 0, "text": output.text}),
                    ));
                    let mut response = response_object(log, *stop_reason, output);
                    response["usage"] = responses_usage(usage);
                    if let Some(chat_id) = &log.chat_id {
                        response["x_chat_id"] = json!(chat_id);
                    }
                    out.push(typed("response.completed", json!({"type": "response.completed", "response": response})));
                }
                other => {
                    for (_, mut payload) in payloads(
                        Dialect::OpenAi {
                            include_usage: true,
                        },
                        log,
                        other,
                    ) {
                        // A search's events carry its place among this response's items.
                        if let Some(index) = payload["item_id"].as_str().and_then(|id| output.index_of(id)) {
                            payload["output_index"] = json!(index);
                        }
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

/// Usage in the Responses API's names; `estimated` only when Colloquy counted it.
fn responses_usage(usage: &crate::llm::wire::Usage) -> Value {
    let mut value = json!({"input_tokens": usage.prompt_tokens,
        "output_tokens": usage.completion_tokens, "total_tokens": usage.total_tokens});
    if usage.estimated {
        value["estimated"] = json!(true);
    }
    value
}

#[cfg(test)]
mod tests;
