//! `plan_call` and `run_tools` over fake tools: which calls run, which are answered by the
//! rules (unknown tool, arguments that are not an object or that its schema refuses, a repeated
//! call, the rate limit),
//! concurrency, timeouts, failures, the cache, pausing, and what is fed back and logged.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};

use super::super::governance::LoopDetector;
use super::super::test_support::{Behaviour, FakeTool, call, events, spec, spec_with, state};
use super::{Planned, plan_call, run_tools};
use crate::config::AgentConfig;
use crate::run::events::RunEvent;

fn detector() -> LoopDetector {
    LoopDetector::new(10, 2)
}

/// The error code a planned call was answered with, or `None` if it is to run.
fn refusal(plan: &Planned) -> Option<String> {
    match plan {
        Planned::Answered(Err(err)) => Some(err.code.clone()),
        Planned::Answered(Ok(_)) => Some("answered".into()),
        Planned::Run { .. } => None,
    }
}

/// The fed-back texts parsed as JSON.
fn fed_back(texts: &[Option<String>]) -> Vec<Value> {
    texts
        .iter()
        .map(|text| serde_json::from_str(text.as_deref().unwrap_or("null")).unwrap())
        .collect()
}

#[test]
fn an_unknown_tool_is_answered_without_running_anything() {
    let (echo, runs) = FakeTool::new("echo", Behaviour::Echo).shared();
    let spec = spec(vec![echo]);
    let (tool, plan) = plan_call(&spec, &call("c1", "nope", "{}"), &mut detector());
    assert!(tool.is_none());
    assert_eq!(refusal(&plan).as_deref(), Some("unknown_tool"));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[test]
fn arguments_that_are_not_a_json_object_are_refused_by_name() {
    let (echo, _) = FakeTool::new("echo", Behaviour::Echo).shared();
    let spec = spec(vec![echo]);
    for raw in ["not json", "[1, 2]", "\"text\"", "{\"open\": "] {
        let (tool, plan) = plan_call(&spec, &call("c1", "echo", raw), &mut detector());
        assert_eq!(tool.map(|t| t.name().to_string()).as_deref(), Some("echo"));
        match plan {
            Planned::Answered(Err(err)) => {
                assert_eq!(err.code, "INVALID_ARGUMENTS");
                assert!(err.message.contains("echo"), "{}", err.message);
            }
            _ => panic!("{raw:?} should be refused"),
        }
    }
    let (_, plan) = plan_call(&spec, &call("c1", "echo", "{\"a\": 1}"), &mut detector());
    assert!(refusal(&plan).is_none());
}

/// A fake tool with a schema like the spec's example (docs/spec.md#tool-schemas): a required
/// bounded string, an enum with a default, a range, no other properties.
fn weather() -> (
    crate::tools::SharedTool,
    Arc<std::sync::atomic::AtomicUsize>,
) {
    FakeTool::new("get_weather", Behaviour::Echo)
        .with_parameters(json!({
            "type": "object",
            "properties": {
                "location": {"type": "string", "minLength": 1, "maxLength": 50},
                "units": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
                "days": {"type": "integer", "minimum": 1, "maximum": 7}
            },
            "required": ["location"],
            "additionalProperties": false
        }))
        .shared()
}

#[test]
fn arguments_its_schema_refuses_are_answered_by_field_without_running_the_tool() {
    let (tool, runs) = weather();
    let spec = spec(vec![tool]);
    let cases = [
        ("{}", "\"location\" is a required property"),
        (
            "{\"location\": 7}",
            "/location: 7 is not of type \"string\"",
        ),
        (
            "{\"location\": \"\"}",
            "/location: \"\" is shorter than 1 character",
        ),
        (
            "{\"location\": \"Oslo\", \"units\": \"kelvin\"}",
            "/units: ",
        ),
        (
            "{\"location\": \"Oslo\", \"days\": 0}",
            "/days: 0 is less than the minimum of 1",
        ),
        (
            "{\"location\": \"Oslo\", \"city\": \"x\"}",
            "'city' was unexpected",
        ),
    ];
    for (raw, named) in cases {
        let (_, plan) = plan_call(&spec, &call("c1", "get_weather", raw), &mut detector());
        let Planned::Answered(Err(err)) = plan else {
            panic!("{raw} should be refused");
        };
        assert_eq!(err.code, "INVALID_ARGUMENTS", "{raw}");
        assert!(err.message.contains(named), "{raw}: {}", err.message);
        assert!(err.message.contains("get_weather"), "{}", err.message);
        let result = err.to_result();
        assert_eq!(result["code"], "INVALID_ARGUMENTS");
        assert!(result["error"].is_string() && result["suggestion"].is_string());
    }
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn the_tool_runs_with_its_schema_defaults_filled_in() {
    let (tool, runs) = weather();
    let spec = spec(vec![tool]);
    let calls = [call(
        "c1",
        "get_weather",
        "{\"location\": \"Oslo\", \"days\": null}",
    )];
    let (texts, _) = run_tools(&spec, &calls, &mut detector(), &mut state()).await;
    assert_eq!(
        fed_back(&texts),
        [json!({"echo": {"location": "Oslo", "units": "celsius"}})]
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_refused_call_is_fed_back_and_the_corrected_call_runs() {
    let (tool, runs) = weather();
    let spec = spec(vec![tool]);
    let wrong = [call("c1", "get_weather", "{\"city\": \"Oslo\"}")];
    let (texts, _) = run_tools(&spec, &wrong, &mut detector(), &mut state()).await;
    let refused = &fed_back(&texts)[0];
    assert_eq!(refused["code"], "INVALID_ARGUMENTS");
    let right = [call("c2", "get_weather", "{\"location\": \"Oslo\"}")];
    let (texts, _) = run_tools(&spec, &right, &mut detector(), &mut state()).await;
    assert_eq!(fed_back(&texts)[0]["echo"]["location"], "Oslo");
    assert_eq!(runs.load(Ordering::SeqCst), 1, "only the valid call ran");
}

#[test]
fn the_same_call_made_too_often_is_refused_as_a_repeat() {
    let (echo, _) = FakeTool::new("echo", Behaviour::Echo).shared();
    let spec = spec(vec![echo]);
    let mut detector = LoopDetector::new(10, 2);
    let plans: Vec<Option<String>> = (0..3)
        .map(|i| {
            // Key order and spacing differ: still the same call.
            let raw = if i == 1 {
                "{\"b\": 2, \"a\": 1}"
            } else {
                "{\"a\":1,\"b\":2}"
            };
            refusal(&plan_call(&spec, &call("c", "echo", raw), &mut detector).1)
        })
        .collect();
    assert_eq!(plans, [None, None, Some("repeated_call".into())]);
    // Other arguments are another call.
    let other = plan_call(&spec, &call("c", "echo", "{\"a\": 2}"), &mut detector).1;
    assert!(refusal(&other).is_none());
}

#[tokio::test]
async fn research_calls_past_the_rate_limit_are_refused_but_cached_results_do_not_count() {
    let (search, runs) = FakeTool::new("search", Behaviour::Echo)
        .research()
        .cached()
        .shared();
    let (plain, _) = FakeTool::new("plain", Behaviour::Echo).shared();
    let spec = spec_with(vec![search, plain], AgentConfig::default(), 1);
    let mut state = state();
    let (texts, _) = run_tools(
        &spec,
        &[call("c1", "search", "{\"q\": \"rust\"}")],
        &mut detector(),
        &mut state,
    )
    .await;
    assert_eq!(fed_back(&texts)[0]["echo"]["q"], "rust");
    // The allowance of one is spent: a new research call is refused...
    let mut fresh = detector();
    let (_, plan) = plan_call(&spec, &call("c2", "search", "{\"q\": \"go\"}"), &mut fresh);
    assert_eq!(refusal(&plan).as_deref(), Some("rate_limited"));
    // ...but the cached one is served, and a tool that is not research is not limited.
    let (texts, _) = run_tools(
        &spec,
        &[
            call("c3", "search", "{\"q\": \"rust\"}"),
            call("c4", "plain", "{}"),
        ],
        &mut fresh,
        &mut state,
    )
    .await;
    let results = fed_back(&texts);
    assert_eq!(results[0]["echo"]["q"], "rust");
    assert!(results[1].get("error").is_none(), "{}", results[1]);
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "the second search came from the cache"
    );
}

#[tokio::test]
async fn a_rounds_calls_run_at_the_same_time_and_come_back_in_call_order() {
    // Each call waits until all three have started: run one after another, they never would.
    let barrier = Arc::new(tokio::sync::Barrier::new(3));
    let tools = ["a", "b", "c"].map(|name| {
        FakeTool::new(name, Behaviour::Meet(barrier.clone()))
            .shared()
            .0
    });
    let spec = spec(tools.to_vec());
    let calls = [
        call("1", "c", "{\"n\": 1}"),
        call("2", "a", "{\"n\": 2}"),
        call("3", "b", "{\"n\": 3}"),
    ];
    let (texts, pause) = tokio::time::timeout(
        Duration::from_secs(10),
        run_tools(&spec, &calls, &mut detector(), &mut state()),
    )
    .await
    .expect("the calls ran concurrently");
    assert!(pause.is_none());
    let order: Vec<Value> = fed_back(&texts)
        .iter()
        .map(|r| r["echo"]["n"].clone())
        .collect();
    assert_eq!(order, [json!(1), json!(2), json!(3)]);
}

#[tokio::test]
async fn a_slow_tool_times_out_and_a_failing_one_fails_without_stopping_the_others() {
    let (slow, _) = FakeTool::new("slow", Behaviour::Sleep(Duration::from_secs(30))).shared();
    let (broken, _) = FakeTool::new("broken", Behaviour::Fail("boom")).shared();
    let (fine, _) = FakeTool::new("fine", Behaviour::Answer(json!({"ok": true}))).shared();
    let limits = AgentConfig {
        tool_timeout_secs: 1,
        ..AgentConfig::default()
    };
    let spec = spec_with(vec![slow, broken, fine], limits, 60);
    let calls = [
        call("1", "slow", "{}"),
        call("2", "broken", "{}"),
        call("3", "fine", "{}"),
    ];
    let (texts, _) = run_tools(&spec, &calls, &mut detector(), &mut state()).await;
    let results = fed_back(&texts);
    assert_eq!(results[0]["code"], "timeout");
    assert_eq!(results[1]["code"], "boom");
    assert_eq!(results[1]["error"], "it failed");
    assert_eq!(results[1]["suggestion"], "try again");
    assert_eq!(results[2], json!({"ok": true}));

    let outcomes: Vec<(String, bool)> = events(&spec.log)
        .iter()
        .filter_map(|event| match event.as_ref() {
            RunEvent::ToolResult {
                tool_call_id,
                success,
                ..
            } => Some((tool_call_id.clone(), *success)),
            _ => None,
        })
        .collect();
    assert_eq!(
        outcomes,
        [("1".into(), false), ("2".into(), false), ("3".into(), true)]
    );
}

#[tokio::test]
async fn every_call_is_announced_before_any_result_with_its_arguments_as_sent() {
    let (echo, _) = FakeTool::new("echo", Behaviour::Echo).shared();
    let spec = spec(vec![echo]);
    let calls = [
        call("1", "echo", "{\"a\": 1}"),
        call("2", "echo", "garbled"),
    ];
    run_tools(&spec, &calls, &mut detector(), &mut state()).await;
    let logged = events(&spec.log);
    let kinds: Vec<&str> = logged
        .iter()
        .map(|event| match event.as_ref() {
            RunEvent::ToolCall { .. } => "call",
            RunEvent::ToolResult { .. } => "result",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["call", "call", "result", "result"]);
    match logged[1].as_ref() {
        RunEvent::ToolCall { arguments, .. } => assert_eq!(arguments, &json!("garbled")),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn results_are_stripped_of_images_and_truncated_before_they_are_fed_back() {
    let image = format!("iVBORw0KGgo{}", "A".repeat(4_000));
    let (pictures, _) =
        FakeTool::new("pictures", Behaviour::Answer(json!({"png": image}))).shared();
    let (long, _) =
        FakeTool::new("long", Behaviour::Answer(json!({"text": "x".repeat(500)}))).shared();
    let limits = AgentConfig {
        max_tool_result_chars: 100,
        ..AgentConfig::default()
    };
    let spec = spec_with(vec![pictures, long], limits, 60);
    let calls = [call("1", "pictures", "{}"), call("2", "long", "{}")];
    let (texts, _) = run_tools(&spec, &calls, &mut detector(), &mut state()).await;
    let image_text = texts[0].as_deref().unwrap();
    assert!(!image_text.contains("AAAAAAAAAA"), "{image_text}");
    let long_text = texts[1].as_deref().unwrap();
    assert!(long_text.len() < 300, "{} chars fed back", long_text.len());
    assert!(long_text.starts_with("{\"text\":\"xxx"), "{long_text}");
}

#[tokio::test]
async fn a_pausing_tool_pauses_the_run_once_and_a_second_question_is_refused() {
    let (ask, _) = FakeTool::new("ask", Behaviour::Answer(json!({"question": "Which?"})))
        .pausing()
        .shared();
    let (echo, _) = FakeTool::new("echo", Behaviour::Echo).shared();
    let spec = spec(vec![ask, echo]);
    let calls = [
        call("q1", "ask", "{\"n\": 1}"),
        call("e", "echo", "{}"),
        call("q2", "ask", "{\"n\": 2}"),
    ];
    let (texts, pause) = run_tools(&spec, &calls, &mut detector(), &mut state()).await;
    let (call_id, question) = pause.expect("the run pauses");
    assert_eq!(call_id, "q1");
    assert_eq!(question, json!({"question": "Which?"}));
    assert!(texts[0].is_none(), "the question waits for its answer");
    assert!(texts[1].is_some());
    let second = fed_back(&texts[2..])[0].clone();
    assert_eq!(second["code"], "one_question_at_a_time");
}

#[tokio::test]
async fn research_results_count_their_sources_and_calls() {
    let found = json!({"results": [{"url": "a"}, {"url": "b"}, {"url": "c"}]});
    let (search, _) = FakeTool::new("search", Behaviour::Answer(found))
        .research()
        .shared();
    let (broken, _) = FakeTool::new("broken", Behaviour::Fail("down"))
        .research()
        .shared();
    let spec = spec(vec![search, broken]);
    let mut state = state();
    let calls = [call("1", "search", "{}"), call("2", "broken", "{}")];
    run_tools(&spec, &calls, &mut detector(), &mut state).await;
    assert_eq!(state.research_calls, 2);
    assert_eq!(state.sources, 3, "a failed call cites nothing");
}
