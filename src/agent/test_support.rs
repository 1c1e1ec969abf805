//! What the agent's unit tests share: a fake tool whose behaviour each test picks, and a
//! `RunSpec` over fake tools with no chat, no upstream call and the default limits.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use entities::ids::{RunId, UserId};
use serde_json::{Value, json};

use super::kernel::{RunHandles, RunSpec};
use super::loop_state::LoopState;
use super::rate_limit::ToolRateLimiter;
use super::tool_cache::new_tool_cache;
use crate::config::{AgentConfig, LlmConfig};
use crate::llm::LlmClient;
use crate::llm::wire::{ChatRequest, FunctionCall, ToolCall, ToolDefinition};
use crate::run::events::RunEvent;
use crate::run::log::RunLog;
use crate::tools::{ProgressKind, SharedTool, Tool, ToolError, ToolFuture};

/// What a [`FakeTool`] does when called.
pub(crate) enum Behaviour {
    /// Answers with its arguments wrapped as `{"echo": arguments}`.
    Echo,
    /// Answers with this value.
    Answer(Value),
    /// Fails with this code.
    Fail(&'static str),
    /// Waits this long, then echoes.
    Sleep(Duration),
    /// Waits at the barrier (with every other call sharing it), then echoes.
    Meet(Arc<tokio::sync::Barrier>),
}

/// A tool for tests: counts its runs and behaves as told.
pub(crate) struct FakeTool {
    pub name: &'static str,
    pub behaviour: Behaviour,
    pub progress: Option<ProgressKind>,
    pub cacheable: bool,
    pub pauses: bool,
    /// Its parameters schema; any object by default.
    pub parameters: Value,
    pub runs: Arc<AtomicUsize>,
}

impl FakeTool {
    pub fn new(name: &'static str, behaviour: Behaviour) -> Self {
        Self {
            name,
            behaviour,
            progress: None,
            cacheable: false,
            pauses: false,
            parameters: json!({"type": "object"}),
            runs: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// A research tool (it announces progress and counts against the rate limit).
    pub fn research(mut self) -> Self {
        self.progress = Some(ProgressKind::Searching);
        self
    }

    pub fn cached(mut self) -> Self {
        self.cacheable = true;
        self
    }

    /// A tool whose parameters are this JSON Schema.
    pub fn with_parameters(mut self, parameters: Value) -> Self {
        self.parameters = parameters;
        self
    }

    pub fn pausing(mut self) -> Self {
        self.pauses = true;
        self
    }

    /// The tool, shared, and the counter of its runs.
    pub fn shared(self) -> (SharedTool, Arc<AtomicUsize>) {
        let runs = self.runs.clone();
        (Arc::new(self), runs)
    }
}

impl Tool for FakeTool {
    fn name(&self) -> &'static str {
        self.name
    }
    fn definition(&self) -> ToolDefinition {
        ToolDefinition::function(self.name, "a fake tool", self.parameters.clone())
    }
    fn progress(&self) -> Option<ProgressKind> {
        self.progress
    }
    fn cacheable(&self) -> bool {
        self.cacheable
    }
    fn pauses(&self) -> bool {
        self.pauses
    }
    fn run(&self, arguments: Value) -> ToolFuture {
        self.runs.fetch_add(1, Ordering::SeqCst);
        match &self.behaviour {
            Behaviour::Echo => Box::pin(async move { Ok(json!({"echo": arguments})) }),
            Behaviour::Answer(value) => {
                let value = value.clone();
                Box::pin(async move { Ok(value) })
            }
            Behaviour::Fail(code) => {
                let code = *code;
                Box::pin(async move { Err(ToolError::new(code, "it failed", "try again")) })
            }
            Behaviour::Sleep(pause) => {
                let pause = *pause;
                Box::pin(async move {
                    tokio::time::sleep(pause).await;
                    Ok(json!({"echo": arguments}))
                })
            }
            Behaviour::Meet(barrier) => {
                let barrier = barrier.clone();
                Box::pin(async move {
                    barrier.wait().await;
                    Ok(json!({"echo": arguments}))
                })
            }
        }
    }
}

/// A run over `tools` with the default limits, outside any chat.
pub(super) fn spec(tools: Vec<SharedTool>) -> RunSpec {
    spec_with(tools, AgentConfig::default(), 60)
}

/// A run over `tools` with these limits and research calls allowed per minute.
pub(super) fn spec_with(
    tools: Vec<SharedTool>,
    limits: AgentConfig,
    research_per_minute: u32,
) -> RunSpec {
    #[allow(clippy::expect_used)]
    let llm = LlmClient::new(&LlmConfig::default()).expect("a client over the default config");
    let handles = RunHandles {
        llm,
        limits,
        cache: new_tool_cache(Duration::from_secs(60)),
        ask_expiry: Duration::from_secs(3600),
        rate_limiter: Arc::new(ToolRateLimiter::new(research_per_minute)),
        metrics: Arc::new(crate::metrics::Metrics::new()),
        attachments: None,
        tool_images: None,
    };
    let log = Arc::new(RunLog::new(
        RunId::generate(),
        None,
        UserId::from_string("tester"),
        "model".into(),
    ));
    let mut spec = RunSpec::new(
        handles,
        log,
        ChatRequest::new("model", Vec::new()),
        Vec::new(),
        tools,
    );
    spec.max_iterations = 5;
    spec.project = "project".into();
    spec
}

/// A call of `name` with these arguments (JSON text, as the model sends it).
pub(super) fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        kind: "function".into(),
        function: FunctionCall {
            name: name.into(),
            arguments: arguments.into(),
        },
    }
}

/// A fresh loop state.
pub(super) fn state() -> LoopState {
    LoopState {
        started: std::time::Instant::now(),
        content: String::new(),
        reasoning: String::new(),
        reasoning_ms: 0,
        draft_saved_at: std::time::Instant::now(),
        draft_saved_len: 0,
        usage: Default::default(),
        research_usage: Default::default(),
        iterations: 0,
        research_calls: 0,
        sources: 0,
        research_announced: false,
    }
}

/// The events the run has logged so far.
pub(super) fn events(log: &RunLog) -> Vec<Arc<RunEvent>> {
    log.events_so_far()
}
