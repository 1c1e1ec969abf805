//! OpenAI's Containers API over the code interpreter's containers (`tools::code_interpreter`):
//! `POST`/`GET /v1/containers`, `GET`/`DELETE /v1/containers/{id}`, and a container's files:
//! `POST /v1/containers/{id}/files` (multipart `file`, or JSON `{"file_id"}` naming a
//! `/v1/files` file), `GET …/files`, `GET`/`DELETE …/files/{file}`, `GET …/files/{file}/content`.
//! A container is its maker's; another user's is a 404.

use actix_multipart::Multipart;
use actix_web::{HttpRequest, HttpResponse, web};
use entities::ids::{ContainerFileId, ContainerId, FileId};
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{Value, json};

use super::shared::ListQuery;
use crate::auth::Principal;
use crate::error::{AppError, AppResult};
use crate::http::chat_api::documents::{check_multipart, too_large};
use crate::retrieval::extract::sanitize_filename;
use crate::state::AppState;
use crate::tools::code_interpreter::Containers;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/containers", web::post().to(create))
        .route("/v1/containers", web::get().to(list))
        .route("/v1/containers/{id}", web::get().to(retrieve))
        .route("/v1/containers/{id}", web::delete().to(remove))
        .route("/v1/containers/{id}/files", web::post().to(add_file))
        .route("/v1/containers/{id}/files", web::get().to(files))
        .route("/v1/containers/{id}/files/{file}", web::get().to(file))
        .route(
            "/v1/containers/{id}/files/{file}",
            web::delete().to(remove_file),
        )
        .route(
            "/v1/containers/{id}/files/{file}/content",
            web::get().to(content),
        );
}

fn containers(state: &AppState) -> &Containers {
    &state.launcher.containers
}

fn object(containers: &Containers, container: &entities::containers::Model) -> Value {
    let idle = chrono::Duration::minutes(i64::from(container.expires_after_minutes));
    let running = containers.is_running(&container.id)
        || chrono::Utc::now() - container.last_active_at < idle;
    json!({
        "id": container.id,
        "object": "container",
        "name": container.name,
        "created_at": container.created_at.timestamp(),
        "last_active_at": container.last_active_at.timestamp(),
        "status": if running { "running" } else { "expired" },
        "expires_after": {"anchor": "last_active_at", "minutes": container.expires_after_minutes},
    })
}

fn file_object(file: &entities::container_files::Model) -> Value {
    json!({
        "id": file.id,
        "object": "container.file",
        "container_id": file.container_id,
        "path": file.path,
        "bytes": file.bytes,
        "source": file.source,
        "created_at": file.created_at.timestamp(),
    })
}

/// OpenAI's create body; `memory_limit` and the fields this server does not use are accepted
/// (its limits are the server's, `[code_interpreter]`).
#[derive(Deserialize)]
struct CreateContainer {
    name: String,
    #[serde(default)]
    file_ids: Vec<FileId>,
    #[serde(default)]
    expires_after: Option<Value>,
}

/// A container id from the path, or a 404 without a query.
fn container_id(raw: &str) -> AppResult<ContainerId> {
    ContainerId::parse(raw).ok_or(AppError::NotFound("container"))
}

async fn owned(
    state: &AppState,
    principal: &Principal,
    raw: &str,
) -> AppResult<entities::containers::Model> {
    Ok(containers(state)
        .get_owned(principal.user_id(), &container_id(raw)?)
        .await?)
}

async fn create(
    principal: Principal,
    state: web::Data<AppState>,
    body: web::Json<CreateContainer>,
) -> AppResult<HttpResponse> {
    let body = body.into_inner();
    if body.file_ids.len() > 50 {
        return Err(AppError::invalid("file_ids holds at most 50 files"));
    }
    if let Some(expires) = &body.expires_after
        && expires["anchor"] != "last_active_at"
    {
        return Err(AppError::invalid(
            "expires_after.anchor must be \"last_active_at\"",
        ));
    }
    let made = containers(&state)
        .create(principal.user_id(), None, &body.name, &body.file_ids)
        .await?;
    Ok(HttpResponse::Ok().json(object(containers(&state), &made)))
}

async fn list(
    principal: Principal,
    state: web::Data<AppState>,
    query: web::Query<ListQuery>,
) -> AppResult<HttpResponse> {
    let all = containers(&state).list(principal.user_id()).await?;
    // Oldest first, as `page` takes them.
    let items = all
        .iter()
        .rev()
        .map(|c| object(containers(&state), c))
        .collect();
    Ok(HttpResponse::Ok().json(query.page(items)?))
}

