//! ask_user replies: `POST /chat/api/{chatId}/ask/{correlationId}` answers a pending question
//! (the response is the continuation's SSE stream) and `GET /chat/api/{chatId}/asks` lists the
//! questions still waiting, so a reloaded client can show them again.

use actix_web::{HttpResponse, web};
use entities::ids::{AskCorrelationId, ChatId};
use serde::Deserialize;
use serde_json::{Value, json};

use super::runs::stream_run;
use crate::auth::Principal;
use crate::chat::asks;
use crate::chat::asks::AskStatus;
use crate::error::{AppError, AppResult};
use crate::http::sse::Dialect;
use crate::state::AppState;
use crate::supervisor::resume::launch_resume;

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
    path: web::Path<(ChatId, AskCorrelationId)>,
    body: web::Json<Answer>,
) -> AppResult<HttpResponse> {
    let (chat_id, correlation_id) = path.into_inner();
    let chat = state
        .chats()
        .get_owned(principal.user_id(), &chat_id)
        .await?;
    let log = launch_resume(
        &state.launcher,
        &principal,
        Some(&chat.id),
        &correlation_id,
        body.into_inner().answer,
        Vec::new(),
    )
    .await?;
    Ok(stream_run(log, 0, Dialect::ChatApi))
}

#[derive(Deserialize)]
struct ListQuery {
    /// `pending` (the default): questions still waiting; `all`: the chat's latest questions
    /// with their state and answer, for showing each outcome again after a reload.
    status: Option<String>,
}

async fn list(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ChatId>,
    query: web::Query<ListQuery>,
) -> AppResult<HttpResponse> {
    let chat = state.chats().get_owned(principal.user_id(), &path).await?;
    let all = match query.status.as_deref() {
        None | Some("pending") => false,
        Some("all") => true,
        Some(other) => {
            return Err(AppError::invalid(format!(
                "status must be \"pending\" or \"all\", not {other:?}"
            )));
        }
    };
    let asks = if all {
        asks::list_recent(state.db(), &chat.id).await?
    } else {
        asks::list_pending(state.db(), &chat.id).await?
    };
    let now = chrono::Utc::now();
    let data: Vec<Value> = asks
        .into_iter()
        .map(|ask| {
            let mut question = ask.question;
            question["correlation_id"] = json!(ask.correlation_id);
            question["run_id"] = json!(ask.run_id);
            question["created_at"] = json!(ask.created_at);
            question["expires_at"] = json!(ask.expires_at);
            if all {
                // An unanswered question past its expiry is expired, swept or not.
                let status = if ask.status == AskStatus::Pending && ask.expires_at <= now {
                    AskStatus::Expired
                } else {
                    ask.status
                };
                question["status"] = json!(status);
                question["answer"] = json!(ask.answer);
                question["answered_at"] = json!(ask.answered_at);
            }
            question
        })
        .collect();
    Ok(HttpResponse::Ok().json(json!({"data": data})))
}
