//! The automation tools (seed 001): `execute_workflow {workflowId, input}` runs one of the
//! user's workflows inside the calling run (its steps under the same governance, with
//! `x_workflow.*` events in the run's stream), `create_schedule {name, cron, workflowId |
//! prompt}` and `get_schedule_info {scheduleId}`. Built per run, for its owner, in a stored
//! chat only (a schedule needs a chat to fire in), for an agent whose `enabled_tools` names
//! them.

use std::borrow::Cow;
use std::sync::Arc;

use entities::ids::{ChatId, RunId, ScheduleId, UserId, WorkflowId};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::Launcher;
use super::run::{step_tools, workflow_agent};
use crate::agent::kernel::RunSpec;
use crate::agent::workflow::{check_input, run_steps};
use crate::chat::automations::{AutomationError, ScheduleFields};
use crate::llm::wire::ChatRequest;
use crate::run::log::RunLog;
use crate::tools::{ProgressKind, SharedTool, ToolError, ToolFuture, TypedTool};

pub const EXECUTE_WORKFLOW: &str = "execute_workflow";
pub const CREATE_SCHEDULE: &str = "create_schedule";
pub const GET_SCHEDULE_INFO: &str = "get_schedule_info";

/// What the three tools share: the launcher, and whose run calls them, where.
#[derive(Clone)]
struct Caller {
    launcher: Launcher,
    owner: UserId,
    chat_id: ChatId,
    log: Arc<RunLog>,
    project: String,
    agent: Option<crate::chat::agents::Agent>,
}

/// The automation tools for a run of `log`'s owner in its stored chat (`agent`: the chat's);
/// none outside a stored chat (a schedule needs a chat to fire in). Like `send_email`, they act
/// beyond the chat, so an agent opts in by naming them (the table of tools: `Offer::Named`).
pub fn automation_tools(
    launcher: &Launcher,
    log: &Arc<RunLog>,
    project: &str,
    agent: Option<&crate::chat::agents::Agent>,
) -> Vec<SharedTool> {
    let Some(chat_id) = log.chat_id.clone() else {
        return Vec::new();
    };
    let caller = Caller {
        launcher: launcher.clone(),
        owner: log.owner_id.clone(),
        chat_id,
        log: log.clone(),
        project: project.to_string(),
        agent: agent.cloned(),
    };
    vec![
        Arc::new(ExecuteWorkflow(caller.clone())),
        Arc::new(CreateSchedule(caller.clone())),
        Arc::new(GetScheduleInfo(caller)),
    ]
}

