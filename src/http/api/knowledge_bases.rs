//! Knowledge bases REST under `/api/knowledge-bases`: the caller's named document collections
//! (create, list, read, rename, delete), their documents (list, add by a multipart upload, by
//! tus under `…/uploads`, or copied from one of the caller's chats, remove). A knowledge base
//! is a chat made as a vector store (`chat::knowledge_bases`), so its documents go through the
//! same upload, commit and processing paths as a chat's (`documents`, `uploads`), and
//! `/v1/vector_stores/vs_<id>` is the same object. Anyone else's is a 404, never a 403.

use actix_web::{HttpRequest, HttpResponse, web};
use entities::chats;
use entities::ids::{ArtifactId, ChatId, UploadId};
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::auth::Principal;
use crate::chat::knowledge_bases::{KnowledgeBase, KnowledgeBaseError, KnowledgeBaseId};
use crate::documents::DocumentView;
use crate::error::{AppError, AppResult};
use crate::http::page::{PageQuery, paged};
use crate::state::AppState;

/// Largest JSON body of a copy from a chat: two ids.
const MAX_COPY_BODY_BYTES: usize = 4 * 1024;

pub fn configure(cfg: &mut web::ServiceConfig) {
    const ONE: &str = "/api/knowledge-bases/{kb_id}";
    cfg.route("/api/knowledge-bases", web::get().to(list))
        .route("/api/knowledge-bases", web::post().to(create))
        .route(ONE, web::get().to(get))
        .route(ONE, web::patch().to(rename))
        .route(ONE, web::delete().to(remove))
        .route(
            "/api/knowledge-bases/{kb_id}/documents",
            web::get().to(documents),
        )
        .route(
            "/api/knowledge-bases/{kb_id}/documents",
            web::post().to(add_document),
        )
        .route(
            "/api/knowledge-bases/{kb_id}/documents/{artifact_id}",
            web::delete().to(remove_document),
        )
        .route(
            "/api/knowledge-bases/{kb_id}/uploads",
            web::method(actix_web::http::Method::OPTIONS).to(upload_options),
        )
        .route(
            "/api/knowledge-bases/{kb_id}/uploads",
            web::post().to(upload_create),
        )
        .route(
            "/api/knowledge-bases/{kb_id}/uploads/{upload_id}",
            web::head().to(upload_head),
        )
        .route(
            "/api/knowledge-bases/{kb_id}/uploads/{upload_id}",
            web::patch().to(upload_patch),
        )
        .route(
            "/api/knowledge-bases/{kb_id}/uploads/{upload_id}",
            web::delete().to(upload_terminate),
        );
}

/// The caller's knowledge base `raw` names (`kb_…` or `vs_…`); a 404 for anything else.
async fn owned(state: &AppState, principal: &Principal, raw: &str) -> AppResult<chats::Model> {
    let id = KnowledgeBaseId::parse(raw)
        .ok_or_else(|| KnowledgeBaseError::NotFound(format!("{raw:?}")))?;
    Ok(state
        .knowledge_bases()
        .get_owned(principal.user_id(), &id)
        .await?)
}

/// Where a knowledge base's resources live.
fn base_path(chat: &chats::Model) -> String {
    format!("/api/knowledge-bases/{}", KnowledgeBaseId::of(&chat.id))
}

async fn object(state: &AppState, chat: &chats::Model) -> AppResult<Value> {
    let mut object = serde_json::to_value(KnowledgeBase::from(chat)).map_err(AppError::internal)?;
    object["object"] = json!("knowledge_base");
    object["document_count"] = json!(state.workspace().count(&chat.id).await?);
    Ok(object)
}

fn limits(state: &AppState) -> Value {
    let limits = &state.config().documents;
    json!({
        "max_knowledge_bases": limits.max_knowledge_bases_per_user,
        "max_files": limits.max_files_per_knowledge_base,
        "max_file_bytes": limits.max_file_bytes,
        "max_text_chars": limits.max_text_chars,
    })
}

