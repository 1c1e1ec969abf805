//! OpenAI's Conversations API over Colloquy's chats: a conversation is a chat (its id is the
//! chat's), so one made here opens in the UI and a chat from the UI continues here. Its items
//! are the messages of the chat's active branch. `conversation` on `POST /v1/responses` runs a
//! turn in it. Deleting an item deletes its message, when nothing follows it.

use actix_web::{HttpResponse, web};
use entities::ids::{ChatId, MessageId};
use entities::messages::MessageRole;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::shared::{ListQuery, check_metadata, list_object};
use crate::auth::Principal;
use crate::chat::persistence::ChatStoreError;
use crate::chat::session::{GetActivePath, ImportHistory, RemoveLeaf};
use crate::chat::tree::MessageNode;
use crate::error::{AppError, AppResult};
use crate::state::AppState;
use crate::supervisor::launch::images::{PendingMessage, read_messages, store_history};

/// Most items one request may add.
const MAX_ITEMS: usize = 20;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/conversations", web::post().to(create))
        .route("/v1/conversations/{id}", web::get().to(retrieve))
        .route("/v1/conversations/{id}", web::post().to(update))
        .route("/v1/conversations/{id}", web::delete().to(remove))
        .route("/v1/conversations/{id}/items", web::get().to(list_items))
        .route("/v1/conversations/{id}/items", web::post().to(add_items))
        .route(
            "/v1/conversations/{id}/items/{item_id}",
            web::get().to(get_item),
        )
        .route(
            "/v1/conversations/{id}/items/{item_id}",
            web::delete().to(delete_item),
        );
}

fn object(chat: &entities::chats::Model) -> Value {
    json!({
        "id": chat.id,
        "object": "conversation",
        "created_at": chat.created_at.timestamp(),
        "metadata": chat.metadata.clone().unwrap_or(json!({})),
    })
}

/// A message of the chat as a conversation item.
fn item(node: &MessageNode) -> Option<Value> {
    let (role, part) = match node.role {
        MessageRole::User => ("user", "input_text"),
        MessageRole::Assistant => ("assistant", "output_text"),
        MessageRole::System => ("system", "input_text"),
        MessageRole::Tool => return None,
    };
    let text = node.content.clone().unwrap_or_default();
    let mut content = json!({"type": part, "text": text});
    if part == "output_text" {
        content["annotations"] = json!([]);
    }
    Some(json!({
        "type": "message",
        "id": node.id,
        "status": "completed",
        "role": role,
        "content": [content],
    }))
}

/// Items to add: messages with a role and content (text, and a user message's images).
fn history_of(items: &[Value]) -> AppResult<Vec<(MessageRole, crate::llm::wire::ChatMessage)>> {
    if items.len() > MAX_ITEMS {
        return Err(AppError::invalid(format!(
            "at most {MAX_ITEMS} items per request"
        )));
    }
    let messages = super::responses::messages_of(items)?;
    messages
        .into_iter()
        .map(|message| {
            use crate::llm::wire::Role;
            let role = match message.role {
                Role::User => MessageRole::User,
                Role::Assistant if message.tool_calls.is_none() => MessageRole::Assistant,
                Role::System | Role::Developer => MessageRole::System,
                _ => {
                    return Err(AppError::invalid(
                        "a conversation's items are messages; function calls are added by the \
                         responses that make them",
                    ));
                }
            };
            Ok((role, message))
        })
        .collect()
}

#[derive(Deserialize)]
struct CreateBody {
    #[serde(default)]
    items: Vec<Value>,
    metadata: Option<Map<String, Value>>,
}

/// Reads the items' messages (their length and images checked) before anything is stored.
fn read_history(
    state: &AppState,
    history: Vec<(MessageRole, crate::llm::wire::ChatMessage)>,
) -> AppResult<Vec<(MessageRole, PendingMessage)>> {
    for (_, message) in &history {
        crate::supervisor::launch::check_message_length(
            state.config(),
            crate::llm::wire::Role::User,
            &message.text(),
        )?;
    }
    let (roles, messages): (Vec<MessageRole>, Vec<_>) = history.into_iter().unzip();
    let read = read_messages(&state.config().attachments, &messages)?;
    Ok(roles.into_iter().zip(read).collect())
}

/// Adds the messages to the chat (the caller's), their images stored as its attachments;
/// `fresh`: the chat was made for this request, and is deleted again if that fails.
async fn add(
    state: &AppState,
    principal: &Principal,
    chat_id: &ChatId,
    history: Vec<(MessageRole, PendingMessage)>,
    fresh: bool,
) -> AppResult<Vec<MessageId>> {
    if history.is_empty() {
        return Ok(Vec::new());
    }
    let count = history.len();
    // Owned here before anything is stored, so a request forwarded to the owner stores once.
    state.sessions().claim(chat_id).await?;
    let messages = store_history(&state.launcher, principal, chat_id, history, fresh).await?;
    let session = state.sessions().session(chat_id).await?;
    session.send(ImportHistory { messages }).await??;
    let path = session.send(GetActivePath).await?;
    Ok(path
        .iter()
        .rev()
        .take(count)
        .rev()
        .map(|n| n.id.clone())
        .collect())
}

