//! `/chat/api/{chatId}/messages` and the branch endpoints: read the active branch or the whole
//! tree, send (the response is the run's SSE stream), edit a user message, regenerate an
//! answer, switch branches. A user message may carry images (`attachments`, uploaded first);
//! its `parts` then name them (`{"type": "image", "attachment_id", "mime_type"}`).

use actix_web::{HttpResponse, web};
use entities::ids::{AttachmentId, ChatId, MessageId, RunId};
use entities::messages::MessageRole;
use entities::stop_reason::StopReason;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::runs::stream_run;
use crate::auth::Principal;
use crate::chat::attachments::ImagePart;
use crate::chat::session::{GetActivePath, GetTree, SwitchBranch, Turn};
use crate::chat::tree::MessageNode;
use crate::error::{AppError, AppResult};
use crate::http::sse::Dialect;
use crate::state::AppState;
use crate::supervisor::launch::{RunOptions, WebSearchOptions};
use crate::supervisor::turn::{Answer, Started, TurnRequest, TurnTarget};

pub fn configure(cfg: &mut web::ServiceConfig) {
    // Plain routes, not a scope: a `/chat/api/{chat_id}` scope would swallow every other
    // resource under a chat.
    cfg.route("/chat/api/{chat_id}/messages", web::get().to(list))
        .route("/chat/api/{chat_id}/messages", web::post().to(send))
        .route(
            "/chat/api/{chat_id}/messages/{message_id}/edit",
            web::post().to(edit),
        )
        .route(
            "/chat/api/{chat_id}/messages/{message_id}/regenerate",
            web::post().to(regenerate),
        )
        .route(
            "/chat/api/{chat_id}/messages/{message_id}/switch",
            web::post().to(switch),
        )
        .route("/chat/api/{chat_id}/tree", web::get().to(tree));
}

#[derive(Serialize)]
struct MessageView<'a> {
    id: &'a MessageId,
    parent_id: Option<&'a MessageId>,
    role: MessageRole,
    content: Option<&'a str>,
    parts: Option<&'a serde_json::Value>,
    /// An answer's reasoning (`{text, duration_ms}`), shown folded above it; never sent back to
    /// the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<&'a crate::chat::tree::Reasoning>,
    stop_reason: Option<StopReason>,
    /// The model that wrote an answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    /// An answer cut off by a crash or restart: the text it had streamed, kept.
    interrupted: bool,
    run_id: Option<&'a RunId>,
    created_at: chrono::DateTime<chrono::Utc>,
}

impl<'a> From<&'a MessageNode> for MessageView<'a> {
    fn from(node: &'a MessageNode) -> Self {
        Self {
            id: &node.id,
            parent_id: node.parent_id.as_ref(),
            role: node.role,
            content: node.content.as_deref(),
            parts: node.parts.as_ref(),
            reasoning: node.reasoning.as_ref(),
            stop_reason: node.stop_reason,
            model: node.model.as_deref(),
            interrupted: node.stop_reason == Some(StopReason::Interrupted),
            run_id: node.run_id.as_ref(),
            created_at: node.created_at,
        }
    }
}

async fn session(
    state: &AppState,
    principal: &Principal,
    chat_id: &ChatId,
) -> AppResult<actix::Addr<crate::chat::session::ChatSession>> {
    let chat = state
        .chats()
        .get_owned(principal.user_id(), chat_id)
        .await?;
    Ok(state.sessions().session(&chat.id).await?)
}

async fn list(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ChatId>,
) -> AppResult<HttpResponse> {
    let session = session(&state, &principal, &path).await?;
    let messages = session.send(GetActivePath).await?;
    let runs = crate::chat::persistence::run_records(state.db(), &path).await?;
    let mut data: Vec<serde_json::Value> = Vec::with_capacity(messages.len());
    for message in &messages {
        if message.role == MessageRole::Assistant
            && let Some(calls) = message
                .run_id
                .as_ref()
                .and_then(|id| runs.get(id))
                .and_then(|run| run.tool_calls.as_ref())
        {
            data.extend(tool_exchange(message, calls));
        }
        data.push(json!(MessageView::from(message)));
    }
    Ok(HttpResponse::Ok().json(json!({"data": data})))
}

