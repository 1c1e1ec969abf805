//! The model picker's endpoints: `GET /chat/api/models` (every configured server's models,
//! each marked available or not, and the caller's default) and `PUT /chat/api/models/default`
//! (the model the caller's new chats start with). A chat's own model is set through
//! `PATCH /chat/api/chats/{id}`; both are checked here (`check_model`).

use actix_web::{HttpResponse, web};
use serde::Deserialize;
use serde_json::json;

use crate::auth::Principal;
use crate::error::{AppError, AppResult};
use crate::state::AppState;

/// Longest model name accepted: real ones (Hugging Face paths with a provider prefix) are far
/// shorter.
pub const MAX_MODEL_CHARS: usize = 200;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/chat/api/models", web::get().to(list))
        .route("/chat/api/models/default", web::put().to(set_default));
}

/// Refuses an empty, overlong or unserved model name (400, naming the ones there are).
pub async fn check_model(state: &AppState, principal: &Principal, model: &str) -> AppResult<()> {
    if model.trim().is_empty() || model.chars().count() > MAX_MODEL_CHARS {
        return Err(AppError::invalid(format!(
            "model must be 1 to {MAX_MODEL_CHARS} characters"
        )));
    }
    state
        .llm()
        .check_model(model)
        .await
        .map_err(|err| AppError::upstream(err, principal.is_admin()))
}

async fn list(principal: Principal, state: web::Data<AppState>) -> AppResult<HttpResponse> {
    let models = state.llm().catalogue().await;
    let server_default = state.llm().default_model().to_string();
    let default = state
        .accounts
        .default_model(principal.user_id())
        .await?
        .unwrap_or_else(|| server_default.clone());
    Ok(HttpResponse::Ok().json(json!({
        "data": models,
        "default": default,
        "server_default": server_default,
    })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetDefault {
    /// `None`: the server's default again.
    model: Option<String>,
}

async fn set_default(
    principal: Principal,
    state: web::Data<AppState>,
    body: web::Json<SetDefault>,
) -> AppResult<HttpResponse> {
    let model = body.into_inner().model;
    if let Some(model) = &model {
        check_model(&state, &principal, model).await?;
    }
    if !state
        .accounts
        .set_default_model(principal.user_id(), model.clone())
        .await?
    {
        return Err(AppError::NotFound("user"));
    }
    Ok(HttpResponse::Ok().json(json!({
        "default": model.unwrap_or_else(|| state.llm().default_model().to_string()),
    })))
}
