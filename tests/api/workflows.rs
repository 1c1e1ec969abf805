//! Workflows over the real server: saved and checked (templating, tools, versions), run over
//! REST as a run of their own with `x_workflow.*` events in order, a failing step stopping the
//! run and named (the run `failed`, of kind `workflow_failed`), and the model calling `execute_workflow`, `create_schedule` and
//! `get_schedule_info` in an agent's chat through the fake upstream.

use entities::ids::RunId;
use entities::runs::RunStatus;
use entities::stop_reason::StopReason;
use sea_orm::EntityTrait;
use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::{
    TestApp, error_body, race_to_the_cap, read_every_page, spawn_app, spawn_app_with,
};
use crate::sse::{content, finished, read_all};

/// Creates a workflow and returns its JSON (asserting it was created).
pub async fn create_workflow(app: &TestApp, body: Value) -> Value {
    let response = app.api().create_workflow().json(&body).call().await;
    assert_eq!(response.status(), 201, "{:?}", response.text().await);
    response.json().await.unwrap()
}

fn three_steps(middle_tool: bool) -> Value {
    let middle = if middle_tool {
        json!({"id": "broken", "tool": "calculator", "arguments": {"expression": "2 +"}})
    } else {
        json!({"id": "explain", "prompt": "Explain {{steps.sum.result.result}} for {{input.audience}}"})
    };
    json!({
        "name": "Sum and explain",
        "steps": [
            {"id": "sum", "tool": "calculator", "arguments": {"expression": "{{input.a}} + 3"}},
            middle,
            {"id": "double", "tool": "calculator", "arguments": {"expression": "{{steps.sum.result.result}} * 2"}}
        ]
    })
}

/// The chat completion requests the fake upstream got.
fn model_calls(app: &TestApp) -> Vec<Value> {
    app.upstream
        .received()
        .into_iter()
        .filter(|r| r.path.ends_with("/chat/completions"))
        .map(|r| r.body)
        .collect()
}

