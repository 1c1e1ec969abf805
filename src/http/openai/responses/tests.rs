//! The Responses encoder over a run's events, with no server and no model: output items in
//! order, passages with or without their text, the status of every stop reason, and the
//! stream's events from `response.created` to the terminal event, each item's lifecycle in an
//! order OpenAI's SDKs can replay into the final response.

use std::sync::Arc;

use entities::ids::{ChatId, RunId, UserId};
use serde_json::{Value, json};

use super::encode::{Frame, Output};
use super::request::Includes;
use super::stream::stream;
use crate::llm::wire::Usage;
use crate::run::events::{RunError, RunErrorKind, RunEvent, StopReason};
use crate::run::log::RunLog;

fn log() -> Arc<RunLog> {
    Arc::new(RunLog::new(
        RunId::from_string("r1"),
        Some(ChatId::from_string("c1")),
        UserId::from_string("u1"),
        "m".into(),
    ))
}

/// What `include` asks when it asks for file_search's passages or not.
fn results(file_search_results: bool) -> Includes {
    Includes {
        file_search_results,
        ..Includes::default()
    }
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
        message: None,
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
            ..Usage::default()
        },
        research_usage: None,
        iterations: 1,
        error,
    }
}

fn output_of(events: &[RunEvent], include_results: bool) -> Value {
    let mut output = Output::new("r1", results(include_results));
    for event in events {
        output.observe(event);
    }
    output.to_json()
}

fn frame() -> Frame {
    Frame {
        id: "resp_r1".into(),
        echo: json!({"model": "m", "metadata": {"k": "v"}, "store": true}),
        chat_id: Some("c1".into()),
    }
}

#[test]
fn items_come_in_the_order_the_run_made_them() {
    let output = output_of(
        &[
            search_call("a", "first"),
            search_result("a", true),
            text("Found "),
            search_call("b", "second"),
            search_result("b", false),
            text("it."),
            finished(StopReason::Completed, None),
        ],
        false,
    );
    let kinds: Vec<&str> = output
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["file_search_call", "message", "file_search_call", "message"]
    );
    assert_eq!(output[0]["id"], "fs_a");
    assert_eq!(output[0]["queries"], json!(["first"]));
    assert_eq!(output[0]["status"], "completed");
    assert_eq!(output[2]["status"], "failed");
    assert_eq!(
        output[2]["results"],
        Value::Null,
        "a failed search has no results"
    );
    assert_eq!(output[1]["content"][0]["text"], "Found ");
    assert_eq!(output[1]["id"], "msg_r1");
    assert_eq!(output[3]["content"][0]["text"], "it.");
    assert_eq!(output[3]["id"], "msg_r1_1");
    assert_eq!(output[3]["status"], "completed");
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
fn a_run_that_made_nothing_still_answers_with_an_empty_message() {
    let output = output_of(&[finished(StopReason::Completed, None)], false);
    assert_eq!(output.as_array().unwrap().len(), 1);
    assert_eq!(output[0]["type"], "message");
    assert_eq!(output[0]["content"][0]["text"], "");
}

#[test]
fn every_stop_reason_has_its_response_status() {
    let log = log();
    let output = Output::new("r1", Includes::default());
    let usage = Usage::default();
    let status = |reason| frame().finished(&log, &output, reason, &usage, None);
    for reason in [
        StopReason::Completed,
        StopReason::MaxIterations,
        StopReason::Paused,
        StopReason::ToolCalls,
    ] {
        assert_eq!(status(reason)["status"], "completed", "{reason:?}");
    }
    for reason in [StopReason::UpstreamError, StopReason::Interrupted] {
        assert_eq!(status(reason)["status"], "failed", "{reason:?}");
    }
    for reason in [
        StopReason::Length,
        StopReason::Cancelled,
        StopReason::TimeBudget,
    ] {
        let object = status(reason);
        assert_eq!(object["status"], "incomplete", "{reason:?}");
        assert!(object["incomplete_details"]["reason"].is_string());
    }
    assert_eq!(
        status(StopReason::Length)["incomplete_details"]["reason"],
        "max_output_tokens"
    );
    let failed = frame().finished(
        &log,
        &output,
        StopReason::Completed,
        &usage,
        Some(&RunError::new(RunErrorKind::UpstreamTimeout, "slow")),
    );
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["error"]["code"], "upstream_timeout");
    let object = status(StopReason::Completed);
    assert_eq!(object["id"], "resp_r1");
    assert_eq!(object["object"], "response");
    assert_eq!(
        object["metadata"],
        json!({"k": "v"}),
        "the request's metadata"
    );
    assert_eq!(object["x_stop_reason"], "completed");
}

