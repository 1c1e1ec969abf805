//! OpenAI's Vector Stores API on the document workspace: a vector store is a chat's documents
//! (id `vs_<chat id>`), so every chat has one (its documents list shows the id), and
//! `POST /v1/vector_stores` makes a chat kept out of the chat list (`chats.is_vector_store`) to
//! hold one. Adding a file makes it one of the store's documents, with the same extraction,
//! chunking, hybrid index, limits and status lifecycle as an upload; `search` ranks its passages as
//! `file_search` does. A store made here is a knowledge base (`knowledge_bases`: the same chat,
//! `kb_<chat id>`), within the same per-user limit.

use actix_web::{HttpResponse, web};
use entities::documents::DocumentStatus;
use entities::ids::{ChatId, FileId};
use sea_orm::Order;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::shared::{ListQuery, chat_of, check_metadata, list_object, store_id, unknown_store};
use crate::auth::Principal;
use crate::chat::persistence::ChatStoreError;
use crate::error::{AppError, AppResult};
use crate::state::AppState;

/// Most files one request may add.
const MAX_FILE_IDS: usize = 50;
/// Most results a search may ask for (OpenAI's limit).
const MAX_SEARCH_RESULTS: usize = 50;
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/vector_stores", web::post().to(create))
        .route("/v1/vector_stores", web::get().to(list))
        .route("/v1/vector_stores/{id}", web::get().to(retrieve))
        .route("/v1/vector_stores/{id}", web::post().to(update))
        .route("/v1/vector_stores/{id}", web::delete().to(remove))
        .route("/v1/vector_stores/{id}/files", web::post().to(add_file))
        .route("/v1/vector_stores/{id}/files", web::get().to(list_files))
        .route(
            "/v1/vector_stores/{id}/files/{file_id}",
            web::get().to(get_file),
        )
        .route(
            "/v1/vector_stores/{id}/files/{file_id}",
            web::delete().to(remove_file),
        )
        .route("/v1/vector_stores/{id}/search", web::post().to(search));
}

/// The caller's store `id` (a chat), or the 404 that says how to make one.
pub async fn owned(
    state: &AppState,
    principal: &Principal,
    id: &str,
) -> AppResult<entities::chats::Model> {
    let chat_id = chat_of(id).ok_or_else(|| unknown_store(id))?;
    state
        .chats()
        .get_owned(principal.user_id(), &chat_id)
        .await
        .map_err(|err| match err {
            ChatStoreError::NotFound => unknown_store(id),
            other => other.into(),
        })
}

fn file_status(status: DocumentStatus) -> &'static str {
    match status {
        DocumentStatus::Uploading | DocumentStatus::Processing => "in_progress",
        DocumentStatus::Processed => "completed",
        DocumentStatus::Error => "failed",
    }
}

/// A store's document as a `vector_store.file` (its id: the file it came from, else the
/// document's artifact id).
fn file_object(state: &AppState, doc: &entities::documents::Model) -> Value {
    let id = doc
        .file_id
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_else(|| doc.artifact_id.to_string());
    let limits = &state.config().documents;
    json!({
        "id": id,
        "object": "vector_store.file",
        "usage_bytes": doc.size_bytes,
        "created_at": doc.uploaded_at.timestamp(),
        "vector_store_id": store_id(&doc.chat_id),
        "status": file_status(doc.status),
        "last_error": doc.error.as_ref().map(|message| json!({"code": "invalid_file",
            "message": message})),
        "attributes": {},
        "chunking_strategy": {"type": "static", "static": {
            "max_chunk_size_tokens": limits.chunk_tokens,
            "chunk_overlap_tokens": limits.chunk_overlap_tokens}},
        "x_filename": doc.filename,
        "x_artifact_id": doc.artifact_id,
    })
}

async fn object(state: &AppState, chat: &entities::chats::Model) -> AppResult<Value> {
    let documents = state.workspace().list(&chat.id).await?;
    let count = |status: &str| {
        documents
            .iter()
            .filter(|d| file_status(d.status) == status)
            .count()
    };
    let in_progress = count("in_progress");
    Ok(json!({
        "id": store_id(&chat.id),
        "object": "vector_store",
        "created_at": chat.created_at.timestamp(),
        "name": chat.title,
        "usage_bytes": documents.iter().map(|d| d.size_bytes).sum::<i64>(),
        "file_counts": {"in_progress": in_progress, "completed": count("completed"),
            "failed": count("failed"), "cancelled": 0, "total": documents.len()},
        "status": if in_progress > 0 { "in_progress" } else { "completed" },
        "last_active_at": chat.updated_at.timestamp(),
        "metadata": chat.metadata.clone().unwrap_or(json!({})),
        "expires_after": null,
        "expires_at": null,
    }))
}

