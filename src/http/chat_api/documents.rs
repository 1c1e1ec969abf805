//! Documents REST (docs/spec.md#documents-api) under `/chat/api/{chatId}/documents`: the list (most
//! recent first, with status and whether the content is searchable), a plain multipart upload
//! (field `file`) for small files, and a soft delete that takes the document out of search at once.
//! Large or unreliable uploads use tus (`uploads`).

use actix_multipart::Multipart;
use actix_web::{HttpRequest, HttpResponse, web};
use entities::ids::{ArtifactId, ChatId};
use futures_util::StreamExt;
use serde_json::json;
use tokio::io::AsyncWriteExt;

use crate::auth::Principal;
use crate::documents::{CreateError, DocumentView, Upload};
use crate::error::{AppError, AppResult};
use crate::retrieval::extract::sanitize_filename;
use crate::state::AppState;
use entities::documents::DocumentStatus;

/// Room for multipart framing on top of the file itself.
const MULTIPART_OVERHEAD: u64 = 64 * 1024;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/chat/api/{chat_id}/documents", web::get().to(list))
        .route("/chat/api/{chat_id}/documents", web::post().to(upload))
        .route(
            "/chat/api/{chat_id}/documents/{artifact_id}",
            web::delete().to(delete),
        );
}

/// Refuses another document when the chat holds the most allowed: early, before a body is
/// received. `Workspace::create` checks again, atomically, when the record is made.
pub async fn check_count(state: &AppState, chat_id: &ChatId) -> AppResult<()> {
    let limit = state.workspace().document_limit(chat_id).await?;
    if state.workspace().count(chat_id).await? >= limit.max() as u64 {
        return Err(AppError::from(CreateError::TooMany { limit }));
    }
    Ok(())
}

async fn list(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ChatId>,
) -> AppResult<HttpResponse> {
    let chat = state.chats().get_owned(principal.user_id(), &path).await?;
    let documents: Vec<DocumentView> = state
        .workspace()
        .list(&chat.id)
        .await?
        .into_iter()
        .map(DocumentView::from)
        .collect();
    let total = documents.len();
    // The limits, so a client can refuse a file before uploading it and say why.
    let limits = &state.config().documents;
    Ok(HttpResponse::Ok().json(json!({
        "documents": documents,
        "total": total,
        // The chat's documents are a vector store (OpenAI's API), searched by this id.
        "vector_store_id": crate::http::openai::shared::store_id(&chat.id),
        "limits": {
            "max_file_bytes": limits.max_file_bytes,
            "max_files_per_chat": limits.max_files_per_chat,
            "max_text_chars": limits.max_text_chars,
        },
    })))
}

/// Refuses, before reading it, a body that says it is larger than a file of `limit` bytes in
/// a form, or that is not a multipart form (`hint` says what to send).
pub fn check_multipart(req: &HttpRequest, limit: u64, hint: &str) -> AppResult<()> {
    let declared = req
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit + MULTIPART_OVERHEAD) {
        return Err(too_large(limit));
    }
    let is_multipart = req
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("multipart/form-data"));
    if !is_multipart {
        return Err(AppError::UnsupportedMediaType(hint.into()));
    }
    Ok(())
}

pub fn too_large(limit: u64) -> AppError {
    AppError::TooLarge {
        code: "file_too_large",
        message: format!("the most a document may have is {limit} bytes"),
    }
}

async fn upload(
    req: HttpRequest,
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ChatId>,
    payload: web::Payload,
) -> AppResult<HttpResponse> {
    let chat = state.chats().get_owned(principal.user_id(), &path).await?;
    upload_in(&req, &state, &chat.id, payload).await
}

/// A multipart upload (field `file`) into `chat_id`, a chat the caller owns (a knowledge
/// base's too): stored and committed, then processed.
/// What the form may still hold after its file that is read before answering: its closing
/// boundary and small fields. Answering with bytes of the request left unread makes the kernel
/// reset the connection, and a client still writing them may then lose the answer.
const MAX_FORM_TAIL_BYTES: usize = 64 * 1024;