/// The stream of a finished run, as (event name, payload) pairs.
async fn streamed(log: Arc<RunLog>, include_results: bool, x_events: bool) -> Vec<(String, Value)> {
    let response = stream(log, frame(), results(include_results), x_events);
    let body = actix_web::body::to_bytes(response.into_body())
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

/// Replays a stream as OpenAI's SDKs do (`ResponseStream`'s accumulation): items from
/// `output_item.added`, parts from `content_part.added`, text and arguments from their deltas;
/// panics where an SDK throws (an event for an item or part not added yet).
fn replay(events: &[(String, Value)]) -> Vec<Value> {
    let mut output: Vec<Value> = Vec::new();
    for (name, payload) in events {
        let index = payload["output_index"].as_u64().map(|i| i as usize);
        match name.as_str() {
            "response.output_item.added" => {
                assert_eq!(index, Some(output.len()), "items are added in order");
                output.push(payload["item"].clone());
            }
            "response.content_part.added" => {
                let item = &mut output[index.expect("an output index")];
                item["content"]
                    .as_array_mut()
                    .expect("a message")
                    .push(payload["part"].clone());
            }
            "response.output_text.delta" => {
                let item = &mut output[index.expect("an output index")];
                let part = payload["content_index"].as_u64().unwrap() as usize;
                let text = item["content"][part]["text"]
                    .as_str()
                    .expect("a part")
                    .to_string();
                item["content"][part]["text"] = json!(text + payload["delta"].as_str().unwrap());
            }
            "response.reasoning_summary_part.added" => {
                let item = &mut output[index.expect("an output index")];
                item["summary"]
                    .as_array_mut()
                    .expect("a reasoning item")
                    .push(payload["part"].clone());
            }
            "response.reasoning_summary_text.delta" => {
                let item = &mut output[index.expect("an output index")];
                let part = payload["summary_index"].as_u64().unwrap() as usize;
                let text = item["summary"][part]["text"]
                    .as_str()
                    .expect("a summary part")
                    .to_string();
                item["summary"][part]["text"] = json!(text + payload["delta"].as_str().unwrap());
            }
            "response.function_call_arguments.delta" => {
                let item = &mut output[index.expect("an output index")];
                let text = item["arguments"].as_str().expect("a call").to_string();
                item["arguments"] = json!(text + payload["delta"].as_str().unwrap());
            }
            "response.output_item.done" => {
                output[index.expect("an output index")] = payload["item"].clone();
            }
            _ => {}
        }
    }
    output
}

#[actix_web::test]
async fn a_stream_runs_from_created_through_each_items_lifecycle_to_completed() {
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
    let events = streamed(log, false, true).await;
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.file_search_call.searching",
            "response.output_item.done",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "x_chat.metadata",
            "response.completed",
        ]
    );
    let numbers: Vec<u64> = events
        .iter()
        .map(|(_, p)| p["sequence_number"].as_u64().expect("a sequence number"))
        .collect();
    assert_eq!(numbers, (0..events.len() as u64).collect::<Vec<_>>());
    for (name, payload) in &events {
        assert_eq!(payload["type"], name.as_str());
    }

    let created = &events[0].1["response"];
    assert_eq!(created["status"], "in_progress");
    assert_eq!(created["output"], json!([]));
    assert_eq!(created["x_chat_id"], "c1");
    assert_eq!(
        events[3].1["output_index"], 0,
        "the search's place, not the tool's guess"
    );
    assert_eq!(
        events[7].1["output_index"], 1,
        "the message follows the search"
    );
    assert_eq!(events[9].1["text"], "Hello there");
    assert_eq!(events[12].1["usage"]["total_tokens"], 10);

    let completed = &events.last().unwrap().1["response"];
    assert_eq!(completed["status"], "completed");
    assert_eq!(completed["usage"]["total_tokens"], 10);
    assert_eq!(completed["output_text"], "Hello there");
    assert!(
        completed["output"][0]["results"][0]
            .get("chunk_text")
            .is_none()
    );
    assert_eq!(
        Value::Array(replay(&events)),
        completed["output"],
        "what an SDK builds from the events is the final response's output"
    );
}

