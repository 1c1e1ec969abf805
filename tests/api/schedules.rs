//! Schedules in the real server: the five-field rule (a seconds field only under the
//! test-only switch), REST create/pause/resume/delete, a schedule due every second firing its
//! workflow or prompt as runs in its chat, a failed workflow's firing failed with its run, and
//! pausing itself after failures in a row.

use std::time::Duration;

use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::{
    TestApp, error_body, eventually, race_to_the_cap, read_every_page, spawn_app, spawn_app_with,
};
use crate::workflows::create_workflow;

/// An app whose schedules may be due every second (the test-only seconds field), looked at
/// five times a second.
async fn per_second_app(max_failures: u32) -> TestApp {
    spawn_app_with(|config| {
        config.schedules.test_only_seconds_field = true;
        config.schedules.poll_interval_ms = 200;
        config.schedules.max_consecutive_failures = max_failures;
    })
    .await
}

async fn create_schedule(app: &TestApp, body: Value) -> Value {
    let response = app.api().create_schedule().json(&body).call().await;
    assert_eq!(response.status(), 201, "{:?}", response.text().await);
    response.json().await.unwrap()
}

async fn schedule(app: &TestApp, id: &str) -> Value {
    app.api().schedule(id).read_json().await
}

#[actix_web::test]
async fn cron_expressions_have_five_fields_and_a_real_time_zone() {
    let app = spawn_app().await;
    let workflow = create_workflow(
        &app,
        json!({"name": "w", "steps": [{"id": "a", "tool": "calculator", "arguments": {"expression": "1 + 1"}}]}),
    )
    .await;
    let id = workflow["id"].as_str().unwrap();
    for (cron, zone) in [
        ("* * * * * *", "UTC"),
        ("0 9 * *", "UTC"),
        ("0 9 * * *", "Mars/Base"),
        ("@daily", "UTC"),
    ] {
        let response = app
            .api()
            .create_schedule()
            .json(&json!({"name": "x", "cron": cron, "time_zone": zone, "workflow_id": id}))
            .call()
            .await;
        assert_eq!(response.status(), 400, "{cron} {zone}");
        assert_eq!(error_body(response).await["code"], "invalid_schedule");
    }
    let neither = app
        .api()
        .create_schedule()
        .json(&json!({"name": "x", "cron": "0 9 * * *"}))
        .call()
        .await;
    assert_eq!(neither.status(), 400);
    let chats: Value = app.chat_api().list_chats().read_json().await;
    assert_eq!(
        chats["data"].as_array().map_or(0, Vec::len),
        0,
        "a refused schedule makes no chat: {chats}"
    );

    let created = create_schedule(&app, json!({"name": "Weekdays", "cron": "30 8 * * 1-5", "workflow_id": id, "time_zone": "Asia/Tokyo"})).await;
    assert!(created["id"].as_str().unwrap().starts_with("sched_"));
    assert_eq!(created["missed_policy"], "skip", "skip by default");
    let next = created["next_firings"][0].as_str().unwrap();
    // 08:30 in Tokyo is 23:30 UTC.
    assert!(next.contains("23:30:00"), "{next}");

    let sid = created["id"].as_str().unwrap();
    let paused: Value = app
        .api()
        .pause_schedule(sid)
        .json(&json!({}))
        .read_json()
        .await;
    assert_eq!(paused["status"], "paused");
    assert_eq!(paused["next_firings"].as_array().unwrap().len(), 0);
    let resumed: Value = app
        .api()
        .resume_schedule(sid)
        .json(&json!({}))
        .read_json()
        .await;
    assert_eq!(resumed["status"], "active");
    let deleted = app.api().delete_schedule(sid).send().await.unwrap();
    assert_eq!(deleted.status(), 204);
    assert_eq!(app.api().schedule(sid).call().await.status(), 404);
}

#[actix_web::test]
async fn a_schedule_due_every_second_fires_its_workflow_as_runs_in_its_chat() {
    let app = per_second_app(3).await;
    let workflow = create_workflow(
        &app,
        json!({"name": "tick", "steps": [{"id": "a", "tool": "calculator", "arguments": {"expression": "{{input.n}} * 2"}}]}),
    )
    .await;
    let created = create_schedule(
        &app,
        json!({"name": "Every second", "cron": "* * * * * *", "workflow_id": workflow["id"], "input": {"n": 21}}),
    )
    .await;
    let id = created["id"].as_str().unwrap().to_string();
    let fired = app.wait_for_firings(&id, 2).await;
    app.api().pause_schedule(&id).json(&json!({})).call().await;
    let chat = fired["chat_id"].as_str().unwrap();
    let messages: Value = app.chat_api().messages(chat).read_json().await;
    let text = messages.to_string();
    assert!(
        text.contains("42"),
        "the firing's answer is in its chat: {text}"
    );
    // Each firing names its run, and due times are whole distinct seconds.
    let runs = fired["last_runs"].as_array().unwrap();
    let mut due: Vec<&str> = runs.iter().map(|r| r["due_at"].as_str().unwrap()).collect();
    due.dedup();
    assert_eq!(due.len(), runs.len());
    assert!(
        runs.iter()
            .filter(|r| r["status"] == "succeeded")
            .all(|r| r["run_id"].is_string())
    );
}

