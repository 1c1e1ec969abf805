//! `GET /health` (the process answers) and `GET /health/ready` (the database answers too).
//! Both are unauthenticated by design: load balancers probe them, and they reveal nothing.

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
    Ok(HttpResponse::Ok().json(json!({"status": "ready", "database": "ok"})))
}
