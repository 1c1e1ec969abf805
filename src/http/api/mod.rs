//! `/api/...`: what a user keeps beside their chats — agents, MCP servers, the tool listing,
//! knowledge bases, workflows and schedules.

pub(in crate::http) mod agents;
pub(in crate::http) mod knowledge_bases;
pub(in crate::http) mod mcp;
pub(in crate::http) mod schedules;
pub(in crate::http) mod tools;
pub(in crate::http) mod workflow_tools;
pub(in crate::http) mod workflows;

use actix_web::web;

/// Mounts `/api`.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.configure(agents::configure)
        .configure(mcp::configure)
        .configure(tools::configure)
        .configure(knowledge_bases::configure)
        .configure(workflow_tools::configure)
        .configure(workflows::configure)
        .configure(schedules::configure);
}
