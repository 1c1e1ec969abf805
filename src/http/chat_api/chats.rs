//! `/chat/api/chats`: create, list, get, rename, set the model of, pin, archive, file in a
//! folder (`folders`), and delete the caller's chats. The list shows pinned chats first and
//! leaves archived ones out unless asked for them alone (`?archived=true`).

use actix_web::{HttpResponse, web};
use entities::chats;
use entities::ids::{ChatFolderId, ChatId};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::auth::Principal;
use crate::chat::persistence::{ChatListView, Placement, context_strategy_of, parse_title};
use crate::config::ContextStrategy;
use crate::error::AppResult;
use crate::state::AppState;

/// Most chats one list call returns.
const MAX_LIST_LIMIT: u64 = 200;
const DEFAULT_LIST_LIMIT: u64 = 50;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/chat/api/chats")
            .route("", web::post().to(create))
            .route("", web::get().to(list))
            .route("/{chat_id}", web::get().to(get))
            .route("/{chat_id}", web::patch().to(update))
            .route("/{chat_id}", web::delete().to(delete)),
    );
}

#[derive(Serialize)]
struct ChatView {
    id: ChatId,
    title: String,
    /// What happens to history that outgrows the model's context (`drop` or `summarize`).
    context_strategy: ContextStrategy,
    /// The agent whose settings the chat's runs use.
    agent_id: Option<entities::ids::AgentId>,
    /// The model its next turn asks for; `None`: the agent's, else the server's default.
    model: Option<String>,
    pinned: bool,
    pinned_at: Option<chrono::DateTime<chrono::Utc>>,
    /// Archived: out of the default list (`?archived=true` lists these), still searchable.
    archived: bool,
    archived_at: Option<chrono::DateTime<chrono::Utc>>,
    /// The caller's folder it is in (`/chat/api/folders`), or `None`.
    folder_id: Option<ChatFolderId>,
    created_at: chrono::DateTime<chrono::Utc>,
    updated_at: chrono::DateTime<chrono::Utc>,
}

