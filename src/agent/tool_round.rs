//! One round of tool calls: each planned by the governance rules (unknown tool, arguments its
//! JSON Schema refuses, loop detection, rate limit, cache), then run concurrently with a timeout, its result
//! stripped of base64 images, truncated, recorded and fed back.

use std::time::Duration;

use futures_util::future::join_all;
use serde_json::Value;

use super::governance::{
    CallKey, LoopDetector, result_preview, strip_base64_images, truncate_result,
};
use crate::chat::persistence::ToolCallRecord;
use crate::chat::session::RecordToolCalls;
use crate::llm::wire::ToolCall;
use crate::run::events::RunEvent;
use crate::tools::schema::check_arguments;
use crate::tools::{ProgressKind, SharedTool, ToolError};

use super::kernel::{ChatLink, RunSpec};
use super::loop_state::LoopState;
use super::tool_cache::ToolCache;

/// A call ready to run, or already answered by the governance rules.
pub(super) enum Planned {
    Run {
        tool: SharedTool,
        arguments: Value,
        key: CallKey,
    },
    Answered(Result<Value, ToolError>),
}

/// Runs one model turn's tool calls concurrently; returns the text fed back for each, in order
/// (`None` for the question the run pauses on), and that question if there is one.
pub(super) async fn run_tools(
    spec: &RunSpec,
    calls: &[ToolCall],
    detector: &mut LoopDetector,
    state: &mut LoopState,
) -> (Vec<Option<String>>, Option<(String, Value)>) {
    let log = &spec.log;
    let planned: Vec<(Option<SharedTool>, Planned)> = calls
        .iter()
        .map(|call| plan_call(spec, call, detector))
        .collect();
    for ((tool, plan), call) in planned.iter().zip(calls) {
        let arguments = match plan {
            Planned::Run { arguments, .. } => arguments.clone(),
            // Arguments that are not JSON are kept as their raw text, so the event shows what
            // the model sent.
            Planned::Answered(_) => serde_json::from_str(&call.function.arguments)
                .unwrap_or_else(|_| Value::String(call.function.arguments.clone())),
        };
        log.push(RunEvent::ToolCall {
            id: call.id.clone(),
            name: call.function.name.clone(),
            message: tool.as_ref().map(|t| t.call_message(&arguments)),
            arguments,
            progress: tool.as_ref().and_then(announcement),
        });
    }
    let timeout = Duration::from_secs(spec.handles.limits.tool_timeout_secs);
    let runs = planned.into_iter().zip(calls).map(|((tool, plan), call)| {
        let cache = spec.handles.cache.clone();
        async move {
            let started = std::time::Instant::now();
            let result = match plan {
                Planned::Answered(result) => result,
                Planned::Run {
                    tool,
                    arguments,
                    key,
                } => {
                    let timeout = tool.time_limit().map_or(timeout, |own| own.max(timeout));
                    execute_call(&tool, &call.id, arguments, key, &cache, timeout).await
                }
            };
            (tool, call, result, started.elapsed())
        }
    });
    let mut texts = Vec::with_capacity(calls.len());
    let mut records = Vec::with_capacity(calls.len());
    let mut pause = None;
    for (tool, call, result, took) in join_all(runs).await {
        let pauses = tool.as_ref().is_some_and(|t| t.pauses());
        let result = match result {
            Ok(question) if pauses && pause.is_none() => {
                pause = Some((call.id.clone(), question));
                texts.push(None);
                continue;
            }
            Ok(_) if pauses => Err(ToolError::new(
                "one_question_at_a_time",
                "only one question can be asked at a time",
                "Ask one question, wait for the answer, then ask the next.",
            )),
            other => other,
        };
        let progress = tool.as_ref().and_then(|t| t.progress());
        let research = progress.is_some();
        let announced = tool.as_ref().and_then(announcement).is_some();
        let (mut value, success, error, code) = match result {
            Ok(value) => (value, true, None, None),
            Err(err) => (
                err.to_result(),
                false,
                Some(err.message.clone()),
                Some(err.code.clone()),
            ),
        };
        strip_base64_images(&mut value);
        if success && let Some(sources) = &spec.bounds.sources {
            sources.collect(&value);
            if value.is_string()
                && let Ok(arguments) = serde_json::from_str::<Value>(&call.function.arguments)
            {
                sources.collect_text_result(&arguments);
            }
        }
        if research {
            state.research_calls += 1;
            if success && progress != Some(ProgressKind::Calculating) {
                state.sources += count_sources(&value);
            }
        }
        let limit = tool
            .as_ref()
            .and_then(|t| t.result_limit())
            .map_or(spec.handles.limits.max_tool_result_chars, |own| {
                own.max(spec.handles.limits.max_tool_result_chars)
            });
        let (text, _) = truncate_result(&result_text(&value), limit);
        record_call(spec, &call.function.name, code.as_deref(), took, &text);
        let preview = result_preview(&value);
        records.push(ToolCallRecord {
            id: call.id.clone(),
            name: call.function.name.clone(),
            arguments: recorded_arguments(&call.function.arguments),
            success,
            preview: preview.clone(),
            error: error.clone(),
            round: state.iterations,
            content: Some(text.clone()),
        });
        log.push(RunEvent::ToolResult {
            tool_call_id: call.id.clone(),
            name: call.function.name.clone(),
            success,
            preview,
            result: value,
            error,
            research: announced,
        });
        texts.push(Some(text));
    }
    if let Some(ChatLink { session, .. }) = &spec.chat
        && !records.is_empty()
    {
        session.do_send(RecordToolCalls {
            run_id: log.run_id.clone(),
            calls: records,
        });
    }
    (texts, pause)
}

