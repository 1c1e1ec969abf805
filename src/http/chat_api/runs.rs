//! `/chat/api/{chatId}/runs/{runId}`: re-attach to a run's event stream (replaying what was
//! missed after `Last-Event-ID` or `?after=N`, then live; a run no longer in memory is told
//! from the database) and cancel it.

use entities::ids::{ChatId, RunId};
use std::sync::Arc;
use std::time::Duration;

use actix_web::{HttpRequest, HttpResponse, web};
use actix_web_lab::sse::{Event, Sse};
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::json;

use crate::auth::Principal;
use crate::chat::recovery;
use crate::error::{AppError, AppResult};
use crate::http::sse::{Dialect, encode};
use crate::llm::wire::Usage;
use crate::run::events::{RunError, RunErrorKind, RunEvent};
use crate::run::log::RunLog;
use crate::state::AppState;

/// Comment frames keep idle connections (long tool calls) open through proxies.
pub(in crate::http) const KEEP_ALIVE: Duration = Duration::from_secs(15);

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route(
        "/chat/api/{chat_id}/runs/{run_id}/events",
        web::get().to(events),
    )
    .route(
        "/chat/api/{chat_id}/runs/{run_id}/cancel",
        web::post().to(cancel),
    );
}

/// The run's events after `after` as an SSE response. The run does not depend on it: if the
/// client goes away, only this subscription ends.
pub fn stream_run(log: Arc<RunLog>, after: usize, dialect: Dialect) -> HttpResponse {
    let source = Arc::clone(&log);
    // A turn answered once its chat took it, before its write is durable, has logged nothing
    // yet: its stream opens with a comment, and `run.started` follows once it is stored.
    let accepted = (after == 0 && !log.has_begun()).then(|| Event::Comment("accepted".into()));
    let frames = futures_util::stream::iter(accepted).chain(log.subscribe(after).flat_map(
        move |(seq, event)| futures_util::stream::iter(encode(dialect, &source, seq, &event)),
    ));
    let body = Sse::from_infallible_stream(frames).with_keep_alive(KEEP_ALIVE);
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("cache-control", "no-cache"))
        .insert_header(("x-accel-buffering", "no"))
        .insert_header(("x-run-id", log.run_id.as_str()))
        .body(body)
}

/// The run, if it exists, belongs to this chat and the caller owns it.
fn owned_run(
    state: &AppState,
    principal: &Principal,
    chat_id: &ChatId,
    run_id: &RunId,
) -> AppResult<Arc<RunLog>> {
    state
        .runs()
        .get(run_id)
        .filter(|log| &log.owner_id == principal.user_id() && log.chat_id.as_ref() == Some(chat_id))
        .ok_or(AppError::NotFound("run"))
}

#[derive(Deserialize)]
struct EventsQuery {
    after: Option<usize>,
}

/// A finished run whose events are no longer in memory (the process that ran it is gone, or
/// its log outlived `run_log_retention_secs`), told again from what was stored: its answer
/// as one text delta, then how it ended. `resuming`: the cursor of a client that saw some of
/// the original events: it gets only how the run ended, numbered past its cursor, never the
/// text a second time.
async fn stored_run(
    state: &AppState,
    principal: &Principal,
    chat_id: &ChatId,
    run_id: &RunId,
    resuming: Option<usize>,
) -> AppResult<Arc<RunLog>> {
    let found = || recovery::find_run(state.db(), principal.user_id(), chat_id, run_id);
    let (mut run, mut answer) = found().await?.ok_or(AppError::NotFound("run"))?;
    if run.stop_reason.is_none() && state.sessions().cluster().is_some() {
        // Still marked running, and no process serving the chat took the request (the path
        // forwards to a live owner): its owner died. Taking the chat (as a turn does) recovers
        // what it left running, so the client is told the run was interrupted, never a 404;
        // while a live owner still holds the chat this is a 503 with `Retry-After`.
        state.sessions().claim(chat_id).await?;
        (run, answer) = found().await?.ok_or(AppError::NotFound("run"))?;
    }
    let stop_reason = run
        .stop_reason
        // Still running: a run this process continues from a checkpoint (start-up), whose log
        // is not registered yet.
        .ok_or(AppError::NotFound("run"))?;
    let log = RunLog::new(
        run.id.clone(),
        Some(run.chat_id.clone()),
        run.user_id.clone(),
        answer
            .as_ref()
            .and_then(|a| a.model.clone())
            .unwrap_or_else(|| state.llm().default_model().to_string()),
    );
    let log = match resuming {
        Some(after) => log.told_again_past(after),
        None => log,
    };
    if resuming.is_none() {
        log.push(RunEvent::Started {
            user_message_id: run.user_message_id.clone(),
        });
        if let Some(answer) = &answer
            && let Some(reasoning) = answer.reasoning.clone().filter(|r| !r.is_empty())
        {
            log.push(RunEvent::ReasoningDelta {
                content: reasoning,
                elapsed_ms: answer.reasoning_ms.unwrap_or(0).max(0) as u64,
            });
        }
        if let Some(content) = answer.as_ref().and_then(|a| a.content.clone())
            && !content.is_empty()
        {
            log.push(RunEvent::TextDelta { content });
        }
    }
    let (input, output) = (
        run.input_tokens.max(0) as u64,
        run.output_tokens.max(0) as u64,
    );
    log.push(RunEvent::Finished {
        stop_reason,
        assistant_message_id: run.assistant_message_id.clone(),
        usage: Usage {
            prompt_tokens: input,
            completion_tokens: output,
            total_tokens: input + output,
            ..Usage::default()
        },
        // The row keeps the total only.
        research_usage: None,
        iterations: run.iterations.max(0) as u32,
        // The stored error is the public summary (never the upstream's address).
        error: run
            .error
            .map(|message| RunError::new(RunErrorKind::stored(stop_reason), message)),
    });
    Ok(Arc::new(log))
}

async fn events(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(ChatId, RunId)>,
    query: web::Query<EventsQuery>,
    req: HttpRequest,
) -> AppResult<HttpResponse> {
    let (chat_id, run_id) = path.into_inner();
    let last_event_id = req
        .headers()
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.trim()
                .parse::<usize>()
                .map_err(|_| AppError::invalid("Last-Event-ID must be an event sequence number"))
        })
        .transpose()?;
    let after = last_event_id.or(query.after).unwrap_or(0);
    let log = match owned_run(&state, &principal, &chat_id, &run_id) {
        Ok(log) => log,
        Err(_) => {
            let resuming = (after > 0).then_some(after);
            stored_run(&state, &principal, &chat_id, &run_id, resuming).await?
        }
    };
    Ok(stream_run(log, after, Dialect::ChatApi))
}

async fn cancel(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<(ChatId, RunId)>,
) -> AppResult<HttpResponse> {
    let (chat_id, run_id) = path.into_inner();
    let log = owned_run(&state, &principal, &chat_id, &run_id)?;
    let was_running = !log.is_finished();
    log.cancel.cancel();
    Ok(HttpResponse::Accepted().json(json!({"run_id": run_id, "cancelled": was_running})))
}
