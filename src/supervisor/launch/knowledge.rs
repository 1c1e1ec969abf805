//! `search_knowledge` in a run (docs/spec.md#tool-aliases): offered to an agent that has
//! knowledge bases (when its `enabled_tools` allows it) or whose `enabled_tools` names it — then
//! even before there is anything to search, when it says so. It searches the agent's knowledge
//! bases and, in a stored chat, the chat's own documents, as one ranking.

use std::sync::Arc;

use entities::ids::{ChatId, UserId};

use super::Launcher;
use crate::chat::agents::Agent;
use crate::chat::knowledge_bases::KnowledgeBases;
use crate::tools;
use crate::tools::search_knowledge::{SEARCH_KNOWLEDGE, SearchKnowledgeTool};

/// Whether the agent's chats are offered `search_knowledge`.
pub(super) fn offers_knowledge(agent: &Agent) -> bool {
    match &agent.enabled_tools {
        Some(named) => named.iter().any(|name| name == SEARCH_KNOWLEDGE),
        None => !agent.knowledge_base_ids.is_empty(),
    }
}

/// `search_knowledge` over the agent's knowledge bases and, in a stored chat, `chat`'s
/// documents; `owner`'s knowledge bases only.
pub(super) fn knowledge_tool(
    launcher: &Launcher,
    agent: &Agent,
    owner: &UserId,
    chat: Option<ChatId>,
) -> tools::SharedTool {
    Arc::new(SearchKnowledgeTool::new(
        launcher.config.clone(),
        launcher.workspace.clone(),
        KnowledgeBases::new(
            launcher.db.clone(),
            launcher.config.documents.max_knowledge_bases_per_user,
        ),
        owner.clone(),
        agent.knowledge_base_ids.clone(),
        chat,
    ))
}
