//! Running a workflow's steps in order inside a run: a tool step goes through the loop's own
//! governance (`tool_round::plan_call` — the tool's JSON Schema, the rate limit, loop
//! detection — then `execute_call` with its timeout and the result cache, then base64
//! stripping and truncation), a prompt step is one model call with the run's model. Each step
//! is announced with `x_workflow.step_started` and ends with `step_completed` or `step_failed`;
//! the first failure stops the workflow, and the outcome names that step and why.

use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};

use super::super::governance::{LoopDetector, strip_base64_images, truncate_result};
use super::super::kernel::{RunSpec, guarded};
use super::super::tool_round::{Planned, execute_call, plan_call, record_call, result_text};
use crate::chat::automations::template::{self, Reference};
use crate::chat::automations::{Step, StepAction, WorkflowView};
use crate::llm::wire::{ChatMessage, FunctionCall, ToolCall, Usage};
use crate::run::events::RunEvent;

/// Characters of a step's output shown in its event and report.
const PREVIEW_CHARS: usize = 300;

/// How one step ended.
#[derive(Debug, Clone, Serialize)]
pub struct StepReport {
    pub id: String,
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// `succeeded`, `failed`, or `not_run` (after a failure).
    pub status: &'static str,
    pub duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What a workflow run produced.
#[derive(Debug, Clone)]
pub struct WorkflowOutcome {
    /// The last step's output (the workflow's result), when every step succeeded.
    pub output: Option<String>,
    pub steps: Vec<StepReport>,
    /// The step that failed, and why.
    pub failed: Option<(String, String)>,
    /// Tokens the prompt steps spent.
    pub usage: Usage,
}

impl WorkflowOutcome {
    /// The result as a tool returns it, and as runs record it.
    pub fn to_value(&self, workflow: &WorkflowView) -> Value {
        json!({
            "workflowId": workflow.id,
            "version": workflow.version,
            "status": if self.failed.is_some() { "failed" } else { "succeeded" },
            "output": self.output,
            "failedStep": self.failed.as_ref().map(|(id, _)| id),
            "error": self.failed.as_ref().map(|(_, why)| why),
            "steps": self.steps,
        })
    }

