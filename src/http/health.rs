//! `GET /health` (the process answers) and `GET /health/ready` (the database answers too, and
//! each model server's state: a server down makes the answer `degraded`, still 200, since the
//! others keep serving). Both are unauthenticated by design: load balancers probe them, and
//! they reveal nothing beyond provider ids (never a server's address or error).

use actix_web::{HttpResponse, web};
use serde_json::json;

use crate::error::{AppError, AppResult};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/health", web::get().to(live))
        .route("/health/ready", web::get().to(ready));
}

async fn live() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok"}))
}

async fn ready(state: web::Data<AppState>) -> AppResult<HttpResponse> {
    crate::db::ping(state.db())
        .await
        .map_err(|err| AppError::Unavailable(format!("database unreachable: {err}")))?;
    let providers = state.llm().statuses().await;
    let degraded = providers.iter().any(|p| p.status == "unreachable");
    let providers: serde_json::Map<String, serde_json::Value> = providers
        .into_iter()
        .map(|p| (p.id, json!(p.status)))
        .collect();
    Ok(HttpResponse::Ok().json(json!({
        "status": if degraded { "degraded" } else { "ready" },
        "database": "ok",
        "providers": providers,
    })))
}