#[actix_web::test]
async fn client_function_calls_stream_as_function_call_items() {
    use crate::llm::wire::{FunctionCall, ToolCall};
    let log = log();
    log.push(RunEvent::Started {
        user_message_id: None,
    });
    log.push(text("Let me check."));
    log.push(RunEvent::ClientToolCalls {
        calls: vec![ToolCall {
            id: "call_w".into(),
            kind: "function".into(),
            function: FunctionCall {
                name: "get_weather".into(),
                arguments: json!({"city": "Oslo"}).to_string(),
            },
        }],
    });
    log.push(finished(StopReason::ToolCalls, None));
    let events = streamed(log, false, false).await;
    let completed = &events.last().unwrap().1["response"];
    assert_eq!(events.last().unwrap().0, "response.completed");
    let call = &completed["output"][1];
    assert_eq!(call["type"], "function_call");
    assert_eq!(call["call_id"], "call_w");
    assert_eq!(call["name"], "get_weather");
    assert_eq!(call["arguments"], "{\"city\":\"Oslo\"}");
    let done = events
        .iter()
        .find(|(name, _)| name == "response.function_call_arguments.done")
        .unwrap();
    assert_eq!(done.1["output_index"], 1);
    assert_eq!(Value::Array(replay(&events)), completed["output"]);
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
        Some(RunError::new(
            RunErrorKind::UpstreamError,
            "the model server failed",
        )),
    ));
    let events = streamed(log, true, false).await;
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    let error_at = names.iter().position(|name| *name == "error").unwrap();
    assert_eq!(names.last(), Some(&"response.failed"), "{names:?}");
    assert!(!names.contains(&"response.completed"));
    assert!(error_at < names.len() - 1, "{names:?}");
    assert_eq!(events[error_at].1["code"], "upstream_error");
    let response = &events.last().unwrap().1["response"];
    assert_eq!(response["status"], "failed");
    assert_eq!(response["error"]["code"], "upstream_error");
    assert_eq!(response["output_text"], "Partial");
}

fn reasoning(content: &str) -> RunEvent {
    RunEvent::ReasoningDelta {
        content: content.into(),
        elapsed_ms: 10,
    }
}