    /// The answer a run of its own shows in its chat.
    pub fn answer(&self, workflow: &WorkflowView) -> String {
        match (&self.failed, &self.output) {
            (Some((step, why)), _) => format!(
                "Workflow \"{}\" (version {}) stopped at step \"{step}\": {why}",
                workflow.name, workflow.version
            ),
            (None, Some(output)) => output.clone(),
            (None, None) => String::new(),
        }
    }
}

/// Refuses an input lacking a value an `{{input.*}}` placeholder needs, before anything runs.
pub fn check_input(steps: &[Step], input: &Value) -> Result<(), String> {
    for step in steps {
        for reference in step.references().map_err(|err| err.to_string())? {
            if let Reference::Input(path) = &reference
                && template::lookup(input, path).is_none()
            {
                return Err(format!(
                    "step \"{}\" needs {{{{{reference}}}}}, which the input does not have",
                    step.id
                ));
            }
        }
    }
    Ok(())
}

fn preview(text: &str) -> String {
    truncate_result(text, PREVIEW_CHARS).0
}

/// Runs `workflow`'s steps with `input` in `spec`'s run (its tools, model, limits, log).
pub async fn run_steps(
    spec: &RunSpec,
    workflow: &WorkflowView,
    steps: &[Step],
    input: &Value,
) -> WorkflowOutcome {
    let log = &spec.log;
    let deadline = spec.deadline.unwrap_or_else(|| {
        tokio::time::Instant::now() + Duration::from_secs(spec.handles.limits.run_time_budget_secs)
    });
    let mut detector = LoopDetector::default();
    let mut results: Vec<(String, Value)> = Vec::with_capacity(steps.len());
    let mut reports = Vec::with_capacity(steps.len());
    let mut usage = Usage::default();
    let mut failed = None;
    for (index, step) in steps.iter().enumerate() {
        if failed.is_some() {
            reports.push(StepReport {
                id: step.id.clone(),
                kind: step.kind(),
                tool: step.tool_name().map(str::to_string),
                status: "not_run",
                duration_ms: 0,
                preview: None,
                error: None,
            });
            continue;
        }
        log.push(RunEvent::Extension {
            event_type: "x_workflow.step_started".into(),
            payload: json!({"workflow_id": workflow.id, "version": workflow.version,
                "name": workflow.name, "step_id": step.id, "index": index, "kind": step.kind(),
                "tool": step.tool_name()}),
        });
        let started = Instant::now();
        let value_of = |reference: &Reference| -> Option<String> {
            match reference {
                Reference::Input(path) => template::lookup(input, path).map(template::as_text),
                Reference::Step { id, path } => results
                    .iter()
                    .find(|(done, _)| done == id)
                    .and_then(|(_, value)| template::lookup(value, path))
                    .map(template::as_text),
            }
        };
        let ran = match guarded(
            log,
            deadline,
            run_step(spec, step, index, &value_of, &mut detector, &mut usage),
        )
        .await
        {
            Ok(ran) => ran,
            Err(interrupt) => Err(format!("the run stopped ({})", interrupt.reason().as_str())),
        };
        let duration_ms = started.elapsed().as_millis() as u64;
        match ran {
            Ok((value, text)) => {
                log.push(RunEvent::Extension {
                    event_type: "x_workflow.step_completed".into(),
                    payload: json!({"workflow_id": workflow.id, "step_id": step.id, "index": index,
                        "kind": step.kind(), "tool": step.tool_name(), "duration_ms": duration_ms,
                        "preview": preview(&text)}),
                });
                reports.push(StepReport {
                    id: step.id.clone(),
                    kind: step.kind(),
                    tool: step.tool_name().map(str::to_string),
                    status: "succeeded",
                    duration_ms,
                    preview: Some(preview(&text)),
                    error: None,
                });
                results.push((step.id.clone(), value));
            }
            Err(why) => {
                log.push(RunEvent::Extension {
                    event_type: "x_workflow.step_failed".into(),
                    payload: json!({"workflow_id": workflow.id, "step_id": step.id, "index": index,
                        "kind": step.kind(), "tool": step.tool_name(), "duration_ms": duration_ms,
                        "error": why}),
                });
                reports.push(StepReport {
                    id: step.id.clone(),
                    kind: step.kind(),
                    tool: step.tool_name().map(str::to_string),
                    status: "failed",
                    duration_ms,
                    preview: None,
                    error: Some(why.clone()),
                });
                failed = Some((step.id.clone(), why));
            }
        }
    }
    let output = if failed.is_none() {
        results.last().map(|(_, value)| template::as_text(value))
    } else {
        None
    };
    WorkflowOutcome {
        output,
        steps: reports,
        failed,
        usage,
    }
}

/// One step: its value (a tool's result, parsed JSON when it is; a prompt's answer) and its
/// text, or why it failed.
async fn run_step(
    spec: &RunSpec,
    step: &Step,
    index: usize,
    value_of: &(dyn Fn(&Reference) -> Option<String> + Sync),
    detector: &mut LoopDetector,
    usage: &mut Usage,
) -> Result<(Value, String), String> {
    match &step.action {
        StepAction::Tool { name, arguments } => {
            let arguments =
                template::render_json(arguments, value_of).map_err(|err| err.to_string())?;
            let call = ToolCall {
                id: format!("{}_step_{index}", spec.log.run_id),
                kind: "function".into(),
                function: FunctionCall {
                    name: name.clone(),
                    arguments: arguments.to_string(),
                },
            };
            let started = Instant::now();
            let (_, planned) = plan_call(spec, &call, detector);
            let result = match planned {
                Planned::Answered(result) => result,
                Planned::Run {
                    tool,
                    arguments,
                    key,
                } => {
                    let timeout = Duration::from_secs(spec.handles.limits.tool_timeout_secs);
                    let timeout = tool.time_limit().map_or(timeout, |own| own.max(timeout));
                    execute_call(
                        &tool,
                        &call.id,
                        arguments,
                        key,
                        &spec.handles.cache,
                        timeout,
                    )
                    .await
                }
            };
            match result {
                Ok(mut value) => {
                    strip_base64_images(&mut value);
                    let (text, _) = truncate_result(
                        &result_text(&value),
                        spec.handles.limits.max_tool_result_chars,
                    );
                    record_call(spec, name, None, started.elapsed(), &text);
                    Ok((value, text))
                }
                Err(err) => {
                    record_call(spec, name, Some(&err.code), started.elapsed(), &err.message);
                    Err(format!("{name} failed ({}): {}", err.code, err.message))
                }
            }
        }
        StepAction::Prompt { text } => {
            let prompt = template::render(text, value_of).map_err(|err| err.to_string())?;
            let mut request = spec.template.clone();
            request.messages = vec![ChatMessage::user(prompt)];
            request.tools = None;
            request.tool_choice = None;
            request.stream = false;
            request.stream_options = None;
            let completion = spec.handles.llm.chat(&request).await.map_err(|err| {
                tracing::warn!(run_id = %spec.log.run_id, %err, "a workflow's prompt step failed");
                format!("the model call failed: {}", err.public_message())
            })?;
            if let Some(spent) = completion.usage {
                usage.add(spent);
            }
            let answer = completion
                .choices
                .first()
                .map(|choice| choice.message.message.text())
                .unwrap_or_default();
            if answer.trim().is_empty() {
                return Err("the model answered nothing".into());
            }
            Ok((Value::String(answer.clone()), answer))
        }
    }
}
