//! What a schedule is after it is made: a PATCH of its rule or zone recomputes its next
//! firings; it fires in the calling chat when asked (`chat_id` over REST, `inThisChat` from
//! the model), which then names its next firing (`next_firing_at`); a schedule made without a
//! zone takes its owner's (`time_zone` on the account, UTC when unset); a workflow that
//! schedules fire is not deleted from under them.

use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, error_body, spawn_app, spawn_app_with};
use crate::workflows::create_workflow;

async fn one_step_workflow(app: &TestApp) -> String {
    let workflow = create_workflow(
        app,
        json!({"name": "Answer", "steps": [{"id": "a", "tool": "calculator", "arguments": {"expression": "6 * 7"}}]}),
    )
    .await;
    workflow["id"].as_str().unwrap().to_string()
}

async fn created(app: &TestApp, body: Value) -> Value {
    let response = app.api().create_schedule().json(&body).call().await;
    assert_eq!(response.status(), 201, "{:?}", response.text().await);
    response.json().await.unwrap()
}

async fn patch(request: reqwest::RequestBuilder, body: Value) -> reqwest::Response {
    request.json(&body).send().await.unwrap()
}

fn next_firings(view: &Value) -> Vec<String> {
    view["next_firings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect()
}

#[actix_web::test]
async fn patching_a_schedules_rule_or_zone_recomputes_its_next_firings() {
    let app = spawn_app().await;
    let workflow = one_step_workflow(&app).await;
    let schedule = created(
        &app,
        json!({"name": "Daily", "cron": "0 9 * * *", "workflow_id": workflow}),
    )
    .await;
    let id = schedule["id"].as_str().unwrap();
    assert!(
        next_firings(&schedule)
            .iter()
            .all(|t| t.contains("T09:00:00"))
    );

    let response = patch(
        app.api().update_schedule(id),
        json!({"cron": "30 17 * * *"}),
    )
    .await;
    assert_eq!(response.status(), 200);
    let changed: Value = response.json().await.unwrap();
    assert_eq!(changed["cron"], "30 17 * * *");
    let at_five = next_firings(&changed);
    assert_eq!(at_five.len(), next_firings(&schedule).len());
    assert!(
        at_five.iter().all(|t| t.contains("T17:30:00")),
        "{at_five:?}"
    );
    // What fires next is the new rule's, in the database too (the GET reads it back).
    let read: Value = app.api().schedule(id).read_json().await;
    assert_eq!(next_firings(&read), at_five);

    // 17:30 in Tokyo is 08:30 UTC.
    let tokyo: Value = patch(
        app.api().update_schedule(id),
        json!({"time_zone": "Asia/Tokyo"}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert!(
        next_firings(&tokyo).iter().all(|t| t.contains("T08:30:00")),
        "{tokyo}"
    );

    // A bad rule is refused and changes nothing.
    let refused = patch(app.api().update_schedule(id), json!({"cron": "61 * * * *"})).await;
    assert_eq!(refused.status(), 400);
    assert_eq!(error_body(refused).await["code"], "invalid_schedule");
    let read: Value = app.api().schedule(id).read_json().await;
    assert_eq!(read["cron"], "30 17 * * *");
    assert_eq!(next_firings(&read), next_firings(&tokyo));

    // Paused, a new rule shows no firing until it is resumed, then the new rule's.
    app.api().pause_schedule(id).json(&json!({})).call().await;
    let paused: Value = patch(app.api().update_schedule(id), json!({"cron": "15 6 * * *"}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(paused["status"], "paused");
    assert!(next_firings(&paused).is_empty());
    let resumed: Value = app
        .api()
        .resume_schedule(id)
        .json(&json!({}))
        .read_json()
        .await;
    // 06:15 in Tokyo is 21:15 UTC.
    assert!(
        next_firings(&resumed)
            .iter()
            .all(|t| t.contains("T21:15:00")),
        "{resumed}"
    );
}

#[actix_web::test]
async fn a_schedule_asked_to_fire_in_the_calling_chat_fires_there() {
    let app = spawn_app_with(|config| {
        config.schedules.test_only_seconds_field = true;
        config.schedules.poll_interval_ms = 200;
    })
    .await;
    let workflow = one_step_workflow(&app).await;
    // An agent that may create schedules, for the model's part.
    let agent: Value = app
        .api()
        .create_agent()
        .json(&json!({"name": "Planner", "enabled_tools": ["calculator", "create_schedule"]}))
        .read_json()
        .await;
    let chat_id = app
        .new_chat_with(&json!({"title": "mine", "agent_id": agent["id"]}))
        .await;

    // Over REST: `chat_id`.
    let schedule = created(
        &app,
        json!({"name": "Here", "cron": "* * * * * *", "workflow_id": workflow, "chat_id": chat_id}),
    )
    .await;
    assert_eq!(schedule["chat_id"], chat_id);
    let id = schedule["id"].as_str().unwrap().to_string();
    app.wait_for_firings(&id, 1).await;
    app.api().pause_schedule(&id).json(&json!({})).call().await;
    let messages: Value = app.chat_api().messages(&chat_id).read_json().await;
    assert!(messages.to_string().contains("42"), "{messages}");
    // The firing's answer carries its steps, for a reloaded page to show.
    let tree: Value = app.chat_api().tree(&chat_id).read_json().await;
    let ran = tree["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["role"] == "assistant")
        .map(|n| &n["workflows"][0])
        .unwrap_or_else(|| panic!("an answer: {tree}"));
    assert_eq!(ran["name"], "Answer", "{ran}");
    assert_eq!(ran["status"], "succeeded");
    assert_eq!(ran["steps"][0]["id"], "a");
    assert_eq!(ran["steps"][0]["status"], "succeeded");
    let chats: Value = app.chat_api().list_chats().read_json().await;
    assert_eq!(
        chats["data"].as_array().unwrap().len(),
        1,
        "no chat of its own: {chats}"
    );

    // From the model: `inThisChat`.
    app.upstream.script([
        Reply::tool_call(
            "call_1",
            "create_schedule",
            json!({"name": "Mornings here", "cron": "0 9 * * *", "workflowId": workflow, "inThisChat": true}),
        ),
        Reply::text("Scheduled here."),
    ]);
    app.send_text(&chat_id, "every morning, in this chat").await;
    let listed: Value = app.api().schedules().read_json().await;
    let mornings = listed["schedules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "Mornings here")
        .unwrap_or_else(|| panic!("the model's schedule: {listed}"));
    assert_eq!(mornings["chat_id"], chat_id);
    let chats: Value = app.chat_api().list_chats().read_json().await;
    assert_eq!(chats["data"].as_array().unwrap().len(), 1);
    // The chat says when a schedule next fires in it (the paused one does not count), so its
    // page can look then.
    let info: Value = app.chat_api().chat(&chat_id).read_json().await;
    assert_eq!(
        chrono::DateTime::parse_from_rfc3339(info["next_firing_at"].as_str().unwrap()).unwrap(),
        chrono::DateTime::parse_from_rfc3339(mornings["next_firings"][0].as_str().unwrap())
            .unwrap(),
        "{info}"
    );

    // A chat that is not the caller's is not a place to fire in.
    let elsewhere = entities::ids::ChatId::generate();
    let refused = app
        .api().create_schedule().json(&json!({"name": "There", "cron": "0 9 * * *", "workflow_id": workflow, "chat_id": elsewhere})).call()
        .await;
    assert_eq!(refused.status(), 404);
}

#[actix_web::test]
async fn a_schedule_made_without_a_zone_takes_its_owners_and_utc_when_unset() {
    let app = spawn_app().await;
    let workflow = one_step_workflow(&app).await;
    let account: Value = app.auth().account().read_json().await;
    assert_eq!(account["time_zone"], "UTC", "UTC by default");
    let plain = created(
        &app,
        json!({"name": "Plain", "cron": "30 8 * * *", "workflow_id": workflow}),
    )
    .await;
    assert_eq!(plain["time_zone"], "UTC");
    assert!(next_firings(&plain)[0].contains("T08:30:00"));

    // The zone is set on the account; the display name, not named, stays.
    patch(app.auth().update_account(), json!({"display_name": "Ada"})).await;
    let response = patch(
        app.auth().update_account(),
        json!({"time_zone": "Asia/Tokyo"}),
    )
    .await;
    assert_eq!(response.status(), 200);
    let saved: Value = response.json().await.unwrap();
    assert_eq!(
        saved,
        json!({"display_name": "Ada", "time_zone": "Asia/Tokyo"})
    );
    let refused = patch(
        app.auth().update_account(),
        json!({"time_zone": "Mars/Base", "display_name": "Bob"}),
    )
    .await;
    assert_eq!(refused.status(), 400);
    assert_eq!(error_body(refused).await["code"], "invalid_time_zone");
    let account: Value = app.auth().account().read_json().await;
    assert_eq!(
        account["time_zone"], "Asia/Tokyo",
        "a refused PATCH changes nothing"
    );
    assert_eq!(account["display_name"], "Ada");

    let mine = created(
        &app,
        json!({"name": "Mine", "cron": "30 8 * * *", "workflow_id": workflow}),
    )
    .await;
    assert_eq!(mine["time_zone"], "Asia/Tokyo");
    // 08:30 in Tokyo is 23:30 UTC.
    assert!(next_firings(&mine)[0].contains("T23:30:00"), "{mine}");
    let own = created(
        &app,
        json!({"name": "Own", "cron": "30 8 * * *", "time_zone": "Europe/Paris", "workflow_id": workflow}),
    )
    .await;
    assert_eq!(own["time_zone"], "Europe/Paris", "a zone given wins");
    let before: Value = app
        .api()
        .schedule(plain["id"].as_str().unwrap())
        .read_json()
        .await;
    assert_eq!(
        before["time_zone"], "UTC",
        "schedules made before keep theirs"
    );

    // Cleared, it is UTC again.
    let cleared: Value = patch(app.auth().update_account(), json!({"time_zone": null}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(cleared["time_zone"], "UTC");
    let again = created(
        &app,
        json!({"name": "Again", "cron": "30 8 * * *", "workflow_id": workflow}),
    )
    .await;
    assert_eq!(again["time_zone"], "UTC");
}

#[actix_web::test]
async fn a_workflow_that_schedules_fire_is_not_deleted_and_they_are_named() {
    let app = spawn_app().await;
    let workflow = one_step_workflow(&app).await;
    let daily = created(
        &app,
        json!({"name": "Daily sums", "cron": "0 9 * * *", "workflow_id": workflow}),
    )
    .await;
    let weekly = created(
        &app,
        json!({"name": "Weekly sums", "cron": "0 9 * * 1", "workflow_id": workflow}),
    )
    .await;
    let (daily_id, weekly_id) = (
        daily["id"].as_str().unwrap(),
        weekly["id"].as_str().unwrap(),
    );
    // Paused schedules count: a resume would fail every firing.
    app.api()
        .pause_schedule(weekly_id)
        .json(&json!({}))
        .call()
        .await;

    let refused = app.api().delete_workflow(&workflow).send().await.unwrap();
    assert_eq!(refused.status(), 409);
    let body = error_body(refused).await;
    assert_eq!(body["code"], "conflict");
    let message = body["message"].as_str().unwrap();
    for named in ["Daily sums", daily_id, "Weekly sums", weekly_id] {
        assert!(message.contains(named), "{named} in {message}");
    }
    assert_eq!(
        app.api().workflow(&workflow).call().await.status(),
        200,
        "the workflow stays"
    );

    // Once no schedule fires it, it is deleted with its versions.
    for id in [daily_id, weekly_id] {
        let gone = app.api().delete_schedule(id).send().await.unwrap();
        assert_eq!(gone.status(), 204);
    }
    let deleted = app.api().delete_workflow(&workflow).send().await.unwrap();
    assert_eq!(deleted.status(), 204);
    assert_eq!(app.api().workflow(&workflow).call().await.status(), 404);
    assert_eq!(
        app.api().workflow_versions(&workflow).call().await.status(),
        404
    );
    let again = app.api().delete_workflow(&workflow).send().await.unwrap();
    assert_eq!(again.status(), 404);
}
