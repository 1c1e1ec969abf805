//! `GET /v1/models`: the upstream's model list, passed through for OpenAI clients.

use actix_web::{HttpResponse, web};

use crate::auth::Principal;
use crate::error::AppResult;
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/models", web::get().to(list));
}

async fn list(_: Principal, state: web::Data<AppState>) -> AppResult<HttpResponse> {
    let models = state.llm.models().await?;
    Ok(HttpResponse::Ok().json(models))
}
