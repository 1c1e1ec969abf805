//! The Responses encoder over a run's events, with no server and no model: output items in
//! order, passages with or without their text, the status of every stop reason, and the
//! stream's events from `response.created` to `response.completed`.

use std::sync::Arc;

use entities::ids::{ChatId, RunId, UserId};
use serde_json::{Value, json};

use super::encode::{Output, response_object, stream};
use crate::llm::wire::Usage;
use crate::run::events::{RunError, RunEvent, StopReason};
use crate::run::log::RunLog;

fn log() -> Arc<RunLog> {
    Arc::new(RunLog::new(
        RunId::from_string("r1"),
        Some(ChatId::from_string("c1")),
        UserId::from_string("u1"),
        "m".into(),
    ))
}

fn text(content: &str) -> RunEvent {
    RunEvent::TextDelta {
        content: content.into(),
    }
}

fn search_call(id: &str, query: &str) -> RunEvent {
    RunEvent::ToolCall {
        id: id.into(),
        name: "file_search".into(),
        arguments: json!({"query": query}),
        progress: None,
    }
}

fn search_result(id: &str, success: bool) -> RunEvent {
    RunEvent::ToolResult {
        tool_call_id: id.into(),
        name: "file_search".into(),
        success,
        result: json!({"results": [{"filename": "a.txt", "chunk_text": "the passage",
            "relevance_score": 0.5, "artifact_id": "doc_1"}]}),
        preview: String::new(),
        error: None,
        research: false,
    }
}

fn finished(stop_reason: StopReason, error: Option<RunError>) -> RunEvent {
    RunEvent::Finished {
        stop_reason,
        assistant_message_id: None,
        usage: Usage {
            prompt_tokens: 7,
            completion_tokens: 3,
            total_tokens: 10,
            estimated: false,
        },
        iterations: 1,
        error,
    }
}

fn output_of(events: &[RunEvent], include_results: bool) -> Value {
    let log = log();
    let mut output = Output::new(include_results);
    for event in events {
        output.observe(event);
    }
    output.to_json(&log)
}

#[test]
fn searches_come_in_call_order_and_the_message_where_its_text_began() {
    let output = output_of(
        &[
            search_call("a", "first"),
            search_result("a", true),
            text("Found "),
            search_call("b", "second"),
            search_result("b", false),
            text("it."),
        ],
        false,
    );
    let kinds: Vec<&str> = output
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["file_search_call", "message", "file_search_call"]);
    assert_eq!(output[0]["id"], "fs_a");
    assert_eq!(output[0]["queries"], json!(["first"]));
    assert_eq!(output[0]["status"], "completed");
    assert_eq!(output[2]["status"], "failed");
    assert_eq!(
        output[2]["results"],
        Value::Null,
        "a failed search has no results"
    );
    assert_eq!(output[1]["content"][0]["text"], "Found it.");
    assert_eq!(output[1]["id"], "msg_r1");
}

#[test]
fn passages_carry_their_text_only_when_asked() {
    let without = output_of(&[search_call("a", "q"), search_result("a", true)], false);
    let with = output_of(&[search_call("a", "q"), search_result("a", true)], true);
    assert!(without[0]["results"][0].get("chunk_text").is_none());
    assert_eq!(without[0]["results"][0]["filename"], "a.txt");
    assert_eq!(with[0]["results"][0]["chunk_text"], "the passage");
}

#[test]
fn a_run_without_text_still_answers_with_an_empty_message_last() {
    let output = output_of(&[search_call("a", "q"), search_result("a", true)], false);
    assert_eq!(output.as_array().unwrap().len(), 2);
    assert_eq!(output[1]["type"], "message");
    assert_eq!(output[1]["content"][0]["text"], "");
}

#[test]
fn every_stop_reason_has_its_response_status() {
    let log = log();
    let output = Output::new(false);
    let status = |reason| response_object(&log, reason, &output)["status"].clone();
    for reason in [
        StopReason::Completed,
        StopReason::MaxIterations,
        StopReason::Paused,
        StopReason::ToolCalls,
    ] {
        assert_eq!(status(reason), "completed", "{reason:?}");
    }
    for reason in [StopReason::UpstreamError, StopReason::Interrupted] {
        assert_eq!(status(reason), "failed", "{reason:?}");
    }
    for reason in [
        StopReason::Length,
        StopReason::Cancelled,
        StopReason::TimeBudget,
    ] {
        assert_eq!(status(reason), "incomplete", "{reason:?}");
    }
    let object = response_object(&log, StopReason::Completed, &output);
    assert_eq!(object["id"], "resp_r1");
    assert_eq!(object["object"], "response");
    assert_eq!(object["x_stop_reason"], "completed");
}

