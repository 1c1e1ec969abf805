//! `/chat/api/search`: the caller's messages that match a query, across all their chats, best
//! first, each with its chat's title and a snippet whose matching words are marked (as ranges,
//! so a page shows the text as text).

use actix_web::{HttpResponse, web};
use chrono::{DateTime, Utc};
use entities::ids::{ChatId, MessageId};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::auth::Principal;
use crate::chat::search::{FoundMessage, SearchQuery, Snippet};
use crate::error::{AppError, AppResult};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/chat/api/search", web::get().to(search));
}

#[derive(Deserialize)]
struct SearchParams {
    #[serde(default)]
    q: String,
    limit: Option<usize>,
}

#[derive(Serialize)]
struct FoundView {
    chat_id: ChatId,
    chat_title: String,
    message_id: MessageId,
    role: String,
    created_at: DateTime<Utc>,
    score: f32,
    /// The fragment as text; `highlights`: `[start, end)` in UTF-16 code units.
    snippet: Snippet,
}

impl From<FoundMessage> for FoundView {
    fn from(found: FoundMessage) -> Self {
        Self {
            chat_id: found.chat_id,
            chat_title: found.chat_title,
            message_id: found.message_id,
            role: found.role,
            created_at: found.created_at,
            score: found.score,
            snippet: found.snippet,
        }
    }
}

async fn search(
    principal: Principal,
    state: web::Data<AppState>,
    params: web::Query<SearchParams>,
) -> AppResult<HttpResponse> {
    let query =
        SearchQuery::parse(&params.q, params.limit).map_err(|err| AppError::InvalidWithCode {
            code: err.code(),
            message: err.to_string(),
        })?;
    let search = state
        .sessions()
        .search()
        .ok_or_else(|| AppError::Unavailable("search is not available".into()))?;
    let found = search
        .search(principal.user_id(), &query)
        .await
        .map_err(AppError::internal)?;
    let data: Vec<FoundView> = found.into_iter().map(FoundView::from).collect();
    Ok(HttpResponse::Ok().json(json!({"data": data})))
}