/// Reports the result of a call that ran outside a round — a send_email the user confirmed,
/// which the continuation makes before the loop goes on — as a round reports its own: the
/// `tool_result` event, the metrics and log line, the run's record of calls. Returns the text
/// fed back to the model.
pub fn report_result(
    spec: &RunSpec,
    call: &ToolCall,
    result: Result<Value, ToolError>,
    took: Duration,
) -> String {
    let (mut value, success, error, code) = match result {
        Ok(value) => (value, true, None, None),
        Err(err) => (
            err.to_result(),
            false,
            Some(err.message.clone()),
            Some(err.code.clone()),
        ),
    };
    strip_base64_images(&mut value);
    let (text, _) = truncate_result(
        &result_text(&value),
        spec.handles.limits.max_tool_result_chars,
    );
    record_call(spec, &call.function.name, code.as_deref(), took, &text);
    let preview = result_preview(&value);
    if let Some(ChatLink { session, .. }) = &spec.chat {
        session.do_send(RecordToolCalls {
            run_id: spec.log.run_id.clone(),
            calls: vec![ToolCallRecord {
                id: call.id.clone(),
                name: call.function.name.clone(),
                arguments: recorded_arguments(&call.function.arguments),
                success,
                preview: preview.clone(),
                error: error.clone(),
                round: spec.resume.as_ref().map_or(0, |point| point.iterations),
                content: Some(text.clone()),
            }],
        });
    }
    spec.log.push(RunEvent::ToolResult {
        tool_call_id: call.id.clone(),
        name: call.function.name.clone(),
        success,
        preview,
        result: value,
        error,
        research: false,
    });
    text
}

/// What the model reads of a result: a text result (fetch_url's single page) as it is, anything
/// else as JSON.
pub(super) fn result_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The `x_research.*` event a call of `tool` is announced with: its research kind, else
/// `x_research.tool_call` unless it has events of its own (`tool_call` is for every call that
/// has no research event of its own: docs/spec.md#research-events).
fn announcement(tool: &SharedTool) -> Option<ProgressKind> {
    tool.progress()
        .or_else(|| (!tool.own_events()).then_some(ProgressKind::Other))
}

/// Counts a finished call in the metrics and logs one line for it.
pub(super) fn record_call(
    spec: &RunSpec,
    tool: &str,
    code: Option<&str>,
    took: Duration,
    text: &str,
) {
    let tokens = crate::retrieval::chunk::Chunker::default()
        .encode(text)
        .len() as u64;
    spec.handles
        .metrics
        .tool_call(&crate::metrics::ToolCallOutcome {
            tool,
            error_code: code,
            duration: took,
            result_bytes: text.len(),
            result_tokens: tokens,
        });
    tracing::info!(
        run_id = %spec.log.run_id,
        tool,
        duration_ms = took.as_millis() as u64,
        outcome = if code.is_some() { "failure" } else { "success" },
        code = code.unwrap_or(""),
        result_tokens = tokens,
        "tool call"
    );
}

