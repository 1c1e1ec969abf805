//! The tus handlers themselves, on a chat the caller owns (checked by the route that calls
//! them; `head_in`, `patch_in` and `terminate_in` find the upload among the caller's chats
//! again): a chat's own uploads (`uploads`) and a knowledge base's (`knowledge_bases`) alike.

use entities::ids::{ChatId, DocumentId, UploadId};
use std::path::PathBuf;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use base64::Engine;
use chrono::Utc;
use entities::uploads;
use futures_util::StreamExt;
use tokio::io::AsyncWriteExt;

use super::{MAX_METADATA_BYTES, TUS_VERSION, UPLOAD_TTL, check_version, header, tus};
use crate::auth::Principal;
use crate::documents::NewUpload;
use crate::documents::{Termination, Upload};
use crate::error::{AppError, AppResult};
use crate::retrieval::extract::sanitize_filename;
use crate::state::AppState;
use entities::documents::DocumentStatus;
use entities::uploads::UploadStatus;

/// What the endpoint allows.
pub(in crate::http) fn options_in(state: &AppState) -> HttpResponse {
    tus(HttpResponse::NoContent())
        .insert_header(("Tus-Version", TUS_VERSION))
        .insert_header(("Tus-Extension", "creation,termination"))
        .insert_header((
            "Tus-Max-Size",
            state.config().documents.max_file_bytes.to_string(),
        ))
        .finish()
}

/// Parses `Upload-Metadata`: comma-separated `key base64value` pairs.
pub(super) fn parse_metadata(raw: &str) -> AppResult<serde_json::Map<String, serde_json::Value>> {
    if raw.len() > MAX_METADATA_BYTES {
        return Err(AppError::invalid("Upload-Metadata is too long"));
    }
    let mut map = serde_json::Map::new();
    for pair in raw.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let mut it = pair.splitn(2, ' ');
        let key = it.next().unwrap_or_default();
        let value = match it.next() {
            Some(encoded) => base64::engine::general_purpose::STANDARD
                .decode(encoded.trim())
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .ok_or_else(|| {
                    AppError::invalid(format!(
                        "Upload-Metadata value of {key:?} is not base64 UTF-8"
                    ))
                })?,
            None => String::new(),
        };
        map.insert(key.to_string(), serde_json::Value::String(value));
    }
    Ok(map)
}

/// Creates an upload (and its document) in `chat_id`; its URL is `{base}/uploads/{id}`.
pub(in crate::http) async fn create_in(
    req: &HttpRequest,
    principal: &Principal,
    state: &AppState,
    chat_id: &ChatId,
    base: &str,
) -> AppResult<HttpResponse> {
    check_version(req)?;
    let limits = &state.config().documents;
    if header(req, "Upload-Defer-Length").is_some() {
        return Err(AppError::invalid(
            "Upload-Defer-Length is not supported; send Upload-Length",
        ));
    }
    let length: u64 = header(req, "Upload-Length")
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| AppError::invalid("Upload-Length must be a non-negative integer"))?;
    if length > limits.max_file_bytes {
        return Err(AppError::TooLarge {
            code: "file_too_large",
            message: format!(
                "the file is {length} bytes; the most a document may have is {} bytes",
                limits.max_file_bytes
            ),
        });
    }
    let metadata = parse_metadata(header(req, "Upload-Metadata").unwrap_or_default())?;
    let filename = sanitize_filename(
        metadata
            .get("filename")
            .or_else(|| metadata.get("name"))
            .and_then(|v| v.as_str())
            .unwrap_or_default(),
    );
    crate::http::chat_api::documents::check_count(state, chat_id).await?;
    let upload_id = UploadId::generate();
    let dir = state.workspace().uploads_dir();
    tokio::fs::create_dir_all(&dir)
        .await
        .map_err(AppError::internal)?;
    let storage_path = dir.join(format!("{upload_id}.part"));
    tokio::fs::File::create(&storage_path)
        .await
        .map_err(AppError::internal)?;
    let document = state
        .workspace()
        .create(
            chat_id,
            &filename,
            length,
            &storage_path,
            DocumentStatus::Uploading,
        )
        .await;
    let document = match document {
        Ok(document) => document,
        Err(err) => {
            let _ = tokio::fs::remove_file(&storage_path).await;
            return Err(err.into());
        }
    };
    let upload = state
        .workspace()
        .record_upload(NewUpload {
            id: upload_id.clone(),
            chat_id: chat_id.clone(),
            user_id: principal.user_id().clone(),
            filename: filename.clone(),
            length,
            metadata: serde_json::Value::Object(metadata),
            storage_path: storage_path.clone(),
            document_id: document.id.clone(),
            expires_in: UPLOAD_TTL,
        })
        .await?;
    let location = format!("{base}/uploads/{upload_id}");
    let mut response = tus(HttpResponse::Created());
    response
        .insert_header(("Location", location.clone()))
        .insert_header(("Upload-Offset", "0"));
    if length == 0 {
        finish(state, &upload, &document.id).await?;
    }
    Ok(response.json(serde_json::json!({
        "upload_id": upload_id,
        "location": location,
        "artifact_id": document.artifact_id,
        "filename": filename,
        "status": if length == 0 { DocumentStatus::Processing } else { DocumentStatus::Uploading },
    })))
}

/// The upload a path names, in a chat the caller owns, still resumable.
async fn owned_upload(
    state: &AppState,
    principal: &Principal,
    chat_id: &ChatId,
    upload_id: &UploadId,
) -> AppResult<uploads::Model> {
    let chat = state
        .chats()
        .get_owned(principal.user_id(), chat_id)
        .await?;
    let upload = state
        .workspace()
        .upload_in(&chat.id, upload_id)
        .await?
        .ok_or(AppError::NotFound("upload"))?;
    if upload.status == UploadStatus::Uploading && upload.expires_at <= Utc::now() {
        return Err(AppError::Gone(
            "this upload expired; start a new one".into(),
        ));
    }
    Ok(upload)
}

