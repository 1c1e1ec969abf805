//! `/api/schedules`: a user's schedules — create (in a chat of its own unless one of the
//! caller's is named), list, read (next firings, last runs), change, delete — and
//! `POST …/pause` and `…/resume`; `POST /api/schedules/preview` words a cron expression and
//! gives its next due times, by the scheduler's own parser, before anything is saved.

use actix_web::{HttpResponse, web};
use entities::ids::{ChatId, ScheduleId, WorkflowId};
use entities::schedules::MissedPolicy;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::auth::Principal;
use crate::chat::automations::ScheduleFields;
use crate::error::AppResult;
use crate::http::page::{PageQuery, paged};
use crate::state::AppState;
use crate::supervisor::automations::{schedules, tools::schedule_chat};

pub fn configure(cfg: &mut web::ServiceConfig) {
    // Before `{schedule_id}`, which would otherwise take "preview" for an id.
    cfg.route("/api/schedules/preview", web::post().to(preview))
        .route("/api/schedules", web::get().to(list))
        .route("/api/schedules", web::post().to(create))
        .route("/api/schedules/{schedule_id}", web::get().to(get))
        .route("/api/schedules/{schedule_id}", web::patch().to(update))
        .route("/api/schedules/{schedule_id}", web::delete().to(delete))
        .route("/api/schedules/{schedule_id}/pause", web::post().to(pause))
        .route(
            "/api/schedules/{schedule_id}/resume",
            web::post().to(resume),
        );
}

/// A schedule as sent to create or change one (camelCase names are accepted too).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScheduleBody {
    name: Option<String>,
    cron: Option<String>,
    #[serde(default, alias = "timeZone")]
    time_zone: Option<String>,
    #[serde(default, alias = "workflowId")]
    workflow_id: Option<WorkflowId>,
    #[serde(default)]
    input: Option<serde_json::Map<String, Value>>,
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default, alias = "missedPolicy")]
    missed_policy: Option<MissedPolicy>,
    /// The chat to fire in (the caller's); on create only: a chat of its own when absent.
    #[serde(default, alias = "chatId")]
    chat_id: Option<ChatId>,
}

impl ScheduleBody {
    fn fields(self) -> (ScheduleFields, Option<ChatId>) {
        (
            ScheduleFields {
                name: self.name,
                cron: self.cron,
                time_zone: self.time_zone,
                workflow_id: self.workflow_id,
                input: self.input.map(Value::Object),
                prompt: self.prompt,
                missed_policy: self.missed_policy,
            },
            self.chat_id,
        )
    }
}

/// A timing to preview: the cron expression and, optionally, its zone (the caller's when
/// absent).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PreviewBody {
    cron: String,
    #[serde(default, alias = "timeZone")]
    time_zone: Option<String>,
}

async fn preview(
    principal: Principal,
    state: web::Data<AppState>,
    body: web::Json<PreviewBody>,
) -> AppResult<HttpResponse> {
    let body = body.into_inner();
    let zone = body
        .time_zone
        .as_deref()
        .map(str::trim)
        .filter(|z| !z.is_empty());
    let preview = schedules(&state.launcher)
        .preview(principal.user_id(), body.cron.trim(), zone)
        .await?;
    Ok(HttpResponse::Ok().json(preview))
}

async fn list(
    principal: Principal,
    state: web::Data<AppState>,
    query: web::Query<PageQuery>,
) -> AppResult<HttpResponse> {
    let page = query.page();
    let (schedules, total) = schedules(&state.launcher)
        .list(principal.user_id(), page)
        .await?;
    let shown = schedules.len();
    Ok(HttpResponse::Ok().json(paged(json!({"schedules": schedules}), page, shown, total)))
}

async fn create(
    principal: Principal,
    state: web::Data<AppState>,
    body: web::Json<ScheduleBody>,
) -> AppResult<HttpResponse> {
    let launcher = &state.launcher;
    let (fields, chat_id) = body.into_inner().fields();
    let store = schedules(launcher);
    let chat_id = match chat_id {
        Some(id) => launcher.chats.get_owned(principal.user_id(), &id).await?.id,
        None => {
            // The timing and target are checked before a chat is made for it.
            let name = fields.name.clone().unwrap_or_default();
            store.check(principal.user_id(), &fields).await?;
            schedule_chat(launcher, principal.user_id(), &name, None).await?
        }
    };
    let schedule = store.create(principal.user_id(), chat_id, fields).await?;
    Ok(HttpResponse::Created().json(schedule))
}

async fn get(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ScheduleId>,
) -> AppResult<HttpResponse> {
    let schedule = schedules(&state.launcher)
        .get(principal.user_id(), &path)
        .await?;
    Ok(HttpResponse::Ok().json(schedule))
}

async fn update(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ScheduleId>,
    body: web::Json<ScheduleBody>,
) -> AppResult<HttpResponse> {
    let (fields, chat_id) = body.into_inner().fields();
    if chat_id.is_some() {
        return Err(crate::error::AppError::invalid(
            "a schedule's chat cannot be changed",
        ));
    }
    let schedule = schedules(&state.launcher)
        .update(principal.user_id(), &path, fields)
        .await?;
    Ok(HttpResponse::Ok().json(schedule))
}

async fn delete(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ScheduleId>,
) -> AppResult<HttpResponse> {
    schedules(&state.launcher)
        .delete(principal.user_id(), &path)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct PauseBody {
    reason: Option<String>,
}

/// Longest pause reason kept.
const MAX_REASON_CHARS: usize = 500;

async fn pause(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ScheduleId>,
    body: Option<web::Json<PauseBody>>,
) -> AppResult<HttpResponse> {
    let reason = body
        .and_then(|b| b.into_inner().reason)
        .map(|r| r.chars().take(MAX_REASON_CHARS).collect::<String>())
        .unwrap_or_else(|| "paused by its owner".to_string());
    let schedule = schedules(&state.launcher)
        .pause(principal.user_id(), &path, &reason)
        .await?;
    Ok(HttpResponse::Ok().json(schedule))
}

async fn resume(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ScheduleId>,
) -> AppResult<HttpResponse> {
    let schedule = schedules(&state.launcher)
        .resume(principal.user_id(), &path)
        .await?;
    Ok(HttpResponse::Ok().json(schedule))
}