/// The stream of a finished run, as (event name, payload) pairs.
async fn streamed(log: Arc<RunLog>, include_results: bool) -> Vec<(String, Value)> {
    let body = actix_web::body::to_bytes(stream(log, include_results).into_body())
        .await
        .unwrap();
    let body = String::from_utf8(body.to_vec()).unwrap();
    let mut events = Vec::new();
    let mut name = None;
    for line in body.lines() {
        if let Some(event) = line.strip_prefix("event: ") {
            name = Some(event.to_string());
        } else if let Some(data) = line.strip_prefix("data: ") {
            let payload: Value = serde_json::from_str(data).unwrap();
            events.push((name.take().unwrap_or_default(), payload));
        }
    }
    events
}

#[actix_web::test]
async fn a_stream_runs_from_created_through_deltas_and_searches_to_completed() {
    let log = log();
    log.push(RunEvent::Started {
        user_message_id: None,
    });
    log.push(search_call("a", "q"));
    log.push(RunEvent::Extension {
        event_type: "response.file_search_call.searching".into(),
        payload: json!({"item_id": "fs_a", "output_index": 99}),
    });
    log.push(search_result("a", true));
    log.push(text("Hello"));
    log.push(text(" there"));
    log.push(finished(StopReason::Completed, None));
    let events = streamed(log, false).await;
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names.first(), Some(&"response.created"));
    assert_eq!(names.last(), Some(&"response.completed"));
    assert!(
        names.contains(&"response.file_search_call.searching"),
        "{names:?}"
    );

    let created = &events[0].1["response"];
    assert_eq!(created["status"], "in_progress");
    assert_eq!(created["output"], json!([]));
    assert_eq!(created["x_chat_id"], "c1");

    let searching = events
        .iter()
        .find(|(name, _)| name == "response.file_search_call.searching")
        .unwrap();
    assert_eq!(
        searching.1["output_index"], 0,
        "the search's place, not the tool's guess"
    );

    let deltas: Vec<&Value> = events
        .iter()
        .filter(|(name, _)| name == "response.output_text.delta")
        .map(|(_, payload)| payload)
        .collect();
    assert_eq!(deltas.len(), 2);
    assert_eq!(
        deltas[0]["output_index"], 1,
        "the message comes after the search"
    );
    assert_eq!(deltas[0]["delta"], "Hello");

    let done = events
        .iter()
        .find(|(name, _)| name == "response.output_text.done")
        .unwrap();
    assert_eq!(done.1["text"], "Hello there");
    let completed = &events.last().unwrap().1["response"];
    assert_eq!(completed["status"], "completed");
    assert_eq!(completed["usage"]["total_tokens"], 10);
    assert_eq!(completed["output_text"], "Hello there");
    assert_eq!(completed["output"][0]["type"], "file_search_call");
    assert!(
        completed["output"][0]["results"][0]
            .get("chunk_text")
            .is_none()
    );
}

#[actix_web::test]
async fn a_failed_run_streams_its_error_before_a_failed_response() {
    let log = log();
    log.push(RunEvent::Started {
        user_message_id: None,
    });
    log.push(text("Partial"));
    log.push(finished(
        StopReason::UpstreamError,
        Some(RunError::new("upstream_error", "the model server failed")),
    ));
    let events = streamed(log, true).await;
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    let error_at = names.iter().position(|name| *name == "error").unwrap();
    let completed_at = names
        .iter()
        .position(|name| *name == "response.completed")
        .unwrap();
    assert!(error_at < completed_at, "{names:?}");
    assert_eq!(events[error_at].1["code"], "upstream_error");
    let response = &events[completed_at].1["response"];
    assert_eq!(response["status"], "failed");
    assert_eq!(response["output_text"], "Partial");
}
