//! What a read-only link shows, to anyone holding its token, signed in or not: `/s/{token}` (the
//! UI's page) and `/shared/{token}` (the chat's title and active branch as JSON), with the
//! images and artifact versions that branch shows under `/shared/{token}/…`. Outside every
//! authenticated API: no `Principal`, no cookie read or set; the token opens this one chat and
//! nothing else. An unknown, revoked or expired token, and anything the branch does not show,
//! answer the same 404. Every answer is `no-store`, `no-referrer` (the token is in the URL)
//! and `noindex`.

use actix_web::dev::Service;
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};
use entities::chats;
use entities::ids::AttachmentId;
use serde::Deserialize;
use serde_json::json;

use crate::chat::session::GetActivePath;
use crate::chat::shares::{self, SharedMessage};
use crate::error::{AppError, AppResult};
use crate::state::AppState;

/// The one answer for a token that opens nothing, and for what its chat does not show.
const NOT_SHARED: AppError = AppError::NotFound("shared chat");

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/s")
            .wrap_fn(|req, service| {
                let response = service.call(req);
                async move { response.await.map(sealed) }
            })
            .route("/{token}", web::get().to(page)),
    )
    .service(
        web::scope("/shared")
            .wrap_fn(|req, service| {
                let response = service.call(req);
                async move { response.await.map(sealed) }
            })
            .route("/{token}", web::get().to(chat))
            .route(
                "/{token}/attachments/{attachment_id}",
                web::get().to(attachment),
            )
            .route(
                "/{token}/artifacts/{artifact}/versions/{version}",
                web::get().to(artifact_version),
            )
            .route(
                "/{token}/artifacts/{artifact}/versions/{version}/preview",
                web::get().to(artifact_preview),
            ),
    );
}

/// The headers every answer under a link carries, errors included: nothing kept by a cache, no
/// `Referer` carrying the token elsewhere, no search engine indexing, and no cookie.
fn sealed<B>(
    mut response: actix_web::dev::ServiceResponse<B>,
) -> actix_web::dev::ServiceResponse<B> {
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(
        HeaderName::from_static("x-robots-tag"),
        HeaderValue::from_static("noindex, nofollow"),
    );
    headers.remove(header::SET_COOKIE);
    response
}

async fn shared_chat(state: &AppState, token: &str) -> AppResult<chats::Model> {
    shares::resolve(state.db(), token).await?.ok_or(NOT_SHARED)
}

/// The chat's active branch, as the link shows it.
async fn branch(state: &AppState, chat: &chats::Model) -> AppResult<Vec<SharedMessage>> {
    let session = state.sessions().session(&chat.id).await?;
    let path = session.send(GetActivePath).await?;
    Ok(shares::shared_branch(&path))
}

/// The UI's page, which reads `/shared/{token}`; a token that opens nothing gets the same page
/// with a 404 status (it says so).
async fn page(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> AppResult<HttpResponse> {
    let opens = shares::resolve(state.db(), &path).await?.is_some();
    let mut response = super::ui::shell(req, state).await?;
    if !opens {
        *response.status_mut() = StatusCode::NOT_FOUND;
    }
    Ok(response)
}

async fn chat(state: web::Data<AppState>, path: web::Path<String>) -> AppResult<HttpResponse> {
    let chat = shared_chat(&state, &path).await?;
    let messages = branch(&state, &chat).await?;
    Ok(HttpResponse::Ok().json(json!({"title": chat.title, "messages": messages})))
}

async fn attachment(
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
) -> AppResult<HttpResponse> {
    let (token, raw) = path.into_inner();
    let chat = shared_chat(&state, &token).await?;
    let id = AttachmentId::parse(&raw).ok_or(NOT_SHARED)?;
    if !shares::shows_attachment(&branch(&state, &chat).await?, id.as_str()) {
        return Err(NOT_SHARED);
    }
    let attachments = &state.launcher.attachments;
    let row = attachments
        .get_owned(&chat.user_id, &chat.id, &id)
        .await?
        .ok_or(NOT_SHARED)?;
    let bytes = attachments.read(&chat.id, &id).await.map_err(|err| {
        if err.kind() == std::io::ErrorKind::NotFound {
            NOT_SHARED
        } else {
            AppError::internal(err)
        }
    })?;
    Ok(HttpResponse::Ok()
        .content_type(row.mime_type)
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .body(bytes))
}

#[derive(Deserialize)]
struct VersionPath {
    token: String,
    artifact: String,
    version: String,
}

/// The artifact row and version content a path names, when the branch shows that version.
async fn shown_version(
    state: &AppState,
    path: &VersionPath,
) -> AppResult<(entities::artifacts::Model, i32, String)> {
    let chat = shared_chat(state, &path.token).await?;
    let number = path
        .version
        .parse::<i32>()
        .ok()
        .filter(|v| *v >= 1)
        .ok_or(NOT_SHARED)?;
    if !shares::shows_artifact_version(&branch(state, &chat).await?, &path.artifact, number) {
        return Err(NOT_SHARED);
    }
    let row = crate::chat::artifacts::find(state.db(), &chat.id, &path.artifact)
        .await?
        .ok_or(NOT_SHARED)?;
    let version = crate::chat::artifacts::version(state.db(), &row.id, number)
        .await?
        .ok_or(NOT_SHARED)?;
    Ok((row, number, version.content))
}

async fn artifact_version(
    state: web::Data<AppState>,
    path: web::Path<VersionPath>,
) -> AppResult<HttpResponse> {
    let (row, number, content) = shown_version(&state, &path).await?;
    Ok(HttpResponse::Ok().json(json!({
        "id": row.id,
        "identifier": row.identifier,
        "title": row.title,
        "type": row.mime_type,
        "language": row.language,
        "version": number,
        "content": content,
    })))
}

/// An HTML or SVG version for the page's sandboxed frame or image, under the same policy as
/// the owner's previews (an opaque origin, nothing loaded from anywhere).
async fn artifact_preview(
    state: web::Data<AppState>,
    path: web::Path<VersionPath>,
) -> AppResult<HttpResponse> {
    let (row, _, content) = shown_version(&state, &path).await?;
    let content_type = match row.mime_type.as_str() {
        "text/html" => "text/html; charset=utf-8",
        "image/svg+xml" => "image/svg+xml",
        _ => "text/plain; charset=utf-8",
    };
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, content_type))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((
            header::CONTENT_SECURITY_POLICY,
            super::chat_api::artifacts::PREVIEW_POLICY,
        ))
        .body(content))
}
