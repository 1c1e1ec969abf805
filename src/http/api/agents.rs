//! Agents REST under `/api/agents` (docs/spec.md#agents): the caller's agents — create, list, read,
//! update, delete (another user's agent is not found) — and the tools an agent's chats can call
//! (`GET /api/agents/{id}/chat/tools`). Tools and the model are checked before anything is
//! stored: an unknown model is a 400 `model_not_found` naming the ones there are.

use actix_web::{HttpResponse, web};
use entities::ids::AgentId;
use serde_json::json;

use crate::auth::Principal;
use crate::chat::agents::AgentFields;
use crate::error::AppResult;
use crate::http::page::{PageQuery, paged};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/api/agents", web::get().to(list))
        .route("/api/agents", web::post().to(create))
        .route("/api/agents/{agent_id}", web::get().to(get))
        .route("/api/agents/{agent_id}", web::patch().to(update))
        .route("/api/agents/{agent_id}", web::put().to(update))
        .route("/api/agents/{agent_id}", web::delete().to(delete))
        .route("/api/agents/{agent_id}/chat/tools", web::get().to(tools));
}

async fn list(
    principal: Principal,
    state: web::Data<AppState>,
    query: web::Query<PageQuery>,
) -> AppResult<HttpResponse> {
    let page = query.page();
    let (agents, total) = state
        .launcher
        .agents
        .list(principal.user_id(), page)
        .await?;
    let shown = agents.len();
    Ok(HttpResponse::Ok().json(paged(json!({"agents": agents}), page, shown, total)))
}

/// Refuses `enabled_tools` naming tools this server does not have, before anything is stored.
fn check_tools(state: &AppState, fields: &AgentFields) -> AppResult<()> {
    match &fields.enabled_tools {
        Some(Some(named)) => {
            fields.check()?;
            crate::supervisor::launch::check_enabled_tools(&state.launcher, named)
        }
        _ => Ok(()),
    }
}

/// Refuses a `model` no configured server serves (`null`, the server's default, is always fine).
async fn check_model(
    state: &AppState,
    principal: &Principal,
    fields: &AgentFields,
) -> AppResult<()> {
    match &fields.model {
        Some(Some(model)) => {
            crate::http::chat_api::model_picker::check_model(state, principal, model).await
        }
        _ => Ok(()),
    }
}

async fn create(
    principal: Principal,
    state: web::Data<AppState>,
    body: web::Json<AgentFields>,
) -> AppResult<HttpResponse> {
    check_tools(&state, &body)?;
    check_model(&state, &principal, &body).await?;
    crate::supervisor::launch::check_sql_database(&state.launcher, None, &body)?;
    let agent = state
        .launcher
        .agents
        .create(principal.user_id(), body.into_inner())
        .await?;
    Ok(HttpResponse::Created().json(agent))
}

async fn get(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<AgentId>,
) -> AppResult<HttpResponse> {
    let agent = state
        .launcher
        .agents
        .get_owned(principal.user_id(), &path)
        .await?;
    Ok(HttpResponse::Ok().json(agent))
}

async fn update(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<AgentId>,
    body: web::Json<AgentFields>,
) -> AppResult<HttpResponse> {
    check_tools(&state, &body)?;
    check_model(&state, &principal, &body).await?;
    if body.enabled_tools.is_some() || body.sql_database.is_some() {
        let stored = state
            .launcher
            .agents
            .get_owned(principal.user_id(), &path)
            .await?;
        crate::supervisor::launch::check_sql_database(&state.launcher, Some(&stored), &body)?;
    }
    let agent = state
        .launcher
        .agents
        .update(principal.user_id(), &path, body.into_inner())
        .await?;
    Ok(HttpResponse::Ok().json(agent))
}

async fn delete(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<AgentId>,
) -> AppResult<HttpResponse> {
    state
        .launcher
        .agents
        .delete(principal.user_id(), &path)
        .await?;
    Ok(HttpResponse::Ok().json(json!({"deleted": true, "id": path.into_inner()})))
}

/// The agent's tool list: exactly what the agent's chats can call now (after `enabled_tools`;
/// none when the agent's tools are off).
async fn tools(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<AgentId>,
) -> AppResult<HttpResponse> {
    let agent = state
        .launcher
        .agents
        .get_owned(principal.user_id(), &path)
        .await?;
    let tools: Vec<_> = crate::supervisor::launch::agent_tool_definitions(
        &state.launcher,
        principal.user_id(),
        &agent,
    )
    .into_iter()
    .map(|definition| {
        json!({"name": definition.function.name,
                   "description": definition.function.description,
                   "parameters": definition.function.parameters})
    })
    .collect();
    // Tools Colloquy has that this server cannot offer now, and why (issue 34: the browser;
    // issue 46: the code interpreter).
    use crate::tools::registry::{Kind, entry};
    let launcher = &state.launcher;
    let unavailable: Vec<_> = [
        (Kind::Browser, launcher.browsers.unavailable()),
        (Kind::CodeInterpreter, launcher.containers.unavailable()),
    ]
    .into_iter()
    .filter_map(|(kind, why)| why.map(|why| (entry(kind), why)))
    .flat_map(|(family, why)| {
        family
            .names
            .iter()
            .map(move |name| json!({"name": name, "reason": why}))
    })
    .collect();
    Ok(HttpResponse::Ok().json(json!({"tools": tools, "unavailable": unavailable})))
}
