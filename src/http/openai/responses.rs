//! OpenAI's Responses API over the same runs as Chat Completions.
//! - `POST /v1/responses`: a `web_search_preview` tool opts into server-side tools, its `x_tools`
//!   choosing them (docs/spec.md#x_tools); `file_search` searches the named vector stores (each
//!   a chat's documents), or the chat's own documents in a chat; `function` tools are the
//!   client's, and a call of one ends the response with `function_call` items.
//! - Stored responses (`store`, on by default) are turns of a chat (their `input_image`s kept
//!   as the chat's attachments, `crate::http::images`): a new chain gets a chat of its own,
//!   `previous_response_id` continues from that response's answer, `conversation` (a chat)
//!   and `x_chat_id` continue a chat's active branch. `store: false` runs in no chat and
//!   keeps nothing.
//! - `GET`/`DELETE /v1/responses/{id}` and `GET /v1/responses/{id}/input_items`. A stored
//!   response is a row of `responses` (`chat::responses`), written when its run ends by a task
//!   that follows the run's log, whatever the client does.
//!
//! - `local_shell` is offered to the model as a client function; its call is a
//!   `local_shell_call` item and a `local_shell_call_output` continues the run.
//!
//! Beside it: `request` (the request and its tools), `items` (input items into chat messages),
//! `target` (where it runs, `item_reference`s), `encode` (a run's events as output items —
//! messages with their artifacts as parts, web and file searches, function and shell calls —
//! and their lifecycle events, one state machine, so a stream an SDK replays equals the stored
//! object), `citations` (the answer's `url_citation`s of pages the run found) and `stream`
//! (those events numbered into the SSE stream).

use std::sync::Arc;

use actix_web::{HttpResponse, web};
use entities::ids::{ChatId, ResponseId};
use entities::runs::RunStatus;
use serde_json::{Value, json};

use crate::auth::Principal;
use crate::chat::responses::{self as stored, NewResponse};
use crate::error::{AppError, AppResult};
use crate::llm::wire::ChatMessage;
use crate::run::log::RunLog;
use crate::state::AppState;
use crate::supervisor::launch::check_message_lengths;
use crate::supervisor::launch::images::{read_message, read_messages};
use crate::supervisor::turn::{Answer, TurnRequest, TurnTarget};

mod citations;
mod encode;
mod items;
mod request;
mod stream;
mod target;

use super::shared::ListQuery;
use encode::Frame;
pub use items::messages_of;
use items::with_ids;
use request::{Includes, ResponsesRequest};
use target::{Target, resolve_references, stores_of, target};

pub fn configure(cfg: &mut web::ServiceConfig, max_body_bytes: usize) {
    cfg.service(
        web::resource("/v1/responses")
            .app_data(
                web::JsonConfig::default()
                    .limit(max_body_bytes)
                    .error_handler(crate::http::json_error),
            )
            .route(web::post().to(create)),
    )
    .route("/v1/responses/{id}", web::get().to(retrieve))
    .route("/v1/responses/{id}", web::delete().to(remove))
    .route("/v1/responses/{id}/input_items", web::get().to(input_items));
}

