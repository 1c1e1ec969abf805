//! `GET /health` (the process answers) and `GET /health/ready` (the database answers too, and
//! each model server's state: a server down makes the answer `degraded`, still 200, since the
//! others keep serving). Both are unauthenticated by design: load balancers probe them, and
//! they reveal nothing beyond provider ids (never a server's address or error). With several
//! processes on one PostgreSQL, `cluster` gives this process's id, the leases it holds, the
//! requests it forwarded and the chats it took over.

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
    let mut body = json!({
        "status": if degraded { "degraded" } else { "ready" },
        "database": "ok",
        "providers": providers,
    });
    // With several processes: this one's id and its share (no addresses: this is public).
    if let Some(cluster) = state.sessions().cluster() {
        let stats = cluster.stats();
        body["cluster"] = json!({
            "process": cluster.process_id(),
            "chat_leases": stats.chat_leases,
            "job_leases": stats.job_leases,
            "forwarded_requests": stats.forwarded,
            "failovers": stats.failovers,
        });
    }
    Ok(HttpResponse::Ok().json(body))
}
