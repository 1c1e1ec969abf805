//! The Responses encoder: a run's events as output items (`Output`), the response object, and
//! the typed `response.*` stream.

use std::sync::Arc;

use actix_web::HttpResponse;
use actix_web_lab::sse::{Data, Event, Sse};
use futures_util::StreamExt;
use serde_json::{Value, json};

use super::super::sse::{Dialect, payloads};
use crate::run::events::{RunEvent, StopReason};
use crate::run::log::RunLog;
use crate::tools::file_search;

/// The response's output items as a run's events build them: one `file_search_call` per
/// search, in call order, and the assistant message, placed where its first text came (last
/// when there was none).
pub(super) struct Output {
    include_results: bool,
    items: Vec<OutputItem>,
    /// The message's place in `items`, once text has come.
    message_index: Option<usize>,
    pub(super) text: String,
}

pub(super) enum OutputItem {
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
    pub(super) fn new(include_results: bool) -> Self {
        Self {
            include_results,
            items: Vec::new(),
            message_index: None,
            text: String::new(),
        }
    }

    pub(super) fn observe(&mut self, event: &RunEvent) {
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

    pub(super) fn to_json(&self, log: &RunLog) -> Value {
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
pub(super) fn passages(result: &Value, include_text: bool) -> Value {
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

pub(super) fn message_id(log: &RunLog) -> String {
    format!("msg_{}", log.run_id)
}

/// The response object, as `response.completed` and a non-streaming answer carry it.
pub(super) fn response_object(log: &RunLog, stop_reason: StopReason, output: &Output) -> Value {
    let status = match stop_reason {
        StopReason::Completed
        | StopReason::MaxIterations
        | StopReason::Paused
        | StopReason::ToolCalls => "completed",
        StopReason::UpstreamError | StopReason::Interrupted => "failed",
        StopReason::Length
        | StopReason::Cancelled
        | StopReason::TimeBudget
        | StopReason::TokenBudget => "incomplete",
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

pub(super) fn typed(name: &str, payload: Value) -> Event {
    Event::Data(Data::new(payload.to_string()).event(name.to_string()))
}

/// The run as a Responses stream.
pub(super) fn stream(log: Arc<RunLog>, include_results: bool) -> HttpResponse {
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
pub(super) fn responses_usage(usage: &crate::llm::wire::Usage) -> Value {
    let mut value = json!({"input_tokens": usage.prompt_tokens,
        "output_tokens": usage.completion_tokens, "total_tokens": usage.total_tokens});
    if usage.estimated {
        value["estimated"] = json!(true);
    }
    value
}