async fn create(
    principal: Principal,
    state: web::Data<AppState>,
    body: web::Json<ResponsesRequest>,
) -> AppResult<HttpResponse> {
    let request = body.into_inner();
    request.validate()?;
    let items = resolve_references(&state, &principal, request.input_items()?).await?;
    if items.is_empty() {
        return Err(AppError::invalid("input must not be empty"));
    }
    let mut options = request.options(state.llm().default_model())?;
    // Without vector_store_ids, file_search searches the documents of the chat the response
    // runs in (docs/spec.md#file_search), when it has some.
    if let Some(ids) = request.vector_store_ids()? {
        options.file_search = Some(stores_of(&state, &principal, &ids).await?);
    }
    let model = options
        .template
        .as_ref()
        .map(|t| t.model.clone())
        .unwrap_or_default();
    options.file_search_limits = request.file_search_limits()?;
    if options.image_generation.is_some() && state.config().images.is_none() {
        return Err(crate::llm::images::ImagesError::NotConfigured.into());
    }
    if let Some(choice) = &options.code_interpreter {
        let containers = &state.launcher.containers;
        if let Some(why) = containers.unavailable() {
            return Err(AppError::invalid(format!(
                "code_interpreter is not available on this server: {why}"
            )));
        }
        if let crate::tools::code_interpreter::Choice::Named(id) = choice
            && containers.get_owned(principal.user_id(), id).await.is_err()
        {
            return Err(AppError::invalid(format!("no container {id}")));
        }
    }
    let includes = request.includes();
    let mut echo = request.echo(&model);
    // Before anything is stored: every message and the instructions within the length limit.
    let mut all = messages_of(&items)?;
    all.extend(request.instructions.clone().map(ChatMessage::system));
    check_message_lengths(state.config(), &all)?;
    if request.store != Some(false) {
        // Images are checked now, so a refused one leaves no chat behind; they are read
        // again (and stored) once the chat is known.
        read_messages(&state.config().attachments, &all)?;
    }
    let target = match target(&state, &principal, &request, &items, &mut options).await? {
        Target::Turn {
            chat,
            parent,
            history,
            last,
        } => {
            let limits = &state.config().attachments;
            let history = history
                .iter()
                .map(|(role, message)| Ok((*role, read_message(limits, message)?)))
                .collect::<AppResult<Vec<_>>>()?;
            TurnTarget::Import {
                chat,
                parent,
                history,
                last: read_message(limits, &last)?,
            }
        }
        Target::Approval { chat_id, answer } => TurnTarget::Answer {
            chat_id,
            correlation_id: answer.correlation_id,
            answer: json!(if answer.approve {
                crate::tools::mcp::remote::APPROVE
            } else {
                crate::tools::mcp::remote::DECLINE
            }),
        },
        Target::ToolResults { chat_id, results } => TurnTarget::ToolResults {
            chat_id,
            results,
            client_tools: options.client_tools.clone(),
        },
        Target::Unstored(messages) => {
            echo["store"] = json!(false);
            TurnTarget::Unstored(messages)
        }
    };
    let started = state
        .launcher
        .open(TurnRequest {
            principal: principal.clone(),
            target,
            options,
            answer: Answer::WhenDurable,
        })
        .await?;
    let (log, chat_id): (Arc<RunLog>, Option<ChatId>) = (started.log, started.chat_id);
    // A fresh id each time: a run that continues after function outputs keeps its run id.
    let id = ResponseId::generate();
    let frame = Frame {
        id: id.to_string(),
        echo: echo.clone(),
        chat_id: chat_id.as_ref().map(ToString::to_string),
    };
    if let Some(chat_id) = &chat_id {
        stored::insert(
            state.db(),
            NewResponse {
                id: id.clone(),
                user_id: principal.user_id().clone(),
                chat_id: chat_id.clone(),
                run_id: log.run_id.clone(),
                previous_response_id: request.previous_response_id.clone(),
                request: echo.clone(),
                input_items: Value::Array(with_ids(items, &id)),
            },
        )
        .await?;
        keep_when_finished(&state, log.clone(), &frame, includes, id);
    }
    if request.stream {
        let mut response = stream::stream(log, frame, includes, request.x_events);
        if let Some(chat_id) = chat_id
            && let Ok(value) = chat_id.as_str().parse()
        {
            response.headers_mut().insert(
                actix_web::http::header::HeaderName::from_static("x-chat-id"),
                value,
            );
        }
        return Ok(response);
    }
    let (body, failure) = stream::collect(log, &frame, includes)
        .await
        .ok_or_else(|| AppError::internal(anyhow::anyhow!("run ended without finishing")))?;
    if let Some(error) = failure {
        return Err(crate::http::run_failure::run_failure(&error));
    }
    Ok(HttpResponse::Ok().json(body))
}