/// Longest argument text kept in a run's record of its tool calls.
pub(super) const RECORDED_ARGUMENTS_CHARS: usize = 1_000;

/// A call's arguments as recorded: the JSON object when short, else its text shortened.
pub(super) fn recorded_arguments(raw: &str) -> Value {
    let (short, truncated) = truncate_result(raw, RECORDED_ARGUMENTS_CHARS);
    if !truncated && let Ok(value) = serde_json::from_str::<Value>(raw) {
        return value;
    }
    Value::String(short)
}

/// How many sources a research result cites: its result or page entries, or one.
pub(super) fn count_sources(value: &Value) -> u32 {
    ["results", "pages"]
        .iter()
        .find_map(|field| value.get(*field).and_then(Value::as_array))
        .map_or(1, |items| items.len() as u32)
}

/// Applies the rules that need no execution: known tool, arguments a JSON object that its
/// parameters schema accepts (defaults filled in), the rate limit, loop detection.
pub(super) fn plan_call(
    spec: &RunSpec,
    call: &ToolCall,
    detector: &mut LoopDetector,
) -> (Option<SharedTool>, Planned) {
    let name = &call.function.name;
    let Some(tool) = spec.tools.iter().find(|t| t.name() == name).cloned() else {
        let error = ToolError::new(
            "unknown_tool",
            format!("there is no tool named {name:?}"),
            "Call only the tools listed in this request.",
        );
        return (None, Planned::Answered(Err(error)));
    };
    let mut arguments: Value = match serde_json::from_str(&call.function.arguments) {
        Ok(value @ Value::Object(_)) => value,
        Ok(_) | Err(_) => {
            let error = ToolError::invalid_arguments(format!(
                "the arguments of {name} are not a JSON object: {}",
                truncate_result(&call.function.arguments, 200).0
            ));
            return (Some(tool), Planned::Answered(Err(error)));
        }
    };
    if let Some(parameters) = &tool.definition().function.parameters
        && let Err(error) = check_arguments(name, parameters, &mut arguments)
    {
        return (Some(tool), Planned::Answered(Err(error)));
    }
    let key = CallKey::scoped(name, tool.cache_scope(), &arguments);
    // A result the cache will serve costs no research call, so it does not count.
    let cached = tool.cacheable() && spec.handles.cache.contains_key(key.as_str());
    if tool.progress().is_some()
        && !cached
        && let Err(seconds) = spec.handles.rate_limiter.check(&spec.project)
    {
        let error = ToolError::new(
            "rate_limited",
            format!("Research tool rate limit exceeded. Try again in {seconds} seconds."),
            "Answer with what you have, or wait before calling research tools again.",
        );
        return (Some(tool), Planned::Answered(Err(error)));
    }
    if let Err(seen) = detector.check(&key) {
        let error = ToolError::new(
            "repeated_call",
            format!(
                "{name} was already called {seen} times with these exact arguments in this run"
            ),
            "Use the results you already have, change the arguments, or answer the user now.",
        );
        return (Some(tool), Planned::Answered(Err(error)));
    }
    (
        Some(tool.clone()),
        Planned::Run {
            tool,
            arguments,
            key,
        },
    )
}

/// Runs one call with its timeout, serving and filling the cache.
pub(super) async fn execute_call(
    tool: &SharedTool,
    call_id: &str,
    arguments: Value,
    key: CallKey,
    cache: &ToolCache,
    timeout: Duration,
) -> Result<Value, ToolError> {
    let cacheable = tool.cacheable();
    if cacheable && let Some(hit) = cache.get(key.as_str()).await {
        return Ok(hit);
    }
    let result = match tokio::time::timeout(timeout, tool.run_call(call_id, arguments)).await {
        Ok(result) => result,
        Err(_) => Err(ToolError::new(
            "timeout",
            format!(
                "{} did not finish within {} seconds",
                tool.name(),
                timeout.as_secs()
            ),
            "Try a simpler request, or answer with what you have.",
        )),
    };
    if cacheable && let Ok(value) = &result {
        cache.insert(key.as_str().to_string(), value.clone()).await;
    }
    result
}

#[cfg(test)]
mod tests;
