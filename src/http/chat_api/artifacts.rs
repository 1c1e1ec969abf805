//! Artifacts REST under `/chat/api/{chatId}/artifacts`: the list (latest version of each), one
//! artifact with its version list, version N, the raw content (its own Content-Type, with a
//! download filename) and delete. An artifact is addressed by id or identifier.

use actix_web::http::header::{self, ContentDisposition, DispositionParam, DispositionType};
use actix_web::{HttpResponse, web};
use entities::ids::ChatId;
use serde::Deserialize;
use serde_json::json;

use crate::auth::Principal;
use crate::chat::artifacts::{self, ArtifactView, DeleteArtifact};
use crate::error::{AppError, AppResult};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/chat/api/{chat_id}/artifacts", web::get().to(list))
        .route(
            "/chat/api/{chat_id}/artifacts/{artifact}",
            web::get().to(get),
        )
        .route(
            "/chat/api/{chat_id}/artifacts/{artifact}",
            web::delete().to(delete),
        )
        .route(
            "/chat/api/{chat_id}/artifacts/{artifact}/raw",
            web::get().to(raw),
        )
        .route(
            "/chat/api/{chat_id}/artifacts/{artifact}/versions/{version}",
            web::get().to(get_version),
        )
        .route(
            "/chat/api/{chat_id}/artifacts/{artifact}/versions/{version}/raw",
            web::get().to(raw_version),
        )
        .route(
            "/chat/api/{chat_id}/artifacts/{artifact}/preview",
            web::get().to(preview),
        )
        .route(
            "/chat/api/{chat_id}/artifacts/{artifact}/versions/{version}/preview",
            web::get().to(preview_version),
        );
}

/// How a preview may behave: a sandbox with scripts but no origin (so no cookie, no storage,
/// no request with the user's credentials, no top navigation, no forms, no popups), nothing
/// loaded from anywhere, framed only by Colloquy's own pages.
pub const PREVIEW_POLICY: &str = "sandbox allow-scripts; default-src 'none'; \
     script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; \
     font-src data:; media-src data: blob:; form-action 'none'; base-uri 'none'; \
     frame-ancestors 'self'";

async fn preview(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(ChatId, String)>,
) -> AppResult<HttpResponse> {
    let (chat_id, key) = path.into_inner();
    let row = owned_artifact(&state, &principal, &chat_id, &key).await?;
    let latest = row.latest_version;
    preview_response(&state, row, latest).await
}

async fn preview_version(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<VersionPath>,
) -> AppResult<HttpResponse> {
    let number = parse_version(&path.version)?;
    let row = owned_artifact(&state, &principal, &path.chat_id, &path.artifact).await?;
    preview_response(&state, row, number).await
}

/// The content shown inline, for an `<iframe sandbox="allow-scripts">` (HTML) or an `<img>`
/// (SVG): the artifact's type, under `PREVIEW_POLICY`, never cached. Other types are text.
async fn preview_response(
    state: &AppState,
    row: entities::artifacts::Model,
    number: i32,
) -> AppResult<HttpResponse> {
    let version = artifacts::version(state.db(), &row.id, number)
        .await?
        .ok_or(AppError::NotFound("artifact version"))?;
    let content_type = match row.mime_type.as_str() {
        "text/html" => "text/html; charset=utf-8",
        "image/svg+xml" => "image/svg+xml",
        _ => "text/plain; charset=utf-8",
    };
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, content_type))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::CONTENT_SECURITY_POLICY, PREVIEW_POLICY))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::REFERRER_POLICY, "no-referrer"))
        .body(version.content))
}

async fn list(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ChatId>,
) -> AppResult<HttpResponse> {
    let chat = state.chats().get_owned(principal.user_id(), &path).await?;
    let rows = artifacts::list(state.db(), &chat.id).await?;
    let total = rows.len();
    let items: Vec<ArtifactView> = rows.into_iter().map(ArtifactView::from).collect();
    Ok(HttpResponse::Ok().json(json!({"artifacts": items, "total": total})))
}

/// The artifact a path names, in a chat the caller owns.
async fn owned_artifact(
    state: &AppState,
    principal: &Principal,
    chat_id: &ChatId,
    key: &str,
) -> AppResult<entities::artifacts::Model> {
    let chat = state
        .chats()
        .get_owned(principal.user_id(), chat_id)
        .await?;
    artifacts::find(state.db(), &chat.id, key)
        .await?
        .ok_or(AppError::NotFound("artifact"))
}

