//! The automations editor in a real browser (issue 50 point 2): a workflow and a schedule made,
//! edited, run and fired entirely on `/automations` (`tests/browser/automations_editor.mjs`),
//! then checked here through the API: the workflow's steps as the page saved them, its runs,
//! and the schedule's firings in the chat the page picked.

use serde_json::{Value, json};

use crate::browser::{browser_app, run_scenario};
use crate::client::Call;
use crate::fake_upstream::Reply;

#[actix_web::test]
async fn a_workflow_and_a_schedule_are_made_edited_run_and_fired_entirely_on_the_automations_page()
{
    let app = browser_app(|config| {
        config.schedules.test_only_seconds_field = true;
        config.schedules.poll_interval_ms = 200;
    })
    .await;
    let zone = app
        .auth()
        .update_account()
        .json(&json!({"time_zone": "Asia/Tokyo"}))
        .call()
        .await;
    assert_eq!(zone.status(), 200);
    // Each run's prompt step (the page's run, then one per firing) asks the model once.
    app.upstream.script_for(
        "Explain",
        (0..80).map(|_| Reply::text("Forty-two, the answer.")),
    );
    run_scenario(&app, "automations_editor", &[]).await;

    let listed: Value = app.api().workflows().read_json().await;
    assert_eq!(listed["total"], 1, "{listed}");
    let workflow = &listed["workflows"][0];
    assert_eq!(workflow["name"], "Numbers explained");
    assert_eq!(workflow["version"], 2);
    assert_eq!(
        workflow["steps"],
        json!([
            {"id": "warm-up", "tool": "calculator", "arguments": {"expression": "1 + 1"}},
            {"id": "step-1", "tool": "calculator", "arguments": {"expression": "6 * 7"}},
            {"id": "step-2", "prompt": "Explain {{steps.step-1.result}}"}
        ]),
        "the steps as the page's forms made them"
    );
    let id = workflow["id"].as_str().unwrap();
    let runs: Value = app
        .request(reqwest::Method::GET, &format!("/api/workflows/{id}/runs"))
        .read_json()
        .await;
    let runs = runs["runs"].as_array().unwrap();
    // The page's run, then at least one firing, all in the chat the run made (the page picked
    // it for the schedule).
    assert!(runs.len() >= 2, "{runs:?}");
    let chat = &runs.last().unwrap()["chat_id"];
    assert!(chat.is_string(), "{runs:?}");
    for run in runs {
        assert_eq!(run["version"], 2, "{run}");
        assert_eq!(&run["chat_id"], chat, "{run}");
    }
    assert!(runs.iter().any(|r| r["status"] == "succeeded"), "{runs:?}");
    let schedules: Value = app.api().schedules().read_json().await;
    assert_eq!(schedules["total"], 0, "deleted on the page: {schedules}");
}
