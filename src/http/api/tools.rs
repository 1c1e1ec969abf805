//! `GET /api/tools`: the tools an agent's `enabled_tools` may name on this server, each with
//! its description and origin (research, chat, platform, an MCP server's), for the agents
//! page. Any signed-in user may read it: it names tools, never a server's configuration.

use actix_web::{HttpResponse, web};
use serde_json::json;

use crate::auth::Principal;
use crate::state::AppState;
use crate::supervisor::launch::tool_catalog;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/api/tools", web::get().to(list));
}

async fn list(_principal: Principal, state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok().json(json!({"tools": tool_catalog(&state.launcher)}))
}