#[actix_web::test]
async fn reasoning_streams_as_a_reasoning_item_before_each_message_it_led_to() {
    let log = log();
    log.push(RunEvent::Started {
        user_message_id: None,
    });
    log.push(reasoning("Think"));
    log.push(reasoning("ing."));
    log.push(text("Hello"));
    log.push(reasoning("Again."));
    log.push(text("Bye"));
    log.push(RunEvent::Finished {
        stop_reason: StopReason::Completed,
        assistant_message_id: None,
        usage: Usage {
            prompt_tokens: 7,
            completion_tokens: 30,
            total_tokens: 37,
            completion_tokens_details: Some(crate::llm::wire::CompletionTokensDetails {
                reasoning_tokens: Some(21),
            }),
            ..Usage::default()
        },
        research_usage: None,
        iterations: 1,
        error: None,
    });
    let events = streamed(log.clone(), false, false).await;
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names[2..10],
        [
            "response.output_item.added",
            "response.reasoning_summary_part.added",
            "response.reasoning_summary_text.delta",
            "response.reasoning_summary_text.delta",
            "response.reasoning_summary_text.done",
            "response.reasoning_summary_part.done",
            "response.output_item.done",
            "response.output_item.added",
        ]
    );
    assert_eq!(
        events[2].1["item"],
        json!({"type": "reasoning", "id": "rs_r1", "summary": []})
    );
    assert_eq!(events[6].1["text"], "Thinking.");
    let completed = &events.last().unwrap().1["response"];
    let kinds: Vec<&str> = completed["output"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["reasoning", "message", "reasoning", "message"]);
    assert_eq!(
        completed["output"][0],
        json!({"type": "reasoning", "id": "rs_r1",
               "summary": [{"type": "summary_text", "text": "Thinking."}]})
    );
    assert_eq!(completed["output"][2]["id"], "rs_r1_1");
    assert_eq!(
        completed["output_text"], "HelloBye",
        "reasoning is not answer text"
    );
    assert_eq!(
        completed["usage"]["output_tokens_details"]["reasoning_tokens"],
        21
    );
    assert_eq!(
        Value::Array(replay(&events)),
        completed["output"],
        "what an SDK builds from the events is the final response's output"
    );
    let (body, _) = super::stream::collect(log, &frame(), Includes::default())
        .await
        .unwrap();
    assert_eq!(body["output"], completed["output"]);
    assert_eq!(body["x_metadata"]["thinking"], "Thinking.Again.");
}

#[actix_web::test]
async fn colloquys_own_events_are_streamed_only_when_the_request_asks_for_them() {
    let run = || {
        let log = log();
        log.push(RunEvent::Started {
            user_message_id: None,
        });
        log.push(RunEvent::ToolCall {
            id: "call_1".into(),
            name: "calculator".into(),
            arguments: json!({"expression": "6*7"}),
            progress: Some(crate::run::events::ProgressKind::Calculating),
            message: None,
        });
        log.push(RunEvent::Extension {
            event_type: "x_artifact.created".into(),
            payload: json!({"identifier": "a.md", "version": 1}),
        });
        log.push(text("42"));
        log.push(finished(StopReason::Completed, None));
        log
    };
    let names = |events: Vec<(String, Value)>| -> Vec<String> {
        events.into_iter().map(|(name, _)| name).collect()
    };
    let strict = names(streamed(run(), false, false).await);
    assert!(
        strict.iter().all(|name| name.starts_with("response.")),
        "{strict:?}"
    );
    assert_eq!(
        strict.last().map(String::as_str),
        Some("response.completed")
    );
    let opted_in = names(streamed(run(), false, true).await);
    for kind in [
        "x_research.calculating",
        "x_artifact.created",
        "x_chat.metadata",
    ] {
        assert!(opted_in.iter().any(|name| name == kind), "{opted_in:?}");
    }
}

fn web_search_call(id: &str, query: &str) -> RunEvent {
    RunEvent::ToolCall {
        id: id.into(),
        name: "web_search".into(),
        arguments: json!({"query": query}),
        progress: Some(crate::run::events::ProgressKind::Searching),
        message: None,
    }
}

fn web_search_result(id: &str) -> RunEvent {
    RunEvent::ToolResult {
        tool_call_id: id.into(),
        name: "web_search".into(),
        success: true,
        result: json!({"answer": "", "abstract": "", "fetched_pages": [],
            "results": [
                {"title": "Gold price", "url": "https://gold.example/price", "snippet": "s"},
                {"title": "FX", "url": "https://fx.example/", "snippet": "s"}]}),
        preview: String::new(),
        error: None,
        research: true,
    }
}

