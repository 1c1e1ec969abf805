//! A workflow run of its own: begun as a turn in a chat (a user message naming the workflow
//! and its input), run by a `WorkflowRun` with the tools of the workflow's agent, recorded in
//! `workflow_runs` with the version it ran and how it ended.

use std::sync::Arc;

use entities::ids::{ChatId, RunId, UserId};
use serde_json::Value;

use super::Launcher;
use crate::agent::governance::truncate_result;
use crate::agent::kernel::RunSpec;
use crate::agent::workflow::{WorkflowRunPlan, check_input};
use crate::auth::Principal;
use crate::chat::agents::Agent;
use crate::chat::automations::{AutomationError, WorkflowView, Workflows};
use crate::chat::session::{BeginTurn, Turn};
use crate::error::AppResult;
use crate::llm::wire::ChatRequest;
use crate::run::events::RunEvent;
use crate::run::log::RunLog;
use crate::tools::SharedTool;

/// Characters of the input shown in the user message that begins a workflow run.
const SHOWN_INPUT_CHARS: usize = 2_000;

/// The workflows store (for handlers).
pub fn workflows_of(launcher: &Launcher) -> Workflows {
    super::workflows(launcher)
}

/// The names of the tools a workflow step may call on this server: every research tool it
/// offers (MCP tools among them) and `execute_sql` when a database is declared.
pub fn step_tool_names(launcher: &Launcher) -> Vec<String> {
    let mut names: Vec<String> = launcher
        .available_tools()
        .iter()
        .filter(|t| t.progress().is_some())
        .map(|t| t.name().to_string())
        .collect();
    if !launcher.sql.is_empty() {
        names.push(crate::tools::sql::EXECUTE_SQL.to_string());
    }
    names
}

/// The agent a workflow's steps use: its own, else `fallback` (the chat's), else the owner's
/// default.
pub(super) async fn workflow_agent(
    launcher: &Launcher,
    owner: &UserId,
    workflow: &WorkflowView,
    fallback: Option<Agent>,
) -> AppResult<Agent> {
    if let Some(id) = &workflow.agent_id
        && let Ok(agent) = launcher.agents.get_owned(owner, id).await
    {
        return Ok(agent);
    }
    if let Some(agent) = fallback {
        return Ok(agent);
    }
    Ok(launcher.agents.default_for(owner).await?)
}

/// The tools `agent`'s workflow steps may call: the research tools (and `execute_sql` over
/// its database), narrowed to its `enabled_tools` when it names them; none when its tools
/// are off.
pub(super) fn step_tools(launcher: &Launcher, agent: &Agent) -> Vec<SharedTool> {
    if !agent.tools_enabled {
        return Vec::new();
    }
    let mut tools: Vec<SharedTool> = launcher
        .available_tools()
        .into_iter()
        .filter(|t| t.progress().is_some())
        .collect();
    if let Some(sql) = launcher.sql.tool(
        agent.sql_database.as_deref(),
        launcher.config.agent.max_tool_result_chars,
    ) {
        tools.push(sql);
    }
    if let Some(named) = &agent.enabled_tools {
        tools.retain(|t| named.iter().any(|n| n == t.name()));
    }
    tools
}

/// Starts `workflow` with `input` as a run in `chat_id` (the caller's): everything is checked
/// first (steps, input), so a refused run stores nothing. The run is recorded in
/// `workflow_runs`, and its outcome when it ends.
pub(in crate::supervisor) async fn launch_workflow_turn(
    launcher: &Launcher,
    principal: &Principal,
    chat_id: &ChatId,
    workflow: WorkflowView,
    input: Value,
) -> AppResult<Arc<RunLog>> {
    let steps = workflow.checked_steps()?;
    check_input(&steps, &input).map_err(AutomationError::MissingInput)?;
    let chat = launcher
        .chats
        .get_owned(principal.user_id(), chat_id)
        .await?;
    let chat_agent = match &chat.agent_id {
        Some(id) => launcher.agents.get_owned(&chat.user_id, id).await.ok(),
        None => None,
    };
    let agent = workflow_agent(launcher, principal.user_id(), &workflow, chat_agent).await?;
    let model = agent
        .model
        .clone()
        .unwrap_or_else(|| launcher.llm.default_model().to_string());
    let session = launcher.sessions.session(&chat.id).await?;
    let run_id = RunId::generate();
    let log = Arc::new(
        RunLog::new(
            run_id.clone(),
            Some(chat.id.clone()),
            principal.user_id().clone(),
            model.clone(),
        )
        .owned_by_admin(principal.is_admin()),
    );
    let shown_input = truncate_result(&input.to_string(), SHOWN_INPUT_CHARS).0;
    let started = session
        .send(BeginTurn {
            turn: Turn::Send {
                parent_id: None,
                content: format!(
                    "Run workflow \"{}\" (version {}) with input {shown_input}",
                    workflow.name, workflow.version
                ),
                images: Vec::new(),
            },
            run_id: run_id.clone(),
            user_id: principal.user_id().clone(),
            options: None,
            history_budget: None,
            new_chat: None,
            recall: None,
            taken: None,
            on_accepted: None,
        })
        .await??;
    log.push(RunEvent::Started {
        user_message_id: Some(started.user_message_id.clone()),
    });
    let workflows = super::workflows(launcher);
    workflows
        .run_started(
            &run_id,
            &workflow,
            principal.user_id(),
            Some(chat.id.clone()),
        )
        .await?;
    let mut run = RunSpec::new(
        launcher.run_handles(),
        log.clone(),
        ChatRequest::new(model, Vec::new()),
        Vec::new(),
        step_tools(launcher, &agent),
    );
    run.chat = Some(crate::agent::kernel::ChatLink {
        session,
        user_message: started.user_message_id,
    });
    run.project = principal.project().to_string();
    let (done, outcome) = tokio::sync::oneshot::channel();
    let steps_view = workflow.clone();
    launcher.spawn(crate::supervisor::Spawn::Workflow(Box::new(
        WorkflowRunPlan {
            run,
            workflow,
            steps,
            input,
            done,
        },
    )));
    tokio::spawn(async move {
        let Ok(outcome) = outcome.await else {
            tracing::warn!(%run_id, "a workflow run ended without an outcome");
            return;
        };
        let steps = serde_json::to_value(&outcome.steps).unwrap_or(Value::Null);
        if let Err(err) = workflows
            .run_finished(&run_id, outcome.failed.clone(), steps)
            .await
        {
            tracing::warn!(%run_id, workflow_id = %steps_view.id, %err, "could not record how a workflow run ended");
        }
    });
    Ok(log)
}