/// The `x_workflow.*` events of a stream, as (type, step id).
fn workflow_events(frames: &[crate::sse::Frame]) -> Vec<(String, String)> {
    frames
        .iter()
        .map(|f| f.json())
        .filter(|j| {
            j["type"]
                .as_str()
                .is_some_and(|t| t.starts_with("x_workflow.step"))
        })
        .map(|j| {
            (
                j["type"].as_str().unwrap().to_string(),
                j["step_id"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[actix_web::test]
async fn a_tool_a_prompt_using_its_result_and_a_second_tool_run_in_order_with_their_events() {
    let app = spawn_app().await;
    app.upstream
        .script([Reply::text("Five is one more than four.")]);
    let workflow = create_workflow(&app, three_steps(false)).await;
    let id = workflow["id"].as_str().unwrap();
    assert!(id.starts_with("wf_"), "{id}");
    assert_eq!(workflow["version"], 1);

    let response = app
        .api()
        .run_workflow(id)
        .json(&json!({"input": {"a": 2, "audience": "kids"}}))
        .call()
        .await;
    assert_eq!(response.status(), 200);
    let frames = read_all(response).await;

    let step = |kind: &str, id: &str| (format!("x_workflow.{kind}"), id.to_string());
    assert_eq!(
        workflow_events(&frames),
        vec![
            step("step_started", "sum"),
            step("step_completed", "sum"),
            step("step_started", "explain"),
            step("step_completed", "explain"),
            step("step_started", "double"),
            step("step_completed", "double"),
        ]
    );
    let completed: Vec<Value> = frames
        .iter()
        .map(|f| f.json())
        .filter(|j| j["type"] == "x_workflow.step_completed")
        .collect();
    assert_eq!(completed[0]["tool"], "calculator");
    assert_eq!(completed[1]["kind"], "prompt");
    assert!(completed[1]["duration_ms"].is_u64());
    assert!(
        completed[1]["preview"]
            .as_str()
            .unwrap()
            .contains("Five is one more")
    );
    // The prompt step was sent the tool's result and the input, templated in.
    let sent = model_calls(&app);
    assert_eq!(sent.len(), 1);
    assert!(
        sent[0]["messages"]
            .to_string()
            .contains("Explain 5.0 for kids"),
        "{}",
        sent[0]["messages"]
    );
    // The result is the last step's output: (2 + 3) * 2.
    let answer = content(&frames);
    assert!(answer.contains("\"result\":10"), "{answer}");
    let finished = finished(&frames);
    assert_eq!(finished["stop_reason"], "completed", "{finished}");
    let done = frames
        .iter()
        .map(|f| f.json())
        .find(|j| j["type"] == "x_workflow.finished")
        .unwrap();
    assert_eq!(done["status"], "succeeded");
    assert_eq!(done["steps"].as_array().unwrap().len(), 3);

    // The run is listed with the version it ran.
    let runs: Value = app.wait_for_workflow_run(id, "succeeded").await;
    assert_eq!(runs["runs"][0]["version"], 1);
    assert_eq!(runs["runs"][0]["steps"].as_array().unwrap().len(), 3);
}

#[actix_web::test]
async fn a_failing_middle_step_stops_the_workflow_and_is_named() {
    let app = spawn_app().await;
    let workflow = create_workflow(&app, three_steps(true)).await;
    let id = workflow["id"].as_str().unwrap();
    let frames = read_all(
        app.api()
            .run_workflow(id)
            .json(&json!({"input": {"a": 2}}))
            .call()
            .await,
    )
    .await;
    let events = workflow_events(&frames);
    assert_eq!(
        events,
        vec![
            ("x_workflow.step_started".into(), "sum".into()),
            ("x_workflow.step_completed".into(), "sum".into()),
            ("x_workflow.step_started".into(), "broken".into()),
            ("x_workflow.step_failed".into(), "broken".into()),
        ],
        "the third step never starts"
    );
    let failed = frames
        .iter()
        .map(|f| f.json())
        .find(|j| j["type"] == "x_workflow.step_failed")
        .unwrap();
    assert!(
        failed["error"].as_str().unwrap().contains("calculator"),
        "{failed}"
    );
    let answer = content(&frames);
    assert!(answer.contains("stopped at step \"broken\""), "{answer}");
    assert!(model_calls(&app).is_empty(), "no model call was made");
    let runs: Value = app.wait_for_workflow_run(id, "failed").await;
    assert_eq!(runs["runs"][0]["failed_step"], "broken");
    assert_eq!(runs["runs"][0]["steps"][2]["status"], "not_run");
}

/// The `error` frame of a stream (a run that failed says why before `run.finished`).
fn error_frame(frames: &[crate::sse::Frame]) -> Value {
    frames
        .iter()
        .map(|f| f.json())
        .find(|j| j["type"] == "error")
        .expect("an error event")
}

#[actix_web::test]
async fn a_workflow_whose_step_fails_ends_as_a_failed_run_with_its_error_kind() {
    let app = spawn_app().await;
    let workflow = create_workflow(&app, three_steps(true)).await;
    let id = workflow["id"].as_str().unwrap();
    let response = app
        .api()
        .run_workflow(id)
        .json(&json!({"input": {"a": 2}}))
        .call()
        .await;
    assert_eq!(response.status(), 200);
    let run_id = response.headers()["x-run-id"].to_str().unwrap().to_string();
    let frames = read_all(response).await;

    // The workflow's own event still says how it ended...
    let done = frames
        .iter()
        .map(|f| f.json())
        .find(|j| j["type"] == "x_workflow.finished")
        .unwrap();
    assert_eq!(done["status"], "failed", "{done}");
    assert_eq!(done["failedStep"], "broken", "{done}");
    // ...and the run ends failed, with its kind and the step named.
    let error = error_frame(&frames);
    assert_eq!(error["error"]["code"], "workflow_failed", "{error}");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains("step \"broken\" failed"), "{message}");
    assert_eq!(finished(&frames)["stop_reason"], "workflow_failed");

    // The run's row is failed, with the stop reason standing for its kind and the error.
    let row = entities::runs::Entity::find_by_id(RunId::from_string(run_id.clone()))
        .one(&app.db)
        .await
        .unwrap()
        .expect("the run's row");
    assert_eq!(row.status, RunStatus::Failed);
    assert_eq!(row.stop_reason, Some(StopReason::WorkflowFailed));
    assert!(
        row.error.as_deref().is_some_and(|e| e.contains("broken")),
        "{:?}",
        row.error
    );
    let chat = row.chat_id.to_string();
    let messages: Value = app.chat_api().messages(&chat).read_json().await;
    let answer = messages["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .expect("the workflow's answer");
    assert_eq!(answer["stop_reason"], "workflow_failed", "{answer}");
    let runs: Value = app.wait_for_workflow_run(id, "failed").await;
    assert_eq!(runs["runs"][0]["run_id"], run_id.as_str());

    // Told again from storage by a new process, the run keeps its kind.
    let app = app.restart().await;
    let replay = app.chat_api().run_events(&chat, &run_id).call().await;
    assert_eq!(replay.status(), 200);
    let replay = read_all(replay).await;
    assert_eq!(error_frame(&replay)["error"]["code"], "workflow_failed");
    assert_eq!(finished(&replay)["stop_reason"], "workflow_failed");
}

#[actix_web::test]
async fn a_workflow_whose_steps_all_succeed_ends_as_a_completed_run() {
    let app = spawn_app().await;
    let workflow = create_workflow(
        &app,
        json!({"name": "sum", "steps": [{"id": "a", "tool": "calculator", "arguments": {"expression": "1 + 1"}}]}),
    )
    .await;
    let response = app
        .api()
        .run_workflow(workflow["id"].as_str().unwrap())
        .json(&json!({}))
        .call()
        .await;
    let run_id = response.headers()["x-run-id"].to_str().unwrap().to_string();
    let frames = read_all(response).await;
    assert!(!frames.iter().any(|f| f.json()["type"] == "error"));
    assert_eq!(finished(&frames)["stop_reason"], "completed");
    let row = entities::runs::Entity::find_by_id(RunId::from_string(run_id))
        .one(&app.db)
        .await
        .unwrap()
        .expect("the run's row");
    assert_eq!(row.status, RunStatus::Completed);
    assert_eq!(row.error, None);
}

#[actix_web::test]
async fn templating_errors_unknown_tools_and_missing_input_are_refused_before_anything_is_stored() {
    let app = spawn_app().await;
    let refused = |body: Value| {
        let app = &app;
        async move {
            let response = app.api().create_workflow().json(&body).call().await;
            assert_eq!(response.status(), 400);
            error_body(response).await
        }
    };
    let forward = refused(json!({"name": "f", "steps": [
        {"id": "a", "prompt": "Use {{steps.b.result}}"},
        {"id": "b", "prompt": "x"}
    ]}))
    .await;
    assert_eq!(forward["code"], "invalid_template", "{forward}");
    let nowhere =
        refused(json!({"name": "n", "steps": [{"id": "a", "prompt": "{{steps.ghost.result}}"}]}))
            .await;
    assert_eq!(nowhere["code"], "invalid_template");
    assert!(nowhere["message"].as_str().unwrap().contains("ghost"));
    let unclosed =
        refused(json!({"name": "u", "steps": [{"id": "a", "prompt": "{{input.x"}]})).await;
    assert_eq!(unclosed["code"], "invalid_template");
    let tool = refused(
        json!({"name": "t", "steps": [{"id": "a", "tool": "format_disk", "arguments": {}}]}),
    )
    .await;
    assert_eq!(tool["code"], "unknown_tool");
    let listed: Value = app.api().workflows().read_json().await;
    assert_eq!(listed["total"], 0, "nothing was saved");

    // A run whose input lacks a value is refused before any step runs or chat is made.
    let workflow = create_workflow(&app, three_steps(false)).await;
    let chats_before: Value = app.chat_api().list_chats().read_json().await;
    let response = app
        .api()
        .run_workflow(workflow["id"].as_str().unwrap())
        .json(&json!({"input": {"a": 1}}))
        .call()
        .await;
    assert_eq!(response.status(), 400);
    let body = error_body(response).await;
    assert_eq!(body["code"], "missing_input");
    assert!(
        body["message"].as_str().unwrap().contains("input.audience"),
        "{body}"
    );
    let chats_after: Value = app.chat_api().list_chats().read_json().await;
    assert_eq!(chats_before, chats_after);
}

#[actix_web::test]
async fn a_patch_saves_a_new_version_and_keeps_the_old_one() {
    let app = spawn_app().await;
    let workflow = create_workflow(
        &app,
        json!({"name": "v", "steps": [{"id": "a", "tool": "calculator", "arguments": {"expression": "1 + 1"}}]}),
    )
    .await;
    let id = workflow["id"].as_str().unwrap();
    let response = app
        .api().update_workflow(id)
        .json(&json!({"steps": [{"id": "a", "tool": "calculator", "arguments": {"expression": "2 + 2"}}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let patched: Value = response.json().await.unwrap();
    assert_eq!(patched["version"], 2);
    let old: Value = app
        .api()
        .workflow(id)
        .with_query("version=1")
        .read_json()
        .await;
    assert_eq!(old["steps"][0]["arguments"]["expression"], "1 + 1");
    let versions: Value = app.api().workflow_versions(id).read_json().await;
    assert_eq!(versions["versions"].as_array().unwrap().len(), 2);
    // A bad PATCH makes no version.
    let bad = app
        .api()
        .update_workflow(id)
        .json(&json!({"steps": [{"id": "a", "prompt": "{{steps.a.result}}"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    let current: Value = app.api().workflow(id).read_json().await;
    assert_eq!(current["version"], 2);
    // A run names the version it ran.
    let frames = read_all(app.api().run_workflow(id).json(&json!({})).call().await).await;
    assert!(content(&frames).contains("\"result\":4"));
    let runs: Value = app.wait_for_workflow_run(id, "succeeded").await;
    assert_eq!(runs["runs"][0]["version"], 2);
    // Another user sees none of it.
    let other = app.create_user_with_key("mallory").await;
    let theirs = app.as_key(&other).api().workflow(id).send().await.unwrap();
    assert_eq!(theirs.status(), 404);
}

#[actix_web::test]
async fn the_model_runs_a_workflow_creates_a_schedule_and_reads_it_in_an_agents_chat() {
    let app = spawn_app().await;
    let agent: Value = app
        .api().create_agent().json(&json!({"name": "Planner", "enabled_tools": ["calculator", "execute_workflow", "create_schedule", "get_schedule_info"]})).read_json().await;
    let agent_id = agent["id"].as_str().unwrap();
    let tools: Value = app.api().agent_tools(agent_id).read_json().await;
    let names: Vec<String> = tools
        .as_array()
        .or_else(|| tools["tools"].as_array())
        .unwrap()
        .iter()
        .map(|t| {
            t["function"]["name"]
                .as_str()
                .or(t["name"].as_str())
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    for name in ["execute_workflow", "create_schedule", "get_schedule_info"] {
        assert!(
            names.iter().any(|n| n == name),
            "{name} missing from {names:?}"
        );
    }
    let workflow = create_workflow(
        &app,
        json!({"name": "Add", "steps": [{"id": "add", "tool": "calculator", "arguments": {"expression": "{{input.x}} + 40"}}]}),
    )
    .await;
    let workflow_id = workflow["id"].as_str().unwrap();
    let chat_id = app
        .new_chat_with(&json!({"title": "plans", "agent_id": agent_id}))
        .await;

    app.upstream.script([
        Reply::tool_call("call_1", "execute_workflow", json!({"workflowId": workflow_id, "input": {"x": 2}})),
        Reply::text("It is 42."),
        Reply::tool_call("call_2", "create_schedule", json!({"name": "Mornings", "cron": "0 9 * * 1-5", "workflowId": workflow_id, "input": {"x": 1}, "timeZone": "Europe/Paris"})),
        Reply::text("Scheduled."),
    ]);
    let frames = app
        .send_text(&chat_id, "add 2 and 40 with my workflow")
        .await;
    let result = frames.iter().map(|f| f.json()).find(|j| {
        j["type"] == "tool_result"
            || j["type"] == "x_research.tool_result"
            || j["tool_call_id"] == "call_1"
    });
    let kinds: Vec<String> = frames.iter().map(|f| f.kind()).collect();
    assert!(
        kinds.iter().any(|k| k == "x_workflow.step_completed"),
        "{kinds:?}"
    );
    assert!(result.is_some(), "{kinds:?}");
    // The step events name the workflow, and the answer carries its steps after a reload.
    let started = frames
        .iter()
        .map(|f| f.json())
        .find(|j| j["type"] == "x_workflow.step_started")
        .unwrap();
    assert_eq!(started["name"], "Add");
    let tree: Value = app.chat_api().tree(&chat_id).read_json().await;
    let answer = tree["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["role"] == "assistant" && n["content"] == "It is 42.")
        .unwrap_or_else(|| panic!("the answer: {tree}"));
    assert_eq!(answer["workflows"][0]["name"], "Add", "{answer}");
    assert_eq!(answer["workflows"][0]["steps"][0]["status"], "succeeded");
    // The model was given the workflow's result.
    let second = &model_calls(&app)[1];
    assert!(
        second["messages"].to_string().contains("42"),
        "{}",
        second["messages"]
    );

    let frames = app
        .send_text(&chat_id, "run it every weekday morning")
        .await;
    assert_eq!(finished(&frames)["stop_reason"], "completed");
    let schedules: Value = app.api().schedules().read_json().await;
    assert_eq!(schedules["total"], 1, "{schedules}");
    let schedule = &schedules["schedules"][0];
    let schedule_id = schedule["id"].as_str().unwrap();
    assert!(schedule_id.starts_with("sched_"));
    assert_eq!(schedule["time_zone"], "Europe/Paris");
    assert_ne!(schedule["chat_id"], chat_id, "a chat of its own");
    assert_eq!(schedule["next_firings"].as_array().unwrap().len(), 5);

    app.upstream.script([
        Reply::tool_call(
            "call_3",
            "get_schedule_info",
            json!({"scheduleId": schedule_id}),
        ),
        Reply::text("It fires at nine."),
    ]);
    let frames = app.send_text(&chat_id, "when does it fire?").await;
    assert_eq!(finished(&frames)["stop_reason"], "completed");
    let last = model_calls(&app).last().unwrap()["messages"].to_string();
    assert!(
        last.contains("next_firings") && last.contains(schedule_id),
        "{last}"
    );
}

#[actix_web::test]
async fn creates_racing_for_the_last_workflows_stop_at_the_cap_and_the_list_pages_past_it() {
    let app = spawn_app_with(|config| config.schedules.max_workflows_per_user = 5).await;
    race_to_the_cap(5, "too_many_workflows", |i| {
        app.api().create_workflow().json(&json!({
            "name": format!("racer {i}"),
            "steps": [{"id": "only", "prompt": "Say hello"}],
        }))
    })
    .await;
    let ids = read_every_page(|| app.api().workflows(), "workflows").await;
    let mut distinct = ids.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 5, "{ids:?}");
}
