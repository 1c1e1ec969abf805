//! Memories REST under `/chat/api/{chatId}/memories`: list, create, update (re-embedded) and
//! delete. Writes go through the chat's session, which owns the memories and their vectors.

use actix_web::{HttpResponse, web};
use entities::ids::{ChatId, MemoryId};
use serde::Deserialize;
use serde_json::json;

use crate::auth::Principal;
use crate::chat::memory::{
    DeleteMemory, Embedded, ListMemories, SaveMemory, Saved, UpdateMemory, distinct_lookalikes,
    duplicate_check,
};
use crate::error::{AppError, AppResult};
use crate::state::AppState;
use crate::tools::memory::{category_for, checked_content};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/chat/api/{chat_id}/memories", web::get().to(list))
        .route("/chat/api/{chat_id}/memories", web::post().to(create))
        .route(
            "/chat/api/{chat_id}/memories/{memory_id}",
            web::patch().to(update),
        )
        .route(
            "/chat/api/{chat_id}/memories/{memory_id}",
            web::put().to(update),
        )
        .route(
            "/chat/api/{chat_id}/memories/{memory_id}",
            web::delete().to(delete),
        );
}

async fn embed(state: &AppState, text: &str) -> AppResult<Embedded> {
    let vector = crate::retrieval::embed::embed_one(state.embedder().as_ref(), text)
        .await
        .map_err(|err| AppError::EmbedderFailed(err.to_string()))?;
    Ok(Embedded {
        vector,
        embedder: state.embedder().id().to_string(),
    })
}

async fn list(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ChatId>,
) -> AppResult<HttpResponse> {
    let chat = state.chats().get_owned(principal.user_id(), &path).await?;
    let memories = state
        .sessions()
        .session(&chat.id)
        .await?
        .send(ListMemories)
        .await?;
    let total = memories.len();
    Ok(HttpResponse::Ok().json(json!({"memories": memories, "total": total})))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewMemory {
    content: String,
    category: Option<String>,
}

async fn create(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ChatId>,
    body: web::Json<NewMemory>,
) -> AppResult<HttpResponse> {
    let chat = state.chats().get_owned(principal.user_id(), &path).await?;
    let limits = &state.config().memory;
    let content = checked_content(&body.content, limits.max_content_chars)
        .map_err(AppError::InvalidRequest)?;
    let category =
        category_for(&content, body.category.as_deref()).map_err(AppError::InvalidRequest)?;
    let embedded = embed(&state, &content).await?;
    let session = state.sessions().session(&chat.id).await?;
    let embedder = state.embedder();
    let check = duplicate_check(limits, embedder.as_ref());
    let distinct =
        distinct_lookalikes(&session, embedder.as_ref(), &content, &embedded, check).await;
    let saved = session
        .send(SaveMemory {
            content,
            category,
            embedded,
            duplicate_threshold: check.threshold,
            distinct,
            max_per_chat: limits.max_per_chat,
        })
        .await??;
    Ok(match saved {
        Saved::Saved(memory) => HttpResponse::Created().json(json!({
            "status": "saved", "memory": memory,
        })),
        Saved::Duplicate(memory, similarity) => HttpResponse::Ok().json(json!({
            "status": "duplicate", "memory": memory, "similarity": similarity,
        })),
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MemoryChange {
    content: Option<String>,
    category: Option<String>,
}

async fn update(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(ChatId, MemoryId)>,
    body: web::Json<MemoryChange>,
) -> AppResult<HttpResponse> {
    let (chat_id, memory_id) = path.into_inner();
    let chat = state
        .chats()
        .get_owned(principal.user_id(), &chat_id)
        .await?;
    let body = body.into_inner();
    if body.content.is_none() && body.category.is_none() {
        return Err(AppError::invalid("give content, category or both"));
    }
    let content = body
        .content
        .as_deref()
        .map(|c| checked_content(c, state.config().memory.max_content_chars))
        .transpose()
        .map_err(AppError::InvalidRequest)?;
    let category = body
        .category
        .as_deref()
        .map(|c| category_for("", Some(c)))
        .transpose()
        .map_err(AppError::InvalidRequest)?;
    let embedded = match &content {
        Some(content) => Some(embed(&state, content).await?),
        None => None,
    };
    let memory = state
        .sessions()
        .session(&chat.id)
        .await?
        .send(UpdateMemory {
            id: memory_id,
            content,
            category,
            embedded,
        })
        .await??;
    Ok(HttpResponse::Ok().json(json!({"memory": memory})))
}

async fn delete(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(ChatId, MemoryId)>,
) -> AppResult<HttpResponse> {
    let (chat_id, memory_id) = path.into_inner();
    let chat = state
        .chats()
        .get_owned(principal.user_id(), &chat_id)
        .await?;
    let deleted = state
        .sessions()
        .session(&chat.id)
        .await?
        .send(DeleteMemory {
            id: memory_id.clone(),
        })
        .await??;
    if !deleted {
        return Err(AppError::NotFound("memory"));
    }
    Ok(HttpResponse::Ok().json(json!({"deleted": true, "id": memory_id})))
}
