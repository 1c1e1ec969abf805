//! Resuming paused runs: an ask_user answer (`launch_resume`), the results of a stored chat's
//! client tool calls (`launch_tool_results`), and at start-up the answers a dead process
//! claimed but never finished (`resume_answered`).

use entities::ids::ChatId;
use std::sync::Arc;

use crate::auth::Principal;
use crate::error::{AppError, AppResult};
use crate::run::log::RunLog;
use crate::tools;

use crate::llm::wire::{ChatMessage, Role};
use crate::tools::chat_context::Parts;

use super::launch::{Launcher, RunPlan, check_message_length};

mod email;
mod mcp;

use crate::tools::mcp::remote::{self, RemoteSession};

/// Answers a pending question and resumes its run. `chat_id` is checked when the request names
/// one. Answering twice is a conflict; an expired question is gone; someone else's is not found.
pub async fn launch_resume(
    launcher: &Launcher,
    principal: &Principal,
    chat_id: Option<&ChatId>,
    correlation_id: &entities::ids::AskCorrelationId,
    answer: serde_json::Value,
    mcp_sessions: Vec<Arc<RemoteSession>>,
) -> AppResult<Arc<RunLog>> {
    use crate::chat::asks;
    let ask = asks::find(&launcher.db, correlation_id)
        .await?
        .filter(|ask| &ask.user_id == principal.user_id())
        .filter(|ask| chat_id.is_none_or(|id| *id == ask.chat_id))
        .filter(|ask| ask.kind == asks::AskKind::AskUser)
        .ok_or(AppError::NotFound("question"))?;
    use asks::AskStatus;
    match ask.status {
        AskStatus::Pending if ask.expires_at <= chrono::Utc::now() => {
            asks::mark_expired(&launcher.db, correlation_id).await?;
            return Err(AppError::Gone("this question has expired".into()));
        }
        AskStatus::Pending => {}
        AskStatus::Expired => return Err(AppError::Gone("this question has expired".into())),
        AskStatus::Cancelled => {
            return Err(AppError::Conflict(
                "this question was cancelled: the conversation moved on".into(),
            ));
        }
        AskStatus::Answered | AskStatus::Completed | AskStatus::Failed => {
            return Err(AppError::Conflict(
                "this question was already answered".into(),
            ));
        }
    }
    for text in answer_texts(&answer) {
        check_message_length(&launcher.config, Role::User, text)?;
    }
    let answer = launcher
        .ask_user
        .validate_answer(&ask.question, &answer)
        .map_err(AppError::InvalidRequest)?;
    // Owned here before the answer is claimed: a request forwarded to the chat's owner
    // claims it there, once.
    launcher.sessions.claim(&ask.chat_id).await?;
    if !claim_ask(launcher, &ask.chat_id, correlation_id, &answer).await? {
        return Err(AppError::Conflict(
            "this question was already answered".into(),
        ));
    }
    resume_answered(launcher, ask, answer, None, mcp_sessions).await
}

/// One result of a client tool: the `role: "tool"` message a client sends for a call.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ToolResult {
    pub tool_call_id: String,
    pub content: String,
}

