//! Deep Think's first phases: discovery (target-focused mode) and the plan, asked of the model
//! with what the user said before.

use serde_json::json;

use super::checkpoint::Checkpoint;
use super::discovery::{self, Discovery};
use super::pipeline::ended;
use super::plan::{self, Plan};
use super::{DeepThinkSpec, emit};
use crate::llm::wire::{ChatMessage, Usage};
use crate::run::events::{RunError, StopReason};

use super::super::kernel::{LoopOutcome, guarded};
use super::super::model_call::upstream_error;

/// Longest stretch of earlier conversation the planner is shown, in characters.
const MAX_HISTORY_CHARS: usize = 4_000;

/// Discovery (when the question names a site) and the plan: the run's first checkpoint.
pub(super) async fn prepare(
    spec: &DeepThinkSpec,
    deadline: tokio::time::Instant,
) -> Result<Checkpoint, LoopOutcome> {
    let run = &spec.run;
    let log = &run.log;
    let mut usage = Usage::default();
    let mut iterations = 0;
    let mut found: Option<Discovery> = None;
    if let Some(target) = discovery::target(&spec.question) {
        emit(
            log,
            "discovery_started",
            json!({"mode": "target_focused",
                   "message": format!("Exploring {target} before planning...")}),
        );
        let explored = discovery::discover(log, &run.tools, &target, spec.config.discovery_follow);
        match guarded(log, deadline, explored).await {
            Err(interrupt) => return Err(ended(interrupt.reason(), usage, 0, None)),
            Ok(explored) => {
                let explored = explored.unwrap_or_else(|| Discovery {
                    target: target.clone(),
                    ..Discovery::default()
                });
                emit(
                    log,
                    "discovery_completed",
                    json!({"pages_fetched": explored.pages_fetched,
                           "site_map": explored.site_map,
                           "message": format!("Read {} page(s) of {target}.", explored.pages_fetched)}),
                );
                found = Some(explored);
            }
        }
    }
    let tools: Vec<String> = run.tools.iter().map(|t| t.name().to_string()).collect();
    let planned = make_plan(spec, found.as_ref(), &tools, &mut usage, &mut iterations);
    let plan = match guarded(log, deadline, planned).await {
        Err(interrupt) => return Err(ended(interrupt.reason(), usage, iterations, None)),
        Ok(Err(error)) => {
            emit(log, "error", json!({"message": error.message}));
            return Err(ended(
                StopReason::UpstreamError,
                usage,
                iterations,
                Some(error),
            ));
        }
        Ok(Ok(plan)) => plan,
    };
    Ok(Checkpoint {
        question: spec.question.clone(),
        model: log.model.clone(),
        project: run.project.clone(),
        owner_is_admin: log.owner_is_admin,
        tools,
        plan,
        discovery: found,
        findings: Vec::new(),
        planning_usage: usage,
        planning_iterations: iterations,
        resumptions: 0,
    })
}

/// What the planner is told: the question, the conversation before it, and what discovery
/// found.
fn planner_brief(spec: &DeepThinkSpec, found: Option<&Discovery>) -> String {
    let mut earlier: Vec<String> = spec
        .run
        .messages
        .iter()
        .filter(|m| m.role != crate::llm::wire::Role::System)
        .map(|m| {
            let who = if m.role == crate::llm::wire::Role::User {
                "User"
            } else {
                "Assistant"
            };
            format!("{who}: {}", m.text())
        })
        .collect();
    earlier.pop();
    let mut history = String::new();
    for line in earlier.iter().rev() {
        if history.len() + line.len() > MAX_HISTORY_CHARS {
            break;
        }
        history = format!("{line}\n{history}");
    }
    let mut brief = String::new();
    if !history.is_empty() {
        brief.push_str(&format!("The conversation so far:\n{history}\n"));
    }
    brief.push_str(&format!(
        "Plan research for this question: {}",
        spec.question
    ));
    if let Some(found) = found {
        brief.push_str(&format!(
            "\n\nThe question names {}; it was read first. Build the plan on what was found:\n{}\n\nPages:\n{}",
            found.target, found.site_map, found.context
        ));
    }
    brief
}

/// Asks for a plan: with the plan's JSON schema when `structured_output` is on (and again
/// without it if the upstream refuses the schema), once more with the reason if the answer
/// cannot be read, then the fallback plan.
async fn make_plan(
    spec: &DeepThinkSpec,
    found: Option<&Discovery>,
    tools: &[String],
    usage: &mut Usage,
    iterations: &mut u32,
) -> Result<Plan, RunError> {
    let run = &spec.run;
    let config = &spec.config;
    let (min, max) = (config.min_subtasks, config.max_subtasks);
    let mut messages = vec![
        ChatMessage::system(plan::instructions(tools, min, max)),
        ChatMessage::user(planner_brief(spec, found)),
    ];
    let mut structured = config.structured_output;
    let mut attempts = 0;
    while attempts < 2 {
        let mut request = run.template.clone();
        if let Some(model) = &config.planner_model {
            request.model = model.clone();
        }
        request.messages = messages.clone();
        request.tools = None;
        request.tool_choice = None;
        if structured {
            request.extra.insert(
                "response_format".into(),
                json!({"type": "json_schema", "json_schema": {"name": "deep_think_plan",
                       "strict": true, "schema": plan::schema(tools, max)}}),
            );
        }
        *iterations += 1;
        let completion = match run.handles.llm.chat(&request).await {
            Ok(completion) => completion,
            Err(err) if structured && err.code() == "upstream_rejected" => {
                tracing::info!(run_id = %run.log.run_id, error = %err, "the upstream refused a JSON schema; planning without one");
                structured = false;
                continue;
            }
            Err(err) => {
                return Err(upstream_error(&run.log, &err)
                    .unwrap_or_else(|| RunError::new((&err).into(), err.public_message())));
            }
        };
        attempts += 1;
        let answer = completion
            .choices
            .first()
            .map(|c| c.message.split().text)
            .unwrap_or_default();
        usage.add(match completion.usage {
            Some(reported) if crate::agent::usage::is_real(Some(&reported)) => reported,
            _ => crate::agent::usage::estimate_off_thread(&request, &answer).await,
        });
        match plan::parse(&answer, tools, min, max, &spec.question) {
            Ok(mut plan) => {
                if attempts > 1 {
                    plan.source = "retried".into();
                }
                return Ok(plan);
            }
            Err(reason) => {
                tracing::info!(run_id = %run.log.run_id, %reason, attempts, "an unusable plan");
                messages.push(ChatMessage::assistant(answer));
                messages.push(ChatMessage::user(format!(
                    "That plan cannot be used: {reason}. Answer again with only the JSON \
                     object: a title and {min} to {max} sub-tasks, each with an id, a query and \
                     its tools."
                )));
            }
        }
    }
    Ok(plan::fallback(&spec.question, tools))
}