impl ChatView {
    fn new(state: &AppState, chat: chats::Model) -> Self {
        Self {
            context_strategy: context_strategy_of(&chat, state.config().agent.context_strategy),
            id: chat.id,
            title: chat.title,
            agent_id: chat.agent_id,
            model: chat.model,
            pinned: chat.pinned_at.is_some(),
            pinned_at: chat.pinned_at,
            archived: chat.archived_at.is_some(),
            archived_at: chat.archived_at,
            folder_id: chat.folder_id,
            created_at: chat.created_at,
            updated_at: chat.updated_at,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateChat {
    title: Option<String>,
    context_strategy: Option<ContextStrategy>,
    /// One of the caller's agents; the default agent when none is named.
    agent_id: Option<entities::ids::AgentId>,
    /// The model its turns ask for; without one, the agent's, else the caller's default.
    model: Option<String>,
}

async fn create(
    principal: Principal,
    state: web::Data<AppState>,
    body: web::Json<CreateChat>,
) -> AppResult<HttpResponse> {
    let body = body.into_inner();
    let title = match body.title {
        Some(raw) => Some(parse_title(&raw)?),
        None => None,
    };
    let agent = match &body.agent_id {
        Some(id) => Some(
            state
                .launcher
                .agents
                .get_owned(principal.user_id(), id)
                .await?,
        ),
        None => None,
    };
    if let Some(model) = &body.model {
        super::model_picker::check_model(&state, &principal, model).await?;
    }
    let chat = state
        .launcher
        .create_chat(
            principal.user_id(),
            title,
            body.context_strategy,
            agent,
            body.model,
        )
        .await?;
    Ok(HttpResponse::Created().json(ChatView::new(&state, chat)))
}

#[derive(Deserialize)]
struct ListQuery {
    limit: Option<u64>,
    /// `true`: only the archived chats; otherwise only those not archived.
    #[serde(default)]
    archived: bool,
}

async fn list(
    principal: Principal,
    state: web::Data<AppState>,
    query: web::Query<ListQuery>,
) -> AppResult<HttpResponse> {
    let limit = query
        .limit
        .unwrap_or(DEFAULT_LIST_LIMIT)
        .clamp(1, MAX_LIST_LIMIT);
    let view = if query.archived {
        ChatListView::Archived
    } else {
        ChatListView::Active
    };
    let chats = state.chats().list(principal.user_id(), view, limit).await?;
    let data: Vec<ChatView> = chats
        .into_iter()
        .map(|chat| ChatView::new(&state, chat))
        .collect();
    Ok(HttpResponse::Ok().json(json!({"data": data})))
}

async fn get(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ChatId>,
) -> AppResult<HttpResponse> {
    let mut chat = state.chats().get_owned(principal.user_id(), &path).await?;
    // A chat a `/v1` request made, opened in the UI (a browser session): it is kept.
    if chat.ephemeral && principal.api_key_id().is_none() {
        chat = state.chats().keep(chat).await?;
    }
    // Runs still streaming in this chat, so a reloaded page (or another device) re-attaches.
    let running: Vec<serde_json::Value> = state
        .runs()
        .live_in_chat(&chat.id)
        .iter()
        .filter(|log| &log.owner_id == principal.user_id())
        .map(|log| json!({"id": log.run_id, "user_message_id": log.user_message_id()}))
        .collect();
    let next_firing =
        crate::chat::automations::schedules::next_firing_in_chat(state.db(), &chat.id).await?;
    let mut view = json!(ChatView::new(&state, chat));
    view["running_runs"] = json!(running);
    // A schedule firing here starts a run no request of this page started: the page looks then.
    view["next_firing_at"] = json!(next_firing);
    Ok(HttpResponse::Ok().json(view))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdateChat {
    title: Option<String>,
    context_strategy: Option<ContextStrategy>,
    agent_id: Option<entities::ids::AgentId>,
    /// The model the chat's next turns ask for: one a configured server serves.
    model: Option<String>,
    pinned: Option<bool>,
    archived: Option<bool>,
    /// One of the caller's folders, or `null` to take the chat out of its folder.
    #[serde(default, deserialize_with = "present")]
    folder_id: Option<Option<ChatFolderId>>,
}

/// A field that is present, `null` included (`Some(None)`), as opposed to left out (`None`).
fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// One of the caller's agents, by id: another user's is not found.
async fn owned_agent(
    state: &AppState,
    principal: &Principal,
    id: &entities::ids::AgentId,
) -> AppResult<entities::ids::AgentId> {
    Ok(state
        .launcher
        .agents
        .get_owned(principal.user_id(), id)
        .await?
        .id)
}

/// Renames a chat, sets its context strategy, moves it to another agent, and/or pins,
/// archives or files it. Everything is checked before anything is changed.
async fn update(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ChatId>,
    body: web::Json<UpdateChat>,
) -> AppResult<HttpResponse> {
    let body = body.into_inner();
    let placement = Placement {
        pinned: body.pinned,
        archived: body.archived,
        folder: body.folder_id,
    };
    if body.title.is_none()
        && body.context_strategy.is_none()
        && body.agent_id.is_none()
        && body.model.is_none()
        && placement.is_empty()
    {
        return Err(crate::error::AppError::invalid(
            "give a title, a context_strategy, an agent_id, a model, pinned, archived or a \
             folder_id to change",
        ));
    }
    if let Some(model) = &body.model {
        super::model_picker::check_model(&state, &principal, model).await?;
    }
    let title = body.title.as_deref().map(parse_title).transpose()?;
    if let Some(Some(folder)) = &placement.folder {
        super::folders::owned_folder(&state, &principal, folder).await?;
    }
    let mut chat = state
        .chats()
        .update(principal.user_id(), &path, title, body.context_strategy)
        .await?;
    if !placement.is_empty() {
        chat = state
            .chats()
            .organize(principal.user_id(), &path, placement)
            .await?;
    }
    if let Some(agent) = &body.agent_id {
        let agent = owned_agent(&state, &principal, agent).await?;
        chat = state
            .chats()
            .set_agent(principal.user_id(), &path, agent)
            .await?;
    }
    if let Some(model) = body.model {
        chat = state
            .chats()
            .set_model(principal.user_id(), &path, model)
            .await?;
    }
    Ok(HttpResponse::Ok().json(ChatView::new(&state, chat)))
}

async fn delete(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ChatId>,
) -> AppResult<HttpResponse> {
    state
        .launcher
        .forget_chat(principal.user_id(), &path)
        .await?;
    Ok(HttpResponse::Ok().json(json!({"deleted": true, "id": path.into_inner()})))
}