/// Adds the user's file to the store: refused when it is not theirs (404) or the store is full.
async fn add(
    state: &AppState,
    principal: &Principal,
    chat_id: &ChatId,
    file_id: &FileId,
) -> AppResult<entities::documents::Model> {
    let file = super::files::owned(state, principal, file_id).await?;
    state.sessions().own(chat_id).await?;
    if let Some(existing) = state.workspace().document_of_file(chat_id, file_id).await? {
        return Ok(existing);
    }
    state
        .workspace()
        .add_file(chat_id, &file)
        .await
        .map_err(AppError::from)
}

#[derive(Deserialize)]
struct CreateBody {
    name: Option<String>,
    #[serde(default)]
    file_ids: Vec<FileId>,
    metadata: Option<Map<String, Value>>,
}

async fn create(
    principal: Principal,
    state: web::Data<AppState>,
    body: web::Json<CreateBody>,
) -> AppResult<HttpResponse> {
    let body = body.into_inner();
    if let Some(metadata) = &body.metadata {
        check_metadata(metadata)?;
    }
    if body.file_ids.len() > MAX_FILE_IDS {
        return Err(AppError::invalid(format!(
            "at most {MAX_FILE_IDS} file_ids per request"
        )));
    }
    // Every file must be the caller's before anything is made.
    for file_id in &body.file_ids {
        super::files::owned(&state, &principal, file_id).await?;
    }
    let chat = state
        .knowledge_bases()
        .create(
            principal.user_id(),
            body.name.filter(|n| !n.trim().is_empty()),
            body.metadata.map(Value::Object),
        )
        .await?;
    for file_id in &body.file_ids {
        add(&state, &principal, &chat.id, file_id).await?;
    }
    Ok(HttpResponse::Ok().json(object(&state, &chat).await?))
}

/// One page of the caller's stores, newest first unless `order=asc`; `after` is the last id
/// of the previous page (one of theirs, else 400), and `has_more` says whether another follows.
async fn list(
    principal: Principal,
    state: web::Data<AppState>,
    query: web::Query<ListQuery>,
) -> AppResult<HttpResponse> {
    let limit = query.limit()?;
    let order = if query.newest_first()? {
        Order::Desc
    } else {
        Order::Asc
    };
    let after = match &query.after {
        Some(id) => Some(cursor(&state, &principal, id).await?),
        None => None,
    };
    let mut chats = state
        .chats()
        .vector_stores_after(principal.user_id(), order, after.as_ref(), limit as u64 + 1)
        .await?;
    let has_more = chats.len() > limit;
    chats.truncate(limit);
    let mut stores = Vec::with_capacity(chats.len());
    for chat in &chats {
        stores.push(object(&state, chat).await?);
    }
    Ok(HttpResponse::Ok().json(list_object(stores, has_more)))
}

/// The store a list's `after` names: one of the caller's, else 400.
async fn cursor(
    state: &AppState,
    principal: &Principal,
    id: &str,
) -> AppResult<entities::chats::Model> {
    let no_store = || AppError::invalid(format!("after names no vector store of yours: {id}"));
    let chat_id = chat_of(id).ok_or_else(no_store)?;
    match state.chats().get_owned(principal.user_id(), &chat_id).await {
        Ok(chat) if chat.is_vector_store => Ok(chat),
        Ok(_) | Err(ChatStoreError::NotFound) => Err(no_store()),
        Err(other) => Err(other.into()),
    }
}

