//! Resumable uploads: the tus 1.0 protocol (core, creation, termination) under
//! `/chat/api/{chatId}/uploads`, so an interrupted upload continues from its offset.
//! - `OPTIONS …/uploads` advertises the version, extensions and the size limit;
//! - `POST …/uploads` (`Upload-Length`, `Upload-Metadata: filename <b64>,…`) creates the upload
//!   and its document (status `uploading`) → 201 with `Location`; an `Upload-Length` over the
//!   limit is refused with 413 before any byte is stored;
//! - `HEAD …/uploads/{id}` → `Upload-Offset`;
//! - `PATCH …/uploads/{id}` (`application/offset+octet-stream`, `Upload-Offset` equal to the
//!   server's) appends; the last byte moves the document to `processing`;
//! - `DELETE …/uploads/{id}` terminates an unfinished upload; a PATCH writing it stops (409).
//!   Racing requests get 204, 404 or 409, never a half-written upload (`workspace::uploads`).
//!
//! The bytes on disk are the truth for the offset: whatever reached the file before a
//! connection dropped counts, so a client always resumes from what the server really has.
//! The handlers are `protocol`'s, on the chat a route names; a knowledge base's uploads
//! (`knowledge_bases`) are the same handlers on its chat.

use entities::ids::{ChatId, UploadId};
use std::time::Duration;

use actix_web::{HttpRequest, HttpResponse, web};

use crate::auth::Principal;
use crate::error::{AppError, AppResult};
use crate::state::AppState;

mod protocol;

#[cfg(test)]
use protocol::parse_metadata;
pub(in crate::http) use protocol::{create_in, head_in, options_in, patch_in, terminate_in};

pub const TUS_VERSION: &str = "1.0.0";
/// How long an unfinished upload can be resumed.
const UPLOAD_TTL: Duration = Duration::from_secs(24 * 3600);
/// Longest `Upload-Metadata` header accepted.
const MAX_METADATA_BYTES: usize = 4096;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route(
        "/chat/api/{chat_id}/uploads",
        web::method(actix_web::http::Method::OPTIONS).to(options),
    )
    .route("/chat/api/{chat_id}/uploads", web::post().to(create))
    .route(
        "/chat/api/{chat_id}/uploads/{upload_id}",
        web::head().to(head),
    )
    .route(
        "/chat/api/{chat_id}/uploads/{upload_id}",
        web::patch().to(patch),
    )
    .route(
        "/chat/api/{chat_id}/uploads/{upload_id}",
        web::delete().to(terminate),
    );
}

fn tus(mut builder: actix_web::HttpResponseBuilder) -> actix_web::HttpResponseBuilder {
    builder.insert_header(("Tus-Resumable", TUS_VERSION));
    builder
}

fn header<'a>(req: &'a HttpRequest, name: &str) -> Option<&'a str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

/// tus requires `Tus-Resumable` on every request but OPTIONS; another version is 412.
fn check_version(req: &HttpRequest) -> AppResult<()> {
    match header(req, "Tus-Resumable") {
        Some(TUS_VERSION) => Ok(()),
        other => Err(AppError::PreconditionFailed {
            code: "tus_version_unsupported",
            message: format!(
                "Tus-Resumable {:?} is not supported; this endpoint speaks tus {TUS_VERSION}",
                other.unwrap_or("(missing)")
            ),
        }),
    }
}

async fn options(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ChatId>,
) -> AppResult<HttpResponse> {
    state.chats().get_owned(principal.user_id(), &path).await?;
    Ok(options_in(&state))
}

async fn create(
    req: HttpRequest,
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ChatId>,
) -> AppResult<HttpResponse> {
    check_version(&req)?;
    let chat = state.chats().get_owned(principal.user_id(), &path).await?;
    let base = format!("/chat/api/{}", chat.id);
    create_in(&req, &principal, &state, &chat.id, &base).await
}

async fn head(
    req: HttpRequest,
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(ChatId, UploadId)>,
) -> AppResult<HttpResponse> {
    let (chat_id, upload_id) = path.into_inner();
    head_in(&req, &principal, &state, &chat_id, &upload_id).await
}

async fn patch(
    req: HttpRequest,
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(ChatId, UploadId)>,
    body: web::Payload,
) -> AppResult<HttpResponse> {
    let (chat_id, upload_id) = path.into_inner();
    patch_in(&req, &principal, &state, &chat_id, &upload_id, body).await
}

async fn terminate(
    req: HttpRequest,
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(ChatId, UploadId)>,
) -> AppResult<HttpResponse> {
    let (chat_id, upload_id) = path.into_inner();
    terminate_in(&req, &principal, &state, &chat_id, &upload_id).await
}

#[cfg(test)]
mod tests;
