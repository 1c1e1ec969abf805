//! An agent's part in a run (docs/spec.md#agents): what its chats can call (the table of
//! tools read against its `enabled_tools`: `tools`), the check of the names it may use, and a
//! chat's agent.

use super::Launcher;
use crate::chat::turn_cache;
use crate::error::{AppError, AppResult};
use crate::tools::registry;

/// The definitions of the tools an agent's chats can call now (`GET /api/agents/{id}/chat/tools`),
/// `owner`'s agent: what a run in its chat is given (every research tool a request may choose),
/// none when its tools are off.
pub fn agent_tool_definitions(
    launcher: &Launcher,
    owner: &entities::ids::UserId,
    agent: &crate::chat::agents::Agent,
) -> Vec<crate::llm::wire::ToolDefinition> {
    super::tools::for_agent_listing(launcher, owner, agent)
        .iter()
        .map(|tool| tool.definition())
        .collect()
}

/// Refuses an agent's `enabled_tools` that names a tool this server cannot give it (`400
/// unknown_tool`, every such name in the message): a name is one the catalog lists (the table's
/// tools this server configures, and the tools the MCP servers have listed) or another tool the
/// server was built with. A tool Colloquy
/// has but this server does not configure (code_search without a GitHub token, execute_sql
/// without a database, send_email without `[email]`, the browser without Chromium) is refused
/// too, saying what it needs (the table's `needs`).
pub fn check_enabled_tools(launcher: &Launcher, named: &[String]) -> AppResult<()> {
    let mut known: Vec<String> = super::tool_catalog(launcher)
        .into_iter()
        .map(|tool| tool.name)
        .chain(
            launcher
                .available_tools()
                .iter()
                .map(|t| t.name().to_string()),
        )
        .collect();
    let needs_of = |name: &str| registry::family_of(name).and_then(|family| family.needs);
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

/// The chat's agent (its owner's default when it has none, or its agent is gone): kept from
/// the chat's last turn while nothing kept changed (`chat::turn_cache`).
pub(in crate::supervisor) async fn agent_of(
    launcher: &Launcher,
    chat: &entities::chats::Model,
) -> AppResult<crate::chat::agents::Agent> {
    let cache = &launcher.turn_cache;
    if let Some(agent) = cache.read(&chat.user_id, &chat.id, |entry| entry.agent.clone()) {
        return Ok(agent);
    }
    let at = turn_cache::generation();
    let agent = match &chat.agent_id {
        Some(id) => match launcher.agents.get_owned(&chat.user_id, id).await {
            Ok(agent) => agent,
            Err(_) => default_agent(launcher, &chat.user_id).await?,
        },
        None => default_agent(launcher, &chat.user_id).await?,
    };
    cache.keep_agent(at, &chat.id, agent.clone());
    Ok(agent)
}

/// `user`'s default agent (made on first need), kept while nothing kept changed.
pub(in crate::supervisor) async fn default_agent(
    launcher: &Launcher,
    user: &entities::ids::UserId,
) -> AppResult<crate::chat::agents::Agent> {
    let cache = &launcher.turn_cache;
    if let Some(agent) = cache.default_agent(user) {
        return Ok(agent);
    }
    let at = turn_cache::generation();
    let agent = launcher.agents.default_for(user).await?;
    cache.keep_default_agent(at, user, agent.clone());
    Ok(agent)
}

/// `owner`'s chat `chat_id` as a turn reads it (its owner, agent, model and context
/// strategy): kept from its last turn while nothing kept changed.
pub(in crate::supervisor) async fn chat_for_turn(
    launcher: &Launcher,
    owner: &entities::ids::UserId,
    chat_id: &entities::ids::ChatId,
) -> AppResult<entities::chats::Model> {
    let cache = &launcher.turn_cache;
    if let Some(chat) = cache.read(owner, chat_id, |entry| Some(entry.chat.clone())) {
        return Ok(chat);
    }
    let at = turn_cache::generation();
    let chat = launcher.chats.get_owned(owner, chat_id).await?;
    cache.keep_chat(at, chat.clone());
    Ok(chat)
}
