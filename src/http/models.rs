//! `GET /v1/models`: the upstream's model list, passed through for OpenAI clients.

use actix_web::{HttpResponse, web};

use crate::auth::Principal;
use crate::error::{AppError, AppResult};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/models", web::get().to(list));
}

async fn list(principal: Principal, state: web::Data<AppState>) -> AppResult<HttpResponse> {
    let models = state
        .llm
        .models()
        .await
        .map_err(|err| AppError::upstream(err, principal.is_admin))?;
    Ok(HttpResponse::Ok().json(models))
}
