//! Tools that exist only in tests, to drive the loop's governance through the real loop:
//! `sleep` (takes as long as asked), `big_output` (returns a huge result) and `image_output`
//! (returns a base64 image).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use colloquy::llm::wire::ToolDefinition;
use colloquy::tools::{ProgressKind, SharedTool, Tool, ToolFuture};
use serde_json::{Value, json};

pub fn all() -> Vec<SharedTool> {
    vec![
        Arc::new(Sleep),
        Arc::new(BigOutput),
        Arc::new(ImageOutput),
        Arc::new(Counter),
    ]
}

/// Calls of `sleep` that started, across all apps in this test binary (tests filter by args).
pub static SLEEPS_STARTED: AtomicUsize = AtomicUsize::new(0);

struct Sleep;

impl Tool for Sleep {
    fn name(&self) -> &'static str {
        "sleep"
    }
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::function(
            "sleep",
            "Wait",
            json!({"type": "object", "properties": {"ms": {"type": "integer"}, "tag": {"type": "string"}}}),
        )
    }
    fn progress(&self) -> Option<ProgressKind> {
        Some(ProgressKind::Other)
    }
    fn run(&self, arguments: Value) -> ToolFuture {
        Box::pin(async move {
            SLEEPS_STARTED.fetch_add(1, Ordering::SeqCst);
            let ms = arguments["ms"].as_u64().unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok(json!({"slept_ms": ms}))
        })
    }
}

struct BigOutput;

impl Tool for BigOutput {
    fn name(&self) -> &'static str {
        "big_output"
    }
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::function("big_output", "Lots of text", json!({"type": "object"}))
    }
    fn progress(&self) -> Option<ProgressKind> {
        None
    }
    fn run(&self, _: Value) -> ToolFuture {
        Box::pin(async move { Ok(json!({"text": "é".repeat(50_000)})) })
    }
}

struct ImageOutput;

impl Tool for ImageOutput {
    fn name(&self) -> &'static str {
        "image_output"
    }
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::function("image_output", "An image", json!({"type": "object"}))
    }
    fn progress(&self) -> Option<ProgressKind> {
        None
    }
    fn run(&self, _: Value) -> ToolFuture {
        let png = format!("iVBORw0KGgo{}", "A".repeat(4_000));
        Box::pin(async move {
            Ok(json!({"image": format!("data:image/png;base64,{png}"), "caption": "a chart"}))
        })
    }
}

/// Executions of `counter`, across all apps in this test binary.
pub static COUNTER_RUNS: AtomicUsize = AtomicUsize::new(0);

/// A cacheable tool that reports how many times it really ran.
struct Counter;

impl Tool for Counter {
    fn name(&self) -> &'static str {
        "counter"
    }
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::function(
            "counter",
            "Counts",
            json!({"type": "object", "properties": {"key": {"type": "string"}}}),
        )
    }
    fn progress(&self) -> Option<ProgressKind> {
        Some(ProgressKind::Other)
    }
    fn cacheable(&self) -> bool {
        true
    }
    fn run(&self, arguments: Value) -> ToolFuture {
        Box::pin(async move {
            let runs = COUNTER_RUNS.fetch_add(1, Ordering::SeqCst) + 1;
            Ok(json!({"key": arguments["key"], "runs": runs}))
        })
    }
}
