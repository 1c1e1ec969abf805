//! `/api/workflows`: a user's workflows — create, list, read (any version), change (a PATCH
//! saves a new version), delete — and their runs: `POST /api/workflows/{id}/runs` starts one
//! in a chat (the one named, or a new one) and answers with its SSE stream, like a chat
//! message; `GET …/runs` lists the past ones with the version each ran.

use actix_web::{HttpResponse, web};
use entities::ids::{AgentId, ChatId, WorkflowId};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::auth::Principal;
use crate::chat::automations::{StepSpec, WorkflowFields};
use crate::error::AppResult;
use crate::http::chat_api::runs::stream_run;
use crate::http::page::{PageQuery, paged};
use crate::http::sse::Dialect;
use crate::state::AppState;
use crate::supervisor::automations::{step_tool_names, workflows_of};
use crate::supervisor::launch::RunOptions;
use crate::supervisor::turn::{Answer, ChatSlot, TurnRequest, TurnTarget};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/api/workflows", web::get().to(list))
        .route("/api/workflows", web::post().to(create))
        .route("/api/workflows/{workflow_id}", web::get().to(get))
        .route("/api/workflows/{workflow_id}", web::patch().to(update))
        .route("/api/workflows/{workflow_id}", web::delete().to(delete))
        .route(
            "/api/workflows/{workflow_id}/versions",
            web::get().to(versions),
        )
        .route("/api/workflows/{workflow_id}/runs", web::get().to(runs))
        .route("/api/workflows/{workflow_id}/runs", web::post().to(run));
}

/// A workflow as sent to create or change one.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkflowBody {
    name: Option<String>,
    #[serde(default, deserialize_with = "present")]
    description: Option<Option<String>>,
    #[serde(default, alias = "agentId", deserialize_with = "present")]
    agent_id: Option<Option<AgentId>>,
    steps: Option<Vec<StepSpec>>,
}

/// A field that is present: `null` clears it, absent (`default`) leaves it.
fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// Turns a body into fields, checking that a named agent is the caller's.
async fn fields(
    state: &AppState,
    principal: &Principal,
    body: WorkflowBody,
) -> AppResult<WorkflowFields> {
    if let Some(Some(agent)) = &body.agent_id {
        state
            .launcher
            .agents
            .get_owned(principal.user_id(), agent)
            .await?;
    }
    Ok(WorkflowFields {
        name: body.name,
        description: body.description,
        agent_id: body.agent_id,
        steps: body.steps,
    })
}

async fn list(
    principal: Principal,
    state: web::Data<AppState>,
    query: web::Query<PageQuery>,
) -> AppResult<HttpResponse> {
    let page = query.page();
    let (workflows, total) = workflows_of(&state.launcher)
        .list(principal.user_id(), page)
        .await?;
    let shown = workflows.len();
    Ok(HttpResponse::Ok().json(paged(json!({"workflows": workflows}), page, shown, total)))
}

async fn create(
    principal: Principal,
    state: web::Data<AppState>,
    body: web::Json<WorkflowBody>,
) -> AppResult<HttpResponse> {
    let fields = fields(&state, &principal, body.into_inner()).await?;
    let known = step_tool_names(&state.launcher);
    let workflow = workflows_of(&state.launcher)
        .create(principal.user_id(), fields, &|name| {
            known.iter().any(|k| k == name)
        })
        .await?;
    Ok(HttpResponse::Created().json(workflow))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VersionQuery {
    version: Option<i32>,
}

async fn get(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<WorkflowId>,
    query: web::Query<VersionQuery>,
) -> AppResult<HttpResponse> {
    let workflow = workflows_of(&state.launcher)
        .get(principal.user_id(), &path, query.version)
        .await?;
    Ok(HttpResponse::Ok().json(workflow))
}

async fn update(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<WorkflowId>,
    body: web::Json<WorkflowBody>,
) -> AppResult<HttpResponse> {
    let fields = fields(&state, &principal, body.into_inner()).await?;
    let known = step_tool_names(&state.launcher);
    let workflow = workflows_of(&state.launcher)
        .update(principal.user_id(), &path, fields, &|name| {
            known.iter().any(|k| k == name)
        })
        .await?;
    Ok(HttpResponse::Ok().json(workflow))
}

async fn delete(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<WorkflowId>,
) -> AppResult<HttpResponse> {
    workflows_of(&state.launcher)
        .delete(principal.user_id(), &path)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

async fn versions(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<WorkflowId>,
) -> AppResult<HttpResponse> {
    let versions = workflows_of(&state.launcher)
        .versions(principal.user_id(), &path)
        .await?;
    Ok(HttpResponse::Ok().json(json!({"versions": versions})))
}

async fn runs(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<WorkflowId>,
) -> AppResult<HttpResponse> {
    let runs = workflows_of(&state.launcher)
        .runs(principal.user_id(), &path)
        .await?;
    Ok(HttpResponse::Ok().json(json!({"runs": runs})))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunBody {
    #[serde(default)]
    input: Option<serde_json::Map<String, Value>>,
    /// The chat to run in (the caller's); a new one when absent.
    #[serde(default, alias = "chatId")]
    chat_id: Option<ChatId>,
}

async fn run(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<WorkflowId>,
    body: web::Json<RunBody>,
) -> AppResult<HttpResponse> {
    let launcher = &state.launcher;
    let workflow = workflows_of(launcher)
        .get(principal.user_id(), &path, None)
        .await?;
    let body = body.into_inner();
    let input = Value::Object(body.input.unwrap_or_default());
    // Checked before a chat is made for it, so a refused run leaves nothing behind.
    let chat = match body.chat_id {
        Some(id) => ChatSlot::Existing(id),
        None => ChatSlot::New {
            title: Some(
                format!("Workflow: {}", workflow.name)
                    .chars()
                    .take(200)
                    .collect(),
            ),
            ephemeral: false,
        },
    };
    let request = TurnRequest {
        principal,
        target: TurnTarget::Workflow {
            chat,
            workflow,
            input,
        },
        options: RunOptions::default(),
        answer: Answer::WhenDurable,
    };
    let log = launcher.open(request).await?.log;
    Ok(stream_run(log, 0, Dialect::ChatApi))
}
