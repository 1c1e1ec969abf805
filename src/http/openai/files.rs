//! OpenAI's Files API: `POST /v1/files` (multipart `file` and `purpose`, `assistants` or
//! `user_data`), `GET /v1/files`, `GET`/`DELETE /v1/files/{id}`, `GET /v1/files/{id}/content`.
//! A file is its uploader's; its bytes become searchable when it is added to a vector store.
//! The bytes are kept under `<data dir>/files/<user>/` (`documents::files`).

use actix_multipart::Multipart;
use actix_web::{HttpRequest, HttpResponse, web};
use entities::ids::FileId;
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

use super::shared::list_object;
use crate::auth::Principal;
use crate::error::{AppError, AppResult};
use crate::http::chat_api::documents::{check_multipart, too_large};
use crate::retrieval::extract::sanitize_filename;
use crate::state::AppState;

/// The purposes a file may have here: both mean "for the model to read".
const PURPOSES: [&str; 2] = ["assistants", "user_data"];

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/files", web::post().to(upload))
        .route("/v1/files", web::get().to(list))
        .route("/v1/files/{id}", web::get().to(retrieve))
        .route("/v1/files/{id}", web::delete().to(remove))
        .route("/v1/files/{id}/content", web::get().to(content));
}

pub fn object(file: &entities::files::Model) -> Value {
    json!({
        "id": file.id,
        "object": "file",
        "bytes": file.bytes,
        "created_at": file.created_at.timestamp(),
        "filename": file.filename,
        "purpose": file.purpose,
        "status": "processed",
        "expires_at": null,
    })
}

async fn upload(
    req: HttpRequest,
    principal: Principal,
    state: web::Data<AppState>,
    payload: web::Payload,
) -> AppResult<HttpResponse> {
    let limit = state.config().documents.max_file_bytes;
    check_multipart(
        &req,
        limit,
        "send the file as multipart/form-data with the fields \"file\" and \"purpose\"",
    )?;
    let dir = state.workspace().user_files_dir(principal.user_id());
    tokio::fs::create_dir_all(&dir)
        .await
        .map_err(AppError::internal)?;
    let id = FileId::generate();
    let path = dir.join(id.as_str());
    let mut purpose: Option<String> = None;
    let mut written: Option<(String, u64)> = None;
    let mut form = Multipart::new(req.headers(), payload);
    let outcome: AppResult<()> = async {
        while let Some(field) = form.next().await {
            let mut field =
                field.map_err(|err| AppError::invalid(format!("bad multipart body: {err}")))?;
            match field.name() {
                Some("purpose") => {
                    let mut text = Vec::new();
                    while let Some(chunk) = field.next().await {
                        let chunk = chunk.map_err(|err| AppError::invalid(err.to_string()))?;
                        if text.len() + chunk.len() > 64 {
                            return Err(AppError::invalid("purpose is too long"));
                        }
                        text.extend_from_slice(&chunk);
                    }
                    purpose = Some(String::from_utf8_lossy(&text).trim().to_string());
                }
                Some("file") if written.is_none() => {
                    let filename = sanitize_filename(
                        field
                            .content_disposition()
                            .and_then(|cd| cd.get_filename())
                            .unwrap_or_default(),
                    );
                    let mut file = tokio::fs::File::create(&path)
                        .await
                        .map_err(AppError::internal)?;
                    let mut size: u64 = 0;
                    while let Some(chunk) = field.next().await {
                        let chunk = chunk.map_err(|err| {
                            AppError::invalid(format!("the upload was interrupted: {err}"))
                        })?;
                        size += chunk.len() as u64;
                        if size > limit {
                            return Err(too_large(limit));
                        }
                        file.write_all(&chunk).await.map_err(AppError::internal)?;
                    }
                    file.flush().await.map_err(AppError::internal)?;
                    written = Some((filename, size));
                }
                _ => {}
            }
        }
        Ok(())
    }
    .await;
    let checked = outcome.and_then(|()| {
        let (filename, size) = written
            .clone()
            .ok_or_else(|| AppError::invalid("the form has no field named \"file\""))?;
        let purpose = purpose.clone().ok_or_else(|| {
            AppError::invalid("the form has no field named \"purpose\" (assistants or user_data)")
        })?;
        if !PURPOSES.contains(&purpose.as_str()) {
            return Err(AppError::invalid(format!(
                "purpose must be assistants or user_data, not {purpose:?}"
            )));
        }
        Ok((filename, size, purpose))
    });
    let (filename, size, purpose) = match checked {
        Ok(checked) => checked,
        Err(err) => {
            let _ = tokio::fs::remove_file(&path).await;
            return Err(err);
        }
    };
    let file = state
        .workspace()
        .record_file(id, principal.user_id(), &filename, &purpose, size, &path)
        .await?;
    Ok(HttpResponse::Ok().json(object(&file)))
}

async fn list(principal: Principal, state: web::Data<AppState>) -> AppResult<HttpResponse> {
    let files: Vec<Value> = state
        .workspace()
        .files_of(principal.user_id())
        .await?
        .iter()
        .map(object)
        .collect();
    Ok(HttpResponse::Ok().json(list_object(files, false)))
}

pub async fn owned(
    state: &AppState,
    principal: &Principal,
    id: &FileId,
) -> AppResult<entities::files::Model> {
    state
        .workspace()
        .file_owned(principal.user_id(), id)
        .await?
        .ok_or(AppError::NotFound("file"))
}

async fn retrieve(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<FileId>,
) -> AppResult<HttpResponse> {
    let file = owned(&state, &principal, &path).await?;
    Ok(HttpResponse::Ok().json(object(&file)))
}

async fn remove(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<FileId>,
) -> AppResult<HttpResponse> {
    let id = path.into_inner();
    if !state
        .workspace()
        .delete_file(principal.user_id(), &id)
        .await?
    {
        return Err(AppError::NotFound("file"));
    }
    Ok(HttpResponse::Ok().json(json!({"id": id, "object": "file", "deleted": true})))
}

async fn content(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<FileId>,
) -> AppResult<HttpResponse> {
    let file = owned(&state, &principal, &path).await?;
    let bytes = state
        .workspace()
        .read_stored(&file.storage_path)
        .await
        .map_err(AppError::internal)?;
    Ok(HttpResponse::Ok()
        .content_type("application/octet-stream")
        .body(bytes))
}
