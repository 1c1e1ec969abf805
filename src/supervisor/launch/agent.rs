//! An agent's part in a run (docs/spec.md#agents): its `enabled_tools` and the message's
//! `enableTools` applied to the run's tools, its custom MCP tools, `execute_sql` and knowledge
//! bases (`knowledge`), the tools its chats can call, and a chat's agent.

use std::sync::Arc;

use super::knowledge::{knowledge_tool, offers_knowledge};
use super::{Launcher, RunOptions, chat, deep_think, research_tools};
use crate::error::{AppError, AppResult};
use crate::tools;
use crate::tools::search_knowledge::SEARCH_KNOWLEDGE;

/// Applies the agent and the message's `enableTools` to a run's tools: none when either turns
/// tools off; else only those the agent's `enabled_tools` names (with the alias `browse_url`
/// (docs/spec.md#tool-aliases) and `execute_sql` over its database, when it names them), and
/// `search_knowledge` when the agent offers it (over its knowledge bases and, in a chat, `log`'s
/// chat's documents).
pub(super) fn apply_agent(
    launcher: &Launcher,
    options: &RunOptions,
    log: &crate::run::log::RunLog,
    tools: &mut Vec<tools::SharedTool>,
) {
    if deep_think(options) {
        return;
    }
    let allowed = options.agent.as_ref().is_none_or(|a| a.tools_enabled);
    if !allowed || options.enable_tools == Some(false) {
        tools.clear();
        return;
    }
    // The agent's custom tools (an MCP server's tool, docs/spec.md#custom-tools-over-mcp),
    // whatever else it names.
    let custom = options
        .agent
        .as_ref()
        .map(|a| custom_tools(launcher, a))
        .unwrap_or_default();
    let knowledge = options
        .agent
        .as_ref()
        .filter(|a| offers_knowledge(a))
        .map(|a| knowledge_tool(launcher, a, &log.owner_id, log.chat_id.clone()));
    let Some(named) = options
        .agent
        .as_ref()
        .and_then(|a| a.enabled_tools.as_ref())
    else {
        tools.extend(knowledge);
        add_missing(tools, custom);
        return;
    };
    let names = |name: &str| named.iter().any(|n| n == name);
    if names("browse_url")
        && let Some(fetch) = launcher.tools.iter().find(|t| t.name() == "fetch_url")
    {
        tools.push(Arc::new(crate::tools::alias::Alias::browse_url(
            fetch.clone(),
        )));
    }
    tools.extend(knowledge);
    if let Some(agent) = &options.agent {
        tools.extend(super::sql::sql_tool(launcher, agent));
    }
    tools.retain(|t| names(t.name()));
    add_missing(tools, custom);
}

/// The MCP tools an agent's `custom_tools` entries name, those whose server listed them.
fn custom_tools(launcher: &Launcher, agent: &crate::chat::agents::Agent) -> Vec<tools::SharedTool> {
    agent
        .custom_tools
        .iter()
        .filter_map(|entry| {
            launcher
                .mcp
                .tool(&entry.config.server_id, &entry.config.tool_name)
        })
        .collect()
}

/// Adds each of `more` whose name is not among `tools` yet.
fn add_missing(tools: &mut Vec<tools::SharedTool>, more: Vec<tools::SharedTool>) {
    for tool in more {
        if !tools.iter().any(|t| t.name() == tool.name()) {
            tools.push(tool);
        }
    }
}

/// The definitions of the tools an agent's chats can call now (`GET /api/agents/{id}/chat/tools`):
/// every research tool (a request may choose any), the chat's own tools, the alias `browse_url`
/// (docs/spec.md#tool-aliases), `execute_sql` (over the agent's database) and `send_email` when
/// named — after `enabled_tools` —, `search_knowledge` when the agent offers it; none when its
/// tools are off.
pub fn agent_tool_definitions(
    launcher: &Launcher,
    agent: &crate::chat::agents::Agent,
) -> Vec<crate::llm::wire::ToolDefinition> {
    if !agent.tools_enabled {
        return Vec::new();
    }
    let mut definitions: Vec<_> = launcher
        .available_tools()
        .iter()
        .filter(|t| t.progress().is_some())
        .map(|t| t.definition())
        .collect();
    definitions.extend(chat::chat_tool_definitions(launcher));
    if let Some(named) = &agent.enabled_tools {
        let research = research_tools(launcher);
        if let Some(fetch) = research.iter().find(|t| t.name() == "fetch_url") {
            definitions.push(tools::Tool::definition(
                &crate::tools::alias::Alias::browse_url(fetch.clone()),
            ));
        }
        definitions.extend(super::sql::sql_tool(launcher, agent).map(|tool| tool.definition()));
        definitions.extend(super::email::send_email_definition(launcher));
        definitions.extend(super::browser::browser_definitions(launcher));
        definitions.extend(crate::supervisor::automations::automation_tool_definitions());
        definitions.retain(|d| named.contains(&d.function.name));
    }
    if offers_knowledge(agent) {
        definitions
            .push(crate::tools::search_knowledge::SearchKnowledgeTool::describe(&launcher.config));
    }
    for tool in custom_tools(launcher, agent) {
        let definition = tool.definition();
        if !definitions
            .iter()
            .any(|d| d.function.name == definition.function.name)
        {
            definitions.push(definition);
        }
    }
    definitions
}