async fn retrieve(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> AppResult<HttpResponse> {
    let chat = owned(&state, &principal, &path).await?;
    Ok(HttpResponse::Ok().json(object(&state, &chat).await?))
}

#[derive(Deserialize)]
struct UpdateBody {
    name: Option<String>,
    metadata: Option<Map<String, Value>>,
}

async fn update(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Json<UpdateBody>,
) -> AppResult<HttpResponse> {
    let body = body.into_inner();
    if let Some(metadata) = &body.metadata {
        check_metadata(metadata)?;
    }
    let chat = owned(&state, &principal, &path).await?;
    let chat = state
        .chats()
        .set_metadata(
            principal.user_id(),
            &chat.id,
            body.name,
            body.metadata.map(Value::Object),
        )
        .await?;
    Ok(HttpResponse::Ok().json(object(&state, &chat).await?))
}

/// Deletes a store made as one (with its documents); a chat's own store is emptied instead,
/// and the chat stays.
async fn remove(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> AppResult<HttpResponse> {
    let chat = owned(&state, &principal, &path).await?;
    if chat.is_vector_store {
        state
            .launcher
            .forget_chat(principal.user_id(), &chat.id)
            .await?;
    } else {
        for doc in state.workspace().list(&chat.id).await? {
            state.workspace().delete(&chat.id, &doc.artifact_id).await?;
        }
    }
    Ok(HttpResponse::Ok().json(json!({"id": store_id(&chat.id),
        "object": "vector_store.deleted", "deleted": true})))
}

#[derive(Deserialize)]
struct AddFileBody {
    file_id: FileId,
}

async fn add_file(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Json<AddFileBody>,
) -> AppResult<HttpResponse> {
    let chat = owned(&state, &principal, &path).await?;
    let doc = add(&state, &principal, &chat.id, &body.file_id).await?;
    Ok(HttpResponse::Ok().json(file_object(&state, &doc)))
}

async fn list_files(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<String>,
    query: web::Query<ListQuery>,
) -> AppResult<HttpResponse> {
    let chat = owned(&state, &principal, &path).await?;
    let mut documents = state.workspace().list(&chat.id).await?;
    // Oldest first (ids are time-ordered), as `page` expects.
    documents.sort_by(|a, b| a.id.cmp(&b.id));
    let files: Vec<Value> = documents
        .iter()
        .map(|doc| file_object(&state, doc))
        .collect();
    Ok(HttpResponse::Ok().json(query.page(files)?))
}

/// The store's document `file_id` names (a file id, or a document's artifact id).
async fn document(
    state: &AppState,
    chat_id: &ChatId,
    file_id: &str,
) -> AppResult<entities::documents::Model> {
    state
        .workspace()
        .list(chat_id)
        .await?
        .into_iter()
        .find(|doc| {
            doc.file_id.as_ref().is_some_and(|f| f == file_id) || doc.artifact_id == file_id
        })
        .ok_or(AppError::NotFound("vector store file"))
}

async fn get_file(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
) -> AppResult<HttpResponse> {
    let (id, file_id) = path.into_inner();
    let chat = owned(&state, &principal, &id).await?;
    let doc = document(&state, &chat.id, &file_id).await?;
    Ok(HttpResponse::Ok().json(file_object(&state, &doc)))
}

async fn remove_file(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
) -> AppResult<HttpResponse> {
    let (id, file_id) = path.into_inner();
    let chat = owned(&state, &principal, &id).await?;
    let doc = document(&state, &chat.id, &file_id).await?;
    state.workspace().delete(&chat.id, &doc.artifact_id).await?;
    Ok(
        HttpResponse::Ok().json(json!({"id": file_id, "object": "vector_store.file.deleted",
        "deleted": true})),
    )
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Query {
    One(String),
    Many(Vec<String>),
}

#[derive(Deserialize)]
struct SearchBody {
    query: Query,
    max_num_results: Option<usize>,
}

async fn search(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Json<SearchBody>,
) -> AppResult<HttpResponse> {
    let chat = owned(&state, &principal, &path).await?;
    let body = body.into_inner();
    let queries = match body.query {
        Query::One(query) => vec![query],
        Query::Many(queries) => queries,
    };
    let query = queries.join(" ");
    let max_chars = crate::tools::file_search::MAX_QUERY_CHARS;
    if query.trim().is_empty() || query.chars().count() > max_chars {
        return Err(AppError::invalid(format!(
            "query must be 1-{max_chars} characters"
        )));
    }
    let limit = body.max_num_results.unwrap_or(10);
    if !(1..=MAX_SEARCH_RESULTS).contains(&limit) {
        return Err(AppError::invalid(format!(
            "max_num_results must be 1-{MAX_SEARCH_RESULTS}"
        )));
    }
    let hits = state
        .workspace()
        .search(&chat.id, &query, limit)
        .await?
        .hits;
    let documents = state.workspace().list(&chat.id).await?;
    let data: Vec<Value> = hits
        .into_iter()
        .map(|hit| {
            let doc = documents.iter().find(|d| d.id == hit.document_id);
            let file_id = doc.map(|d| {
                d.file_id
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_else(|| d.artifact_id.to_string())
            });
            let mut result = json!({
                "file_id": file_id,
                "filename": hit.filename,
                "score": hit.relevance_score,
                "attributes": {},
                "content": [{"type": "text", "text": hit.text}],
            });
            if let Some(path) = hit.heading_path {
                result["x_heading_path"] = json!(path);
            }
            result
        })
        .collect();
    Ok(HttpResponse::Ok().json(json!({
        "object": "vector_store.search_results.page",
        "search_query": queries,
        "data": data,
        "has_more": false,
        "next_page": null,
    })))
}
