//! A disabled account stops acting: its schedules' due times are recorded as skipped (with the
//! reason) and fire again once it is enabled, with no backlog; a run of its in progress when an
//! admin disables it is cancelled.

use std::time::Duration;

use chrono::{DateTime, Utc};
use reqwest::Method;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::{Value, json};

use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, eventually, spawn_app_with};

/// An app whose schedules may be due every second, looked at five times a second; failures in
/// a row never pause a schedule here.
async fn per_second_app() -> TestApp {
    spawn_app_with(|config| {
        config.schedules.test_only_seconds_field = true;
        config.schedules.poll_interval_ms = 200;
        config.schedules.max_consecutive_failures = 1_000;
        // A model silent for a while is waited for, not timed out, within a test's time.
        config.llm.read_timeout_secs = 60;
    })
    .await
}

/// `key`'s owner makes `path` with `body`; the created JSON.
async fn post_as(app: &TestApp, key: &str, path: &str, body: Value) -> Value {
    let response = app
        .anonymous(Method::POST, path)
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201, "{:?}", response.text().await);
    response.json().await.unwrap()
}

/// The id of the account named `username`, from the admin's list.
async fn user_id(app: &TestApp, username: &str) -> String {
    let users: Value = app.get("/admin/api/users").await.json().await.unwrap();
    users["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["username"] == username)
        .and_then(|u| u["id"].as_str())
        .expect("the user is listed")
        .to_string()
}

/// The admin disables or enables `user`.
async fn set_disabled(app: &TestApp, user: &str, disabled: bool) {
    let response = app
        .request(Method::PATCH, &format!("/admin/api/users/{user}"))
        .json(&json!({"disabled": disabled}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "{:?}", response.text().await);
}

/// The schedule's recorded firings, oldest due time first.
async fn firings(app: &TestApp, schedule: &str) -> Vec<entities::schedule_firings::Model> {
    let mut rows = entities::schedule_firings::Entity::find()
        .filter(
            entities::schedule_firings::Column::ScheduleId
                .eq(entities::ids::ScheduleId::from_string(schedule)),
        )
        .all(&app.db)
        .await
        .unwrap();
    rows.sort_by_key(|row| row.due_at);
    rows
}

fn due_at(firing: &Value) -> DateTime<Utc> {
    firing["due_at"].as_str().unwrap().parse().unwrap()
}

#[actix_web::test]
async fn a_disabled_owners_schedule_is_skipped_with_the_reason_and_fires_again_once_enabled() {
    use entities::schedule_firings::FiringStatus;
    let app = per_second_app().await;
    let bob_key = app.create_user_with_key("bob").await;
    let bob = user_id(&app, "bob").await;
    let workflow = post_as(
        &app,
        &bob_key,
        "/api/workflows",
        json!({"name": "tick", "steps": [{"id": "a", "tool": "calculator", "arguments": {"expression": "6 * 7"}}]}),
    )
    .await;
    let schedule = post_as(
        &app,
        &bob_key,
        "/api/schedules",
        json!({"name": "Every second", "cron": "* * * * * *", "workflow_id": workflow["id"]}),
    )
    .await;
    let id = schedule["id"].as_str().unwrap().to_string();

    set_disabled(&app, &bob, true).await;
    let disabled_at = Utc::now();
    let skipped = eventually(
        "two firings skipped while bob is disabled",
        Duration::from_secs(20),
        || async {
            let rows = firings(&app, &id).await;
            let skipped: Vec<_> = rows
                .into_iter()
                .filter(|row| row.status == FiringStatus::Skipped)
                .collect();
            (skipped.len() >= 2).then_some(skipped)
        },
    )
    .await;
    for row in &skipped {
        assert_eq!(
            row.error.as_deref(),
            Some("its owner's account is disabled"),
            "a skipped firing says why"
        );
        assert_eq!(row.run_id, None, "a skipped firing has no run");
    }
    // Nothing due after the account was disabled ran in its name.
    let ran_while_disabled: Vec<_> = firings(&app, &id)
        .await
        .into_iter()
        .filter(|row| row.due_at > disabled_at + chrono::Duration::seconds(1))
        .filter(|row| row.status != FiringStatus::Skipped || row.run_id.is_some())
        .collect();
    assert!(ran_while_disabled.is_empty(), "{ran_while_disabled:?}");
    let row = entities::schedules::Entity::find_by_id(entities::ids::ScheduleId::from_string(&id))
        .one(&app.db)
        .await
        .unwrap()
        .expect("the schedule is kept");
    assert_eq!(
        row.status,
        entities::schedules::ScheduleStatus::Active,
        "the schedule is neither deleted nor paused"
    );
    assert!(row.next_due_at.is_some_and(|next| next > disabled_at));

    set_disabled(&app, &bob, false).await;
    let enabled_at = Utc::now();
    let view = eventually(
        "a successful firing after bob is enabled again",
        Duration::from_secs(20),
        || async {
            let response = app
                .anonymous(Method::GET, &format!("/api/schedules/{id}"))
                .bearer_auth(&bob_key)
                .send()
                .await
                .unwrap();
            let view: Value = response.json().await.unwrap();
            view["last_runs"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["status"] == "succeeded" && due_at(r) > enabled_at)
                .then_some(view)
        },
    )
    .await;
    let last_runs = view["last_runs"].as_array().unwrap();
    assert!(
        last_runs.iter().any(|r| r["status"] == "skipped"
            && r["error"] == "its owner's account is disabled"
            && r["run_id"].is_null()),
        "the API lists the skipped firings with their reason: {last_runs:?}"
    );
    // No backlog: the due times passed while disabled were recorded skipped, none fired late.
    let late: Vec<_> = firings(&app, &id)
        .await
        .into_iter()
        .filter(|row| row.due_at > disabled_at + chrono::Duration::seconds(1))
        .filter(|row| row.due_at < enabled_at - chrono::Duration::seconds(1))
        .filter(|row| row.status != FiringStatus::Skipped)
        .collect();
    assert!(late.is_empty(), "{late:?}");
    assert_eq!(view["status"], "active");
    app.anonymous(Method::POST, &format!("/api/schedules/{id}/pause"))
        .bearer_auth(&bob_key)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
}

#[actix_web::test]
async fn a_schedules_run_in_progress_is_cancelled_when_its_owner_is_disabled() {
    let app = per_second_app().await;
    // The model answers a little, then says nothing for a long while.
    app.upstream.script([
        Reply::text("one two three four five six").stall_after(2, Duration::from_secs(120))
    ]);
    let bob_key = app.create_user_with_key("bob").await;
    let bob = user_id(&app, "bob").await;
    // Due once, three seconds from now (UTC; seconds minutes hours).
    let at = Utc::now() + chrono::Duration::seconds(3);
    let cron = at.format("%-S %-M %-H * * *").to_string();
    let schedule = post_as(
        &app,
        &bob_key,
        "/api/schedules",
        json!({"name": "Once", "cron": cron, "time_zone": "UTC", "prompt": "Write at length"}),
    )
    .await;
    let id = schedule["id"].as_str().unwrap().to_string();
    let run_id = eventually(
        "the firing's run to be waiting on the model",
        Duration::from_secs(20),
        || async {
            let running = firings(&app, &id)
                .await
                .into_iter()
                .find(|row| row.status == entities::schedule_firings::FiringStatus::Running)?;
            let received = app.upstream.received().len();
            (received >= 1).then_some(running.run_id?)
        },
    )
    .await;

    set_disabled(&app, &bob, true).await;
    let run = eventually(
        "the run to be cancelled",
        Duration::from_secs(15),
        || async {
            let run = entities::runs::Entity::find_by_id(run_id.clone())
                .one(&app.db)
                .await
                .unwrap()?;
            (run.status != entities::runs::RunStatus::Running).then_some(run)
        },
    )
    .await;
    assert_eq!(
        run.status,
        entities::runs::RunStatus::Cancelled,
        "{:?}",
        run.error
    );
    let firing = eventually("the firing to end", Duration::from_secs(15), || async {
        firings(&app, &id)
            .await
            .into_iter()
            .find(|row| row.run_id.as_ref() == Some(&run_id) && row.finished_at.is_some())
    })
    .await;
    assert_ne!(
        firing.status,
        entities::schedule_firings::FiringStatus::Running
    );
}
