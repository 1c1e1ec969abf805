//! The tool catalog (`GET /api/tools`, the agents page's tool choice): every tool an agent's
//! `enabled_tools` may name on this server, with its description and where it comes from — the
//! same names `check_enabled_tools` accepts, each described by the definition a model is sent.

use serde::Serialize;

use super::{Launcher, chat};
use crate::tools;
use crate::tools::Tool;

/// Where a tool of the catalog comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolOrigin {
    /// A research tool (web search, page fetching, the calculator, code search).
    Research,
    /// One of every chat's own tools (artifacts, memory, ask_user, file_search).
    Chat,
    /// A tool a server's configuration adds, or an alias (`execute_sql`, `send_email`,
    /// `search_knowledge`, `browse_url`).
    Platform,
    /// A configured MCP server's tool.
    Mcp,
}

/// One tool an agent may name.
#[derive(Debug, Clone, Serialize)]
pub struct CatalogTool {
    pub name: String,
    pub description: String,
    pub origin: ToolOrigin,
    /// The MCP server that lists it (`Mcp` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_id: Option<String>,
}

impl CatalogTool {
    fn of(definition: crate::llm::wire::ToolDefinition, origin: ToolOrigin) -> Self {
        Self {
            name: definition.function.name,
            description: definition.function.description.unwrap_or_default(),
            origin,
            server_id: None,
        }
    }
}

/// Every tool an agent may name here, research tools first, then the chat's, the platform's
/// and the MCP servers' (in their configuration order).
pub fn tool_catalog(launcher: &Launcher) -> Vec<CatalogTool> {
    let research = super::research_tools(launcher);
    let mut catalog: Vec<CatalogTool> = research
        .iter()
        .map(|tool| CatalogTool::of(tool.definition(), ToolOrigin::Research))
        .collect();
    catalog.extend(
        chat::chat_tool_definitions(launcher)
            .into_iter()
            .map(|definition| CatalogTool::of(definition, ToolOrigin::Chat)),
    );
    if let Some(fetch) = research.iter().find(|t| t.name() == "fetch_url") {
        let alias = tools::alias::Alias::browse_url(fetch.clone());
        catalog.push(CatalogTool::of(alias.definition(), ToolOrigin::Platform));
    }
    catalog.push(CatalogTool::of(
        tools::search_knowledge::SearchKnowledgeTool::describe(&launcher.config),
        ToolOrigin::Platform,
    ));
    if !launcher.sql.is_empty() {
        let max = launcher.config.agent.max_tool_result_chars;
        let description = match launcher.sql.tool(None, max) {
            Some(tool) => tool.definition().function.description.unwrap_or_default(),
            None => "Runs a read-only SQL query on the database the agent's sql_database names."
                .to_string(),
        };
        catalog.push(CatalogTool {
            name: tools::sql::EXECUTE_SQL.to_string(),
            description,
            origin: ToolOrigin::Platform,
            server_id: None,
        });
    }
    catalog.extend(
        super::email::send_email_definition(launcher)
            .map(|definition| CatalogTool::of(definition, ToolOrigin::Platform)),
    );
    let servers = launcher.mcp.health();
    for tool in launcher.mcp.tools() {
        let mut entry = CatalogTool::of(tool.definition(), ToolOrigin::Mcp);
        entry.server_id = servers
            .iter()
            .find(|server| server.tool_names.iter().any(|n| n == tool.name()))
            .map(|server| server.id.clone());
        catalog.push(entry);
    }
    catalog
}
