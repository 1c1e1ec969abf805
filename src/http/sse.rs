//! Wire encodings of `RunEvent`s for SSE. One internal event, two dialects: the Chat
//! Completions stream (`/v1`: OpenAI chunk objects, `x_*` typed `data:` lines, `[DONE]`) and
//! the chat API stream the UI reads (the same, plus the `event: message` tool events —
//! docs/spec.md#tool-events — and run bookkeeping). Chat API frames carry their event's sequence
//! number as `id:` for re-attaching; `/v1` frames carry none, as OpenAI's do: its Python client
//! turns every blank line after an `id:` (such as a keep-alive comment's) into an empty event it
//! cannot parse.

use actix_web_lab::sse::{Data, Event};
use serde_json::{Value, json};

use crate::run::events::RunEvent;
use crate::run::log::RunLog;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `/chat/api`: everything, for the UI.
    ChatApi,
    /// `/v1/chat/completions`: what OpenAI clients can parse. Every line is a
    /// `chat.completion.chunk` with one choice, so the quickstart loop's `choices[0].delta`
    /// works on every line: the typed `x_*` lines keep their `type` and fields beside a choice
    /// with an empty `delta`. Usage is on one line only, `x_chat.metadata`'s, when the client
    /// asked for it (`stream_options.include_usage`); that line is OpenAI's final usage chunk
    /// and, like it, has `choices: []`.
    OpenAi { include_usage: bool },
}

/// The OpenAI chunk id of a run.
pub fn completion_id(log: &RunLog) -> String {
    format!("chatcmpl-{}", log.run_id)
}

fn chunk(log: &RunLog, delta: Value, finish_reason: Option<&str>) -> Value {
    json!({
        "id": completion_id(log),
        "object": "chat.completion.chunk",
        "created": log.created,
        "model": log.model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    })
}

/// The typed `data:` payloads of an event that both dialects share, plus those only the chat
/// API gets (as `(event name, payload)`).
pub fn payloads(
    dialect: Dialect,
    log: &RunLog,
    event: &RunEvent,
) -> Vec<(Option<&'static str>, Value)> {
    let chat_api = dialect == Dialect::ChatApi;
    let mut out = Vec::new();
    match event {
        RunEvent::Started { user_message_id } => {
            if chat_api {
                out.push((
                    None,
                    json!({"type": "run.started", "run_id": log.run_id,
                    "chat_id": log.chat_id, "user_message_id": user_message_id}),
                ));
            }
            out.push((
                None,
                chunk(log, json!({"role": "assistant", "content": ""}), None),
            ));
        }
        RunEvent::Thinking { iteration } => {
            if chat_api {
                out.push((
                    Some("message"),
                    json!({"type": "thinking", "iteration": iteration}),
                ));
            }
        }
        RunEvent::TextDelta { content } => {
            out.push((None, chunk(log, json!({"content": content}), None)));
        }
        RunEvent::ReasoningDelta {
            content,
            elapsed_ms,
        } => out.push((
            None,
            json!({"type": "x_chat.reasoning", "delta": content, "elapsed_ms": elapsed_ms}),
        )),
        RunEvent::ToolCall {
            id,
            name,
            arguments,
            progress,
            message,
        } => {
            if chat_api {
                out.push((
                    Some("message"),
                    json!({"type": "tool_call", "id": id, "name": name,
                    "arguments": arguments}),
                ));
            }
            if let Some(progress) = progress {
                // Arguments that were not JSON arrive as their raw text: show that text.
                let text = match arguments {
                    Value::String(raw) => raw.clone(),
                    other => other.to_string(),
                };
                let mut line =
                    json!({"type": progress.event_type(), "name": name, "arguments": text});
                if *progress == crate::run::events::ProgressKind::Other {
                    // `tool_name` and `message` (docs/spec.md#research-events); `name` and
                    // `arguments` stay for older clients.
                    line["tool_name"] = json!(name);
                    line["message"] = json!(message);
                }
                out.push((None, line));
            }
        }
        RunEvent::ToolResult {
            tool_call_id,
            name,
            success,
            result,
            preview,
            error,
            research,
        } => {
            if chat_api {
                let mut payload = json!({"type": "tool_result", "toolCallId": tool_call_id,
                    "name": name, "success": success, "resultPreview": preview});
                match error {
                    Some(error) => payload["error"] = json!(error),
                    None => payload["result"] = result.clone(),
                }
                out.push((Some("message"), payload));
            }
            if *research {
                out.push((
                    None,
                    json!({"type": "x_research.result", "name": name,
                    "tool_call_id": tool_call_id}),
                ));
            }
        }
        RunEvent::ResearchComplete {
            elapsed_ms,
            input_tokens,
            output_tokens,
            iterations,
            sources,
        } => out.push((
            None,
            json!({"type": "x_research.complete", "elapsed_ms": elapsed_ms,
            "input_tokens": input_tokens, "output_tokens": output_tokens,
            "iterations": iterations, "sources": sources}),
        )),
        RunEvent::ClientToolCalls { calls } => {
            let deltas: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(|(index, call)| {
                    json!({"index": index, "id": call.id, "type": "function",
                           "function": {"name": call.function.name,
                                        "arguments": call.function.arguments}})
                })
                .collect();
            out.push((None, chunk(log, json!({"tool_calls": deltas}), None)));
        }
        RunEvent::Extension {
            event_type,
            payload,
        } => {
            let mut value = json!({"type": event_type});
            if let (Some(target), Some(fields)) = (value.as_object_mut(), payload.as_object()) {
                for (key, field) in fields {
                    // An artifact's content is for `/v1` clients, whose answer it is.
                    if chat_api && key == crate::chat::artifacts::DELIVERABLE_KEY {
                        continue;
                    }
                    target.insert(key.clone(), field.clone());
                }
            }
            out.push((None, value));
        }
        RunEvent::Finished {
            stop_reason,
            assistant_message_id,
            usage,
            research_usage,
            iterations,
            error,
        } => {
            if let Some(error) = error {
                out.push((
                    None,
                    json!({"type": "error", "error": {"message": error.shown(),
                    "type": "run_error", "code": error.code()}}),
                ));
            }
            if chat_api {
                out.push((
                    None,
                    json!({"type": "run.finished", "run_id": log.run_id,
                    "stop_reason": stop_reason, "assistant_message_id": assistant_message_id}),
                ));
            }
            // A run that failed says so where clients look for why the answer ended.
            let finish_reason = if error.is_some() {
                "error"
            } else {
                stop_reason.finish_reason()
            };
            let mut last = chunk(log, json!({}), Some(finish_reason));
            if chat_api {
                last["usage"] = json!(usage);
            }
            out.push((None, last));
            out.push((
                None,
                json!({"type": "x_chat.metadata", "run_id": log.run_id,
                "stop_reason": stop_reason, "iterations": iterations,
                "usage": super::run_usage::breakdown(usage, research_usage.as_ref())}),
            ));
        }
    }
    out
}