#[actix_web::test]
async fn a_web_search_is_a_web_search_call_item_with_openais_events_on_a_default_stream() {
    let log = log();
    log.push(RunEvent::Started {
        user_message_id: None,
    });
    log.push(web_search_call("w1", "gold price"));
    log.push(web_search_result("w1"));
    let answer =
        "Gold is dear ([price](https://gold.example/price)); see https://nowhere.example/.";
    log.push(text(answer));
    log.push(finished(StopReason::Completed, None));
    // Without x_events: OpenAI's own events only.
    let events = streamed(log, false, false).await;
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names[..7],
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.web_search_call.in_progress",
            "response.web_search_call.searching",
            "response.web_search_call.completed",
            "response.output_item.done",
        ]
    );
    assert!(
        !names.iter().any(|n| n.starts_with("x_")),
        "no progress of Colloquy's own: {names:?}"
    );
    for (name, payload) in &events[3..6] {
        assert_eq!(payload["item_id"], "ws_w1", "{name}");
        assert_eq!(payload["output_index"], 0, "{name}");
    }
    let added = &events[2].1["item"];
    assert_eq!(added["type"], "web_search_call");
    assert_eq!(added["status"], "in_progress");
    let done = &events[6].1["item"];
    assert_eq!(done["status"], "completed");
    assert_eq!(
        done["action"],
        json!({"type": "search", "query": "gold price"}),
        "no sources unless include asks"
    );
    // The text's link to a page the search found is a url_citation; the other URL is not.
    let annotation_added = events
        .iter()
        .find(|(name, _)| name == "response.output_text.annotation.added")
        .expect("an annotation event");
    let annotation = &annotation_added.1["annotation"];
    assert_eq!(annotation["type"], "url_citation");
    assert_eq!(annotation["url"], "https://gold.example/price");
    assert_eq!(annotation["title"], "Gold price");
    let chars: Vec<char> = answer.chars().collect();
    let cited: String = chars[annotation["start_index"].as_u64().unwrap() as usize
        ..annotation["end_index"].as_u64().unwrap() as usize]
        .iter()
        .collect();
    assert_eq!(cited, "[price](https://gold.example/price)");
    let (_, completed) = events.last().unwrap();
    let output = completed["response"]["output"].clone();
    assert_eq!(output[1]["content"][0]["annotations"], json!([annotation]));
    assert_eq!(replay(&events), output.as_array().unwrap().clone());
}

/// A page read alone (fetch_url's `url`, browse_url: the result is its text) is a page the
/// answer may cite; one whose fetch failed is not.
#[test]
fn a_page_read_alone_can_be_cited() {
    let fetch = |id: &str, name: &str, url: &str| RunEvent::ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: json!({"url": url}),
        progress: Some(crate::run::events::ProgressKind::Reading),
        message: None,
    };
    let fetched = |id: &str, name: &str, success: bool| RunEvent::ToolResult {
        tool_call_id: id.into(),
        name: name.into(),
        success,
        result: if success {
            json!("The page's text.")
        } else {
            json!(null)
        },
        preview: String::new(),
        error: None,
        research: true,
    };
    let answer = "See https://one.example/a, https://two.example/b and https://three.example/c.";
    let output = output_of(
        &[
            fetch("f1", "fetch_url", "https://one.example/a"),
            fetched("f1", "fetch_url", true),
            fetch("f2", "browse_url", "https://two.example/b"),
            fetched("f2", "browse_url", true),
            fetch("f3", "fetch_url", "https://three.example/c"),
            fetched("f3", "fetch_url", false),
            text(answer),
            finished(StopReason::Completed, None),
        ],
        false,
    );
    let message = output
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["type"] == "message")
        .unwrap();
    let cited: Vec<&str> = message["content"][0]["annotations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["url"].as_str().unwrap())
        .collect();
    assert_eq!(cited, ["https://one.example/a", "https://two.example/b"]);
}

