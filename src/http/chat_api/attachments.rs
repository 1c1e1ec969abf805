//! Images for the chat API under `/chat/api/{chatId}/attachments`: upload one (multipart field
//! `file`; checked by its bytes and size, kept until a message is sent with it or for
//! `attachments.unsent_retention_hours`), list the chat's, and read one's bytes (thumbnails,
//! served as the type its bytes are, never sniffed by the browser). A message carries them
//! by id (`attachments` on send and edit, `messages.rs`). `GET /chat/api/attachments/limits`
//! says what a client should refuse before uploading.

use actix_multipart::Multipart;
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use entities::ids::{AttachmentId, ChatId};
use futures_util::StreamExt;
use serde_json::json;

use super::documents::check_multipart;
use crate::auth::Principal;
use crate::chat::attachments::{AttachmentError, ImageType};
use crate::error::{AppError, AppResult};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/chat/api/attachments/limits", web::get().to(limits))
        .route("/chat/api/{chat_id}/attachments", web::get().to(list))
        .route("/chat/api/{chat_id}/attachments", web::post().to(upload))
        .route(
            "/chat/api/{chat_id}/attachments/{attachment_id}",
            web::get().to(content),
        );
}

fn view(row: &entities::attachments::Model) -> serde_json::Value {
    json!({
        "id": row.id,
        "mime_type": row.mime_type,
        "size": row.size,
        "message_id": row.message_id,
        "created_at": row.created_at,
    })
}

async fn limits(_principal: Principal, state: web::Data<AppState>) -> HttpResponse {
    let limits = state.launcher.attachments.limits();
    HttpResponse::Ok().json(json!({
        "max_image_bytes": limits.max_image_bytes,
        "max_images_per_message": limits.max_images_per_message,
        "mime_types": ImageType::ALL.map(ImageType::mime_type),
    }))
}

async fn list(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ChatId>,
) -> AppResult<HttpResponse> {
    let chat = state.chats().get_owned(principal.user_id(), &path).await?;
    let rows = state.launcher.attachments.list(&chat.id).await?;
    let data: Vec<serde_json::Value> = rows.iter().map(view).collect();
    Ok(HttpResponse::Ok().json(json!({"data": data})))
}

async fn upload(
    req: HttpRequest,
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ChatId>,
    payload: web::Payload,
) -> AppResult<HttpResponse> {
    let chat = state.chats().get_owned(principal.user_id(), &path).await?;
    let attachments = &state.launcher.attachments;
    let limit = attachments.limits().max_image_bytes;
    let too_large = |size: usize| AppError::from(AttachmentError::TooLarge { size, limit });
    check_multipart(
        &req,
        limit as u64,
        "send the image as multipart/form-data with a field named \"file\"",
    )
    .map_err(|err| match err {
        AppError::TooLarge { .. } => AppError::TooLarge {
            code: "image_too_large",
            message: format!("the upload is larger than an image may be ({limit} bytes)"),
        },
        other => other,
    })?;
    let mut form = Multipart::new(req.headers(), payload);
    while let Some(field) = form.next().await {
        let mut field =
            field.map_err(|err| AppError::invalid(format!("bad multipart body: {err}")))?;
        if field.name() != Some("file") {
            continue;
        }
        // At most `max_image_bytes` are held, so the image is read whole, then checked.
        let mut bytes: Vec<u8> = Vec::new();
        while let Some(chunk) = field.next().await {
            let chunk = chunk
                .map_err(|err| AppError::invalid(format!("the upload was interrupted: {err}")))?;
            if bytes.len() + chunk.len() > limit {
                return Err(too_large(bytes.len() + chunk.len()));
            }
            bytes.extend_from_slice(&chunk);
        }
        // The form yields nothing more while a field of it is alive.
        drop(field);
        super::documents::drain_rest(&mut form).await;
        let row = attachments
            .store_upload(&chat.id, principal.user_id(), bytes)
            .await?;
        return Ok(HttpResponse::Created().json(view(&row)));
    }
    Err(AppError::invalid("the form has no field named \"file\""))
}

async fn content(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(ChatId, String)>,
) -> AppResult<HttpResponse> {
    let (chat_id, raw) = path.into_inner();
    let id = AttachmentId::parse(&raw).ok_or(AppError::NotFound("attachment"))?;
    let attachments = &state.launcher.attachments;
    let row = attachments
        .get_owned(principal.user_id(), &chat_id, &id)
        .await?
        .ok_or(AppError::NotFound("attachment"))?;
    let bytes = attachments.read(&chat_id, &id).await.map_err(|err| {
        if err.kind() == std::io::ErrorKind::NotFound {
            AppError::NotFound("attachment")
        } else {
            AppError::internal(err)
        }
    })?;
    Ok(HttpResponse::Ok()
        .content_type(row.mime_type)
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        // An attachment never changes: the browser may keep it, for this user only.
        .insert_header((
            header::CACHE_CONTROL,
            "private, max-age=31536000, immutable",
        ))
        .body(bytes))
}