/// A typed payload as a `chat.completion.chunk` that keeps its `type` and fields. It carries
/// one choice with an empty `delta` (clients index `choices[0]` on every chunk), except the
/// usage chunk a client asked for, which has `choices: []` as OpenAI's has; without that ask,
/// `x_chat.metadata` leaves its usage out.
fn typed_chunk(log: &RunLog, payload: Value, include_usage: bool) -> Value {
    if payload["object"] == "chat.completion.chunk" {
        return payload;
    }
    let usage_chunk = include_usage && payload.get("usage").is_some();
    let choices = if usage_chunk {
        json!([])
    } else {
        json!([{"index": 0, "delta": {}, "finish_reason": null}])
    };
    let mut wrapped = json!({
        "id": completion_id(log),
        "object": "chat.completion.chunk",
        "created": log.created,
        "model": log.model,
        "choices": choices,
    });
    if let (Some(target), Value::Object(fields)) = (wrapped.as_object_mut(), payload) {
        for (key, field) in fields {
            if key == "usage" && !include_usage {
                continue;
            }
            target.insert(key, field);
        }
    }
    wrapped
}

/// On `/v1`, the reasoning line's choice carries it as DeepSeek's `reasoning_content` delta,
/// which clients that know that field (LangChain, Vercel's openai-compatible provider) read.
fn with_reasoning_choice(mut chunk: Value) -> Value {
    if chunk["type"] == "x_chat.reasoning" {
        chunk["choices"] = json!([{"index": 0,
            "delta": {"reasoning_content": chunk["delta"].clone()}, "finish_reason": null}]);
    }
    chunk
}

/// The SSE frames of one event.
pub fn encode(dialect: Dialect, log: &RunLog, seq: usize, event: &RunEvent) -> Vec<Event> {
    let mut frames: Vec<Event> = payloads(dialect, log, event)
        .into_iter()
        .map(|(name, payload)| match dialect {
            Dialect::OpenAi { include_usage } => (
                name,
                with_reasoning_choice(typed_chunk(log, payload, include_usage)),
            ),
            Dialect::ChatApi => (name, payload),
        })
        .map(|(name, payload)| {
            let mut data = Data::new(payload.to_string());
            if dialect == Dialect::ChatApi {
                data = data.id(seq.to_string());
            }
            if let Some(name) = name {
                data = data.event(name);
            }
            Event::Data(data)
        })
        .collect();
    if matches!(event, RunEvent::Finished { .. }) {
        let mut done = Data::new("[DONE]");
        if dialect == Dialect::ChatApi {
            done = done.id(seq.to_string());
        }
        frames.push(Event::Data(done));
    }
    frames
}