/// Reads the rest of a form (at most `MAX_FORM_TAIL_BYTES`), dropping it.
pub(in crate::http) async fn drain_rest(form: &mut Multipart) {
    let mut left = MAX_FORM_TAIL_BYTES;
    while let Some(Ok(mut field)) = form.next().await {
        while let Some(Ok(chunk)) = field.next().await {
            left = left.saturating_sub(chunk.len());
            if left == 0 {
                return;
            }
        }
    }
}

pub(in crate::http) async fn upload_in(
    req: &HttpRequest,
    state: &AppState,
    chat_id: &ChatId,
    payload: web::Payload,
) -> AppResult<HttpResponse> {
    let limit = state.config().documents.max_file_bytes;
    check_multipart(
        req,
        limit,
        "send the file as multipart/form-data with a field named \"file\", or use the tus \
         endpoint …/uploads",
    )?;
    check_count(state, chat_id).await?;
    // Under the chat's lease: another process's start-up must not take this upload, half
    // committed, for one its dead owner left.
    state.sessions().own(chat_id).await?;
    let mut form = Multipart::new(req.headers(), payload);
    while let Some(field) = form.next().await {
        let mut field =
            field.map_err(|err| AppError::invalid(format!("bad multipart body: {err}")))?;
        if field.name() != Some("file") {
            continue;
        }
        let filename = sanitize_filename(
            field
                .content_disposition()
                .and_then(|cd| cd.get_filename())
                .unwrap_or_default(),
        );
        let dir = state.workspace().uploads_dir();
        tokio::fs::create_dir_all(&dir)
            .await
            .map_err(AppError::internal)?;
        let part = dir.join(format!("{}.part", uuid::Uuid::now_v7().simple()));
        let mut file = tokio::fs::File::create(&part)
            .await
            .map_err(AppError::internal)?;
        let mut size: u64 = 0;
        let mut failure = None;
        while let Some(chunk) = field.next().await {
            match chunk {
                Ok(chunk) => {
                    size += chunk.len() as u64;
                    if size > limit {
                        failure = Some(too_large(limit));
                        break;
                    }
                    if let Err(err) = file.write_all(&chunk).await {
                        failure = Some(AppError::internal(err));
                        break;
                    }
                }
                Err(err) => {
                    failure = Some(AppError::invalid(format!(
                        "the upload was interrupted: {err}"
                    )));
                    break;
                }
            }
        }
        let flushed = file.flush().await;
        drop(file);
        if let Some(err) = failure.or(flushed.err().map(AppError::internal)) {
            let _ = tokio::fs::remove_file(&part).await;
            return Err(err);
        }
        // The form yields nothing more while a field of it is alive.
        drop(field);
        drain_rest(&mut form).await;
        let document = match state
            .workspace()
            .create(chat_id, &filename, size, &part, DocumentStatus::Uploading)
            .await
        {
            Ok(document) => document,
            Err(err) => {
                let _ = tokio::fs::remove_file(&part).await;
                return Err(err.into());
            }
        };
        let upload = Upload {
            document_id: document.id,
            chat_id: chat_id.clone(),
            filename,
            source: part,
            size,
            file_id: None,
            upload_id: None,
        };
        let document = state
            .workspace()
            .commit_upload(&upload)
            .await
            .map_err(AppError::from)?;
        let view = DocumentView::from(document);
        return Ok(HttpResponse::Created().json(view));
    }
    Err(AppError::invalid("the form has no field named \"file\""))
}

async fn delete(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(ChatId, ArtifactId)>,
) -> AppResult<HttpResponse> {
    let (chat_id, artifact_id) = path.into_inner();
    let chat = state
        .chats()
        .get_owned(principal.user_id(), &chat_id)
        .await?;
    let deleted = state.workspace().delete(&chat.id, &artifact_id).await?;
    if !deleted {
        return Err(AppError::NotFound("document"));
    }
    Ok(HttpResponse::Ok().json(json!({"deleted": true, "artifact_id": artifact_id})))
}