/// The tool messages of an answer's run (docs/spec.md#tool-messages), before the answer: per round,
/// the assistant's `toolCalls` (`id`, `name`, `arguments`), then one `tool` message (`toolCallId`,
/// `content`) per call. Their ids derive from the answer's.
fn tool_exchange(answer: &MessageNode, calls: &serde_json::Value) -> Vec<serde_json::Value> {
    let records: Vec<crate::chat::persistence::ToolCallRecord> =
        serde_json::from_value(calls.clone()).unwrap_or_default();
    let mut out = Vec::new();
    let mut rounds: Vec<u32> = records.iter().map(|r| r.round).collect();
    rounds.dedup();
    for round in rounds {
        let calls: Vec<_> = records.iter().filter(|r| r.round == round).collect();
        out.push(json!({
            "id": format!("{}.calls.{round}", answer.id),
            "parent_id": answer.parent_id,
            "role": "assistant",
            "content": null,
            "toolCalls": calls.iter().map(|c| json!({"id": c.id, "name": c.name,
                "arguments": c.arguments})).collect::<Vec<_>>(),
            "run_id": answer.run_id,
            "created_at": answer.created_at,
        }));
        for call in calls {
            let content = call.content.clone().unwrap_or_else(|| match &call.error {
                Some(error) => json!({"error": error}).to_string(),
                None => call.preview.clone(),
            });
            out.push(json!({
                "id": format!("{}.tool.{}", answer.id, call.id),
                "parent_id": answer.parent_id,
                "role": "tool",
                "toolCallId": call.id,
                "content": content,
                "run_id": answer.run_id,
                "created_at": answer.created_at,
            }));
        }
    }
    out
}

/// Options shared by send, edit and regenerate.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct RunRequest {
    /// `enableTools`: tools on or off for this message, within what the chat's agent allows.
    enable_tools: Option<bool>,
    #[serde(rename = "web_search_options")]
    web_search_options: Option<WebSearchOptions>,
}

impl RunRequest {
    fn options(self) -> RunOptions {
        RunOptions {
            tools_enabled: self.enable_tools != Some(false)
                && (self.enable_tools == Some(true) || self.web_search_options.is_some()),
            web_search: self.web_search_options,
            template: None,
            client_tools: Vec::new(),
            enable_tools: self.enable_tools,
            ..RunOptions::default()
        }
    }
}

/// Refuses a message with neither text nor images; its length is checked, as every route's
/// is, by the door (`Launcher::open`).
fn checked_content(content: String, attachments: &[AttachmentId]) -> AppResult<String> {
    if content.trim().is_empty() && attachments.is_empty() {
        return Err(AppError::invalid(
            "content must not be empty (or the message must carry attachments)",
        ));
    }
    Ok(content)
}

/// The image parts of a message the caller sends in `chat_id` with these attachments (each
/// theirs, uploaded to this chat).
async fn images(
    state: &AppState,
    principal: &Principal,
    chat_id: &ChatId,
    ids: &[AttachmentId],
) -> AppResult<Vec<ImagePart>> {
    Ok(state
        .launcher
        .attachments
        .parts_of(principal.user_id(), chat_id, ids)
        .await?)
}

#[derive(Deserialize)]
struct SendRequest {
    #[serde(default)]
    content: String,
    parent_id: Option<MessageId>,
    /// Images uploaded to this chat (`POST …/attachments`) that the message carries.
    #[serde(default)]
    attachments: Vec<AttachmentId>,
    #[serde(flatten)]
    run: RunRequest,
}

async fn send(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ChatId>,
    body: web::Json<SendRequest>,
) -> AppResult<HttpResponse> {
    let body = body.into_inner();
    let content = checked_content(body.content, &body.attachments)?;
    let turn = Turn::Send {
        parent_id: body.parent_id,
        content,
        images: images(&state, &principal, &path, &body.attachments).await?,
    };
    let chat_id = path.into_inner();
    let started = open_turn(&state, principal, chat_id, turn, body.run.options()).await?;
    Ok(stream_run(started.log, 0, Dialect::ChatApi))
}

#[derive(Deserialize)]
struct EditRequest {
    #[serde(default)]
    content: String,
    /// The new version's images (the old version's are not carried over by themselves).
    #[serde(default)]
    attachments: Vec<AttachmentId>,
    #[serde(flatten)]
    run: RunRequest,
}

