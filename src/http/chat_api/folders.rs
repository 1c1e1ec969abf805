//! `/chat/api/folders`: list, create, rename and delete the caller's folders of chats (one
//! level: a folder holds chats, not folders). A chat goes into one with
//! `PATCH /chat/api/chats/{id}` and `folder_id`; deleting a folder moves its chats out.

use actix_web::{HttpResponse, web};
use entities::chat_folders;
use entities::ids::ChatFolderId;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::auth::Principal;
use crate::chat::persistence::{ChatFolders, parse_folder_name};
use crate::error::AppResult;
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/chat/api/folders")
            .route("", web::get().to(list))
            .route("", web::post().to(create))
            .route("/{folder_id}", web::patch().to(rename))
            .route("/{folder_id}", web::delete().to(delete)),
    );
}

#[derive(Serialize)]
struct FolderView {
    id: ChatFolderId,
    name: String,
    position: i32,
    created_at: chrono::DateTime<chrono::Utc>,
}

impl From<chat_folders::Model> for FolderView {
    fn from(folder: chat_folders::Model) -> Self {
        Self {
            id: folder.id,
            name: folder.name,
            position: folder.position,
            created_at: folder.created_at,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FolderName {
    name: String,
}

fn folders(state: &AppState) -> ChatFolders {
    ChatFolders::new(state.db().clone())
}

/// One of the caller's folders, by id: another user's is not found.
pub(super) async fn owned_folder(
    state: &AppState,
    principal: &Principal,
    id: &ChatFolderId,
) -> AppResult<chat_folders::Model> {
    Ok(folders(state).get_owned(principal.user_id(), id).await?)
}

async fn list(principal: Principal, state: web::Data<AppState>) -> AppResult<HttpResponse> {
    let data: Vec<FolderView> = folders(&state)
        .list(principal.user_id())
        .await?
        .into_iter()
        .map(FolderView::from)
        .collect();
    Ok(HttpResponse::Ok().json(json!({"data": data})))
}

async fn create(
    principal: Principal,
    state: web::Data<AppState>,
    body: web::Json<FolderName>,
) -> AppResult<HttpResponse> {
    let name = parse_folder_name(&body.name)?;
    let folder = folders(&state).create(principal.user_id(), name).await?;
    Ok(HttpResponse::Created().json(FolderView::from(folder)))
}

async fn rename(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ChatFolderId>,
    body: web::Json<FolderName>,
) -> AppResult<HttpResponse> {
    let name = parse_folder_name(&body.name)?;
    let folder = folders(&state)
        .rename(principal.user_id(), &path, name)
        .await?;
    Ok(HttpResponse::Ok().json(FolderView::from(folder)))
}

/// Deletes a folder; its chats stay, in no folder.
async fn delete(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ChatFolderId>,
) -> AppResult<HttpResponse> {
    let moved = folders(&state).delete(principal.user_id(), &path).await?;
    Ok(HttpResponse::Ok().json(json!({
        "deleted": true,
        "id": path.into_inner(),
        "chats_moved_out": moved,
    })))
}