/// Continues a stored chat's run that stopped on calls of the client's own tools, with their
/// results: one for each call, no other. `client_tools` (the request's `tools`) are offered
/// from then on; empty keeps those the run had.
pub(in crate::supervisor) async fn launch_tool_results(
    launcher: &Launcher,
    principal: &Principal,
    chat_id: &ChatId,
    results: Vec<ToolResult>,
    client_tools: Vec<crate::llm::wire::ToolDefinition>,
    mcp_sessions: Vec<Arc<RemoteSession>>,
) -> AppResult<Arc<RunLog>> {
    use crate::chat::asks;
    let chat = launcher
        .chats
        .get_owned(principal.user_id(), chat_id)
        .await?;
    let ask = asks::pending_client_tools(&launcher.db, &chat.id)
        .await?
        .ok_or_else(|| {
            AppError::invalid(
                "this chat has no tool calls waiting for results: a tool message continues the \
                 run that called the tool, and the conversation has moved on (or never called one)",
            )
        })?;
    if ask.expires_at <= chrono::Utc::now() {
        asks::mark_expired(&launcher.db, &ask.correlation_id).await?;
        return Err(AppError::Gone(
            "the tool calls waited too long for their results and have expired".into(),
        ));
    }
    let calls: Vec<String> = ask.question["calls"]
        .as_array()
        .map(|calls| {
            calls
                .iter()
                .filter_map(|c| c["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    for result in &results {
        if !calls.contains(&result.tool_call_id) {
            return Err(AppError::invalid(format!(
                "tool_call_id {:?} is not one of the calls waiting in this chat ({})",
                result.tool_call_id,
                calls.join(", ")
            )));
        }
        check_message_length(&launcher.config, Role::Tool, &result.content)?;
    }
    let mut ordered = Vec::with_capacity(calls.len());
    for id in &calls {
        let mut given = results.iter().filter(|r| &r.tool_call_id == id);
        match (given.next(), given.next()) {
            (Some(result), None) => ordered.push(result.clone()),
            (None, _) => {
                return Err(AppError::invalid(format!(
                    "the result of tool call {id} is missing: send one tool message for each \
                     of {}",
                    calls.join(", ")
                )));
            }
            (Some(_), Some(_)) => {
                return Err(AppError::invalid(format!(
                    "tool call {id} has more than one result"
                )));
            }
        }
    }
    // The run's server-side tools: the ones it was given, and the chat's own.
    let chat_tools = crate::tools::registry::FAMILIES
        .iter()
        .filter(|family| family.origin == crate::tools::registry::Origin::Chat)
        .flat_map(|family| family.names.iter().copied());
    let server_tools: Vec<&str> = ask.checkpoint["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(serde_json::Value::as_str)
        .chain(chat_tools)
        .collect();
    if let Some(clash) = client_tools
        .iter()
        .find(|tool| server_tools.contains(&tool.function.name.as_str()))
    {
        return Err(AppError::invalid(format!(
            "the client tool {} has the name of one of Colloquy's server-side tools; rename it",
            clash.function.name
        )));
    }
    let answer = serde_json::json!({"results": ordered});
    launcher.sessions.claim(&ask.chat_id).await?;
    if !claim_ask(launcher, &ask.chat_id, &ask.correlation_id, &answer).await? {
        return Err(AppError::Conflict(
            "these tool results were already sent".into(),
        ));
    }
    let client_tools = (!client_tools.is_empty()).then_some(client_tools);
    resume_answered(launcher, ask, answer, client_tools, mcp_sessions).await
}

/// Claims a pending ask for `answer`, fenced as the chat's writes are (this process took the
/// chat just before); `false` if it was answered already.
async fn claim_ask(
    launcher: &Launcher,
    chat_id: &ChatId,
    correlation_id: &entities::ids::AskCorrelationId,
    answer: &serde_json::Value,
) -> Result<bool, sea_orm::DbErr> {
    let writer = launcher.sessions.writer(chat_id);
    let write = writer.begin().await?;
    let claimed = crate::chat::asks::claim(write.db(), correlation_id, answer).await?;
    write.commit().await?;
    Ok(claimed)
}

/// The texts a user wrote in an answer: the answer itself, its chosen items or its form's
/// field values.
fn answer_texts(answer: &serde_json::Value) -> Vec<&str> {
    use serde_json::Value;
    match answer {
        Value::String(text) => vec![text.as_str()],
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        Value::Object(fields) => fields.values().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Resumes the run of an ask whose answer is stored: after a reply, or at start-up for replies
/// a dead process claimed but never finished. A run that waited for client tools offers
/// `client_tools` from then on, if given, else the ones it had. `mcp_sessions`: the MCP servers the
/// answering request named, whose tools the run has from then on (and by which an approved
/// MCP call is made).
pub async fn resume_answered(
    launcher: &Launcher,
    ask: entities::pending_asks::Model,
    answer: serde_json::Value,
    client_tools: Option<Vec<crate::llm::wire::ToolDefinition>>,
    mcp_sessions: Vec<Arc<RemoteSession>>,
) -> AppResult<Arc<RunLog>> {
    use crate::agent::pause::Checkpoint;
    use crate::chat::asks::AskKind;
    let checkpoint: Checkpoint = serde_json::from_value(ask.checkpoint.clone())
        .map_err(|err| AppError::internal(anyhow::anyhow!("corrupt checkpoint: {err}")))?;
    let session = launcher.sessions.session(&ask.chat_id).await?;
    session
        .send(crate::chat::session::ResumeTurn {
            run_id: ask.run_id.clone(),
        })
        .await??;
    // The owner is not at hand when a start-up resumes the run: ask the database.
    use sea_orm::EntityTrait;
    let owner_is_admin = entities::users::Entity::find_by_id(ask.user_id.clone())
        .one(&launcher.db)
        .await?
        .is_some_and(|user| user.is_admin);
    let log = Arc::new(
        RunLog::new(
            ask.run_id.clone(),
            Some(ask.chat_id.clone()),
            ask.user_id.clone(),
            checkpoint.template.model.clone(),
        )
        .owned_by_admin(owner_is_admin),
    );
    log.push(crate::run::events::RunEvent::Started {
        user_message_id: Some(checkpoint.user_message_id.clone()),
    });
    let mut messages = checkpoint.messages;
    // A send_email confirmation's answer is not the call's result: the send's outcome is; nor
    // is an MCP approval's: the call's is.
    let mut confirmation = None;
    let mut approval = None;
    match ask.kind {
        AskKind::AskUser => {
            log.push(crate::run::events::RunEvent::Extension {
                event_type: "x_ask_user.answered".into(),
                payload: serde_json::json!({"correlation_id": ask.correlation_id, "answer": answer}),
            });
            confirmation =
                crate::tools::email::confirm::Confirmation::of(&ask.question, &ask.user_id);
            approval = remote::PendingCall::of(&ask.question);
            if confirmation.is_none() && approval.is_none() {
                messages.push(ChatMessage::tool_result(
                    checkpoint.tool_call_id.clone(),
                    serde_json::json!({"answer": answer}).to_string(),
                ));
            }
        }
        AskKind::ClientTools => {
            let results: Vec<ToolResult> = serde_json::from_value(answer["results"].clone())
                .map_err(|err| {
                    AppError::internal(anyhow::anyhow!("corrupt tool results: {err}"))
                })?;
            messages.extend(
                results
                    .into_iter()
                    .map(|r| ChatMessage::tool_result(r.tool_call_id, r.content)),
            );
        }
    }
    let size = checkpoint.search_context_size;
    let parts = Parts::from_vec(checkpoint.parts);
    // file_search stays offered if the run had it (named in x_tools before any document).
    let documents = launcher
        .workspace
        .has_searchable(&ask.chat_id)
        .await
        .unwrap_or(false);
    // The agent's tools are the chat's agent's as it is now.
    let agent = match launcher.chats.get_owned(&ask.user_id, &ask.chat_id).await {
        Ok(chat) => super::launch::agent_of(launcher, &chat).await.ok(),
        Err(_) => None,
    };
    let project = checkpoint
        .project
        .clone()
        .unwrap_or_else(|| ask.user_id.to_string());
    let setting = super::launch::tools::Setting::new(
        launcher,
        &log,
        &project,
        agent.as_ref(),
        Some((
            crate::tools::chat_context::SessionSlot::of(session.clone()),
            parts.clone(),
        )),
    );
    let mut tools: Vec<tools::SharedTool> =
        super::launch::tools::after_pause(&setting, &checkpoint.tools, documents)
            .into_iter()
            .map(|t| size.and_then(|size| t.sized(size)).unwrap_or(t))
            .map(|t| match &checkpoint.user_location {
                Some(location) => t.located(location).unwrap_or(t),
                None => t,
            })
            .collect();
    super::launch::with_requested(launcher, &log, &parts, &mut tools, &checkpoint.requested);
    let client_tools = client_tools.unwrap_or(checkpoint.client_tools);
    let taken: Vec<String> = tools
        .iter()
        .map(|t| t.name().to_string())
        .chain(client_tools.iter().map(|t| t.function.name.clone()))
        .collect();
    let (remote_tools, made, listings) = remote::tools_of(&mcp_sessions, &taken);
    for listing in listings {
        log.emit(remote::LIST_TOOLS_EVENT, listing);
    }
    tools.extend(remote_tools);
    let context_strategy = launcher
        .chats
        .get_owned(&ask.user_id, &ask.chat_id)
        .await
        .map(|chat| {
            crate::chat::persistence::context_strategy_of(
                &chat,
                launcher.config.agent.context_strategy,
            )
        })
        .unwrap_or(launcher.config.agent.context_strategy);
    let spec = launcher.assemble(RunPlan {
        log: log.clone(),
        template: checkpoint.template,
        messages,
        tools,
        max_iterations: checkpoint.max_iterations,
        chat: Some(crate::agent::kernel::ChatLink {
            session,
            user_message: checkpoint.user_message_id,
        }),
        resume: Some(checkpoint.point),
        completes_ask: Some(ask.correlation_id.clone()),
        project,
        parts,
        context_strategy,
        client_tools,
    });
    match (confirmation, approval) {
        (Some(confirmation), _) => email::send_then_start(
            launcher,
            spec,
            confirmation,
            answer,
            ask.correlation_id,
            checkpoint.tool_call_id,
        ),
        (None, Some(approval)) => mcp::call_then_start(
            launcher,
            spec,
            approval,
            answer,
            made,
            checkpoint.tool_call_id,
        ),
        (None, None) => launcher.start(spec),
    }
    Ok(log)
}

/// The model's call `call_id` among a paused run's messages (its last assistant turn), as the
/// model made it; a bare call of `name` if it cannot be found. What a continuation that makes
/// the call itself (a confirmed email, an approved MCP call) reports the call as.
fn the_call(messages: &[ChatMessage], call_id: &str, name: &str) -> crate::llm::wire::ToolCall {
    messages
        .iter()
        .rev()
        .filter(|m| m.role == Role::Assistant)
        .filter_map(|m| m.tool_calls.as_ref())
        .flatten()
        .find(|call| call.id == call_id)
        .cloned()
        .unwrap_or_else(|| crate::llm::wire::ToolCall {
            id: call_id.to_string(),
            kind: "function".into(),
            function: crate::llm::wire::FunctionCall {
                name: name.into(),
                arguments: "{}".into(),
            },
        })
}