async fn edit(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(ChatId, MessageId)>,
    body: web::Json<EditRequest>,
) -> AppResult<HttpResponse> {
    let (chat_id, message_id) = path.into_inner();
    let body = body.into_inner();
    let content = checked_content(body.content, &body.attachments)?;
    let turn = Turn::Edit {
        message_id,
        content,
        images: images(&state, &principal, &chat_id, &body.attachments).await?,
    };
    let started = open_turn(&state, principal, chat_id, turn, body.run.options()).await?;
    Ok(stream_run(started.log, 0, Dialect::ChatApi))
}

async fn regenerate(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(ChatId, MessageId)>,
    body: Option<web::Json<RunRequest>>,
) -> AppResult<HttpResponse> {
    let (chat_id, message_id) = path.into_inner();
    let options = body.map(|b| b.into_inner()).unwrap_or_default().options();
    let turn = Turn::Regenerate { message_id };
    let started = open_turn(&state, principal, chat_id, turn, options).await?;
    Ok(stream_run(started.log, 0, Dialect::ChatApi))
}

/// A turn of the chat through the one door (`Launcher::open`).
async fn open_turn(
    state: &AppState,
    principal: Principal,
    chat_id: ChatId,
    turn: Turn,
    options: RunOptions,
) -> AppResult<Started> {
    let request = TurnRequest {
        principal,
        target: TurnTarget::Chat { chat_id, turn },
        options,
        answer: Answer::WhenAccepted,
    };
    Ok(state.launcher.open(request).await?)
}

async fn switch(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(ChatId, MessageId)>,
) -> AppResult<HttpResponse> {
    let (chat_id, message_id) = path.into_inner();
    let session = session(&state, &principal, &chat_id).await?;
    let leaf = session.send(SwitchBranch { message_id }).await??;
    let messages = session.send(GetActivePath).await?;
    let data: Vec<MessageView> = messages.iter().map(MessageView::from).collect();
    Ok(HttpResponse::Ok().json(json!({"active_leaf_id": leaf, "data": data})))
}

async fn tree(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ChatId>,
) -> AppResult<HttpResponse> {
    let session = session(&state, &principal, &path).await?;
    let nodes = session.send(GetTree).await?;
    let runs = crate::chat::persistence::run_records(state.db(), &path).await?;
    let workflow_runs =
        crate::chat::automations::workflows::steps_in_chat(state.db(), &path).await?;
    let data: Vec<serde_json::Value> = nodes
        .iter()
        .map(|(node, active)| {
            let mut value = json!(MessageView::from(node));
            value["on_active_branch"] = json!(active);
            // An answer whose run ran workflows (a schedule's firing, `execute_workflow`)
            // carries their steps' reports.
            if node.role == MessageRole::Assistant
                && let Some(ran) = node.run_id.as_ref().and_then(|id| workflow_runs.get(id))
            {
                value["workflows"] = json!(ran);
            }
            // An answer carries the tool calls its run made and the error it ended with.
            if node.role == MessageRole::Assistant
                && let Some(run) = node.run_id.as_ref().and_then(|id| runs.get(id))
            {
                if let Some(calls) = &run.tool_calls {
                    // What each call did; its full result is in the messages API.
                    let mut calls = calls.clone();
                    for call in calls.as_array_mut().into_iter().flatten() {
                        if let Some(fields) = call.as_object_mut() {
                            let content = fields.remove("content");
                            // A browser call's card shows its page and screenshot (issue 34).
                            let name = fields.get("name").and_then(|n| n.as_str());
                            if name == Some(crate::tools::code_interpreter::CODE_INTERPRETER) {
                                // Its card shows its output and files (issue 46): the result
                                // is bounded by the tool's output cap.
                                if let Some(content) = content {
                                    fields.insert("content".into(), content);
                                }
                            } else if let Some(page) = crate::tools::browser::page_of(name, content)
                            {
                                fields.insert("page".into(), page);
                            }
                        }
                    }
                    value["tools"] = calls;
                }
                if let Some(error) = &run.error {
                    value["error"] = json!(error);
                }
            }
            value
        })
        .collect();
    Ok(HttpResponse::Ok().json(json!({"data": data})))
}