/// Refuses an agent's `enabled_tools` that names a tool this server cannot give it (`400
/// unknown_tool`, every such name in the message): a name is one of the research tools this
/// server offers, a chat tool, the alias `browse_url` (docs/spec.md#tool-aliases),
/// `search_knowledge`, `execute_sql` when a database is declared, or a tool an MCP server has
/// listed. A tool Colloquy has but this server does not configure (code_search without a GitHub
/// token, execute_sql without a database, send_email without `[email]`) is refused too, saying
/// what it needs.
pub fn check_enabled_tools(launcher: &Launcher, named: &[String]) -> AppResult<()> {
    let mut known: Vec<String> = launcher
        .available_tools()
        .iter()
        .map(|t| t.name().to_string())
        .collect();
    known.extend(chat::CHAT_TOOL_NAMES.map(str::to_string));
    known.extend(crate::supervisor::automations::AUTOMATION_TOOL_NAMES.map(str::to_string));
    known.extend(crate::tools::alias::Alias::NAMES.map(str::to_string));
    known.push(SEARCH_KNOWLEDGE.to_string());
    if !launcher.sql.is_empty() {
        known.push(tools::sql::EXECUTE_SQL.to_string());
    }
    if launcher.email.is_some() {
        known.push(crate::tools::email::SEND_EMAIL.to_string());
    }
    if launcher.browsers.unavailable().is_none() {
        known.extend(crate::tools::browser::BROWSER_TOOLS.map(str::to_string));
    }
    // Tools Colloquy has that need configuration this server may lack, and what each needs.
    let configurable = tools::RESEARCH_TOOLS.iter().copied().chain([
        (tools::sql::EXECUTE_SQL, tools::sql::EXECUTE_SQL_NEEDS),
        (tools::email::SEND_EMAIL, tools::email::NEEDS),
        (tools::browser::BROWSER_ACTION, tools::browser::NEEDS),
        (tools::browser::ANALYZE_PAGE, tools::browser::NEEDS),
    ]);
    let needs_of = |name: &str| {
        configurable
            .clone()
            .find(|(tool, _)| *tool == name)
            .map(|(_, needs)| needs)
    };
    let mut problems = Vec::new();
    let missing = named.iter().filter(|n| !known.contains(n));
    let (unconfigured, unknown): (Vec<&String>, Vec<&String>) =
        missing.partition(|n| needs_of(n).is_some());
    if !unknown.is_empty() {
        let names: Vec<&str> = unknown.iter().map(|n| n.as_str()).collect();
        known.sort();
        known.dedup();
        let mut problem = format!(
            "enabled_tools names tools this server does not have: {}; the tools an agent may name here are {}",
            names.join(", "),
            known.join(", ")
        );
        if launcher.mcp.health().iter().any(|server| server.tools == 0) {
            problem.push_str(
                " (an MCP server that has not listed its tools yet cannot be checked: name its tools in custom_tools, by server_id and tool_name, instead)",
            );
        }
        problems.push(problem);
    }
    for name in unconfigured {
        let needs = needs_of(name).unwrap_or_default();
        problems.push(format!(
            "{name} is not configured on this server (it needs {needs})"
        ));
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(AppError::InvalidWithCode {
        code: "unknown_tool",
        message: problems.join("; "),
    })
}

/// The chat's agent (its owner's default when it has none, or its agent is gone).
pub(super) async fn agent_of(
    launcher: &Launcher,
    chat: &entities::chats::Model,
) -> AppResult<crate::chat::agents::Agent> {
    if let Some(id) = &chat.agent_id
        && let Ok(agent) = launcher.agents.get_owned(&chat.user_id, id).await
    {
        return Ok(agent);
    }
    Ok(launcher.agents.default_for(&chat.user_id).await?)
}

/// The agent-scoped tools (`search_knowledge`, `execute_sql`, `send_email`; and the chat's
/// browser tools) among `had`, the
/// tools a paused run had, built again for its resumption in `chat_id`: the chat's agent as it
/// is now, read once. None when the chat is gone.
pub(in crate::supervisor) async fn agent_tools_after_pause(
    launcher: &Launcher,
    owner: &entities::ids::UserId,
    chat_id: &entities::ids::ChatId,
    had: &[String],
) -> Vec<tools::SharedTool> {
    let had = |name: &str| had.iter().any(|n| n == name);
    let wanted = [
        SEARCH_KNOWLEDGE,
        tools::sql::EXECUTE_SQL,
        tools::email::SEND_EMAIL,
        tools::browser::BROWSER_ACTION,
        tools::browser::ANALYZE_PAGE,
    ];
    if !wanted.iter().any(|name| had(name)) {
        return Vec::new();
    }
    let Ok(chat) = launcher.chats.get_owned(owner, chat_id).await else {
        return Vec::new();
    };
    let Ok(agent) = agent_of(launcher, &chat).await else {
        return Vec::new();
    };
    let mut found = Vec::new();
    if had(SEARCH_KNOWLEDGE) {
        found.push(super::knowledge::knowledge_tool(
            launcher,
            &agent,
            owner,
            Some(chat.id.clone()),
        ));
    }
    if had(tools::sql::EXECUTE_SQL) {
        found.extend(super::sql::sql_tool(launcher, &agent));
    }
    if had(tools::email::SEND_EMAIL)
        && let Some(mailer) = &launcher.email
    {
        found.push(std::sync::Arc::new(tools::email::SendEmail::new(
            mailer.clone(),
            agent.id.clone(),
        )));
    }
    // The browser tools are the chat's, not the agent's, but a paused run had them all the same.
    if tools::browser::BROWSER_TOOLS.iter().any(|name| had(name))
        && launcher.browsers.unavailable().is_none()
    {
        let browsers = launcher.browsers.clone();
        found.push(std::sync::Arc::new(tools::browser::BrowserAction::new(
            browsers.clone(),
            chat.id.clone(),
        )));
        found.push(std::sync::Arc::new(tools::browser::AnalyzePage::new(
            browsers,
            chat.id.clone(),
        )));
    }
    found
}