#[test]
fn a_web_search_call_lists_its_sources_when_include_asks() {
    let mut output = Output::new(
        "r1",
        Includes {
            web_search_sources: true,
            ..Includes::default()
        },
    );
    for event in [
        web_search_call("w1", "gold"),
        web_search_result("w1"),
        finished(StopReason::Completed, None),
    ] {
        output.observe(&event);
    }
    assert_eq!(
        output.to_json()[0]["action"]["sources"],
        json!([{"type": "url", "url": "https://gold.example/price"},
               {"type": "url", "url": "https://fx.example/"}])
    );
}

#[actix_web::test]
async fn a_local_shell_call_is_a_local_shell_call_item() {
    let log = log();
    log.push(RunEvent::Started {
        user_message_id: None,
    });
    log.push(RunEvent::ClientToolCalls {
        calls: vec![crate::llm::wire::ToolCall {
            id: "call_sh".into(),
            kind: "function".into(),
            function: crate::llm::wire::FunctionCall {
                name: "local_shell".into(),
                arguments: json!({"command": ["ls", "-la"], "timeout_ms": 5000}).to_string(),
            },
        }],
    });
    log.push(finished(StopReason::ToolCalls, None));
    let events = streamed(log, false, false).await;
    let (_, completed) = events.last().unwrap();
    let item = &completed["response"]["output"][0];
    assert_eq!(
        *item,
        json!({"type": "local_shell_call", "id": "lsh_call_sh", "call_id": "call_sh",
               "status": "completed", "action": {"type": "exec", "command": ["ls", "-la"],
               "env": {}, "timeout_ms": 5000, "user": null, "working_directory": null}})
    );
    assert_eq!(replay(&events), vec![item.clone()]);
}

#[actix_web::test]
async fn an_artifact_the_run_made_is_a_part_of_its_answer_in_its_latest_version() {
    let log = log();
    log.push(RunEvent::Started {
        user_message_id: None,
    });
    let artifact = |version: u32, content: &str| RunEvent::Extension {
        event_type: if version == 1 {
            "x_artifact.created"
        } else {
            "x_artifact.updated"
        }
        .into(),
        payload: json!({"identifier": "fib.py", "version": version,
            "artifact": {"type": "artifact", "artifact_id": "art_1", "identifier": "fib.py",
                "title": "Fib", "mime_type": "text/x-python", "language": "python",
                "version": version, "content": content}}),
    };
    log.push(artifact(1, "v1"));
    log.push(artifact(2, "v2"));
    log.push(text("Here it is."));
    log.push(finished(StopReason::Completed, None));
    let events = streamed(log, false, false).await;
    let (_, completed) = events.last().unwrap();
    let content = &completed["response"]["output"][0]["content"];
    assert_eq!(content[0]["text"], "Here it is.");
    assert_eq!(content.as_array().unwrap().len(), 2, "{content}");
    assert_eq!(content[1]["type"], "x_artifact");
    assert_eq!(content[1]["version"], 2);
    assert_eq!(content[1]["content"], "v2");
    assert_eq!(content[1]["identifier"], "fib.py");
    assert_eq!(
        replay(&events),
        completed["response"]["output"].as_array().unwrap().clone()
    );
}

