//! `GET /api/tools`: the tools an agent's `enabled_tools` may name on this server (`tools`),
//! each with its description, origin (research, chat, platform, an MCP server's), what it
//! requires (`needs`), whether it works here (`available`, `reason`) and whether a chat may
//! turn it on (`opt_in`); and the tools this server cannot offer, with why (`unavailable`), for
//! the agents page and a chat's settings. Any signed-in user may read it: it names tools and
//! what they need, never a server's configuration values.

use actix_web::{HttpResponse, web};
use serde_json::json;

use crate::auth::Principal;
use crate::state::AppState;
use crate::supervisor::launch::{tool_catalog, unavailable_tools};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/api/tools", web::get().to(list));
}

async fn list(_principal: Principal, state: web::Data<AppState>) -> HttpResponse {
    let tools = tool_catalog(&state.launcher);
    let unavailable = unavailable_tools(&state.launcher, &tools);
    HttpResponse::Ok().json(json!({"tools": tools, "unavailable": unavailable}))
}
