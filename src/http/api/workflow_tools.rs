//! `GET /api/workflow-tools`: the tools a workflow step may call on this server (those
//! `step_tool_names` allows, the same check a save makes), each with its description and its
//! parameters' JSON Schema, for the automations page's step editor, which draws a form from
//! the schema. `execute_sql` (its schema depends on the agent's database) comes without one.
//! Any signed-in user may read it: it describes tools, never a server's configuration.

use actix_web::{HttpResponse, web};
use serde::Serialize;
use serde_json::{Value, json};

use crate::auth::Principal;
use crate::state::AppState;
use crate::supervisor::automations::step_tool_names;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/api/workflow-tools", web::get().to(list));
}

/// One tool a step may call.
#[derive(Serialize)]
struct StepTool {
    name: String,
    description: String,
    /// The arguments' JSON Schema; `None` when it is not fixed here.
    parameters: Option<Value>,
}

async fn list(_principal: Principal, state: web::Data<AppState>) -> HttpResponse {
    let launcher = &state.launcher;
    let available = launcher.available_tools();
    let tools: Vec<StepTool> = step_tool_names(launcher)
        .into_iter()
        .map(|name| {
            let definition = available
                .iter()
                .find(|tool| tool.name() == name)
                .map(|tool| tool.definition().function);
            StepTool {
                description: definition
                    .as_ref()
                    .and_then(|d| d.description.clone())
                    .unwrap_or_else(|| {
                        "Runs a read-only SQL query on the workflow agent's database.".into()
                    }),
                parameters: definition.and_then(|d| d.parameters),
                name,
            }
        })
        .collect();
    HttpResponse::Ok().json(json!({"tools": tools}))
}