async fn get(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(ChatId, String)>,
) -> AppResult<HttpResponse> {
    let (chat_id, key) = path.into_inner();
    let row = owned_artifact(&state, &principal, &chat_id, &key).await?;
    let versions = artifacts::versions(state.db(), &row.id).await?;
    let content = versions
        .last()
        .map(|v| v.content.clone())
        .unwrap_or_default();
    let versions: Vec<_> = versions
        .into_iter()
        .map(|v| {
            json!({"version": v.version, "message_id": v.message_id, "created_at": v.created_at,
                   "size": v.content.len()})
        })
        .collect();
    let mut body = serde_json::to_value(ArtifactView::from(row))
        .map_err(|err| AppError::internal(anyhow::Error::from(err)))?;
    body["content"] = json!(content);
    body["versions"] = json!(versions);
    Ok(HttpResponse::Ok().json(body))
}

#[derive(Deserialize)]
struct VersionPath {
    chat_id: ChatId,
    artifact: String,
    version: String,
}

/// Parses a version number; a non-number names no version.
fn parse_version(raw: &str) -> AppResult<i32> {
    raw.parse::<i32>()
        .ok()
        .filter(|v| *v >= 1)
        .ok_or(AppError::NotFound("artifact version"))
}

async fn get_version(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<VersionPath>,
) -> AppResult<HttpResponse> {
    let number = parse_version(&path.version)?;
    let row = owned_artifact(&state, &principal, &path.chat_id, &path.artifact).await?;
    let version = artifacts::version(state.db(), &row.id, number)
        .await?
        .ok_or(AppError::NotFound("artifact version"))?;
    Ok(HttpResponse::Ok().json(json!({
        "id": row.id,
        "identifier": row.identifier,
        "title": row.title,
        "type": row.mime_type,
        "language": row.language,
        "version": version.version,
        "latest_version": row.latest_version,
        "message_id": version.message_id,
        "created_at": version.created_at,
        "content": version.content,
    })))
}

async fn raw(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(ChatId, String)>,
) -> AppResult<HttpResponse> {
    let (chat_id, key) = path.into_inner();
    let row = owned_artifact(&state, &principal, &chat_id, &key).await?;
    let latest = row.latest_version;
    raw_response(&state, row, latest).await
}

async fn raw_version(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<VersionPath>,
) -> AppResult<HttpResponse> {
    let number = parse_version(&path.version)?;
    let row = owned_artifact(&state, &principal, &path.chat_id, &path.artifact).await?;
    raw_response(&state, row, number).await
}

/// The content as a download: the artifact's MIME type (UTF-8), a filename from the
/// identifier, and `nosniff` so a browser never reinterprets it.
async fn raw_response(
    state: &AppState,
    row: entities::artifacts::Model,
    number: i32,
) -> AppResult<HttpResponse> {
    let version = artifacts::version(state.db(), &row.id, number)
        .await?
        .ok_or(AppError::NotFound("artifact version"))?;
    let content_type = if row.mime_type.starts_with("text/") {
        format!("{}; charset=utf-8", row.mime_type)
    } else {
        row.mime_type.clone()
    };
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, content_type))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header(ContentDisposition {
            disposition: DispositionType::Attachment,
            parameters: vec![DispositionParam::Filename(download_name(&row))],
        })
        .body(version.content))
}

/// A filename for a download: the identifier, with an extension from the type when it has none.
fn download_name(row: &entities::artifacts::Model) -> String {
    if row.identifier.contains('.') {
        return row.identifier.clone();
    }
    let extension = match row.mime_type.as_str() {
        "text/markdown" => "md",
        "text/html" => "html",
        "text/plain" => "txt",
        "image/svg+xml" => "svg",
        "text/x-mermaid" => "mmd",
        "application/json" => "json",
        other => other.strip_prefix("text/x-").unwrap_or("txt"),
    };
    format!("{}.{extension}", row.identifier)
}

async fn delete(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(ChatId, String)>,
) -> AppResult<HttpResponse> {
    let (chat_id, key) = path.into_inner();
    let row = owned_artifact(&state, &principal, &chat_id, &key).await?;
    let deleted = state
        .sessions()
        .session(&row.chat_id)
        .await?
        .send(DeleteArtifact {
            artifact_id: row.id.clone(),
        })
        .await??;
    if !deleted {
        return Err(AppError::NotFound("artifact"));
    }
    Ok(HttpResponse::Ok().json(json!({"deleted": true, "id": row.id})))
}