async fn create(
    principal: Principal,
    state: web::Data<AppState>,
    body: web::Json<CreateBody>,
) -> AppResult<HttpResponse> {
    let body = body.into_inner();
    if let Some(metadata) = &body.metadata {
        check_metadata(metadata)?;
    }
    let history = read_history(&state, history_of(&body.items)?)?;
    let chat = state
        .chats()
        .create(principal.user_id(), None, false)
        .await?;
    let chat = match body.metadata {
        Some(metadata) => {
            state
                .chats()
                .set_metadata(
                    principal.user_id(),
                    &chat.id,
                    None,
                    Some(Value::Object(metadata)),
                )
                .await?
        }
        None => chat,
    };
    add(&state, &principal, &chat.id, history, true).await?;
    Ok(HttpResponse::Ok().json(object(&chat)))
}

async fn owned(
    state: &AppState,
    principal: &Principal,
    id: &ChatId,
) -> AppResult<entities::chats::Model> {
    state
        .chats()
        .get_owned(principal.user_id(), id)
        .await
        .map_err(|err| match err {
            ChatStoreError::NotFound => AppError::NotFound("conversation"),
            other => other.into(),
        })
}

async fn retrieve(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ChatId>,
) -> AppResult<HttpResponse> {
    let chat = owned(&state, &principal, &path).await?;
    Ok(HttpResponse::Ok().json(object(&chat)))
}

#[derive(Deserialize)]
struct UpdateBody {
    metadata: Map<String, Value>,
}

async fn update(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ChatId>,
    body: web::Json<UpdateBody>,
) -> AppResult<HttpResponse> {
    let metadata = body.into_inner().metadata;
    check_metadata(&metadata)?;
    owned(&state, &principal, &path).await?;
    let chat = state
        .chats()
        .set_metadata(
            principal.user_id(),
            &path,
            None,
            Some(Value::Object(metadata)),
        )
        .await?;
    Ok(HttpResponse::Ok().json(object(&chat)))
}

async fn remove(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ChatId>,
) -> AppResult<HttpResponse> {
    let chat = owned(&state, &principal, &path).await?;
    state
        .launcher
        .forget_chat(principal.user_id(), &chat.id)
        .await?;
    Ok(
        HttpResponse::Ok().json(json!({"id": chat.id, "object": "conversation.deleted",
        "deleted": true})),
    )
}

async fn path_items(state: &AppState, chat_id: &ChatId) -> AppResult<Vec<Value>> {
    let path = state
        .sessions()
        .session(chat_id)
        .await?
        .send(GetActivePath)
        .await?;
    Ok(path.iter().filter_map(item).collect())
}

async fn list_items(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ChatId>,
    query: web::Query<ListQuery>,
) -> AppResult<HttpResponse> {
    let chat = owned(&state, &principal, &path).await?;
    let items = path_items(&state, &chat.id).await?;
    Ok(HttpResponse::Ok().json(query.page(items)?))
}

#[derive(Deserialize)]
struct AddBody {
    items: Vec<Value>,
}

async fn add_items(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ChatId>,
    body: web::Json<AddBody>,
) -> AppResult<HttpResponse> {
    let chat = owned(&state, &principal, &path).await?;
    let history = read_history(&state, history_of(&body.items)?)?;
    if history.is_empty() {
        return Err(AppError::invalid("items must not be empty"));
    }
    let added = add(&state, &principal, &chat.id, history, false).await?;
    let items: Vec<Value> = path_items(&state, &chat.id)
        .await?
        .into_iter()
        .filter(|i| added.iter().any(|id| i["id"] == id.as_str()))
        .collect();
    Ok(HttpResponse::Ok().json(list_object(items, false)))
}

async fn get_item(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(ChatId, MessageId)>,
) -> AppResult<HttpResponse> {
    let (chat_id, item_id) = path.into_inner();
    let chat = owned(&state, &principal, &chat_id).await?;
    path_items(&state, &chat.id)
        .await?
        .into_iter()
        .find(|i| i["id"] == item_id.as_str())
        .map(|item| HttpResponse::Ok().json(item))
        .ok_or(AppError::NotFound("conversation item"))
}

/// Deletes an item nothing follows (the last message of a branch); answers with the
/// conversation, as OpenAI's does.
async fn delete_item(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(ChatId, MessageId)>,
) -> AppResult<HttpResponse> {
    let (chat_id, item_id) = path.into_inner();
    let chat = owned(&state, &principal, &chat_id).await?;
    if !state.runs().live_in_chat(&chat.id).is_empty() {
        return Err(AppError::Conflict(
            "a response is running in this conversation; delete items once it has finished".into(),
        ));
    }
    state
        .sessions()
        .session(&chat.id)
        .await?
        .send(RemoveLeaf {
            message_id: item_id,
        })
        .await?
        .map_err(|err| match err {
            crate::chat::session::ChatError::Tree(
                crate::chat::tree::TreeError::UnknownMessage(_),
            ) => AppError::NotFound("conversation item"),
            other => other.into(),
        })?;
    Ok(HttpResponse::Ok().json(object(&chat)))
}
