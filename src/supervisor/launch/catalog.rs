//! The tool catalog (`GET /api/tools`, the agents page's tool choice and a chat's opt-in
//! tools): every tool an agent's `enabled_tools` may name on this server, with its description
//! and where it comes from (the table of tools' `Origin`) — the tools a chat of an agent naming
//! them all would have, each described by the definition a model is sent — with what it
//! requires and whether a chat may turn it on; and the tools Colloquy has that this server
//! cannot offer, each with why (`unavailable_tools`).

use serde::Serialize;

use super::Launcher;
use crate::config::WebSearchProvider;
use crate::tools;
use crate::tools::registry::{self, FAMILIES, Family, Kind, Origin};

/// One tool an agent may name.
#[derive(Debug, Clone, Serialize)]
pub struct CatalogTool {
    pub name: String,
    pub description: String,
    /// What it does in a few words (the table's `summary`; an MCP tool's description's first
    /// sentence).
    pub summary: String,
    pub origin: Origin,
    /// The MCP server that lists it (`Mcp` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_id: Option<String>,
    /// What a server must have for it, in a person's words (the table's `requires`).
    pub needs: Option<&'static str>,
    /// Whether it works on this server now; `reason` says why not.
    pub available: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Whether a chat's settings may turn it on (a request's `x_tools` naming it).
    pub opt_in: bool,
}

impl CatalogTool {
    fn built_in(family: &Family, name: &str, description: String) -> Self {
        Self {
            name: name.to_string(),
            description,
            summary: family.summary.to_string(),
            origin: family.origin,
            server_id: None,
            needs: family.requires,
            available: true,
            reason: None,
            opt_in: family.opt_in_name() == Some(name),
        }
    }
}

/// Every tool an agent may name here, in the table's order, then the MCP servers' (in their
/// configuration order).
pub fn tool_catalog(launcher: &Launcher) -> Vec<CatalogTool> {
    let servers = launcher.mcp.health();
    let mut catalog: Vec<CatalogTool> = super::tools::every_nameable(launcher)
        .iter()
        .map(|tool| {
            let definition = tool.definition();
            let name = definition.function.name;
            let description = definition.function.description.unwrap_or_default();
            match registry::family_of(&name) {
                Some(family) => CatalogTool::built_in(family, &name, description),
                None => CatalogTool {
                    server_id: servers
                        .iter()
                        .find(|server| server.tool_names.iter().any(|n| n == tool.name()))
                        .map(|server| server.id.clone()),
                    summary: first_sentence(&description),
                    name,
                    description,
                    origin: Origin::Mcp,
                    needs: None,
                    available: true,
                    reason: None,
                    opt_in: false,
                },
            }
        })
        .collect();
    // With several databases declared, an agent names one: execute_sql is nameable all the
    // same.
    if !launcher.sql.is_empty() && !catalog.iter().any(|t| t.name == tools::sql::EXECUTE_SQL) {
        catalog.push(CatalogTool::built_in(
            registry::entry(Kind::ExecuteSql),
            tools::sql::EXECUTE_SQL,
            "Runs a read-only SQL query on the database the agent's sql_database names.".into(),
        ));
    }
    // web_search with no engine is offered (each call answers why), but does not work.
    if launcher.config.tools.search_provider() == WebSearchProvider::Disabled
        && let Some(search) = catalog.iter_mut().find(|t| t.name == "web_search")
    {
        search.available = false;
        search.reason =
            Some("no search engine is configured (tools.web_search_provider = \"none\")".into());
    }
    catalog
}

/// The built-in tools this server does not offer, each with why: the browser without Chromium,
/// the code interpreter without its sandbox (their own words), and a tool whose configuration
/// is missing (the table's `needs`). None of them may be named by an agent here.
pub fn unavailable_tools(launcher: &Launcher, catalog: &[CatalogTool]) -> Vec<CatalogTool> {
    FAMILIES
        .iter()
        .filter_map(|family| family.needs.map(|needs| (family, needs)))
        .flat_map(|(family, needs)| family.names.iter().map(move |name| (family, needs, *name)))
        .filter(|(_, _, name)| !catalog.iter().any(|t| t.name == *name))
        .map(|(family, needs, name)| {
            let reason = match family.kind {
                Kind::Browser => launcher.browsers.unavailable().map(str::to_string),
                Kind::CodeInterpreter => launcher.containers.unavailable().map(str::to_string),
                _ => None,
            }
            .unwrap_or_else(|| format!("not configured on this server (it needs {needs})"));
            CatalogTool {
                available: false,
                reason: Some(reason),
                ..CatalogTool::built_in(family, name, family.summary.to_string())
            }
        })
        .collect()
}

/// A description's first sentence, for a tool the table does not describe.
fn first_sentence(text: &str) -> String {
    let text = text.trim();
    match text.find(". ") {
        Some(end) => text[..=end].to_string(),
        None => text.to_string(),
    }
}