#[actix_web::test]
async fn an_image_generation_call_streams_its_partial_images_and_ends_with_the_picture() {
    let log = log();
    log.push(RunEvent::Started {
        user_message_id: None,
    });
    log.push(RunEvent::ToolCall {
        id: "g1".into(),
        name: "generate_image".into(),
        arguments: json!({"prompt": "a cat"}),
        progress: None,
        message: None,
    });
    let tool_event = |kind: &str, extra: Value| {
        let mut payload = json!({"item_id": "ig_g1", "output_index": 99});
        if let (Some(target), Value::Object(fields)) = (payload.as_object_mut(), extra) {
            target.extend(fields);
        }
        RunEvent::Extension {
            event_type: kind.into(),
            payload,
        }
    };
    log.push(tool_event(
        "response.image_generation_call.in_progress",
        json!({}),
    ));
    log.push(tool_event(
        "response.image_generation_call.generating",
        json!({}),
    ));
    log.push(tool_event(
        "response.image_generation_call.partial_image",
        json!({"partial_image_index": 0, "partial_image_b64": "p0"}),
    ));
    log.push(tool_event(
        "response.image_generation_call.completed",
        json!({"x_image": {"result": "PIC", "revised_prompt": null, "size": "256x256",
            "quality": "low", "output_format": "png", "background": null}}),
    ));
    log.push(RunEvent::ToolResult {
        tool_call_id: "g1".into(),
        name: "generate_image".into(),
        success: true,
        result: json!({"status": "completed"}),
        preview: String::new(),
        error: None,
        research: false,
    });
    log.push(text("A cat."));
    log.push(finished(StopReason::Completed, None));
    let events = streamed(log, false, false).await;
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names[2..8],
        [
            "response.output_item.added",
            "response.image_generation_call.in_progress",
            "response.image_generation_call.generating",
            "response.image_generation_call.partial_image",
            "response.image_generation_call.completed",
            "response.output_item.done",
        ]
    );
    for (name, payload) in &events[3..7] {
        assert_eq!(
            payload["output_index"], 0,
            "{name}: its place among the items"
        );
        assert!(payload.get("x_image").is_none(), "{name}");
    }
    assert_eq!(events[5].1["partial_image_b64"], "p0");
    let (_, completed) = events.last().unwrap();
    let item = &completed["response"]["output"][0];
    assert_eq!(
        *item,
        json!({"type": "image_generation_call", "id": "ig_g1", "status": "completed",
               "result": "PIC", "size": "256x256", "quality": "low", "output_format": "png"})
    );
    assert_eq!(
        replay(&events),
        completed["response"]["output"].as_array().unwrap().clone()
    );
}

fn mcp_listing() -> RunEvent {
    RunEvent::Extension {
        event_type: crate::tools::mcp::remote::LIST_TOOLS_EVENT.into(),
        payload: json!({"server_label": "docs",
            "tools": [{"name": "echo", "description": "Echoes.", "input_schema": {"type": "object"},
                       "annotations": null},
                      {"name": "add", "description": "Adds.", "input_schema": {"type": "object"},
                       "annotations": null}],
            "names": {"echo": "echo", "docs__add": "add"},
            "approval": ["docs__add"]}),
    }
}

fn mcp_call(id: &str, name: &str, arguments: Value) -> RunEvent {
    RunEvent::ToolCall {
        id: id.into(),
        name: name.into(),
        arguments,
        progress: None,
        message: None,
    }
}

fn mcp_result(id: &str, name: &str, success: bool) -> RunEvent {
    RunEvent::ToolResult {
        tool_call_id: id.into(),
        name: name.into(),
        success,
        result: if success {
            json!({"content": "echoed: hi"})
        } else {
            json!({"error": "it broke", "code": "mcp_error", "suggestion": ""})
        },
        preview: String::new(),
        error: (!success).then(|| "it broke".to_string()),
        research: true,
    }
}

