//! An agent's part in a run (seed 001): its `enabled_tools` and the message's `enableTools`
//! applied to the run's tools, its custom MCP tools, the tools its chats can call, and a
//! chat's agent.

use std::sync::Arc;

use super::{Launcher, RunOptions, chat, deep_think, research_tools};
use crate::error::AppResult;
use crate::tools;

/// Applies the agent and the message's `enableTools` to a run's tools: none when either turns
/// tools off; else only those the agent's `enabled_tools` names (with seed 001's aliases
/// `browse_url` and `search_knowledge` when it names them).
pub(super) fn apply_agent(
    launcher: &Launcher,
    options: &RunOptions,
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
    // The agent's custom tools (seed 001: an MCP server's tool), whatever else it names.
    let custom = options
        .agent
        .as_ref()
        .map(|a| custom_tools(launcher, a))
        .unwrap_or_default();
    let Some(named) = options
        .agent
        .as_ref()
        .and_then(|a| a.enabled_tools.as_ref())
    else {
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
    if names("search_knowledge")
        && let Some(search) = tools.iter().find(|t| t.name() == "file_search").cloned()
    {
        tools.push(Arc::new(crate::tools::alias::Alias::search_knowledge(
            search,
        )));
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

/// The definitions of the tools an agent's chats can call now (`GET
/// /api/agents/{id}/chat/tools`): every research tool (a request may choose any), the chat's
/// own tools, seed 001's aliases when named — after `enabled_tools`; none when its tools are
/// off.
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
        definitions.extend(chat::search_knowledge_definition(launcher));
        definitions.retain(|d| named.contains(&d.function.name));
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
