use super::*;
use crate::llm::wire::{FunctionCall, ToolCall, Usage};
use crate::run::events::{RunError, RunErrorKind, StopReason};
use entities::ids::{ChatId, MessageId, RunId, UserId};

fn log() -> RunLog {
    RunLog::new(
        RunId::from_string("r1"),
        Some(ChatId::from_string("c1")),
        UserId::from_string("u1"),
        "m".into(),
    )
}

fn usage() -> Usage {
    Usage {
        prompt_tokens: 7,
        completion_tokens: 3,
        total_tokens: 10,
        ..Usage::default()
    }
}

fn finished(error: Option<RunError>) -> RunEvent {
    RunEvent::Finished {
        stop_reason: StopReason::Completed,
        assistant_message_id: None,
        usage: usage(),
        research_usage: None,
        iterations: 1,
        error,
    }
}

/// The `/v1` lines of an event, as clients parse them.
fn openai_lines(include_usage: bool, event: &RunEvent) -> Vec<Value> {
    let log = log();
    payloads(Dialect::OpenAi { include_usage }, &log, event)
        .into_iter()
        .map(|(_, payload)| typed_chunk(&log, payload, include_usage))
        .collect()
}

#[test]
fn every_v1_line_is_a_chunk_with_one_choice_and_typed_lines_keep_their_type() {
    let events = [
        RunEvent::Started {
            user_message_id: None,
        },
        RunEvent::TextDelta {
            content: "Hi".into(),
        },
        RunEvent::Extension {
            event_type: "x_artifact.created".into(),
            payload: json!({"identifier": "a.py", "version": 1}),
        },
        finished(None),
    ];
    for event in &events {
        for line in openai_lines(false, event) {
            assert_eq!(line["object"], "chat.completion.chunk", "{line}");
            assert_eq!(line["id"], "chatcmpl-r1");
            // The quickstart loop reads `choices[0].delta` of every chunk.
            assert_eq!(line["choices"].as_array().map(Vec::len), Some(1), "{line}");
            assert_eq!(line["choices"][0]["index"], 0, "{line}");
            assert!(line["choices"][0]["delta"].is_object(), "{line}");
            if let Some(kind) = line["type"].as_str() {
                assert_eq!(line["choices"][0]["delta"], json!({}), "{line}");
                assert!(line["choices"][0]["finish_reason"].is_null(), "{line}");
                assert!(kind.starts_with("x_"), "{line}");
            }
        }
    }
    let artifact = openai_lines(false, &events[2]);
    assert_eq!(artifact[0]["type"], "x_artifact.created");
    assert_eq!(artifact[0]["identifier"], "a.py");
}

#[test]
fn usage_is_on_one_line_only_and_only_when_asked_for() {
    let count = |lines: &[Value]| lines.iter().filter(|l| l["usage"].is_object()).count();
    let asked = openai_lines(true, &finished(None));
    assert_eq!(count(&asked), 1);
    let metadata = asked
        .iter()
        .find(|l| l["type"] == "x_chat.metadata")
        .unwrap();
    assert_eq!(metadata["usage"]["total_tokens"], 10);
    // The usage chunk a client asks for has no choices, as OpenAI's has.
    assert_eq!(metadata["choices"], json!([]));
    let unasked = openai_lines(false, &finished(None));
    assert_eq!(count(&unasked), 0);
    let metadata = unasked
        .iter()
        .find(|l| l["type"] == "x_chat.metadata")
        .unwrap();
    assert_eq!(metadata["choices"][0]["delta"], json!({}));
    // The UI's stream has it on its finish chunk too.
    let log = log();
    let chat_api = payloads(Dialect::ChatApi, &log, &finished(None));
    assert!(
        chat_api
            .iter()
            .any(|(_, p)| p["choices"][0]["finish_reason"] == "stop" && p["usage"].is_object())
    );
}