/// Stores the response object when the run ends, whether or not a client still listens.
fn keep_when_finished(
    state: &AppState,
    log: Arc<RunLog>,
    frame: &Frame,
    includes: Includes,
    id: ResponseId,
) {
    let db = state.db().clone();
    let frame = Frame {
        id: frame.id.clone(),
        echo: frame.echo.clone(),
        chat_id: frame.chat_id.clone(),
    };
    actix_web::rt::spawn(async move {
        if let Some((body, _)) = stream::collect(log, &frame, includes).await
            && let Err(err) = stored::finish(&db, &id, body).await
        {
            tracing::warn!(%err, response = %id, "could not store the finished response");
        }
    });
}

async fn owned(
    state: &AppState,
    principal: &Principal,
    id: &ResponseId,
) -> AppResult<entities::responses::Model> {
    stored::get_owned(state.db(), principal.user_id(), id)
        .await?
        .ok_or(AppError::NotFound("response"))
}

/// How long a read waits for the finished object of a run that ended in this process to be
/// kept: the keeping task writes it as soon as the run's log ends, one database write later.
const KEEPER_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

async fn retrieve(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ResponseId>,
) -> AppResult<HttpResponse> {
    let row = owned(&state, &principal, &path.into_inner()).await?;
    if let Some(body) = row.body {
        return Ok(HttpResponse::Ok().json(body));
    }
    let mut body = row.request.clone();
    for (key, value) in [
        ("id", json!(row.id)),
        ("object", json!("response")),
        ("created_at", json!(row.created_at.timestamp())),
        ("status", json!("in_progress")),
        ("output", json!([])),
        ("x_chat_id", json!(row.chat_id)),
    ] {
        body[key] = value;
    }
    if let Some(log) = state.runs().get(&row.run_id) {
        if !log.is_finished() {
            // Still running: what was asked, with no output yet.
            return Ok(HttpResponse::Ok().json(body));
        }
        // Ended in this process: the task keeping it (`keep_when_finished`) is writing the
        // finished object from the run's events. Wait for that, rather than mistake the run
        // for one a crash cut off.
        let deadline = tokio::time::Instant::now() + KEEPER_WAIT;
        while tokio::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            if let Some(kept) = owned(&state, &principal, &row.id).await?.body {
                return Ok(HttpResponse::Ok().json(kept));
            }
        }
    }
    // The process that ran it ended before the response was kept (a crash or restart): what
    // its run left says how it ended, and that is kept now.
    if let Some(ended) = stored::ended_run(state.db(), &row.run_id).await? {
        let (status, reason) = match ended.status {
            RunStatus::Completed | RunStatus::Paused => ("completed", Value::Null),
            RunStatus::Cancelled => ("incomplete", json!({"reason": "cancelled"})),
            RunStatus::Failed | RunStatus::Interrupted => ("failed", Value::Null),
            RunStatus::Running => return Ok(HttpResponse::Ok().json(body)),
        };
        body["status"] = json!(status);
        body["incomplete_details"] = reason;
        if status == "failed" {
            body["error"] = json!({"code": ended.error_code,
                "message": "the run was cut off before it finished"});
        }
        body["output"] = json!([{"type": "message", "id": format!("msg_{}", row.run_id),
            "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": ended.text, "annotations": []}]}]);
        body["output_text"] = json!(ended.text);
        stored::finish(state.db(), &row.id, body.clone()).await?;
    }
    Ok(HttpResponse::Ok().json(body))
}

async fn remove(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ResponseId>,
) -> AppResult<HttpResponse> {
    let id = path.into_inner();
    if !stored::delete_owned(state.db(), principal.user_id(), &id).await? {
        return Err(AppError::NotFound("response"));
    }
    Ok(HttpResponse::Ok().json(json!({"id": id, "object": "response", "deleted": true})))
}

async fn input_items(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ResponseId>,
    query: web::Query<ListQuery>,
) -> AppResult<HttpResponse> {
    let row = owned(&state, &principal, &path.into_inner()).await?;
    let items = row.input_items.as_array().cloned().unwrap_or_default();
    Ok(HttpResponse::Ok().json(query.page(items)?))
}

#[cfg(test)]
mod tests;