#[actix_web::test]
async fn remote_mcp_tools_are_listed_called_and_asked_for_as_openai_shows_them() {
    let log = log();
    log.push(RunEvent::Started {
        user_message_id: None,
    });
    log.push(mcp_listing());
    log.push(mcp_call("c1", "echo", json!({"text": "hi"})));
    log.push(mcp_result("c1", "echo", true));
    log.push(mcp_call("c2", "echo", json!({"text": "again"})));
    log.push(mcp_result("c2", "echo", false));
    // A call that waits for approval: no mcp_call item, an approval request instead.
    log.push(mcp_call("c3", "docs__add", json!({"a": 1})));
    log.push(RunEvent::Extension {
        event_type: "x_ask_user.question".into(),
        payload: json!({"question": "Allow?", "correlation_id": "ask_1",
            "mcp": {"server_label": "docs", "server_url": "http://h/mcp", "name": "add",
                    "model_name": "docs__add", "arguments": "{\"a\":1}"}}),
    });
    log.push(finished(StopReason::Paused, None));
    let events = streamed(log, false, false).await;
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names[2..12],
        [
            "response.output_item.added",
            "response.mcp_list_tools.in_progress",
            "response.mcp_list_tools.completed",
            "response.output_item.done",
            "response.output_item.added",
            "response.mcp_call.in_progress",
            "response.mcp_call_arguments.delta",
            "response.mcp_call_arguments.done",
            "response.mcp_call.completed",
            "response.output_item.done",
        ]
    );
    assert!(names.contains(&"response.mcp_call.failed"), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("x_")), "{names:?}");
    let (_, completed) = events.last().unwrap();
    let output = completed["response"]["output"].clone();
    assert_eq!(
        Value::Array(replay(&events)),
        output,
        "a replay equals the object"
    );
    assert_eq!(output[0]["type"], "mcp_list_tools");
    assert_eq!(output[0]["server_label"], "docs");
    assert_eq!(output[0]["tools"][1]["name"], "add");
    assert_eq!(
        output[1],
        json!({"type": "mcp_call", "id": "mcp_c1", "server_label": "docs", "name": "echo",
               "arguments": "{\"text\":\"hi\"}", "status": "completed", "output": "echoed: hi",
               "error": null, "approval_request_id": null})
    );
    assert_eq!(output[2]["status"], "failed");
    assert_eq!(output[2]["error"], "it broke");
    assert_eq!(
        output[3],
        json!({"type": "mcp_approval_request", "id": "mcpr_ask_1", "server_label": "docs",
               "name": "add", "arguments": "{\"a\":1}"})
    );
    assert_eq!(output.as_array().unwrap().len(), 4);

    // The continuation after a yes: the call, with the approval it waited for.
    let resumed = self::log();
    resumed.push(RunEvent::Started {
        user_message_id: None,
    });
    resumed.push(mcp_listing());
    resumed.push(RunEvent::Extension {
        event_type: "x_ask_user.answered".into(),
        payload: json!({"correlation_id": "ask_1", "answer": "Yes"}),
    });
    resumed.push(mcp_call("c3", "docs__add", json!({"a": 1})));
    resumed.push(mcp_result("c3", "docs__add", true));
    resumed.push(text("Done."));
    resumed.push(finished(StopReason::Completed, None));
    let events = streamed(resumed, false, false).await;
    let (_, completed) = events.last().unwrap();
    let output = &completed["response"]["output"];
    assert_eq!(output[1]["type"], "mcp_call");
    assert_eq!(output[1]["name"], "add");
    assert_eq!(output[1]["approval_request_id"], "mcpr_ask_1");
    assert_eq!(output[1]["status"], "completed");
    assert_eq!(output[2]["type"], "message");
}

#[actix_web::test]
async fn x_metadata_is_keyed_by_tool_as_seed_003_keys_it() {
    let log = log();
    log.push(RunEvent::Started {
        user_message_id: None,
    });
    log.push(mcp_listing());
    log.push(mcp_call("c1", "echo", json!({"text": "hi"})));
    log.push(mcp_result("c1", "echo", true));
    log.push(web_search_call("w1", "gold price"));
    log.push(web_search_result("w1"));
    log.push(text("Done."));
    log.push(finished(StopReason::Completed, None));
    let (body, _) = super::stream::collect(log, &frame(), results(false))
        .await
        .unwrap();
    let metadata = body["x_metadata"].as_object().unwrap();
    let mut keys: Vec<&str> = metadata.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["mcp", "web_search"], "by tool only: {metadata:?}");
    let types = |key: &str| -> Vec<String> {
        metadata[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["type"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(types("mcp"), ["x_mcp.list_tools", "x_research.result"]);
    // OpenAI's events for the search, as a stream carries them, with Colloquy's progress.
    assert_eq!(
        types("web_search"),
        [
            "response.web_search_call.in_progress",
            "response.web_search_call.searching",
            "x_research.searching",
            "response.web_search_call.completed",
            "x_research.result"
        ]
    );
}
