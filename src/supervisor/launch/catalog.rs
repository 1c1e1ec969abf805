//! The tool catalog (`GET /api/tools`, the agents page's tool choice): every tool an agent's
//! `enabled_tools` may name on this server, with its description and where it comes from (the
//! table of tools' `Origin`) — the tools a chat of an agent naming them all would have, each
//! described by the definition a model is sent.

use serde::Serialize;

use super::Launcher;
use crate::tools;
use crate::tools::registry::{self, Origin};

/// One tool an agent may name.
#[derive(Debug, Clone, Serialize)]
pub struct CatalogTool {
    pub name: String,
    pub description: String,
    pub origin: Origin,
    /// The MCP server that lists it (`Mcp` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_id: Option<String>,
}

/// Every tool an agent may name here, in the table's order, then the MCP servers' (in their
/// configuration order).
pub fn tool_catalog(launcher: &Launcher) -> Vec<CatalogTool> {
    let servers = launcher.mcp.health();
    let mut catalog: Vec<CatalogTool> = super::tools::every_nameable(launcher)
        .iter()
        .map(|tool| {
            let definition = tool.definition();
            let family = registry::family_of(&definition.function.name);
            CatalogTool {
                server_id: family
                    .is_none()
                    .then(|| {
                        servers
                            .iter()
                            .find(|server| server.tool_names.iter().any(|n| n == tool.name()))
                            .map(|server| server.id.clone())
                    })
                    .flatten(),
                origin: family.map_or(Origin::Mcp, |family| family.origin),
                name: definition.function.name,
                description: definition.function.description.unwrap_or_default(),
            }
        })
        .collect();
    // With several databases declared, an agent names one: execute_sql is nameable all the
    // same.
    if !launcher.sql.is_empty() && !catalog.iter().any(|t| t.name == tools::sql::EXECUTE_SQL) {
        catalog.push(CatalogTool {
            name: tools::sql::EXECUTE_SQL.to_string(),
            description: "Runs a read-only SQL query on the database the agent's sql_database \
                          names."
                .to_string(),
            origin: Origin::Platform,
            server_id: None,
        });
    }
    catalog
}
