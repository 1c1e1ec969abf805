//! `GET /metrics`: the server's metrics in Prometheus' text format, for admins (a scraper uses
//! an admin's API key as its bearer token).

use actix_web::{HttpResponse, web};

use crate::auth::Principal;
use crate::error::{AppError, AppResult};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/metrics", web::get().to(metrics));
}

async fn metrics(principal: Principal, state: web::Data<AppState>) -> AppResult<HttpResponse> {
    if !principal.is_admin() {
        return Err(AppError::Forbidden(
            "the metrics are the server's: only an admin may read them".into(),
        ));
    }
    Ok(HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(state.launcher.metrics.render(
            state.sessions().active_count(),
            state.sessions().cluster().map(|c| c.stats()),
        )))
}