fn store_error(err: AutomationError) -> ToolError {
    match err {
        AutomationError::WorkflowNotFound => ToolError::new(
            "workflow_not_found",
            "no workflow of yours has this id",
            "Ask the user for the workflow's id (they are listed at GET /api/workflows).",
        ),
        AutomationError::ScheduleNotFound => ToolError::new(
            "schedule_not_found",
            "no schedule of yours has this id",
            "Use the scheduleId create_schedule returned.",
        ),
        AutomationError::Database(err) => {
            tracing::warn!(%err, "an automation tool could not reach the database");
            ToolError::new(
                "internal_error",
                "the schedule store failed",
                "Try again later.",
            )
        }
        other @ (AutomationError::InvalidWorkflow(_)
        | AutomationError::UnknownTool(_)
        | AutomationError::InvalidTemplate(_)
        | AutomationError::MissingInput(_)
        | AutomationError::InvalidSchedule(_)
        | AutomationError::WorkflowInUse(_)
        | AutomationError::TooMany { .. }) => ToolError::invalid_arguments(other.to_string()),
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ExecuteArgs {
    /// The workflow's id (`wf_…`).
    workflow_id: String,
    /// The values its `{{input.*}}` placeholders read.
    #[serde(default)]
    input: Option<serde_json::Map<String, Value>>,
}

const EXECUTE_WORKFLOW_DESCRIPTION: &str = "Run one of the user's saved workflows (an ordered recipe of tool calls and model prompts) with an input; returns the last step's output and each step's status, or the step that failed and why.";

struct ExecuteWorkflow(Caller);

impl TypedTool for ExecuteWorkflow {
    type Args = ExecuteArgs;

    fn name(&self) -> &str {
        EXECUTE_WORKFLOW
    }
    fn description(&self) -> Cow<'_, str> {
        EXECUTE_WORKFLOW_DESCRIPTION.into()
    }
    fn progress(&self) -> Option<ProgressKind> {
        None
    }
    fn own_events(&self) -> bool {
        true
    }
    fn call(&self, args: ExecuteArgs) -> ToolFuture {
        let caller = self.0.clone();
        Box::pin(async move {
            let input = Value::Object(args.input.unwrap_or_default());
            let launcher = &caller.launcher;
            let workflows = super::workflows(launcher);
            let workflow = workflows
                .get(
                    &caller.owner,
                    &WorkflowId::from_string(args.workflow_id),
                    None,
                )
                .await
                .map_err(store_error)?;
            let steps = workflow.checked_steps().map_err(store_error)?;
            check_input(&steps, &input).map_err(ToolError::invalid_arguments)?;
            let agent = workflow_agent(launcher, &caller.owner, &workflow, caller.agent.clone())
                .await
                .map_err(|err| {
                    ToolError::new("internal_error", err.to_string(), "Try again later.")
                })?;
            let model = agent
                .model
                .clone()
                .unwrap_or_else(|| caller.log.model.clone());
            let mut spec = RunSpec::new(
                launcher.run_handles(),
                caller.log.clone(),
                ChatRequest::new(model, Vec::new()),
                Vec::new(),
                step_tools(launcher, &agent),
            );
            spec.project = caller.project.clone();
            // Each call is a record of its own, named after the calling run.
            let record = RunId::from_string(format!(
                "{}.{}",
                caller.log.run_id,
                uuid::Uuid::now_v7().simple()
            ));
            if let Err(err) = workflows
                .run_started(
                    &record,
                    &workflow,
                    &caller.owner,
                    Some(caller.chat_id.clone()),
                )
                .await
            {
                tracing::warn!(%err, "could not record a workflow run");
            }
            let outcome = run_steps(&spec, &workflow, &steps, &input).await;
            let steps_value = serde_json::to_value(&outcome.steps).unwrap_or(Value::Null);
            if let Err(err) = workflows
                .run_finished(&record, outcome.failed.clone(), steps_value)
                .await
            {
                tracing::warn!(%err, "could not record how a workflow run ended");
            }
            match &outcome.failed {
                None => Ok(outcome.to_value(&workflow)),
                Some((step, why)) => Err(ToolError::new(
                    "workflow_step_failed",
                    format!("workflow {} stopped at step \"{step}\": {why}", workflow.id),
                    "Tell the user which step failed and why; fix its input or the workflow, then run it again.",
                )),
            }
        })
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CreateArgs {
    /// A name for the schedule.
    name: String,
    /// A standard five-field cron expression: minute hour day-of-month month day-of-week (e.g. "0 9 * * 1-5").
    cron: String,
    /// The workflow to run (`wf_…`); give this or `prompt`.
    #[serde(default)]
    workflow_id: Option<String>,
    /// The workflow's input.
    #[serde(default)]
    input: Option<serde_json::Map<String, Value>>,
    /// A message to send in the schedule's chat instead of a workflow.
    #[serde(default)]
    prompt: Option<String>,
    /// IANA time zone the cron expression is read in (default: the user's, set on their account page; UTC when unset).
    #[serde(default)]
    time_zone: Option<String>,
    /// Fire in this chat instead of a chat of the schedule's own.
    #[serde(default)]
    in_this_chat: Option<bool>,
    /// What to do about due times missed while the server was down: "skip" (default) or "run_once".
    #[serde(default)]
    missed_policy: Option<Policy>,
}

/// `missedPolicy` as the model writes it.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Policy {
    Skip,
    RunOnce,
}

impl From<Policy> for entities::schedules::MissedPolicy {
    fn from(policy: Policy) -> Self {
        match policy {
            Policy::Skip => Self::Skip,
            Policy::RunOnce => Self::RunOnce,
        }
    }
}

const CREATE_SCHEDULE_DESCRIPTION: &str = "Create a schedule that runs one of the user's workflows (workflowId) or sends a prompt on a cron timetable, in a chat of its own unless inThisChat; returns its id and next firings.";

struct CreateSchedule(Caller);

impl TypedTool for CreateSchedule {
    type Args = CreateArgs;

    fn name(&self) -> &str {
        CREATE_SCHEDULE
    }
    fn description(&self) -> Cow<'_, str> {
        CREATE_SCHEDULE_DESCRIPTION.into()
    }
    fn progress(&self) -> Option<ProgressKind> {
        None
    }
    fn call(&self, args: CreateArgs) -> ToolFuture {
        let caller = self.0.clone();
        Box::pin(async move {
            let launcher = &caller.launcher;
            let schedules = super::schedules(launcher);
            let fields = ScheduleFields {
                name: Some(args.name.clone()),
                cron: Some(args.cron),
                time_zone: args.time_zone,
                workflow_id: args.workflow_id.map(WorkflowId::from_string),
                input: args.input.map(Value::Object),
                prompt: args.prompt,
                missed_policy: args.missed_policy.map(Into::into),
            };
            // Checked before a chat is made for it, so a refused schedule leaves nothing.
            schedules
                .check(&caller.owner, &fields)
                .await
                .map_err(store_error)?;
            let chat_id = if args.in_this_chat == Some(true) {
                caller.chat_id.clone()
            } else {
                schedule_chat(
                    launcher,
                    &caller.owner,
                    &args.name,
                    caller.agent.as_ref().map(|a| a.id.clone()),
                )
                .await
                .map_err(store_error)?
            };
            let view = schedules
                .create(&caller.owner, chat_id, fields)
                .await
                .map_err(store_error)?;
            Ok(json!({
                "scheduleId": view.id,
                "name": view.name,
                "chatId": view.chat_id,
                "cron": view.cron,
                "timeZone": view.time_zone,
                "nextFirings": view.next_firings,
            }))
        })
    }
}

/// A chat of a schedule's own, named after it.
pub async fn schedule_chat(
    launcher: &Launcher,
    owner: &UserId,
    name: &str,
    agent: Option<entities::ids::AgentId>,
) -> Result<ChatId, AutomationError> {
    let title: String = format!("Schedule: {name}").chars().take(200).collect();
    let chat = launcher
        .chats
        .create_with(owner, Some(title), false, None, agent)
        .await?;
    Ok(chat.id)
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct InfoArgs {
    /// The schedule's id (`sched_…`).
    schedule_id: String,
}

const GET_SCHEDULE_INFO_DESCRIPTION: &str = "Show one of the user's schedules: its next firings, its last runs and their outcomes, and whether it is paused (and why).";

struct GetScheduleInfo(Caller);

impl TypedTool for GetScheduleInfo {
    type Args = InfoArgs;

    fn name(&self) -> &str {
        GET_SCHEDULE_INFO
    }
    fn description(&self) -> Cow<'_, str> {
        GET_SCHEDULE_INFO_DESCRIPTION.into()
    }
    fn progress(&self) -> Option<ProgressKind> {
        None
    }
    fn call(&self, args: InfoArgs) -> ToolFuture {
        let caller = self.0.clone();
        Box::pin(async move {
            let view = super::schedules(&caller.launcher)
                .get(&caller.owner, &ScheduleId::from_string(args.schedule_id))
                .await
                .map_err(store_error)?;
            serde_json::to_value(&view).map_err(|err| {
                ToolError::new("internal_error", err.to_string(), "Try again later.")
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use std::convert::identity;

    use serde_json::json;

    use super::*;
    use crate::llm::wire::ToolDefinition;
    use crate::tools::typed;

    fn execute_workflow_definition() -> ToolDefinition {
        typed::definition::<ExecuteArgs>(EXECUTE_WORKFLOW, EXECUTE_WORKFLOW_DESCRIPTION, identity)
    }

    fn create_schedule_definition() -> ToolDefinition {
        typed::definition::<CreateArgs>(CREATE_SCHEDULE, CREATE_SCHEDULE_DESCRIPTION, identity)
    }

    fn get_schedule_info_definition() -> ToolDefinition {
        typed::definition::<InfoArgs>(GET_SCHEDULE_INFO, GET_SCHEDULE_INFO_DESCRIPTION, identity)
    }

    #[test]
    fn the_definitions_are_derived_from_the_arguments_in_camel_case() {
        let definitions = [
            execute_workflow_definition(),
            create_schedule_definition(),
            get_schedule_info_definition(),
        ];
        let names: Vec<&str> = definitions
            .iter()
            .map(|d| d.function.name.as_str())
            .collect();
        let family = crate::tools::registry::entry(crate::tools::registry::Kind::Automation);
        assert_eq!(
            names, family.names,
            "the names the table of tools gives them"
        );
        let parameters = |i: usize| definitions[i].function.parameters.clone().unwrap();
        assert_eq!(parameters(0)["required"], json!(["workflowId"]));
        assert_eq!(parameters(1)["required"], json!(["name", "cron"]));
        assert_eq!(
            parameters(1)["properties"]["missedPolicy"]["enum"],
            json!(["skip", "run_once"])
        );
        assert_eq!(
            parameters(2),
            json!({"additionalProperties": false, "properties": {"scheduleId": {
                "description": "The schedule's id (`sched_…`).", "type": "string"}},
                "required": ["scheduleId"], "type": "object"})
        );
    }
}