#[test]
fn a_failed_run_says_so_in_its_finish_reason_after_an_error_line() {
    let lines = openai_lines(
        false,
        &finished(Some(RunError::new(RunErrorKind::UpstreamTimeout, "slow"))),
    );
    let kinds: Vec<&str> = lines.iter().filter_map(|l| l["type"].as_str()).collect();
    assert_eq!(kinds, ["error", "x_chat.metadata"]);
    assert_eq!(lines[0]["error"]["code"], "upstream_timeout");
    assert_eq!(lines[0]["choices"][0]["delta"], json!({}));
    let finish = lines
        .iter()
        .find(|l| l["choices"][0]["finish_reason"].is_string())
        .unwrap();
    assert_eq!(finish["choices"][0]["finish_reason"], "error");
}

#[test]
fn client_tool_calls_are_tool_call_deltas_as_openai_sends_them() {
    let call = |id: &str, city: &str| ToolCall {
        id: id.into(),
        kind: "function".into(),
        function: FunctionCall {
            name: "get_weather".into(),
            arguments: json!({"city": city}).to_string(),
        },
    };
    let lines = openai_lines(
        false,
        &RunEvent::ClientToolCalls {
            calls: vec![call("call_a", "Oslo"), call("call_b", "Turku")],
        },
    );
    assert_eq!(lines.len(), 1);
    let deltas = &lines[0]["choices"][0]["delta"]["tool_calls"];
    assert_eq!(deltas[1]["index"], 1);
    assert_eq!(deltas[1]["id"], "call_b");
    assert_eq!(deltas[1]["type"], "function");
    assert_eq!(deltas[1]["function"]["name"], "get_weather");
    assert_eq!(deltas[0]["function"]["arguments"], r#"{"city":"Oslo"}"#);
}

#[test]
fn only_the_chat_api_gets_the_tool_events_and_run_bookkeeping() {
    let log = log();
    let call = RunEvent::ToolCall {
        id: "call_1".into(),
        name: "calculator".into(),
        arguments: json!({"expression": "6*7"}),
        progress: Some(crate::run::events::ProgressKind::Calculating),
        message: Some("Running calculator".into()),
    };
    let chat_api = payloads(Dialect::ChatApi, &log, &call);
    assert_eq!(chat_api[0].0, Some("message"));
    assert_eq!(chat_api[0].1["type"], "tool_call");
    assert_eq!(chat_api[1].1["type"], "x_research.calculating");
    let v1 = payloads(
        Dialect::OpenAi {
            include_usage: false,
        },
        &log,
        &call,
    );
    assert_eq!(v1.len(), 1);
    assert_eq!(v1[0].1["arguments"], r#"{"expression":"6*7"}"#);
    let started = RunEvent::Started {
        user_message_id: Some(MessageId::from_string("m1")),
    };
    let kinds = |dialect| -> Vec<Value> {
        payloads(dialect, &log, &started)
            .into_iter()
            .map(|(_, p)| p["type"].clone())
            .collect()
    };
    assert_eq!(kinds(Dialect::ChatApi)[0], "run.started");
    assert!(
        kinds(Dialect::OpenAi {
            include_usage: false
        })
        .iter()
        .all(Value::is_null)
    );
}

#[test]
fn reasoning_is_its_own_line_never_content_and_a_reasoning_content_delta_on_v1() {
    let event = RunEvent::ReasoningDelta {
        content: "Let me think.".into(),
        elapsed_ms: 1_500,
    };
    let log = log();
    let chat_api: Vec<Value> = payloads(Dialect::ChatApi, &log, &event)
        .into_iter()
        .map(|(_, payload)| payload)
        .collect();
    assert_eq!(
        chat_api,
        [json!({"type": "x_chat.reasoning", "delta": "Let me think.", "elapsed_ms": 1_500})]
    );
    let lines: Vec<Value> = payloads(
        Dialect::OpenAi {
            include_usage: false,
        },
        &log,
        &event,
    )
    .into_iter()
    .map(|(_, payload)| with_reasoning_choice(typed_chunk(&log, payload, false)))
    .collect();
    assert_eq!(lines.len(), 1);
    let line = &lines[0];
    assert_eq!(line["object"], "chat.completion.chunk");
    assert_eq!(line["type"], "x_chat.reasoning");
    assert_eq!(line["delta"], "Let me think.");
    assert_eq!(
        line["choices"],
        json!([{"index": 0, "delta": {"reasoning_content": "Let me think."}, "finish_reason": null}])
    );
    assert!(line["choices"][0]["delta"].get("content").is_none());
}
