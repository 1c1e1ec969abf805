//! Where a Responses request runs: a turn of a chat (a new one, the previous response's, a
//! conversation's or `x_chat_id`'s), the results of a waiting run's function calls, or no chat
//! at all; and the `item_reference`s it sends, resolved from the caller's stored responses.

use entities::ids::{ChatId, MessageId};
use entities::messages::MessageRole;
use serde_json::Value;

use super::items::{ApprovalAnswer, approvals_of, messages_of, trailing_outputs};
use super::request::ResponsesRequest;
use crate::auth::Principal;
use crate::chat::persistence::ChatStoreError;
use crate::chat::responses as stored;
use crate::error::{AppError, AppResult};
use crate::llm::wire::{ChatMessage, MessageContent, Role};
use crate::state::AppState;
use crate::supervisor::launch::RunOptions;
use crate::supervisor::resume::ToolResult;
use crate::supervisor::turn::ChatSlot;

/// Where a request's run goes, resolved without writing anything.
pub enum Target {
    /// A turn of this chat (a new one for a new chain), after the leading messages are added
    /// to it.
    Turn {
        chat: ChatSlot,
        parent: Option<MessageId>,
        /// The leading user and assistant messages, with their roles.
        history: Vec<(MessageRole, ChatMessage)>,
        /// The new user message (its text and image parts).
        last: ChatMessage,
    },
    /// The answer to the MCP approval the chat's paused run waits on.
    Approval {
        chat_id: ChatId,
        answer: ApprovalAnswer,
    },
    /// The results of the chat's waiting function calls.
    ToolResults {
        chat_id: ChatId,
        results: Vec<ToolResult>,
    },
    /// No chat: the messages are the whole context.
    Unstored(Vec<ChatMessage>),
}

/// The leading messages of a turn and its user message: system and developer messages become
/// the run's instructions, user and assistant ones history; tool exchanges cannot be stored.
fn split_turn(
    messages: Vec<ChatMessage>,
    options: &mut RunOptions,
) -> AppResult<(Vec<(MessageRole, ChatMessage)>, ChatMessage)> {
    let mut messages = messages;
    let last = messages
        .pop()
        .filter(|m| m.role == Role::User && has_text_or_image(m))
        .ok_or_else(|| {
            AppError::invalid(
                "input must end with a user message with text or images (or with \
                 function_call_output items answering the waiting function calls)",
            )
        })?;
    let mut history = Vec::new();
    let mut instructions: Vec<String> = options.instructions.take().into_iter().collect();
    for message in messages {
        if message.tool_calls.is_some() || message.role == Role::Tool {
            return Err(AppError::invalid(
                "function calls and their outputs in the input can only continue the response \
                 that made them (with previous_response_id); send store: false to run a \
                 conversation given whole",
            ));
        }
        match message.role {
            Role::System | Role::Developer => instructions.push(message.text()),
            Role::User => history.push((MessageRole::User, message)),
            Role::Assistant => history.push((MessageRole::Assistant, message)),
            Role::Tool => {}
        }
    }
    options.instructions = (!instructions.is_empty()).then(|| instructions.join("\n\n"));
    Ok((history, last))
}

/// Whether a message has something a stored chat keeps: text, or an image.
fn has_text_or_image(message: &ChatMessage) -> bool {
    !message.text().trim().is_empty()
        || matches!(&message.content,
            Some(MessageContent::Parts(parts)) if parts.iter().any(|p| p["type"] == "image_url"))
}

/// Whether the messages can be kept in a chat: no tool exchanges, a user message with text or
/// images last.
fn storable(messages: &[ChatMessage]) -> bool {
    messages
        .iter()
        .all(|m| m.tool_calls.is_none() && m.role != Role::Tool)
        && messages
            .last()
            .is_some_and(|m| m.role == Role::User && has_text_or_image(m))
}

/// The chats behind `vector_store_ids`, each checked to be the caller's.
pub async fn stores_of(
    state: &AppState,
    principal: &Principal,
    ids: &[String],
) -> AppResult<Vec<ChatId>> {
    let mut stores = Vec::with_capacity(ids.len());
    for id in ids {
        stores.push(
            super::super::vector_stores::owned(state, principal, id)
                .await?
                .id,
        );
    }
    Ok(stores)
}

