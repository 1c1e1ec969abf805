//! `/chat/api/chats/{chatId}/shares`: the owner's read-only links to a chat — create (the
//! token is in that answer only), list (without tokens), revoke. What a link shows is served by
//! `http::shared`, outside every authenticated API.

use actix_web::{HttpRequest, HttpResponse, web};
use entities::chat_shares;
use entities::ids::{ChatId, ChatShareId};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::auth::Principal;
use crate::chat::shares;
use crate::error::{AppError, AppResult};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    // Mounted before `chats`' `/chat/api/chats` scope, which would otherwise answer these paths.
    cfg.route("/chat/api/chats/{chat_id}/shares", web::post().to(create))
        .route("/chat/api/chats/{chat_id}/shares", web::get().to(list))
        .route(
            "/chat/api/chats/{chat_id}/shares/{share_id}",
            web::delete().to(revoke),
        );
}

#[derive(Serialize)]
struct ShareView {
    id: ChatShareId,
    chat_id: ChatId,
    created_at: chrono::DateTime<chrono::Utc>,
    expires_at: Option<chrono::DateTime<chrono::Utc>>,
    /// Whether its expiry has passed (it answers 404 then).
    expired: bool,
}

impl From<chat_shares::Model> for ShareView {
    fn from(row: chat_shares::Model) -> Self {
        Self {
            expired: row.expires_at.is_some_and(|at| at <= chrono::Utc::now()),
            id: row.id,
            chat_id: row.chat_id,
            created_at: row.created_at,
            expires_at: row.expires_at,
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct CreateShare {
    /// When the link stops opening (RFC 3339).
    expires_at: Option<chrono::DateTime<chrono::Utc>>,
    /// Or: in how many seconds it stops opening.
    expires_in: Option<i64>,
}

/// Where a link opens: under `public_url` when it is set, else under the host this request
/// came to.
fn link(state: &AppState, req: &HttpRequest, token: &str) -> String {
    let base = match &state.config().public_url {
        Some(url) => url.trim_end_matches('/').to_string(),
        None => {
            let info = req.connection_info();
            format!("{}://{}", info.scheme(), info.host())
        }
    };
    format!("{base}/s/{token}")
}

async fn create(
    principal: Principal,
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<ChatId>,
    body: web::Bytes,
) -> AppResult<HttpResponse> {
    // No body: a link without expiry. A body that does not parse is refused, never ignored.
    let body: CreateShare = if body.iter().all(u8::is_ascii_whitespace) {
        CreateShare::default()
    } else {
        serde_json::from_slice(&body).map_err(|err| AppError::InvalidJson(err.to_string()))?
    };
    let chat = state.chats().get_owned(principal.user_id(), &path).await?;
    let expires_at = shares::expiry(chrono::Utc::now(), body.expires_at, body.expires_in)?;
    let issued = shares::create(state.db(), principal.user_id(), &chat.id, expires_at).await?;
    let mut view = json!(ShareView::from(issued.share));
    view["url"] = json!(link(&state, &req, &issued.token));
    view["token"] = json!(issued.token);
    Ok(HttpResponse::Created()
        .insert_header((actix_web::http::header::CACHE_CONTROL, "no-store"))
        .json(view))
}

async fn list(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ChatId>,
) -> AppResult<HttpResponse> {
    let chat = state.chats().get_owned(principal.user_id(), &path).await?;
    let rows = shares::list(state.db(), principal.user_id(), &chat.id).await?;
    let data: Vec<ShareView> = rows.into_iter().map(ShareView::from).collect();
    Ok(HttpResponse::Ok().json(json!({"data": data, "limit": shares::MAX_SHARES_PER_CHAT})))
}

async fn revoke(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(ChatId, String)>,
) -> AppResult<HttpResponse> {
    let (chat_id, raw) = path.into_inner();
    let chat = state
        .chats()
        .get_owned(principal.user_id(), &chat_id)
        .await?;
    let id = ChatShareId::parse(&raw).ok_or(AppError::NotFound("share"))?;
    shares::revoke(state.db(), principal.user_id(), &chat.id, &id).await?;
    Ok(HttpResponse::Ok().json(json!({"deleted": true, "id": id})))
}
