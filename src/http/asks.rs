//! ask_user replies: `POST /chat/api/{chatId}/ask/{correlationId}` answers a pending question
//! (the response is the continuation's SSE stream) and `GET /chat/api/{chatId}/asks` lists the
//! questions still waiting, so a reloaded client can show them again.

use actix_web::{HttpResponse, web};
use serde::Deserialize;
use serde_json::{Value, json};

use super::runs::stream_run;
use super::sse::Dialect;
use crate::agent::launch::launch_resume;
use crate::auth::Principal;
use crate::chat::asks;
use crate::error::AppResult;
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route(
        "/chat/api/{chat_id}/ask/{correlation_id}",
        web::post().to(answer),
    )
    .route("/chat/api/{chat_id}/asks", web::get().to(list));
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer {
    answer: Value,
}

async fn answer(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
    body: web::Json<Answer>,
) -> AppResult<HttpResponse> {
    let (chat_id, correlation_id) = path.into_inner();
    let chat = state.chats.get_owned(&principal.user_id, &chat_id).await?;
    let log = launch_resume(
        &state,
        &principal,
        Some(&chat.id),
        &correlation_id,
        body.into_inner().answer,
    )
    .await?;
    Ok(stream_run(log, 0, Dialect::ChatApi))
}

async fn list(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> AppResult<HttpResponse> {
    let chat = state.chats.get_owned(&principal.user_id, &path).await?;
    let pending = asks::list_pending(&state.db, &chat.id).await?;
    let data: Vec<Value> = pending
        .into_iter()
        .map(|ask| {
            let mut question = ask.question;
            question["correlation_id"] = json!(ask.correlation_id);
            question["run_id"] = json!(ask.run_id);
            question["created_at"] = json!(ask.created_at);
            question["expires_at"] = json!(ask.expires_at);
            question
        })
        .collect();
    Ok(HttpResponse::Ok().json(json!({"data": data})))
}
