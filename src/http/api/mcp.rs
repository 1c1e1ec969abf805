//! `GET /api/mcp/servers`: the configured MCP servers' health (connection state, tool count and
//! names, last error, warning). Any signed-in user may read it: it shows what tools exist, never
//! a server's command, URL, environment or headers.

use actix_web::{HttpResponse, web};
use serde_json::json;

use crate::auth::Principal;
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/api/mcp/servers", web::get().to(list));
}

async fn list(_principal: Principal, state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok().json(json!({"servers": state.mcp().health()}))
}
