//! `GET /chat/api/{chatId}/screenshots/{id}`: a PNG a browser session took in the chat (the URL
//! a `browser_action` screenshot result and its event carry), for its owner only: another
//! user's chat, or an id the chat does not have, is a 404. Served as `image/png`, never
//! sniffed, cached privately (a screenshot never changes).

use actix_web::http::header;
use actix_web::{HttpResponse, web};
use entities::ids::ChatId;

use crate::auth::Principal;
use crate::error::{AppError, AppResult};
use crate::state::AppState;
use crate::tools::browser::ScreenshotId;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route(
        "/chat/api/{chat_id}/screenshots/{screenshot_id}",
        web::get().to(content),
    );
}

async fn content(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(ChatId, String)>,
) -> AppResult<HttpResponse> {
    let (chat_id, raw) = path.into_inner();
    let id = ScreenshotId::parse(&raw).ok_or(AppError::NotFound("screenshot"))?;
    let chat = state
        .chats()
        .get_owned(principal.user_id(), &chat_id)
        .await?;
    let bytes = state
        .launcher
        .browsers
        .screenshots()
        .read(&chat.id, &id)
        .await
        .map_err(|err| match err.kind() {
            std::io::ErrorKind::NotFound => AppError::NotFound("screenshot"),
            _ => AppError::internal(err),
        })?;
    Ok(HttpResponse::Ok()
        .content_type("image/png")
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((
            header::CACHE_CONTROL,
            "private, max-age=31536000, immutable",
        ))
        .body(bytes))
}
