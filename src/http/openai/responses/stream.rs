//! A run as a Responses stream: `response.created` and `response.in_progress`, each output
//! item's lifecycle (`Output`), then the terminal event (`response.completed`, `.incomplete`
//! or `.failed`, after an `error` event when the run failed). Colloquy's `x_*` progress events
//! and `x_chat.metadata` are sent between them only when the request asks (`x_events`): the
//! SDKs' stream helpers know OpenAI's event types only. Every event carries
//! `sequence_number`.

use std::sync::Arc;

use actix_web::HttpResponse;
use actix_web_lab::sse::{Data, Event, Sse};
use futures_util::StreamExt;
use serde_json::{Value, json};

use super::encode::{Frame, Output, terminal_event};
use super::request::Includes;
use crate::http::chat_api::runs::KEEP_ALIVE;
use crate::http::sse::{Dialect, ToolMetadata, payloads};
use crate::run::events::RunEvent;
use crate::run::log::RunLog;

/// Numbers events and turns them into frames.
struct Numbered {
    next: u64,
}

impl Numbered {
    fn frame(&mut self, kind: &str, mut payload: Value) -> Event {
        payload["type"] = json!(kind);
        payload["sequence_number"] = json!(self.next);
        self.next += 1;
        Event::Data(Data::new(payload.to_string()).event(kind.to_string()))
    }
}

/// The payloads one run event adds to the stream, in order.
fn step(
    frame: &Frame,
    output: &mut Output,
    log: &RunLog,
    event: &RunEvent,
    x_events: bool,
) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = Vec::new();
    let lifecycle = output.observe(event);
    match event {
        RunEvent::Started { .. } => {
            let response = frame.in_progress(log);
            out.push((
                "response.created".into(),
                json!({"response": response.clone()}),
            ));
            out.push(("response.in_progress".into(), json!({"response": response})));
        }
        RunEvent::Finished {
            stop_reason,
            usage,
            research_usage,
            error,
            iterations,
            ..
        } => {
            out.extend(lifecycle);
            if x_events {
                let usage_breakdown =
                    crate::http::run_usage::breakdown(usage, research_usage.as_ref());
                out.push((
                    "x_chat.metadata".into(),
                    json!({"run_id": log.run_id, "stop_reason": stop_reason,
                           "iterations": iterations, "usage": usage_breakdown}),
                ));
            }
            if let Some(error) = error {
                out.push((
                    "error".into(),
                    json!({"code": error.code(), "message": error.shown(), "param": null}),
                ));
            }
            let response = frame.finished(log, output, *stop_reason, usage, error.as_ref());
            out.push((
                terminal_event(&response).into(),
                json!({"response": response}),
            ));
        }
        RunEvent::TextDelta { .. }
        | RunEvent::ReasoningDelta { .. }
        | RunEvent::ClientToolCalls { .. } => out.extend(lifecycle),
        other => {
            out.extend(lifecycle);
            let typed = payloads(
                Dialect::OpenAi {
                    include_usage: true,
                },
                log,
                other,
            );
            for (_, mut payload) in typed {
                let Some(kind) = payload["type"].as_str().map(str::to_string) else {
                    continue;
                };
                if kind.starts_with("x_") && !x_events {
                    continue;
                }
                // `Output` sends it, with the finished item, when the call's result is in.
                if kind == "response.file_search_call.completed"
                    || kind == "response.image_generation_call.completed"
                {
                    continue;
                }
                // A search's events carry its place among this response's items.
                if let Some(index) = payload["item_id"]
                    .as_str()
                    .and_then(|id| output.index_of(id))
                {
                    payload["output_index"] = json!(index);
                }
                out.push((kind, payload));
            }
        }
    }
    out
}

/// The run as a Responses stream; `x_events`: with Colloquy's own progress events.
pub fn stream(log: Arc<RunLog>, frame: Frame, includes: Includes, x_events: bool) -> HttpResponse {
    let source = Arc::clone(&log);
    let output = Output::new(frame.seed(), includes);
    let frames = log
        .subscribe(0)
        .scan(
            (frame, output, Numbered { next: 0 }),
            move |(frame, output, numbered), (_, event)| {
                let frames: Vec<Event> = step(frame, output, &source, &event, x_events)
                    .into_iter()
                    .map(|(kind, payload)| numbered.frame(&kind, payload))
                    .collect();
                futures_util::future::ready(Some(futures_util::stream::iter(frames)))
            },
        )
        .flatten();
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("cache-control", "no-cache"))
        .insert_header(("x-accel-buffering", "no"))
        .insert_header(("x-run-id", log.run_id.as_str()))
        .body(Sse::from_infallible_stream(frames).with_keep_alive(KEEP_ALIVE))
}

/// Waits for the run and returns its response object, the progress events accumulated in
/// `x_metadata` keyed by tool (`http::sse::ToolMetadata`, seed 003's shape), and the run's
/// error if it failed before saying anything.
pub async fn collect(
    log: Arc<RunLog>,
    frame: &Frame,
    includes: Includes,
) -> Option<(Value, Option<crate::run::events::RunError>)> {
    let mut events = Box::pin(log.whole());
    let mut output = Output::new(frame.seed(), includes);
    let mut metadata = ToolMetadata::default();
    while let Some((_, event)) = events.next().await {
        for (kind, payload) in output.observe(event.as_ref()) {
            metadata.add_openai(&kind, &payload);
        }
        match event.as_ref() {
            RunEvent::Finished {
                stop_reason,
                usage,
                error,
                ..
            } => {
                let mut body = frame.finished(&log, &output, *stop_reason, usage, error.as_ref());
                let mut metadata = std::mem::take(&mut metadata.lists);
                if !output.thinking.is_empty() {
                    metadata.insert("thinking".into(), json!(output.thinking));
                }
                body["x_metadata"] = Value::Object(metadata);
                let silent_failure = error.clone().filter(|_| output.text.is_empty());
                return Some((body, silent_failure));
            }
            RunEvent::TextDelta { .. } | RunEvent::ReasoningDelta { .. } => {}
            other => metadata.add(&log, other),
        }
    }
    None
}
