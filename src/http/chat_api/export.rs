//! Export and import of chats: `GET /chat/api/{chat_id}/export?format=markdown|json` (the
//! visible branch as Markdown, or the whole tree with artifacts and metadata as JSON),
//! `GET /chat/api/export` (all of the caller's chats as one zip) and `POST /chat/api/import`
//! (a JSON export as a new chat; its own body limit, `MAX_IMPORT_BYTES`). Another user's chat
//! is not found.

use actix_web::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
use actix_web::{HttpResponse, web};
use entities::ids::ChatId;
use serde::Deserialize;
use serde_json::json;

use crate::auth::Principal;
use crate::chat::export::{
    ChatExport, ImportLimits, MAX_IMPORT_BYTES, archive, export_chat, file_stem, import_chat,
    to_markdown,
};
use crate::error::AppResult;
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/chat/api/export", web::get().to(export_all))
        .service(
            web::resource("/chat/api/import")
                .app_data(
                    web::JsonConfig::default()
                        .limit(MAX_IMPORT_BYTES)
                        .error_handler(crate::http::json_error),
                )
                .route(web::post().to(import)),
        )
        .route("/chat/api/{chat_id}/export", web::get().to(export_one));
}

#[derive(Deserialize, Default, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Format {
    #[default]
    Json,
    Markdown,
}

#[derive(Deserialize)]
struct ExportQuery {
    #[serde(default)]
    format: Format,
}

fn attachment(name: &str) -> (actix_web::http::header::HeaderName, String) {
    (
        CONTENT_DISPOSITION,
        format!("attachment; filename=\"{name}\""),
    )
}

async fn export_one(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ChatId>,
    query: web::Query<ExportQuery>,
) -> AppResult<HttpResponse> {
    let chat = state.chats().get_owned(principal.user_id(), &path).await?;
    let export = export_chat(&state.launcher.db, &chat).await?;
    let stem = file_stem(&chat.title, chat.id.as_str());
    Ok(match query.format {
        Format::Json => HttpResponse::Ok()
            .insert_header(attachment(&format!("{stem}.json")))
            .json(export),
        Format::Markdown => HttpResponse::Ok()
            .insert_header((CONTENT_TYPE, "text/markdown; charset=utf-8"))
            .insert_header(attachment(&format!("{stem}.md")))
            .body(to_markdown(&export)),
    })
}

async fn export_all(principal: Principal, state: web::Data<AppState>) -> AppResult<HttpResponse> {
    let zip = archive(&state.launcher.db, principal.user_id()).await?;
    let day = chrono::Utc::now().format("%Y-%m-%d");
    Ok(HttpResponse::Ok()
        .insert_header((CONTENT_TYPE, "application/zip"))
        .insert_header(attachment(&format!("colloquy-chats-{day}.zip")))
        .body(zip))
}

/// Imports a JSON export as a new chat of the caller's, with the export's agent when it is one
/// of theirs (an export of their own), else their default agent.
async fn import(
    principal: Principal,
    state: web::Data<AppState>,
    body: web::Json<ChatExport>,
) -> AppResult<HttpResponse> {
    let export = body.into_inner();
    let agents = &state.launcher.agents;
    let named = export
        .chat
        .agent
        .as_ref()
        .map(|agent| entities::ids::AgentId::from_string(agent.id.clone()));
    let agent = match named {
        Some(id) => match agents.get_owned(principal.user_id(), &id).await {
            Ok(agent) => agent.id,
            Err(_) => agents.default_for(principal.user_id()).await?.id,
        },
        None => agents.default_for(principal.user_id()).await?.id,
    };
    let limits = ImportLimits::of(state.config());
    let imported = import_chat(
        &state.launcher.db,
        principal.user_id(),
        agent,
        export,
        &limits,
    )
    .await?;
    tracing::info!(chat = %imported.chat.id, messages = imported.messages, "chat imported");
    let chat = imported.chat;
    Ok(HttpResponse::Created().json(json!({
        "id": chat.id,
        "title": chat.title,
        "agent_id": chat.agent_id,
        "model": chat.model,
        "created_at": chat.created_at,
        "updated_at": chat.updated_at,
        "imported": {
            "messages": imported.messages,
            "artifacts": imported.artifacts,
            "memories": imported.memories,
            "images_left_out": imported.images_left_out,
        },
    })))
}
