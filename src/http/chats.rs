//! `/chat/api/chats`: create, list, get, rename and delete the caller's chats.

use actix_web::{HttpResponse, web};
use entities::chats;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::auth::Principal;
use crate::chat::persistence::parse_title;
use crate::error::AppResult;
use crate::state::AppState;

/// Most chats one list call returns.
const MAX_LIST_LIMIT: u64 = 200;
const DEFAULT_LIST_LIMIT: u64 = 50;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/chat/api/chats")
            .route("", web::post().to(create))
            .route("", web::get().to(list))
            .route("/{chat_id}", web::get().to(get))
            .route("/{chat_id}", web::patch().to(rename))
            .route("/{chat_id}", web::delete().to(delete)),
    );
}

#[derive(Serialize)]
struct ChatView {
    id: String,
    title: String,
    created_at: chrono::DateTime<chrono::Utc>,
    updated_at: chrono::DateTime<chrono::Utc>,
}

impl From<chats::Model> for ChatView {
    fn from(chat: chats::Model) -> Self {
        Self {
            id: chat.id,
            title: chat.title,
            created_at: chat.created_at,
            updated_at: chat.updated_at,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateChat {
    title: Option<String>,
}

async fn create(
    principal: Principal,
    state: web::Data<AppState>,
    body: web::Json<CreateChat>,
) -> AppResult<HttpResponse> {
    let title = match body.into_inner().title {
        Some(raw) => Some(parse_title(&raw)?),
        None => None,
    };
    let chat = state.chats.create(&principal.user_id, title, false).await?;
    Ok(HttpResponse::Created().json(ChatView::from(chat)))
}

#[derive(Deserialize)]
struct ListQuery {
    limit: Option<u64>,
}

async fn list(
    principal: Principal,
    state: web::Data<AppState>,
    query: web::Query<ListQuery>,
) -> AppResult<HttpResponse> {
    let limit = query
        .limit
        .unwrap_or(DEFAULT_LIST_LIMIT)
        .clamp(1, MAX_LIST_LIMIT);
    let chats = state.chats.list(&principal.user_id, limit).await?;
    let data: Vec<ChatView> = chats.into_iter().map(ChatView::from).collect();
    Ok(HttpResponse::Ok().json(json!({"data": data})))
}

async fn get(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> AppResult<HttpResponse> {
    let chat = state.chats.get_owned(&principal.user_id, &path).await?;
    // Runs still streaming in this chat, so a reloaded page (or another device) re-attaches.
    let running: Vec<serde_json::Value> = state
        .runs
        .live_in_chat(&chat.id)
        .iter()
        .filter(|log| log.owner_id == principal.user_id)
        .map(|log| json!({"id": log.run_id, "user_message_id": log.user_message_id()}))
        .collect();
    let mut view = json!(ChatView::from(chat));
    view["running_runs"] = json!(running);
    Ok(HttpResponse::Ok().json(view))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RenameChat {
    title: String,
}

async fn rename(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Json<RenameChat>,
) -> AppResult<HttpResponse> {
    let title = parse_title(&body.title)?;
    let chat = state.chats.rename(&principal.user_id, &path, title).await?;
    Ok(HttpResponse::Ok().json(ChatView::from(chat)))
}

async fn delete(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> AppResult<HttpResponse> {
    state.chats.delete(&principal.user_id, &path).await?;
    state.sessions.deactivate(&path);
    state.workspace.forget(&path).await;
    Ok(HttpResponse::Ok().json(json!({"deleted": true, "id": path.into_inner()})))
}
