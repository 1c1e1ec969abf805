//! Planning a run: everything a request asks of it (tools, `tool_choice`, Deep Think's rules,
//! `max_iterations`, the agent's tools) is checked here, before anything is stored, and comes
//! back as a `Plan` or a typed `Refusal`. Planning writes nothing; beginning the turn (which
//! saves the user message and a `running` run row) comes only after a plan.

use std::sync::Arc;

use entities::ids::MessageId;

use super::agent::apply_agent;
use super::{Launcher, RunOptions, RunPlan, chat_tools, deep_think, research_tools, sized};
use crate::config::ContextStrategy;
use crate::llm::wire::{ChatMessage, ChatRequest, ToolDefinition};
use crate::run::log::RunLog;
use crate::tools;
use crate::tools::chat_context::{Parts, SessionSlot};
use crate::tools::file_search::FileSearchTool;

/// Why a request cannot run; nothing of it is stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("max_iterations must be at least 1")]
    NoIterations,
    #[error(
        "x_deep_think cannot be combined with client tools: Deep Think runs its own research \
         tools"
    )]
    DeepThinkWithClientTools,
    #[error(
        "the client tool {0} has the name of one of Colloquy's server-side tools (or of another \
         client tool); rename it"
    )]
    ClientToolNameTaken(String),
    #[error("tool_choice \"required\" needs tools: enable them with web_search_options")]
    RequiredWithoutTools,
    #[error("tool_choice names {0}, which is not among this request's tools")]
    ToolChoiceNotOffered(String),
}

/// A request's run, checked and ready to begin: what the launcher needs beyond the messages,
/// which only exist once the turn is begun.
pub(in crate::supervisor) struct Plan {
    pub(in crate::supervisor) log: Arc<RunLog>,
    pub(in crate::supervisor) template: ChatRequest,
    pub(in crate::supervisor) tools: Vec<tools::SharedTool>,
    pub(in crate::supervisor) max_iterations: u32,
    pub(in crate::supervisor) session: Option<SessionSlot>,
    pub(in crate::supervisor) project: String,
    pub(in crate::supervisor) parts: Parts,
    pub(in crate::supervisor) client_tools: Vec<ToolDefinition>,
}

impl Plan {
    /// The run, once its turn is begun: the model's messages and (in a chat) the user message
    /// it answers.
    pub(super) fn into_run(
        self,
        messages: Vec<ChatMessage>,
        user_message: Option<MessageId>,
        context_strategy: ContextStrategy,
    ) -> RunPlan {
        RunPlan {
            log: self.log,
            template: self.template,
            messages,
            tools: self.tools,
            max_iterations: self.max_iterations,
            chat: self
                .session
                .and_then(|slot| slot.get().cloned())
                .zip(user_message),
            resume: None,
            completes_ask: None,
            project: self.project,
            parts: self.parts,
            context_strategy,
            client_tools: self.client_tools,
        }
    }
}

/// Plans the run `options` ask for, in `session`'s chat when there is one (`documents`: the
/// chat has searchable documents). Pure: it stores nothing and starts nothing.
pub(in crate::supervisor) fn plan(
    launcher: &Launcher,
    project: &str,
    log: Arc<RunLog>,
    options: &RunOptions,
    session: Option<SessionSlot>,
    documents: bool,
) -> Result<Plan, Refusal> {
    let max_iterations = max_iterations(launcher, options)?;
    if deep_think(options) && !options.client_tools.is_empty() {
        return Err(Refusal::DeepThinkWithClientTools);
    }
    let template = options
        .template
        .clone()
        .unwrap_or_else(|| ChatRequest::new(log.model.clone(), Vec::new()));
    let mut tools = select_tools(launcher, options);
    let parts = Parts::default();
    // A request whose x_tools names file_search has it even before any document.
    let file_search = documents || names_file_search(options);
    if let (Some(session), Some(chat_id)) = (&session, &log.chat_id) {
        tools.extend(chat_tools(
            launcher,
            chat_id.clone(),
            session.clone(),
            &log,
            &parts,
            file_search,
        ));
        tools.extend(crate::supervisor::automations::automation_tools(
            launcher,
            &log,
            project,
            options.agent.as_ref(),
        ));
    }
    apply_agent(launcher, options, &log, &mut tools);
    tools.extend(super::browser::browser_tools(launcher, options, &log));
    tools.extend(super::email::send_email_tool(
        launcher,
        options,
        session.is_some(),
    ));
    if let Some(stores) = &options.file_search {
        // The stores the request named replace the chat's own documents.
        tools.retain(|t| t.name() != "file_search");
        tools.push(Arc::new(FileSearchTool::over_stores(
            log.clone(),
            launcher.config.clone(),
            launcher.workspace.clone(),
            stores.clone(),
        )));
    }
    let tools = sized(tools, options);
    let mut names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    for tool in &options.client_tools {
        let name = tool.function.name.as_str();
        if names.contains(&name) {
            return Err(Refusal::ClientToolNameTaken(name.to_string()));
        }
        names.push(name);
    }
    check_tool_choice(template.tool_choice.as_ref(), &names)?;
    Ok(Plan {
        log,
        template,
        tools,
        max_iterations,
        session,
        project: project.to_string(),
        parts,
        client_tools: options.client_tools.clone(),
    })
}

fn max_iterations(launcher: &Launcher, options: &RunOptions) -> Result<u32, Refusal> {
    let limits = &launcher.config.agent;
    match options.web_search.as_ref().and_then(|w| w.max_iterations) {
        None => Ok(limits.max_iterations),
        Some(0) => Err(Refusal::NoIterations),
        Some(n) => Ok(n.min(limits.max_iterations_ceiling)),
    }
}

fn select_tools(launcher: &Launcher, options: &RunOptions) -> Vec<tools::SharedTool> {
    // Deep Think has every research tool (docs/spec.md#deep-think), whatever else the request
    // says.
    if deep_think(options) {
        return research_tools(launcher);
    }
    // An agent that names its tools has them on unless the message turns them off; the
    // default agent's research tools are opt-in per request
    // (docs/spec.md#which-tools-a-run-has).
    let named = options
        .agent
        .as_ref()
        .and_then(|a| a.enabled_tools.as_ref());
    if let Some(named) = named
        && options.enable_tools != Some(false)
    {
        let mut chosen = launcher.available_tools();
        chosen.retain(|t| t.progress().is_some() && named.iter().any(|n| n == t.name()));
        return chosen;
    }
    if !options.tools_enabled {
        return Vec::new();
    }
    let requested = options
        .web_search
        .as_ref()
        .and_then(|w| w.x_tools.as_deref());
    tools::select(&launcher.available_tools(), requested)
}

/// Whether the request turned its tools on and named file_search in `x_tools`.
fn names_file_search(options: &RunOptions) -> bool {
    options.tools_enabled
        && options
            .web_search
            .as_ref()
            .and_then(|w| w.x_tools.as_ref())
            .is_some_and(|named| named.iter().any(|n| n == "file_search"))
}

/// A `tool_choice` that forces a tool needs that tool (or any, for `required`) to be offered;
/// `tools` names every tool the request offers.
fn check_tool_choice(choice: Option<&serde_json::Value>, tools: &[&str]) -> Result<(), Refusal> {
    let Some(choice) = choice else {
        return Ok(());
    };
    if choice == "required" && tools.is_empty() {
        return Err(Refusal::RequiredWithoutTools);
    }
    if let Some(name) = choice["function"]["name"].as_str()
        && !tools.contains(&name)
    {
        return Err(Refusal::ToolChoiceNotOffered(name.to_string()));
    }
    Ok(())
}