async fn retrieve(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> AppResult<HttpResponse> {
    let container = owned(&state, &principal, &path).await?;
    Ok(HttpResponse::Ok().json(object(containers(&state), &container)))
}

async fn remove(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> AppResult<HttpResponse> {
    let id = container_id(&path)?;
    containers(&state).delete(principal.user_id(), &id).await?;
    Ok(HttpResponse::Ok().json(json!({"id": id, "object": "container.deleted", "deleted": true})))
}

async fn add_file(
    req: HttpRequest,
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<String>,
    payload: web::Payload,
) -> AppResult<HttpResponse> {
    let container = owned(&state, &principal, &path).await?;
    let is_json = req
        .headers()
        .get(actix_web::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/json"));
    let made = if is_json {
        let body = read_small(payload, 4096).await?;
        let body: Value =
            serde_json::from_slice(&body).map_err(|err| AppError::InvalidJson(err.to_string()))?;
        let id = body["file_id"]
            .as_str()
            .ok_or_else(|| AppError::invalid("send {\"file_id\": …} or a multipart \"file\""))?;
        containers(&state)
            .add_user_file(&container, principal.user_id(), &FileId::from_string(id))
            .await?
    } else {
        let limit = (containers(&state).config().container_mb * 1024 * 1024)
            .min(state.config().documents.max_file_bytes);
        check_multipart(
            &req,
            limit,
            "send the file as multipart/form-data with the field \"file\", or JSON {\"file_id\"}",
        )?;
        let (filename, bytes) = read_file_field(&req, payload, limit).await?;
        containers(&state)
            .add_file(&container, &filename, bytes)
            .await?
    };
    Ok(HttpResponse::Ok().json(file_object(&made)))
}

/// A small body, whole (at most `limit` bytes).
async fn read_small(mut payload: web::Payload, limit: usize) -> AppResult<Vec<u8>> {
    let mut body = Vec::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|err| AppError::invalid(err.to_string()))?;
        if body.len() + chunk.len() > limit {
            return Err(AppError::PayloadTooLarge { limit });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The multipart form's `file` field: its name and bytes (at most `limit`).
async fn read_file_field(
    req: &HttpRequest,
    payload: web::Payload,
    limit: u64,
) -> AppResult<(String, Vec<u8>)> {
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
        let mut bytes = Vec::new();
        while let Some(chunk) = field.next().await {
            let chunk = chunk
                .map_err(|err| AppError::invalid(format!("the upload was interrupted: {err}")))?;
            if (bytes.len() + chunk.len()) as u64 > limit {
                return Err(too_large(limit));
            }
            bytes.extend_from_slice(&chunk);
        }
        return Ok((filename, bytes));
    }
    Err(AppError::invalid("the form has no field named \"file\""))
}

async fn files(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<String>,
    query: web::Query<ListQuery>,
) -> AppResult<HttpResponse> {
    let container = owned(&state, &principal, &path).await?;
    let items = containers(&state)
        .files(&container)
        .await?
        .iter()
        .map(file_object)
        .collect();
    Ok(HttpResponse::Ok().json(query.page(items)?))
}

/// The container file the path names, if the container is the user's.
async fn owned_file(
    state: &AppState,
    principal: &Principal,
    path: &(String, String),
) -> AppResult<entities::container_files::Model> {
    let container = owned(state, principal, &path.0).await?;
    let id = ContainerFileId::parse(&path.1).ok_or(AppError::NotFound("container file"))?;
    Ok(containers(state).file(&container, &id).await?)
}

async fn file(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
) -> AppResult<HttpResponse> {
    let file = owned_file(&state, &principal, &path).await?;
    Ok(HttpResponse::Ok().json(file_object(&file)))
}

async fn remove_file(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
) -> AppResult<HttpResponse> {
    let container = owned(&state, &principal, &path.0).await?;
    let id = ContainerFileId::parse(&path.1).ok_or(AppError::NotFound("container file"))?;
    containers(&state).delete_file(&container, &id).await?;
    Ok(HttpResponse::Ok()
        .json(json!({"id": id, "object": "container.file.deleted", "deleted": true})))
}

async fn content(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
) -> AppResult<HttpResponse> {
    let file = owned_file(&state, &principal, &path).await?;
    let bytes = containers(&state).content(&file).await?;
    let name = file.path.rsplit('/').next().unwrap_or("file");
    let shown: String = name
        .chars()
        .map(|c| {
            if c.is_control() || c == '"' || c == '\\' {
                '_'
            } else {
                c
            }
        })
        .collect();
    // What code wrote is never run as a page of this origin: a download, sniffing off, and a
    // sandbox for whatever opens it anyway.
    Ok(HttpResponse::Ok()
        .content_type(content_type(name))
        .insert_header((
            "Content-Disposition",
            format!("attachment; filename=\"{shown}\""),
        ))
        .insert_header(("X-Content-Type-Options", "nosniff"))
        .insert_header(("Content-Security-Policy", "sandbox"))
        .body(bytes))
}

/// The content type a file's name suggests (what the code interpreter's files mostly are).
fn content_type(name: &str) -> &'static str {
    let extension = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match extension.as_deref() {
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        Some("pdf") => "application/pdf",
        Some("csv") => "text/csv",
        Some("json") => "application/json",
        Some("txt" | "md" | "py" | "log") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}