#[actix_web::test]
async fn a_prompt_schedule_sends_its_prompt_in_its_chat() {
    let app = per_second_app(3).await;
    app.upstream.script([Reply::text("Here is your summary.")]);
    let created = create_schedule(
        &app,
        json!({"name": "Summary", "cron": "* * * * * *", "prompt": "Summarise my day"}),
    )
    .await;
    let id = created["id"].as_str().unwrap().to_string();
    let fired = app.wait_for_firings(&id, 1).await;
    app.api().pause_schedule(&id).json(&json!({})).call().await;
    let chat = fired["chat_id"].as_str().unwrap();
    let text = app
        .chat_api()
        .messages(chat)
        .call()
        .await
        .text()
        .await
        .unwrap();
    assert!(
        text.contains("Summarise my day") && text.contains("Here is your summary."),
        "{text}"
    );
}

#[actix_web::test]
async fn a_schedule_that_fails_n_times_in_a_row_pauses_itself_and_says_why() {
    let app = per_second_app(2).await;
    let workflow = create_workflow(
        &app,
        json!({"name": "broken", "steps": [{"id": "bad", "tool": "calculator", "arguments": {"expression": "2 +"}}]}),
    )
    .await;
    let created = create_schedule(
        &app,
        json!({"name": "Doomed", "cron": "* * * * * *", "workflow_id": workflow["id"]}),
    )
    .await;
    let id = created["id"].as_str().unwrap().to_string();
    let paused = eventually(
        "the schedule to pause itself",
        Duration::from_secs(20),
        || async {
            let view = schedule(&app, &id).await;
            (view["status"] == "paused").then_some(view)
        },
    )
    .await;
    let reason = paused["paused_reason"].as_str().unwrap();
    assert!(reason.contains("2 failed firings in a row"), "{reason}");
    assert!(
        reason.contains("bad"),
        "the failing step is named: {reason}"
    );
    let failed = paused["last_runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "failed")
        .count();
    assert_eq!(failed, 2);
    // Paused, it fires no more.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert_eq!(
        schedule(&app, &id).await["last_runs"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[actix_web::test]
async fn a_firing_of_a_workflow_that_fails_is_failed_and_so_is_its_run() {
    use sea_orm::EntityTrait;
    let app = per_second_app(1).await;
    let workflow = create_workflow(
        &app,
        json!({"name": "broken", "steps": [{"id": "bad", "tool": "calculator", "arguments": {"expression": "2 +"}}]}),
    )
    .await;
    let created = create_schedule(
        &app,
        json!({"name": "Doomed once", "cron": "* * * * * *", "workflow_id": workflow["id"]}),
    )
    .await;
    let id = created["id"].as_str().unwrap().to_string();
    // One failure pauses it, so exactly one firing is recorded.
    let paused = eventually(
        "the schedule to pause itself",
        Duration::from_secs(20),
        || async {
            let view = schedule(&app, &id).await;
            (view["status"] == "paused").then_some(view)
        },
    )
    .await;
    let firings = paused["last_runs"].as_array().unwrap();
    assert_eq!(firings.len(), 1, "{paused}");
    let firing = &firings[0];
    assert_eq!(firing["status"], "failed", "{firing}");
    let error = firing["error"].as_str().unwrap();
    assert!(error.contains("step \"bad\" failed"), "{error}");
    // The firing's run itself ended failed, of its kind.
    let run_id = firing["run_id"].as_str().expect("the firing names its run");
    let run = entities::runs::Entity::find_by_id(entities::ids::RunId::from_string(run_id))
        .one(&app.db)
        .await
        .unwrap()
        .expect("the firing's run");
    assert_eq!(run.status, entities::runs::RunStatus::Failed);
    assert_eq!(
        run.stop_reason,
        Some(entities::stop_reason::StopReason::WorkflowFailed)
    );
    assert_eq!(
        run.error.as_deref(),
        Some(error),
        "one error, recorded twice"
    );
}

/// A firing row claimed by a process that died `ago` before starting its run.
async fn dead_claim(
    app: &TestApp,
    schedule: &str,
    due: chrono::DateTime<chrono::Utc>,
    ago: chrono::Duration,
) -> entities::ids::ScheduleFiringId {
    use sea_orm::{ActiveModelTrait, Set};
    let id = entities::ids::ScheduleFiringId::generate();
    entities::schedule_firings::ActiveModel {
        id: Set(id.clone()),
        schedule_id: Set(entities::ids::ScheduleId::from_string(schedule)),
        due_at: Set(due),
        status: Set(entities::schedule_firings::FiringStatus::Claimed),
        run_id: Set(None),
        claimed_by: Set("a-dead-process".into()),
        error: Set(None),
        claimed_at: Set(chrono::Utc::now() - ago),
        finished_at: Set(None),
    }
    .insert(&app.db)
    .await
    .unwrap();
    id
}

/// A workflow schedule due at 03:00, paused: only claims made by hand can fire.
async fn paused_schedule(app: &TestApp) -> Value {
    let workflow = create_workflow(
        app,
        json!({"name": "w", "steps": [{"id": "a", "tool": "calculator", "arguments": {"expression": "6 * 7"}}]}),
    )
    .await;
    let created = create_schedule(
        app,
        json!({"name": "Nightly", "cron": "0 3 * * *", "workflow_id": workflow["id"]}),
    )
    .await;
    let sid = created["id"].as_str().unwrap();
    app.api().pause_schedule(sid).json(&json!({})).call().await;
    created
}

/// Waits (20 s at most) for a dead process's claimed `firing` to be taken over by another
/// claimant and run to success, naming its run.
async fn taken_over_and_run(app: &TestApp, firing: &entities::ids::ScheduleFiringId, what: &str) {
    use sea_orm::EntityTrait;
    let taken = eventually(
        &format!("{what} to be taken over and run"),
        Duration::from_secs(20),
        || async {
            let row = entities::schedule_firings::Entity::find_by_id(firing.clone())
                .one(&app.db)
                .await
                .unwrap()
                .unwrap();
            (row.status == entities::schedule_firings::FiringStatus::Succeeded).then_some(row)
        },
    )
    .await;
    assert_ne!(taken.claimed_by, "a-dead-process");
    assert!(taken.run_id.is_some());
}

#[actix_web::test]
async fn a_firing_whose_process_died_before_its_run_is_taken_over_once_and_never_doubled() {
    use sea_orm::EntityTrait;
    let app = per_second_app(3).await;
    let created = paused_schedule(&app).await;
    let sid = created["id"].as_str().unwrap().to_string();
    let lost = dead_claim(
        &app,
        &sid,
        chrono::Utc::now() - chrono::Duration::days(1),
        chrono::Duration::minutes(10),
    )
    .await;
    taken_over_and_run(&app, &lost, "the lost firing").await;

    // A claim whose run had begun (its process died before recording it) is not run again.
    let chat = entities::ids::ChatId::from_string(created["chat_id"].as_str().unwrap());
    let begun_at = chrono::Utc::now() - chrono::Duration::minutes(9);
    let doubled = dead_claim(
        &app,
        &sid,
        chrono::Utc::now() - chrono::Duration::hours(2),
        chrono::Duration::minutes(9),
    )
    .await;
    let begun = {
        use sea_orm::{ActiveModelTrait, ColumnTrait, QueryFilter, Set};
        let row = entities::runs::Entity::find()
            .filter(entities::runs::Column::ChatId.eq(chat.clone()))
            .one(&app.db)
            .await
            .unwrap()
            .expect("the taken-over firing's run");
        let mut run: entities::runs::ActiveModel = row.into();
        run.id = Set(entities::ids::RunId::generate());
        run.created_at = Set(begun_at + chrono::Duration::seconds(1));
        run.insert(&app.db).await.unwrap().id
    };
    let ended = eventually(
        "the doubtful firing to be marked interrupted",
        Duration::from_secs(20),
        || async {
            let row = entities::schedule_firings::Entity::find_by_id(doubled.clone())
                .one(&app.db)
                .await
                .unwrap()
                .unwrap();
            (row.status != entities::schedule_firings::FiringStatus::Claimed).then_some(row)
        },
    )
    .await;
    assert_eq!(
        ended.status,
        entities::schedule_firings::FiringStatus::Interrupted
    );
    assert_eq!(
        ended.run_id,
        Some(begun),
        "the firing names the run it began"
    );
}

/// A restart does not leave a firing its process claimed just before it stopped waiting for the
/// stale claim's two minutes: without a cluster, the new process is the only one, and takes it
/// over at start-up.
#[actix_web::test]
async fn a_firing_claimed_just_before_a_restart_is_taken_over_at_start_up() {
    let app = per_second_app(3).await;
    let sid = paused_schedule(&app).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    // Claimed a second ago: far from stale for a running process.
    let cut_off = dead_claim(
        &app,
        &sid,
        chrono::Utc::now() - chrono::Duration::minutes(1),
        chrono::Duration::seconds(1),
    )
    .await;
    let app = app.restart().await;
    taken_over_and_run(&app, &cut_off, "the firing cut off by the restart").await;
}

#[actix_web::test]
async fn creates_racing_for_the_last_schedules_stop_at_the_cap_and_the_list_pages_past_it() {
    let app = spawn_app_with(|config| config.schedules.max_per_user = 5).await;
    let chat = app.new_chat().await;
    race_to_the_cap(5, "too_many_schedules", |i| {
        app.api().create_schedule().json(&json!({
            "name": format!("racer {i}"),
            "cron": "0 9 * * *",
            "prompt": "Say hello",
            "chat_id": chat,
        }))
    })
    .await;
    let ids = read_every_page(|| app.api().schedules(), "schedules").await;
    assert_eq!(ids.len(), 5);
    let mut distinct = ids.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 5, "{ids:?}");
    // Refused without a chat of their own being made for them first.
    let refused = app
        .api()
        .create_schedule()
        .json(&json!({"name": "sixth", "cron": "0 9 * * *", "prompt": "Say hello"}))
        .call()
        .await;
    assert_eq!(refused.status(), 409);
    let chats: Value = app.chat_api().list_chats().read_json().await;
    assert_eq!(chats["data"].as_array().unwrap().len(), 1, "{chats}");
}

/// `POST /api/schedules/preview` with `body`.
async fn preview(app: &TestApp, body: Value) -> reqwest::Response {
    app.request(reqwest::Method::POST, "/api/schedules/preview")
        .json(&body)
        .call()
        .await
}

#[actix_web::test]
async fn a_preview_words_the_expression_and_gives_the_next_five_firings_in_its_zone() {
    let app = spawn_app().await;
    let response = preview(
        &app,
        json!({"cron": "30 8 * * 1-5", "time_zone": "Asia/Tokyo"}),
    )
    .await;
    assert_eq!(response.status(), 200);
    let shown: Value = response.json().await.unwrap();
    assert_eq!(shown["description"], "At 08:30 on weekdays");
    assert_eq!(shown["time_zone"], "Asia/Tokyo");
    let next: Vec<chrono::DateTime<chrono::Utc>> = shown["next"]
        .as_array()
        .unwrap()
        .iter()
        .map(|at| at.as_str().unwrap().parse().unwrap())
        .collect();
    assert_eq!(next.len(), 5, "{shown}");
    let tokyo: chrono_tz::Tz = "Asia/Tokyo".parse().unwrap();
    let now = chrono::Utc::now();
    for (at, later) in next.iter().zip(next.iter().skip(1)) {
        assert!(at < later, "in order: {shown}");
    }
    for at in &next {
        assert!(*at > now, "{shown}");
        let local = at.with_timezone(&tokyo);
        assert_eq!(local.format("%H:%M:%S").to_string(), "08:30:00", "{shown}");
        let weekday = chrono::Datelike::weekday(&local);
        assert!(
            !matches!(weekday, chrono::Weekday::Sat | chrono::Weekday::Sun),
            "{shown}"
        );
    }

    // A preview agrees with the schedule the same timing makes.
    let workflow = create_workflow(
        &app,
        json!({"name": "w", "steps": [{"id": "a", "tool": "calculator", "arguments": {"expression": "1 + 1"}}]}),
    )
    .await;
    let created = create_schedule(
        &app,
        json!({"name": "Tokyo mornings", "cron": "30 8 * * 1-5", "time_zone": "Asia/Tokyo", "workflow_id": workflow["id"]}),
    )
    .await;
    assert_eq!(created["description"], "At 08:30 on weekdays");
    assert_eq!(created["next_firings"], shown["next"]);

    // Without a zone, the account's.
    let changed = app
        .auth()
        .update_account()
        .json(&json!({"time_zone": "Europe/Paris"}))
        .call()
        .await;
    assert_eq!(changed.status(), 200);
    let shown: Value = preview(&app, json!({"cron": "0 8 * * *"}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(shown["description"], "At 08:00 every day");
    assert_eq!(shown["time_zone"], "Europe/Paris");
    let paris: chrono_tz::Tz = "Europe/Paris".parse().unwrap();
    let first: chrono::DateTime<chrono::Utc> = shown["next"][0].as_str().unwrap().parse().unwrap();
    assert_eq!(
        first.with_timezone(&paris).format("%H:%M").to_string(),
        "08:00"
    );
    // Any other form reads field by field.
    let shown: Value = preview(&app, json!({"cron": "5-10 8 * 1 *", "timeZone": "UTC"}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        shown["description"],
        "Minutes 5 to 10; hour 8; every day of the month; month 1; every day of the week"
    );
}

#[actix_web::test]
async fn a_bad_expression_or_zone_has_no_preview_and_a_preview_needs_a_signed_in_user() {
    let app = spawn_app().await;
    for (body, says) in [
        (
            json!({"cron": "61 * * * *", "time_zone": "UTC"}),
            "not a valid cron expression",
        ),
        (json!({"cron": "0 9 * *"}), "five-field"),
        (json!({"cron": "* * * * * *"}), "five-field"),
        (json!({"cron": "@daily"}), "five-field"),
        (json!({"cron": ""}), "five-field"),
        (
            json!({"cron": "0 9 * * *", "time_zone": "Mars/Olympus"}),
            "IANA time zone",
        ),
        (json!({"cron": "x".repeat(201)}), "at most 200 characters"),
    ] {
        let response = preview(&app, body.clone()).await;
        assert_eq!(response.status(), 400, "{body}");
        let error = error_body(response).await;
        assert_eq!(error["code"], "invalid_schedule", "{body}");
        assert!(
            error["message"].as_str().unwrap().contains(says),
            "{body}: {error}"
        );
    }
    // Not a timing at all: the body's shape is refused too.
    for body in [json!({}), json!({"cron": "0 9 * * *", "zone": "UTC"})] {
        let response = preview(&app, body.clone()).await;
        assert_eq!(response.status(), 400, "{body}");
    }
    let anonymous = app
        .anonymous(reqwest::Method::POST, "/api/schedules/preview")
        .json(&json!({"cron": "0 9 * * *"}))
        .call()
        .await;
    assert_eq!(anonymous.status(), 401);
}

#[actix_web::test]
async fn the_seconds_field_previews_only_under_the_test_only_switch() {
    let app = per_second_app(3).await;
    let shown: Value = preview(&app, json!({"cron": "*/5 * * * * *", "time_zone": "UTC"}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(shown["description"], "Every 5 seconds");
    let next: Vec<chrono::DateTime<chrono::Utc>> = shown["next"]
        .as_array()
        .unwrap()
        .iter()
        .map(|at| at.as_str().unwrap().parse().unwrap())
        .collect();
    for pair in next.windows(2) {
        assert_eq!((pair[1] - pair[0]).num_seconds(), 5, "{shown}");
    }
}

#[actix_web::test]
async fn the_workflow_tools_are_those_a_step_may_call_each_with_its_schema() {
    let app = spawn_app().await;
    let listed: Value = app
        .request(reqwest::Method::GET, "/api/workflow-tools")
        .read_json()
        .await;
    let tools = listed["tools"].as_array().unwrap();
    let calculator = tools
        .iter()
        .find(|t| t["name"] == "calculator")
        .expect("the calculator");
    assert!(!calculator["description"].as_str().unwrap().is_empty());
    assert_eq!(calculator["parameters"]["type"], "object");
    assert_eq!(
        calculator["parameters"]["properties"]["expression"]["type"],
        "string"
    );
    assert_eq!(calculator["parameters"]["required"], json!(["expression"]));
    assert!(
        !tools.iter().any(|t| t["name"] == "create_artifact"),
        "a chat tool is not a step's: {listed}"
    );
    // Every one listed is one a workflow step may call.
    let steps: Vec<Value> = tools
        .iter()
        .enumerate()
        .map(|(i, t)| json!({"id": format!("s{i}"), "tool": t["name"], "arguments": {}}))
        .collect();
    let made = app
        .api()
        .create_workflow()
        .json(&json!({"name": "All tools", "steps": steps}))
        .call()
        .await;
    assert_eq!(made.status(), 201, "{:?}", made.text().await);
    let anonymous = app
        .anonymous(reqwest::Method::GET, "/api/workflow-tools")
        .call()
        .await;
    assert_eq!(anonymous.status(), 401);
}