/// Bytes really on disk for an upload.
async fn stored_offset(upload: &uploads::Model) -> u64 {
    if upload.status == UploadStatus::Complete {
        return upload.upload_length as u64;
    }
    tokio::fs::metadata(&upload.storage_path)
        .await
        .map(|m| m.len().min(upload.upload_length as u64))
        .unwrap_or(0)
}

pub(in crate::http) async fn head_in(
    req: &HttpRequest,
    principal: &Principal,
    state: &AppState,
    chat_id: &ChatId,
    upload_id: &UploadId,
) -> AppResult<HttpResponse> {
    check_version(req)?;
    let upload = owned_upload(state, principal, chat_id, upload_id).await?;
    let offset = stored_offset(&upload).await;
    Ok(tus(HttpResponse::Ok())
        .insert_header(("Upload-Offset", offset.to_string()))
        .insert_header(("Upload-Length", upload.upload_length.to_string()))
        .insert_header(("Cache-Control", "no-store"))
        .finish())
}

pub(in crate::http) async fn patch_in(
    req: &HttpRequest,
    principal: &Principal,
    state: &AppState,
    chat_id: &ChatId,
    upload_id: &UploadId,
    mut body: web::Payload,
) -> AppResult<HttpResponse> {
    check_version(req)?;
    if header(req, "Content-Type") != Some("application/offset+octet-stream") {
        return Err(AppError::UnsupportedMediaType(
            "PATCH needs Content-Type: application/offset+octet-stream".into(),
        ));
    }
    owned_upload(state, principal, chat_id, upload_id).await?;
    let claimed: u64 = header(req, "Upload-Offset")
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| AppError::invalid("Upload-Offset must be a non-negative integer"))?;
    let Some(claim) = state.workspace().claim_upload(upload_id) else {
        return Err(AppError::Conflict(
            "another request is writing or terminating this upload".into(),
        ));
    };
    // Read again under the claim: a termination may have ended it meanwhile.
    let upload = owned_upload(state, principal, chat_id, upload_id).await?;
    let offset = stored_offset(&upload).await;
    if upload.status == UploadStatus::Complete || claimed != offset {
        return Err(AppError::Conflict(format!(
            "Upload-Offset {claimed} does not match the server's offset {offset}"
        )));
    }
    let length = upload.upload_length as u64;
    // Created if missing: the offset of a missing file is 0, so the client starts over.
    let mut file = tokio::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&upload.storage_path)
        .await
        .map_err(AppError::internal)?;
    // Stored bytes may exceed what was counted if a previous write was cut mid-way.
    file.set_len(offset).await.map_err(AppError::internal)?;
    let mut written = offset;
    let mut failure = None;
    loop {
        let next = tokio::select! {
            biased;
            () = claim.stop_requested() => {
                failure = Some(AppError::Conflict(
                    "the upload is being terminated".into(),
                ));
                break;
            }
            next = body.next() => next,
        };
        let Some(chunk) = next else {
            break;
        };
        let chunk = match chunk {
            Ok(chunk) => chunk,
            Err(err) => {
                failure = Some(AppError::invalid(format!(
                    "the upload was interrupted: {err}"
                )));
                break;
            }
        };
        if written + chunk.len() as u64 > length {
            failure = Some(AppError::TooLarge {
                code: "upload_exceeds_length",
                message: format!("the body goes past Upload-Length ({length} bytes)"),
            });
            break;
        }
        if let Err(err) = file.write_all(&chunk).await {
            failure = Some(AppError::internal(err));
            break;
        }
        written += chunk.len() as u64;
    }
    file.flush().await.map_err(AppError::internal)?;
    drop(file);
    state.workspace().record_offset(&upload, written).await?;
    if let Some(err) = failure {
        return Err(err);
    }
    if written == length
        && let Some(document_id) = &upload.document_id
    {
        finish(state, &upload, document_id).await?;
    }
    Ok(tus(HttpResponse::build(StatusCode::NO_CONTENT))
        .insert_header(("Upload-Offset", written.to_string()))
        .finish())
}

/// Commits a complete upload: the document service moves its bytes, records them with the
/// upload's completion and queues processing.
async fn finish(
    state: &AppState,
    upload: &uploads::Model,
    document_id: &DocumentId,
) -> AppResult<()> {
    let committed = Upload {
        document_id: document_id.clone(),
        chat_id: upload.chat_id.clone(),
        filename: upload.filename.clone(),
        source: PathBuf::from(&upload.storage_path),
        size: upload.upload_length as u64,
        file_id: None,
        upload_id: Some(upload.id.clone()),
    };
    state
        .workspace()
        .commit_upload(&committed)
        .await
        .map_err(AppError::from)?;
    Ok(())
}

pub(in crate::http) async fn terminate_in(
    req: &HttpRequest,
    principal: &Principal,
    state: &AppState,
    chat_id: &ChatId,
    upload_id: &UploadId,
) -> AppResult<HttpResponse> {
    check_version(req)?;
    owned_upload(state, principal, chat_id, upload_id).await?;
    match state.workspace().terminate_upload(upload_id).await? {
        Termination::Terminated => Ok(tus(HttpResponse::NoContent()).finish()),
        Termination::NotFound => Err(AppError::NotFound("upload")),
        Termination::Complete => Err(AppError::Conflict(
            "this upload is complete; delete the document instead".into(),
        )),
        Termination::Busy => Err(AppError::Conflict(
            "this upload is being written; retry the termination".into(),
        )),
    }
}