async fn list(
    principal: Principal,
    state: web::Data<AppState>,
    query: web::Query<PageQuery>,
) -> AppResult<HttpResponse> {
    let page = query.page();
    let (chats, total) = state
        .knowledge_bases()
        .list(principal.user_id(), page)
        .await?;
    let mut bases = Vec::with_capacity(chats.len());
    for chat in &chats {
        bases.push(object(&state, chat).await?);
    }
    let shown = bases.len();
    Ok(HttpResponse::Ok().json(paged(
        json!({"knowledge_bases": bases, "limits": limits(&state)}),
        page,
        shown,
        total,
    )))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NameBody {
    name: String,
}

async fn create(
    principal: Principal,
    state: web::Data<AppState>,
    body: web::Json<NameBody>,
) -> AppResult<HttpResponse> {
    let chat = state
        .knowledge_bases()
        .create(principal.user_id(), Some(body.into_inner().name), None)
        .await?;
    Ok(HttpResponse::Created().json(object(&state, &chat).await?))
}

async fn get(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> AppResult<HttpResponse> {
    let chat = owned(&state, &principal, &path).await?;
    Ok(HttpResponse::Ok().json(object(&state, &chat).await?))
}

async fn rename(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Json<NameBody>,
) -> AppResult<HttpResponse> {
    let chat = owned(&state, &principal, &path).await?;
    let chat = state
        .knowledge_bases()
        .rename(
            principal.user_id(),
            &KnowledgeBaseId::of(&chat.id),
            &body.name,
        )
        .await?;
    Ok(HttpResponse::Ok().json(object(&state, &chat).await?))
}

/// Deletes the knowledge base, its documents and index; agents that searched it no longer do.
async fn remove(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> AppResult<HttpResponse> {
    let chat = owned(&state, &principal, &path).await?;
    state
        .launcher
        .forget_chat(principal.user_id(), &chat.id)
        .await?;
    Ok(HttpResponse::Ok().json(json!({"deleted": true, "id": KnowledgeBaseId::of(&chat.id)})))
}

async fn documents(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> AppResult<HttpResponse> {
    let chat = owned(&state, &principal, &path).await?;
    let documents: Vec<DocumentView> = state
        .workspace()
        .list(&chat.id)
        .await?
        .into_iter()
        .map(DocumentView::from)
        .collect();
    let id = KnowledgeBaseId::of(&chat.id);
    Ok(HttpResponse::Ok().json(json!({
        "total": documents.len(),
        "documents": documents,
        "vector_store_id": id.vector_store_id(),
        "knowledge_base_id": id,
        "limits": limits(&state),
    })))
}

/// A chat's document to copy into the knowledge base.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CopyBody {
    chat_id: ChatId,
    artifact_id: ArtifactId,
}

/// Adds a document: a multipart upload (field `file`), or, with a JSON body
/// `{chat_id, artifact_id}`, a copy of one of the caller's chats' documents.
async fn add_document(
    req: HttpRequest,
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<String>,
    mut payload: web::Payload,
) -> AppResult<HttpResponse> {
    let chat = owned(&state, &principal, &path).await?;
    let json = req
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !json {
        return crate::http::chat_api::documents::upload_in(&req, &state, &chat.id, payload).await;
    }
    let mut body = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|err| AppError::invalid(format!("bad body: {err}")))?;
        if body.len() + chunk.len() > MAX_COPY_BODY_BYTES {
            return Err(AppError::PayloadTooLarge {
                limit: MAX_COPY_BODY_BYTES,
            });
        }
        body.extend_from_slice(&chunk);
    }
    let copy: CopyBody =
        serde_json::from_slice(&body).map_err(|err| AppError::InvalidJson(err.to_string()))?;
    let from = state
        .chats()
        .get_owned(principal.user_id(), &copy.chat_id)
        .await?;
    crate::http::chat_api::documents::check_count(&state, &chat.id).await?;
    state.sessions().own(&chat.id).await?;
    let document = state
        .workspace()
        .copy_document(&from.id, &copy.artifact_id, &chat.id)
        .await
        .map_err(AppError::from)?;
    Ok(HttpResponse::Created().json(DocumentView::from(document)))
}

async fn remove_document(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(String, ArtifactId)>,
) -> AppResult<HttpResponse> {
    let (id, artifact_id) = path.into_inner();
    let chat = owned(&state, &principal, &id).await?;
    if !state.workspace().delete(&chat.id, &artifact_id).await? {
        return Err(AppError::NotFound("document"));
    }
    Ok(HttpResponse::Ok().json(json!({"deleted": true, "artifact_id": artifact_id})))
}

async fn upload_options(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> AppResult<HttpResponse> {
    owned(&state, &principal, &path).await?;
    Ok(crate::http::chat_api::uploads::options_in(&state))
}

async fn upload_create(
    req: HttpRequest,
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> AppResult<HttpResponse> {
    let chat = owned(&state, &principal, &path).await?;
    crate::http::chat_api::uploads::create_in(&req, &principal, &state, &chat.id, &base_path(&chat))
        .await
}

async fn upload_head(
    req: HttpRequest,
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(String, UploadId)>,
) -> AppResult<HttpResponse> {
    let (id, upload_id) = path.into_inner();
    let chat = owned(&state, &principal, &id).await?;
    crate::http::chat_api::uploads::head_in(&req, &principal, &state, &chat.id, &upload_id).await
}

async fn upload_patch(
    req: HttpRequest,
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(String, UploadId)>,
    body: web::Payload,
) -> AppResult<HttpResponse> {
    let (id, upload_id) = path.into_inner();
    let chat = owned(&state, &principal, &id).await?;
    crate::http::chat_api::uploads::patch_in(&req, &principal, &state, &chat.id, &upload_id, body)
        .await
}

async fn upload_terminate(
    req: HttpRequest,
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(String, UploadId)>,
) -> AppResult<HttpResponse> {
    let (id, upload_id) = path.into_inner();
    let chat = owned(&state, &principal, &id).await?;
    crate::http::chat_api::uploads::terminate_in(&req, &principal, &state, &chat.id, &upload_id)
        .await
}