pub async fn target(
    state: &AppState,
    principal: &Principal,
    request: &ResponsesRequest,
    items: &[Value],
    options: &mut RunOptions,
) -> AppResult<Target> {
    let outputs = trailing_outputs(items);
    let results = || {
        outputs
            .iter()
            .map(|o| ToolResult {
                tool_call_id: o.call_id.clone(),
                content: o.output.clone(),
            })
            .collect::<Vec<_>>()
    };
    let messages = messages_of(items)?;
    let mut approvals = approvals_of(items)?;
    if !approvals.is_empty() {
        if approvals.len() > 1 || items.len() > 1 {
            return Err(AppError::invalid(
                "an mcp_approval_response is sent alone: a run waits on one approval at a time, \
                 and goes on once it is answered",
            ));
        }
        let chat_id = match (
            &request.previous_response_id,
            &request.conversation,
            &request.x_chat_id,
        ) {
            (Some(previous), _, _) => {
                stored::get_owned(state.db(), principal.user_id(), previous)
                    .await?
                    .ok_or(AppError::NotFound("response"))?
                    .chat_id
            }
            (None, Some(conversation), _) => ChatId::from_string(conversation.id()),
            (None, None, Some(chat_id)) => chat_id.clone(),
            (None, None, None) => {
                return Err(AppError::invalid(
                    "an mcp_approval_response continues the response that asked for it: send \
                     its previous_response_id",
                ));
            }
        };
        return Ok(Target::Approval {
            chat_id,
            answer: approvals.remove(0),
        });
    }
    if let Some(previous) = &request.previous_response_id {
        if request.store == Some(false) {
            return Err(AppError::invalid(
                "previous_response_id continues a stored conversation: leave store on, or send \
                 the whole conversation as input with store: false",
            ));
        }
        let previous = stored::get_owned(state.db(), principal.user_id(), previous)
            .await?
            .ok_or(AppError::NotFound("response"))?;
        if !outputs.is_empty() {
            return Ok(Target::ToolResults {
                chat_id: previous.chat_id,
                results: results(),
            });
        }
        let (history, last) = split_turn(messages, options)?;
        if !history.is_empty() {
            return Err(AppError::invalid(
                "with previous_response_id, input holds the next user message (and any \
                 instructions): the earlier turns are the stored response's",
            ));
        }
        let (_, answer) = stored::run_messages(state.db(), &previous.run_id).await?;
        let answer = answer.ok_or_else(|| {
            AppError::invalid(
                "the previous response has no answer to continue from yet: wait until it \
                 finished, or send the function_call_output items it waits for",
            )
        })?;
        return Ok(Target::Turn {
            chat: ChatSlot::Existing(previous.chat_id),
            parent: Some(answer),
            history,
            last,
        });
    }
    let chat_id = match (&request.conversation, &request.x_chat_id) {
        (Some(conversation), _) => Some(ChatId::from_string(conversation.id())),
        (None, Some(chat_id)) => Some(chat_id.clone()),
        (None, None) => None,
    };
    if let Some(chat_id) = chat_id {
        let chat = state
            .chats()
            .get_owned(principal.user_id(), &chat_id)
            .await
            .map_err(|err| match err {
                ChatStoreError::NotFound => AppError::NotFound("conversation"),
                other => other.into(),
            })?;
        if !outputs.is_empty() {
            return Ok(Target::ToolResults {
                chat_id: chat.id,
                results: results(),
            });
        }
        let (history, last) = split_turn(messages, options)?;
        return Ok(Target::Turn {
            chat: ChatSlot::Existing(chat.id),
            parent: None,
            history,
            last,
        });
    }
    if request.store != Some(false) && storable(&messages) {
        // A new chain: a chat of its own (made once the turn is planned), kept
        // `v1_chat_retention_days` unless opened in the UI.
        let (history, last) = split_turn(messages, options)?;
        return Ok(Target::Turn {
            chat: ChatSlot::New {
                title: None,
                ephemeral: true,
            },
            parent: None,
            history,
            last,
        });
    }
    let mut messages = messages;
    if let Some(instructions) = options.instructions.take() {
        messages.insert(0, ChatMessage::system(instructions));
    }
    Ok(Target::Unstored(messages))
}

/// The input with each `item_reference` replaced by the stored item it names (an item of one
/// of the caller's stored responses), as clients that keep `store` on send earlier items.
pub async fn resolve_references(
    state: &AppState,
    principal: &Principal,
    items: Vec<Value>,
) -> AppResult<Vec<Value>> {
    let mut resolved = Vec::with_capacity(items.len());
    for item in items {
        if item["type"] != "item_reference" {
            resolved.push(item);
            continue;
        }
        let id = item["id"]
            .as_str()
            .ok_or_else(|| AppError::invalid("an item_reference needs an id"))?;
        let found = stored::find_item(state.db(), principal.user_id(), id)
            .await?
            .ok_or_else(|| {
                AppError::invalid(format!(
                    "item_reference {id}: no stored response has an item with this id"
                ))
            })?;
        resolved.push(found);
    }
    Ok(resolved)
}