/// Adds an event's progress payloads to a non-streaming response's `metadata`: one list per
/// kind (`x_research`, `x_ask_user`, ...), in order (docs/spec.md#metadata-and-parts).
pub fn accumulate_metadata(
    metadata: &mut serde_json::Map<String, Value>,
    log: &RunLog,
    event: &RunEvent,
) {
    for payload in progress_payloads(log, event) {
        let Some(kind) = payload["type"]
            .as_str()
            .and_then(|t| t.split('.').next())
            .map(str::to_string)
        else {
            continue;
        };
        push_to(metadata, &kind, payload);
    }
}

/// An event's progress payloads, without the deliverables they carry (those are in the answer:
/// `x_artifacts`, an output part), not its progress.
fn progress_payloads(log: &RunLog, event: &RunEvent) -> Vec<Value> {
    let dialect = Dialect::OpenAi {
        include_usage: true,
    };
    payloads(dialect, log, event)
        .into_iter()
        .map(|(_, mut payload)| {
            if let Some(fields) = payload.as_object_mut() {
                fields.remove(crate::chat::artifacts::DELIVERABLE_KEY);
                fields.remove(crate::tools::image_generation::DELIVERABLE_KEY);
            }
            payload
        })
        .collect()
}

fn push_to(metadata: &mut serde_json::Map<String, Value>, key: &str, payload: Value) {
    if let Some(list) = metadata
        .entry(key.to_string())
        .or_insert_with(|| json!([]))
        .as_array_mut()
    {
        list.push(payload);
    }
}

/// The Responses API's `x_metadata`, keyed by tool as seed 003 keys it, and only so: each
/// progress payload under the tool it belongs to (`web_search`, `fetch_url`, … by the research
/// events' `name`; `file_search`, `image_generation`, `mcp` — a remote MCP server's listing,
/// calls and approvals —, `local_shell`, `ask_user`, `artifacts`), each list in the order its
/// events came. A web search's list also holds OpenAI's `response.web_search_call.*` events
/// (`add_openai`), as a stream carries them. (Chat Completions keeps seed 000's lists per
/// event family: `accumulate_metadata`.)
#[derive(Default)]
pub struct ToolMetadata {
    pub lists: serde_json::Map<String, Value>,
    /// The model-facing names of the remote MCP servers' tools.
    mcp_tools: Vec<String>,
}

impl ToolMetadata {
    pub fn add(&mut self, log: &RunLog, event: &RunEvent) {
        if let RunEvent::ClientToolCalls { calls } = event {
            for call in calls.iter().filter(|c| c.function.name == "local_shell") {
                push_to(
                    &mut self.lists,
                    "local_shell",
                    json!({"type": "local_shell_call", "call_id": call.id,
                           "arguments": call.function.arguments}),
                );
            }
        }
        for payload in progress_payloads(log, event) {
            let kind = payload["type"].as_str().unwrap_or_default().to_string();
            if kind == crate::tools::mcp::remote::LIST_TOOLS_EVENT
                && let Some(names) = payload["names"].as_object()
            {
                self.mcp_tools.extend(names.keys().cloned());
            }
            let family = kind.split('.').next().unwrap_or_default();
            let named = payload["name"].as_str().map(str::to_string);
            let key = match family {
                "x_research" => match named {
                    Some(name) if self.mcp_tools.contains(&name) => "mcp".to_string(),
                    Some(name) => name,
                    None => family.to_string(),
                },
                "x_mcp" => "mcp".into(),
                "x_ask_user" if payload.get("mcp").is_some() => "mcp".into(),
                "x_ask_user" => "ask_user".into(),
                "x_artifact" => "artifacts".into(),
                _ if kind.starts_with("response.file_search_call.") => "file_search".into(),
                _ if kind.starts_with("response.image_generation_call.") => {
                    "image_generation".into()
                }
                _ => family.to_string(),
            };
            if !key.is_empty() {
                push_to(&mut self.lists, &key, payload);
            }
        }
    }

    /// One of OpenAI's events a Responses stream carries (`Output`'s lifecycle): a web
    /// search's `response.web_search_call.*` joins the `web_search` list.
    pub fn add_openai(&mut self, kind: &str, payload: &Value) {
        if kind.starts_with("response.web_search_call.") {
            push_to(&mut self.lists, "web_search", payload.clone());
        }
    }
}

#[cfg(test)]
mod tests;
