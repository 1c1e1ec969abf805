//! The chat engine through the chat API: the governed loop, runs and re-attach, cancel,
//! branches, passivation and restarts — against the fake upstream over real HTTP.

use entities::ids::{ChatId, RunId};
use std::time::{Duration, Instant};

use sea_orm::EntityTrait;
use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, eventually, spawn_app, spawn_app_with};
use crate::sse::{Frame, content, finished, read_all, read_until};

async fn active_messages(app: &TestApp, chat_id: &str) -> Vec<Value> {
    let body: Value = app.chat_api().messages(chat_id).read_json().await;
    body["data"].as_array().unwrap().clone()
}

fn contents(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .map(|m| {
            format!(
                "{}:{}",
                m["role"].as_str().unwrap(),
                m["content"].as_str().unwrap_or("")
            )
        })
        .collect()
}

fn kinds(frames: &[Frame]) -> Vec<String> {
    frames.iter().map(Frame::kind).collect()
}

/// The messages of the `index`th request the upstream received.
fn sent_messages(app: &TestApp, index: usize) -> Vec<Value> {
    app.upstream.received()[index].body["messages"]
        .as_array()
        .unwrap()
        .clone()
}

#[actix_web::test]
async fn a_multi_iteration_tool_loop_feeds_results_back_and_persists_the_answer() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    app.upstream.script([
        Reply::tool_call(
            "call_1",
            "calculator",
            json!({"expression": "sqrt(144) + 2^3"}),
        ),
        Reply::tool_call("call_2", "calculator", json!({"expression": "20 * 2"})),
        Reply::text("The answer is 40."),
    ]);
    let frames = app
        .send(&chat, json!({"content": "compute", "enableTools": true}))
        .await;

    let ids: Vec<usize> = frames.iter().filter_map(|f| f.id).collect();
    assert!(
        ids.windows(2).all(|w| w[0] <= w[1]),
        "ids are ordered: {ids:?}"
    );
    let tool_results: Vec<Value> = frames
        .iter()
        .filter(|f| f.kind() == "tool_result")
        .map(Frame::json)
        .collect();
    assert_eq!(tool_results.len(), 2);
    assert_eq!(tool_results[0]["success"], true);
    assert_eq!(tool_results[0]["result"]["result"], 20.0);
    assert_eq!(tool_results[0]["resultPreview"], "Result: 20.0");
    let tool_call = frames.iter().find(|f| f.kind() == "tool_call").unwrap();
    assert_eq!(tool_call.event.as_deref(), Some("message"));
    assert_eq!(
        tool_call.json()["arguments"]["expression"],
        "sqrt(144) + 2^3"
    );
    let calculating = frames
        .iter()
        .find(|f| f.kind() == "x_research.calculating")
        .unwrap();
    assert_eq!(
        calculating.json()["arguments"],
        "{\"expression\":\"sqrt(144) + 2^3\"}"
    );
    assert_eq!(content(&frames), "The answer is 40.");
    let order = kinds(&frames);
    let complete = order
        .iter()
        .position(|k| k == "x_research.complete")
        .unwrap();
    let first_content = order.iter().position(|k| k == "content").unwrap();
    assert!(complete < first_content, "{order:?}");
    assert_eq!(finished(&frames)["stop_reason"], "completed");
    assert_eq!(order.last().unwrap(), "[DONE]");
    let metadata = frames
        .iter()
        .find(|f| f.kind() == "x_chat.metadata")
        .unwrap()
        .json();
    assert_eq!(metadata["usage"]["prompt_tokens"], 20 + 20 + 10);
    assert_eq!(metadata["iterations"], 3);

    let received = app.upstream.received();
    assert_eq!(received.len(), 3);
    let second = sent_messages(&app, 1);
    assert_eq!(second[1]["tool_calls"][0]["id"], "call_1");
    assert_eq!(second[2]["role"], "tool");
    assert_eq!(second[2]["tool_call_id"], "call_1");
    let result: Value = serde_json::from_str(second[2]["content"].as_str().unwrap()).unwrap();
    assert_eq!(result["result"], 20.0);
    let offered: Vec<&str> = received[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    // Research tools as opted into (the defaults: web_search, which brings fetch_url, and the
    // calculator), then the tools every chat has (docs/spec.md#which-tools-a-run-has); no
    // file_search without documents.
    assert_eq!(
        offered,
        [
            "web_search",
            "fetch_url",
            "calculator",
            "create_artifact",
            "update_artifact",
            "save_memory",
            "recall_memory",
            "ask_user"
        ]
    );

    // The tool exchanges are part of the history the messages API returns
    // (docs/spec.md#tool-messages).
    let stored = active_messages(&app, &chat).await;
    assert_eq!(
        contents(&stored),
        [
            "user:compute",
            "assistant:",
            "tool:{\"expression\":\"sqrt(144) + 2^3\",\"result\":20.0}",
            "assistant:",
            "tool:{\"expression\":\"20 * 2\",\"result\":40.0}",
            "assistant:The answer is 40."
        ]
    );
    assert_eq!(stored.last().unwrap()["stop_reason"], "completed");
}

#[actix_web::test]
async fn the_tool_calls_of_one_turn_run_concurrently() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    app.upstream.script([
        Reply::tool_call("a", "sleep", json!({"ms": 600, "tag": "a"}))
            .and_tool_call("b", "sleep", json!({"ms": 600, "tag": "b"}))
            .and_tool_call("c", "sleep", json!({"ms": 600, "tag": "c"})),
        Reply::text("done"),
    ]);
    let started = Instant::now();
    let frames = app
        .send(
            &chat,
            json!({"content": "wait", "web_search_options": {"x_tools": ["sleep"]}}),
        )
        .await;
    let elapsed = started.elapsed();
    let results = frames.iter().filter(|f| f.kind() == "tool_result").count();
    assert_eq!(results, 3);
    assert!(
        elapsed < Duration::from_millis(1_400),
        "three 600 ms calls took {elapsed:?}: they ran one after another"
    );
    assert!(elapsed >= Duration::from_millis(600));
}

#[actix_web::test]
async fn the_iteration_cap_forces_a_final_answer_without_tools() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    app.upstream.script([
        Reply::tool_call("c1", "calculator", json!({"expression": "1+1"})),
        Reply::tool_call("c2", "calculator", json!({"expression": "2+2"})),
        Reply::text("Final answer from what I have."),
    ]);
    let frames = app.send(&chat,
        json!({"content": "loop", "web_search_options": {"max_iterations": 2, "x_tools": ["calculator"]}}),
    )
    .await;
    assert_eq!(finished(&frames)["stop_reason"], "max_iterations");
    let received = app.upstream.received();
    assert_eq!(received.len(), 3);
    assert!(received[1].body.get("tools").is_some());
    assert!(
        received[2].body.get("tools").is_none(),
        "the final call offers no tools"
    );
    let last = sent_messages(&app, 2);
    let instruction = last.last().unwrap()["content"].as_str().unwrap();
    assert!(
        instruction.contains("Do not call any more tools"),
        "{instruction}"
    );
    assert_eq!(content(&frames), "Final answer from what I have.");
}

#[actix_web::test]
async fn a_request_cannot_raise_the_iteration_cap_above_the_ceiling() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    let calls: Vec<Reply> = (0..9)
        .map(|i| {
            Reply::tool_call(
                &format!("c{i}"),
                "calculator",
                json!({"expression": format!("{i}+1")}),
            )
        })
        .collect();
    app.upstream.script(calls);
    let frames = app.send(&chat,
        json!({"content": "loop", "web_search_options": {"max_iterations": 50, "x_tools": ["calculator"]}}),
    )
    .await;
    assert_eq!(finished(&frames)["stop_reason"], "max_iterations");
    assert_eq!(
        app.upstream.received().len(),
        9,
        "8 rounds then one final call"
    );
}

#[actix_web::test]
async fn the_third_identical_call_is_refused_as_a_loop() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    let same = json!({"expression": "6*7"});
    let reordered = json!({"expression": "6*7"});
    app.upstream.script([
        Reply::tool_call("r1", "calculator", same.clone()),
        Reply::tool_call("r2", "calculator", reordered),
        Reply::tool_call("r3", "calculator", same),
        Reply::text("ok"),
    ]);
    let frames = app
        .send(&chat, json!({"content": "repeat", "enableTools": true}))
        .await;
    let results: Vec<Value> = frames
        .iter()
        .filter(|f| f.kind() == "tool_result")
        .map(Frame::json)
        .collect();
    assert_eq!(results.len(), 3);
    assert_eq!(results[0]["success"], true);
    assert_eq!(results[1]["success"], true);
    assert_eq!(results[2]["success"], false);
    assert!(
        results[2]["error"]
            .as_str()
            .unwrap()
            .contains("already called 2 times")
    );
    let fed_back = sent_messages(&app, 3);
    let refusal: Value =
        serde_json::from_str(fed_back.last().unwrap()["content"].as_str().unwrap()).unwrap();
    assert_eq!(refusal["code"], "repeated_call");
    assert!(refusal["suggestion"].is_string());
    assert_eq!(finished(&frames)["stop_reason"], "completed");
}

#[actix_web::test]
async fn a_tool_that_overruns_its_timeout_becomes_an_error_result_and_the_loop_goes_on() {
    let app = spawn_app_with(|config| config.agent.tool_timeout_secs = 1).await;
    let chat = app.new_chat().await;
    app.upstream.script([
        Reply::tool_call("slow", "sleep", json!({"ms": 5_000, "tag": "timeout"})),
        Reply::text("Sorry, that took too long."),
    ]);
    let started = Instant::now();
    let frames = app
        .send(
            &chat,
            json!({"content": "wait", "web_search_options": {"x_tools": ["sleep"]}}),
        )
        .await;
    assert!(started.elapsed() < Duration::from_secs(4));
    let result = frames
        .iter()
        .find(|f| f.kind() == "tool_result")
        .unwrap()
        .json();
    assert_eq!(result["success"], false);
    assert!(
        result["error"]
            .as_str()
            .unwrap()
            .contains("within 1 seconds")
    );
    let fed_back = sent_messages(&app, 1);
    let error: Value =
        serde_json::from_str(fed_back.last().unwrap()["content"].as_str().unwrap()).unwrap();
    assert_eq!(error["code"], "timeout");
    assert_eq!(content(&frames), "Sorry, that took too long.");
}

#[actix_web::test]
async fn long_results_are_truncated_and_base64_images_replaced_before_the_model_sees_them() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    app.upstream.script([
        Reply::tool_call("big", "big_output", json!({})).and_tool_call(
            "img",
            "image_output",
            json!({}),
        ),
        Reply::text("ok"),
    ]);
    app.send(&chat,
        json!({"content": "big", "web_search_options": {"x_tools": ["big_output", "image_output"]}}),
    )
    .await;
    let fed_back = sent_messages(&app, 1);
    let big = fed_back[2]["content"].as_str().unwrap();
    assert!(
        big.chars().count() < 10_200,
        "{} chars",
        big.chars().count()
    );
    assert!(big.contains("[truncated:"), "marker present");
    let image = fed_back[3]["content"].as_str().unwrap();
    assert!(!image.contains("iVBORw0KGgoAAAA"), "{image}");
    assert!(image.contains("image omitted"), "{image}");
    assert!(image.contains("a chart"));
}

#[actix_web::test]
async fn a_failing_upstream_ends_the_run_with_a_reason_and_keeps_the_user_message() {
    let app = spawn_app_with(|config| config.llm.max_retries = 0).await;
    let chat = app.new_chat().await;
    app.upstream.script([Reply::status(500, "exploded")]);
    let frames = app.send(&chat, json!({"content": "hello"})).await;
    assert_eq!(finished(&frames)["stop_reason"], "upstream_error");
    let error = frames.iter().find(|f| f.kind() == "error").unwrap().json();
    assert_eq!(error["error"]["code"], "upstream_error");
    let stored = active_messages(&app, &chat).await;
    assert_eq!(contents(&stored), ["user:hello", "assistant:"]);
    assert_eq!(stored[1]["stop_reason"], "upstream_error");
    assert_eq!(
        finished(&frames)["assistant_message_id"],
        stored[1]["id"],
        "the failed turn's answer is the run's"
    );
}

#[actix_web::test]
async fn after_a_failed_turn_the_next_request_still_alternates_roles() {
    let app = spawn_app_with(|config| config.llm.max_retries = 0).await;
    app.upstream.alternate_roles();
    let chat = app.new_chat().await;
    app.upstream
        .script([Reply::status(500, "exploded"), Reply::text("Hello again.")]);
    app.send(&chat, json!({"content": "hello"})).await;
    // The failed turn is answered on its branch by a message that carries the error.
    let tree: Value = app.chat_api().tree(&chat).read_json().await;
    let failed = &tree["data"][1];
    assert_eq!(failed["role"], "assistant", "{tree}");
    assert_eq!(failed["stop_reason"], "upstream_error");
    assert_eq!(failed["content"], "");
    assert!(
        failed["error"].as_str().is_some_and(|e| e.contains("500")),
        "the answer says why: {failed}"
    );

    let frames = app.send(&chat, json!({"content": "are you there?"})).await;
    assert_eq!(finished(&frames)["stop_reason"], "completed", "{frames:?}");
    let sent = app.upstream.received().last().unwrap().body.clone();
    let roles: Vec<&str> = sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .filter(|role| *role != "system")
        .collect();
    assert_eq!(roles, ["user", "assistant", "user"], "{sent}");
    let messages = sent["messages"].as_array().unwrap();
    assert_eq!(messages.last().unwrap()["content"], "are you there?");
    assert_eq!(messages[messages.len() - 3]["content"], "hello");
}

#[actix_web::test]
async fn a_client_that_disconnects_can_reattach_and_get_the_missed_events_in_order() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    let text = "one two three four five six seven eight nine ten";
    app.upstream
        .script([Reply::text(text).event_gap(Duration::from_millis(80))]);
    let response = app
        .chat_api()
        .send_message(&chat)
        .json(&json!({"content": "count"}))
        .call()
        .await;
    let run_id = response.headers()["x-run-id"].to_str().unwrap().to_string();
    let mut deltas = 0;
    let first = read_until(response, |frame| {
        if frame.kind() == "content" {
            deltas += 1;
        }
        deltas == 3
    })
    .await;
    let last_seen = first.last().unwrap().id.unwrap();
    // The run goes on without a client, to its end.
    eventually(
        "the run finishing without a client",
        Duration::from_secs(10),
        || async {
            app.state
                .runs()
                .get(&RunId::from_string(run_id.clone()))
                .is_some_and(|log| log.is_finished())
                .then_some(())
        },
    )
    .await;
    let rest = app
        .chat_api()
        .run_events(&chat, &run_id)
        .header("last-event-id", last_seen.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), 200);
    let rest = read_all(rest).await;
    assert!(rest.iter().all(|f| f.id.unwrap() > last_seen));
    let ids: Vec<usize> = rest.iter().filter_map(|f| f.id).collect();
    assert!(ids.windows(2).all(|w| w[0] <= w[1]));
    let mut all = first.clone();
    all.extend(rest.clone());
    assert_eq!(content(&all), text);
    assert_eq!(rest.last().unwrap().data, "[DONE]");

    let replay = app
        .chat_api()
        .run_events(&chat, &run_id)
        .with_query("after=0")
        .send()
        .await
        .unwrap();
    assert_eq!(
        content(&read_all(replay).await),
        text,
        "a finished run replays whole"
    );

    let eve = app.create_user_with_key("eve").await;
    let stolen = app
        .as_key(&eve)
        .chat_api()
        .run_events(&chat, &run_id)
        .send()
        .await
        .unwrap();
    assert_eq!(stolen.status(), 404);
}

#[actix_web::test]
async fn cancel_stops_the_upstream_request_and_keeps_what_was_generated() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    app.upstream.script([
        Reply::text("a b c d e f g h i j k l m n o p").event_gap(Duration::from_millis(150))
    ]);
    let response = app
        .chat_api()
        .send_message(&chat)
        .json(&json!({"content": "talk"}))
        .call()
        .await;
    let run_id = response.headers()["x-run-id"].to_str().unwrap().to_string();
    let mut cancelled = false;
    let frames = read_until(response, |frame| {
        if frame.kind() == "content" && !cancelled {
            cancelled = true;
            let cancel = app.chat_api().cancel_run(&chat, &run_id);
            actix_web::rt::spawn(async move {
                cancel.send().await.unwrap();
            });
        }
        frame.data == "[DONE]"
    })
    .await;
    assert_eq!(finished(&frames)["stop_reason"], "cancelled");
    let partial = content(&frames);
    assert!(!partial.is_empty() && partial.len() < 31, "{partial:?}");

    eventually(
        "dropping the upstream stream",
        Duration::from_secs(5),
        || async { (app.upstream.abandoned_streams() > 0).then_some(()) },
    )
    .await;
    let stored = active_messages(&app, &chat).await;
    assert_eq!(stored.len(), 2);
    assert_eq!(stored[1]["stop_reason"], "cancelled");
    assert_eq!(stored[1]["content"], partial);
    let run = entities::runs::Entity::find_by_id(RunId::from_string(run_id))
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(run.status.as_str(), "cancelled");
}

#[actix_web::test]
async fn edit_and_regenerate_make_siblings_and_the_model_sees_only_the_active_path() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    app.upstream.script([
        Reply::text("Paris."),
        Reply::text("Berlin is the capital."),
        Reply::text("Rome."),
        Reply::text("Roma!"),
    ]);
    app.send(&chat, json!({"content": "Capital of France?"}))
        .await;
    app.send(&chat, json!({"content": "And Germany?"})).await;
    let path = active_messages(&app, &chat).await;
    let germany_id = path[2]["id"].as_str().unwrap().to_string();

    let edit = app
        .chat_api()
        .edit_message(&chat, &germany_id)
        .json(&json!({"content": "And Italy?"}))
        .call()
        .await;
    assert_eq!(edit.status(), 200);
    read_all(edit).await;
    assert_eq!(
        sent_messages(&app, 2),
        vec![
            json!({"role": "user", "content": "Capital of France?"}),
            json!({"role": "assistant", "content": "Paris."}),
            json!({"role": "user", "content": "And Italy?"}),
        ],
        "the edited branch replaces the old one in what the model sees"
    );
    let path = active_messages(&app, &chat).await;
    assert_eq!(
        contents(&path),
        [
            "user:Capital of France?",
            "assistant:Paris.",
            "user:And Italy?",
            "assistant:Rome."
        ]
    );
    let rome_id = path[3]["id"].as_str().unwrap().to_string();

    let regen = app
        .chat_api()
        .regenerate(&chat, &rome_id)
        .send()
        .await
        .unwrap();
    assert_eq!(regen.status(), 200);
    read_all(regen).await;
    assert_eq!(
        sent_messages(&app, 3).len(),
        3,
        "regenerating resends the path up to the question"
    );
    let path = active_messages(&app, &chat).await;
    assert_eq!(contents(&path)[3], "assistant:Roma!");
    assert_eq!(path[3]["parent_id"], path[2]["id"]);

    let tree: Value = app.chat_api().tree(&chat).read_json().await;
    let nodes = tree["data"].as_array().unwrap();
    assert_eq!(nodes.len(), 7);
    let siblings_of_rome: Vec<&Value> = nodes
        .iter()
        .filter(|n| n["parent_id"] == path[2]["id"])
        .collect();
    assert_eq!(siblings_of_rome.len(), 2);

    let switched = app
        .chat_api()
        .switch_branch(&chat, &germany_id)
        .send()
        .await
        .unwrap();
    assert_eq!(switched.status(), 200);
    let path = active_messages(&app, &chat).await;
    assert_eq!(contents(&path)[3], "assistant:Berlin is the capital.");

    let editing_an_answer = app
        .chat_api()
        .edit_message(&chat, &rome_id)
        .json(&json!({"content": "nope"}))
        .call()
        .await;
    assert_eq!(editing_an_answer.status(), 400);
    let unknown = app
        .chat_api()
        .edit_message(&chat, uuid::Uuid::new_v4())
        .json(&json!({"content": "nope"}))
        .call()
        .await;
    assert_eq!(unknown.status(), 404);
}

#[actix_web::test]
async fn idle_chats_are_passivated_and_reactivated_with_everything() {
    let app = spawn_app_with(|config| config.agent.chat_idle_secs = 1).await;
    let chat = app.new_chat().await;
    app.upstream
        .script([Reply::text("first answer"), Reply::text("second answer")]);
    app.send(&chat, json!({"content": "first"})).await;
    assert!(
        app.state
            .sessions()
            .is_active(&ChatId::from_string(chat.clone()))
    );
    eventually(
        "passivating the idle chat",
        Duration::from_secs(10),
        || async {
            (!app
                .state
                .sessions()
                .is_active(&ChatId::from_string(chat.clone())))
            .then_some(())
        },
    )
    .await;
    let path = active_messages(&app, &chat).await;
    assert_eq!(contents(&path), ["user:first", "assistant:first answer"]);
    app.send(&chat, json!({"content": "second"})).await;
    assert_eq!(
        sent_messages(&app, 1).len(),
        3,
        "history survived passivation"
    );
}

#[actix_web::test]
async fn a_restart_keeps_every_acknowledged_message_and_the_active_branch() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    app.upstream.script([Reply::text("A1"), Reply::text("B1")]);
    app.send(&chat, json!({"content": "A"})).await;
    let first = active_messages(&app, &chat).await;
    let a_id = first[0]["id"].as_str().unwrap().to_string();
    let edit = app
        .chat_api()
        .edit_message(&chat, &a_id)
        .json(&json!({"content": "B"}))
        .call()
        .await;
    read_all(edit).await;
    let switched = app
        .chat_api()
        .switch_branch(&chat, &a_id)
        .send()
        .await
        .unwrap();
    assert_eq!(switched.status(), 200);

    let app = app.restart().await;
    let path = active_messages(&app, &chat).await;
    assert_eq!(
        contents(&path),
        ["user:A", "assistant:A1"],
        "the switched-to branch is active"
    );
    let tree: Value = app.chat_api().tree(&chat).read_json().await;
    assert_eq!(tree["data"].as_array().unwrap().len(), 4);
}

#[actix_web::test]
async fn chats_are_independent_a_slow_model_in_one_does_not_delay_another() {
    let app = spawn_app().await;
    let slow = app.new_chat().await;
    let fast = app.new_chat().await;
    app.upstream.script([
        Reply::text("slow answer").delay(Duration::from_millis(1_500)),
        Reply::text("fast answer"),
    ]);
    let slow_request = app
        .chat_api()
        .send_message(&slow)
        .json(&json!({"content": "slow"}));
    let slow_request =
        actix_web::rt::spawn(async move { read_all(slow_request.send().await.unwrap()).await });
    // The slow chat's request reached the model first: now the fast one goes.
    eventually(
        "the slow request reaching the model",
        Duration::from_secs(5),
        || async { (app.upstream.received().len() == 1).then_some(()) },
    )
    .await;
    let started = Instant::now();
    let fast_frames = app.send(&fast, json!({"content": "fast"})).await;
    assert!(
        started.elapsed() < Duration::from_millis(1_000),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(content(&fast_frames), "fast answer");
    let slow_frames = slow_request.await.unwrap();
    assert_eq!(content(&slow_frames), "slow answer");
}

#[actix_web::test]
async fn identical_calls_are_served_from_the_cache_across_runs() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    let key = uuid::Uuid::new_v4().to_string();
    app.upstream.script([
        Reply::tool_call("k1", "counter", json!({"key": key})),
        Reply::text("one"),
        Reply::tool_call("k2", "counter", json!({"key": key})),
        Reply::text("two"),
    ]);
    let options = json!({"x_tools": ["counter"]});
    let first = app
        .send(
            &chat,
            json!({"content": "count", "web_search_options": options}),
        )
        .await;
    let second = app
        .send(
            &chat,
            json!({"content": "again", "web_search_options": options}),
        )
        .await;
    let result = |frames: &[Frame]| {
        frames
            .iter()
            .find(|f| f.kind() == "tool_result")
            .unwrap()
            .json()["result"]
            .clone()
    };
    assert_eq!(
        result(&first),
        result(&second),
        "the second call was answered from the cache"
    );
}

#[actix_web::test]
async fn a_run_past_its_time_budget_stops_with_that_reason() {
    let app = spawn_app_with(|config| config.agent.run_time_budget_secs = 1).await;
    let chat = app.new_chat().await;
    app.upstream.script([
        Reply::tool_call("s", "sleep", json!({"ms": 5_000, "tag": "budget"})),
        Reply::text("never"),
    ]);
    let started = Instant::now();
    let frames = app
        .send(
            &chat,
            json!({"content": "slow", "web_search_options": {"x_tools": ["sleep"]}}),
        )
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(finished(&frames)["stop_reason"], "time_budget");
    assert_eq!(app.upstream.received().len(), 1);
    let stored = active_messages(&app, &chat).await;
    assert_eq!(
        contents(&stored),
        ["user:slow", "assistant:"],
        "nothing generated, nothing invented: the turn is closed with its reason"
    );
    assert_eq!(stored[1]["stop_reason"], "time_budget");
}

#[actix_web::test]
async fn cancelling_during_a_tool_call_stops_the_tool() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    app.upstream.script([
        Reply::tool_call("s", "sleep", json!({"ms": 10_000, "tag": "cancel"})),
        Reply::text("never"),
    ]);
    let response = app
        .chat_api()
        .send_message(&chat)
        .json(&json!({"content": "wait", "web_search_options": {"x_tools": ["sleep"]}}))
        .call()
        .await;
    let run_id = response.headers()["x-run-id"].to_str().unwrap().to_string();
    let started = Instant::now();
    let mut sent = false;
    let frames = read_until(response, |frame| {
        if frame.kind() == "tool_call" && !sent {
            sent = true;
            let cancel = app.chat_api().cancel_run(&chat, &run_id);
            actix_web::rt::spawn(async move {
                cancel.send().await.unwrap();
            });
        }
        frame.data == "[DONE]"
    })
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(finished(&frames)["stop_reason"], "cancelled");
    assert_eq!(
        app.upstream.received().len(),
        1,
        "no model call after the cancel"
    );
}

#[actix_web::test]
async fn a_research_result_served_from_the_cache_does_not_count_against_the_rate_limit() {
    let app = spawn_app_with(|config| config.tools.rate_limit_per_minute = 1).await;
    let chat = app.new_chat().await;
    // One turn whose model calls the calculator once; its `tool_result` event.
    let calculate = async |expression: &str| {
        app.upstream.script([
            Reply::tool_call("a", "calculator", json!({"expression": expression})),
            Reply::text("done"),
        ]);
        let frames = app
            .send(&chat, json!({"content": expression, "enableTools": true}))
            .await;
        frames
            .iter()
            .find(|f| f.kind() == "tool_result")
            .map(Frame::json)
            .unwrap()
    };
    for turn in 0..2 {
        let result = calculate("6*7").await;
        assert_eq!(result["success"], true, "turn {turn}: {result}");
    }
    // A new call is still counted: the one allowed this minute was spent by the first turn.
    let result = calculate("6*8").await;
    assert_eq!(result["success"], false, "{result}");
}

#[actix_web::test]
async fn research_tools_are_rate_limited_per_project_with_the_seed_message() {
    let app = spawn_app_with(|config| config.tools.rate_limit_per_minute = 2).await;
    let chat = app.new_chat().await;
    app.upstream.script([
        Reply::tool_call("a", "calculator", json!({"expression": "1+1"}))
            .and_tool_call("b", "calculator", json!({"expression": "2+2"}))
            .and_tool_call("c", "calculator", json!({"expression": "3+3"})),
        Reply::text("ok"),
    ]);
    let frames = app
        .send(&chat, json!({"content": "many", "enableTools": true}))
        .await;
    let results: Vec<Value> = frames
        .iter()
        .filter(|f| f.kind() == "tool_result")
        .map(Frame::json)
        .collect();
    assert_eq!(results.iter().filter(|r| r["success"] == true).count(), 2);
    let limited = results.iter().find(|r| r["success"] == false).unwrap();
    let message = limited["error"].as_str().unwrap();
    assert!(
        message.starts_with("Research tool rate limit exceeded. Try again in ")
            && message.ends_with(" seconds."),
        "{message}"
    );
    let other_user = app.create_user_with_key("other").await;
    let their_chat: Value = app
        .as_key(&other_user)
        .chat_api()
        .create_chat()
        .json(&json!({}))
        .read_json()
        .await;
    app.upstream.script([
        Reply::tool_call("d", "calculator", json!({"expression": "4+4"})),
        Reply::text("ok"),
    ]);
    let theirs = app
        .as_key(&other_user)
        .chat_api()
        .send_message(their_chat["id"].as_str().unwrap())
        .json(&json!({"content": "one", "enableTools": true}))
        .send()
        .await
        .unwrap();
    let theirs = read_all(theirs).await;
    let result = theirs
        .iter()
        .find(|f| f.kind() == "tool_result")
        .unwrap()
        .json();
    assert_eq!(
        result["success"], true,
        "another project has its own allowance"
    );
}

#[actix_web::test]
async fn tool_arguments_that_are_not_json_are_shown_as_the_model_sent_them() {
    let app = spawn_app().await;
    app.upstream.script([
        Reply {
            tool_calls: vec![(
                "call_1".into(),
                "fetch_url".into(),
                "{\"url\": https://example.com".into(),
            )],
            usage: (20, 8),
            fragment_chars: 7,
            ..Reply::default()
        },
        Reply::text("Those arguments were broken."),
    ]);
    let response = app
        .openai()
        .chat_completions()
        .json(&json!({"model": "fake-model", "stream": true,
                    "messages": [{"role": "user", "content": "Read example.com"}],
                    "web_search_options": {"x_tools": ["fetch_url"]}}))
        .call()
        .await;
    let frames = read_all(response).await;
    let reading = frames
        .iter()
        .map(Frame::json)
        .find(|j| j["type"] == "x_research.reading")
        .expect("an x_research.reading event");
    assert_eq!(reading["arguments"], "{\"url\": https://example.com");
}

/// About `n` words of plain English.
fn prose(n: usize) -> String {
    const WORDS: [&str; 8] = [
        "the", "model", "reads", "every", "message", "before", "it", "answers",
    ];
    (0..n)
        .map(|i| WORDS[i % WORDS.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

/// Ten turns of "question N" and "answer N", each about 250 words; every one must complete.
/// Returns the `x_chat.context_trimmed` events they sent.
async fn ten_long_turns(app: &TestApp, chat: &str) -> Vec<Value> {
    let mut trimmed = Vec::new();
    for turn in 0..10 {
        app.upstream
            .script([Reply::text(&format!("answer {turn}: {}", prose(250)))]);
        let frames = app
            .send(
                chat,
                json!({"content": format!("question {turn}: {}", prose(250))}),
            )
            .await;
        assert_eq!(
            finished(&frames)["stop_reason"],
            "completed",
            "turn {turn}: {frames:?}"
        );
        trimmed.extend(
            frames
                .iter()
                .filter(|f| f.kind() == "x_chat.context_trimmed")
                .map(Frame::json),
        );
    }
    trimmed
}

#[actix_web::test]
async fn a_chat_that_outgrows_the_context_keeps_working_and_says_what_was_trimmed() {
    let app = spawn_app().await;
    app.upstream.context_length(4_096);
    let chat = app.new_chat().await;
    let trimmed = ten_long_turns(&app, &chat).await;
    assert!(!trimmed.is_empty(), "the run says history was trimmed");
    let event = trimmed.last().unwrap();
    assert_eq!(event["context_length"], 4_096);
    assert!(event["dropped_messages"].as_u64().unwrap() >= 2, "{event}");
    let last = app.upstream.received().last().unwrap().body.clone();
    assert!(crate::fake_upstream::fake_tokens(&last) <= 4_096);
    let messages = last["messages"].as_array().unwrap();
    assert!(
        messages.last().unwrap()["content"]
            .as_str()
            .unwrap()
            .starts_with("question 9:")
    );
    let history: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(history.first(), Some(&"user"), "history starts at a turn");
    assert!(history.len() < 19, "older turns were left out: {history:?}");
    // Counted exactly, though most of them never left the chat's session (a long chat's turn
    // reads only as far back as the window reaches).
    assert_eq!(
        event["dropped_messages"].as_u64(),
        Some(19 - history.len() as u64),
        "{event}"
    );
    // Nothing is lost from the chat itself.
    assert_eq!(active_messages(&app, &chat).await.len(), 20);
}

/// The requests that asked the model for an answer (streaming), not for a summary.
fn answer_requests(app: &TestApp) -> Vec<Value> {
    app.upstream
        .received()
        .into_iter()
        .filter(|r| r.path == "/v1/chat/completions" && r.body["stream"] == true)
        .map(|r| r.body)
        .collect()
}

fn summary_requests(app: &TestApp) -> Vec<Value> {
    app.upstream
        .received()
        .into_iter()
        .filter(|r| r.path == "/v1/chat/completions" && r.body["stream"] != true)
        .map(|r| r.body)
        .collect()
}

async fn summarizing_chat(app: &TestApp) -> String {
    app.new_chat_with(&json!({"title": "Long", "context_strategy": "summarize"}))
        .await
}

#[actix_web::test]
async fn a_summarizing_chat_puts_a_rolling_summary_of_the_left_out_turns_in_their_place() {
    let app = spawn_app().await;
    app.upstream.context_length(4_096);
    app.upstream.summarize(true);
    let chat = summarizing_chat(&app).await;
    let trimmed = ten_long_turns(&app, &chat).await;
    let event = trimmed.last().expect("the run says history was trimmed");
    let dropped = event["dropped_messages"].as_u64().unwrap();
    assert!(dropped >= 2, "{event}");
    assert_eq!(event["summarized_messages"], dropped, "{event}");

    let last = answer_requests(&app).last().unwrap().clone();
    assert!(crate::fake_upstream::fake_tokens(&last) <= 4_096);
    let messages = last["messages"].as_array().unwrap();
    let system = messages[0]["content"].as_str().unwrap_or_default();
    assert_eq!(messages[0]["role"], "system", "{last}");
    assert!(
        system.contains("Earlier in this conversation (summarised"),
        "{system}"
    );
    // The oldest question is no longer in the history, but the summary still tells of it.
    assert!(!messages[1..].iter().any(|m| {
        m["content"]
            .as_str()
            .unwrap_or_default()
            .starts_with("question 0:")
    }));
    assert!(system.contains("question 0;"), "{system}");
    assert!(
        messages.iter().filter(|m| m["role"] == "system").count() == 1,
        "one system message, first"
    );
    let history: Vec<&str> = messages[1..]
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(history.first(), Some(&"user"), "history starts at a turn");

    // Each turn extends the summary it kept: no left-out message is read twice.
    let summaries = summary_requests(&app);
    assert!(!summaries.is_empty());
    for question in 0..3 {
        let line = format!("User: question {question}:");
        let read = summaries
            .iter()
            .filter(|body| body.to_string().contains(&line))
            .count();
        assert!(read <= 1, "question {question} was summarised {read} times");
    }
    for body in &summaries {
        assert!(crate::fake_upstream::fake_tokens(body) <= 4_096, "{body}");
        assert_eq!(body["temperature"], 0.0);
        assert!(body.get("tools").is_none());
    }
}

#[actix_web::test]
async fn when_summarizing_fails_the_turn_still_answers_and_says_why() {
    let app = spawn_app().await;
    app.upstream.context_length(4_096);
    let chat = summarizing_chat(&app).await;
    app.upstream.summarize(true);
    for turn in 0..7 {
        app.upstream
            .script([Reply::text(&format!("answer {turn}: {}", prose(250)))]);
        app.send(
            &chat,
            json!({"content": format!("question {turn}: {}", prose(250))}),
        )
        .await;
    }
    // The summary request is refused; the answer is not.
    app.upstream.summarize(false);
    app.upstream.script([
        Reply::status(400, "summaries are not served here"),
        Reply::text("Answered anyway."),
    ]);
    let frames = app
        .send(
            &chat,
            json!({"content": format!("question 7: {}", prose(900))}),
        )
        .await;
    assert_eq!(finished(&frames)["stop_reason"], "completed", "{frames:?}");
    assert_eq!(content(&frames), "Answered anyway.");
    let event = frames
        .iter()
        .rfind(|f| f.kind() == "x_chat.context_trimmed")
        .map(Frame::json)
        .expect("trimmed");
    let error = event["summary_error"]
        .as_str()
        .expect("the failure is told");
    assert!(error.contains("summaries are not served here"), "{error}");
    assert!(crate::fake_upstream::fake_tokens(answer_requests(&app).last().unwrap()) <= 4_096);
}

#[actix_web::test]
async fn a_message_larger_than_the_context_is_refused_up_front_and_the_chat_stays_usable() {
    let app = spawn_app().await;
    app.upstream.context_length(4_096);
    let chat = app.new_chat().await;
    let frames = app.send(&chat, json!({"content": prose(6_000)})).await;
    assert_eq!(finished(&frames)["stop_reason"], "upstream_error");
    let error = frames.iter().find(|f| f.kind() == "error").unwrap().json();
    assert_eq!(error["error"]["code"], "context_length_exceeded");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains("4096 tokens"), "{message}");
    assert!(
        app.upstream
            .received()
            .iter()
            .all(|r| r.path != "/v1/chat/completions"),
        "the model was never sent what cannot fit"
    );

    app.upstream.script([Reply::text("Hi.")]);
    let frames = app.send(&chat, json!({"content": "hello"})).await;
    assert_eq!(finished(&frames)["stop_reason"], "completed", "{frames:?}");
    let sent = app.upstream.received().last().unwrap().body.clone();
    assert_eq!(
        sent["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] != "system")
            .count(),
        1,
        "the refused turn is left out: {sent}"
    );
}

/// A chat with six turns of about 400 words each way (some 5,000 tokens), on a server that
/// has not yet said anything of its context.
async fn a_chat_of_six_long_turns() -> (TestApp, String) {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    for turn in 0..6 {
        app.upstream.script([Reply::text(&prose(400))]);
        app.send(&chat, json!({"content": format!("q{turn} {}", prose(400))}))
            .await;
    }
    (app, chat)
}

#[actix_web::test]
async fn a_window_the_server_only_states_in_its_error_is_learnt_and_the_request_refitted() {
    let (app, chat) = a_chat_of_six_long_turns().await;
    app.upstream.hidden_context_length(4_096);
    app.upstream.script([Reply::text("Still here.")]);
    let frames = app.send(&chat, json!({"content": "and now?"})).await;
    assert_eq!(finished(&frames)["stop_reason"], "completed", "{frames:?}");
    assert_eq!(content(&frames), "Still here.");
    let sent = app.upstream.received().last().unwrap().body.clone();
    assert!(crate::fake_upstream::fake_tokens(&sent) <= 4_096);
    let rejected = &app.upstream.received()[app.upstream.received().len() - 2];
    assert!(
        crate::fake_upstream::fake_tokens(&rejected.body) > 4_096,
        "the first try was refused by the server"
    );
    assert!(frames.iter().any(|f| f.kind() == "x_chat.context_trimmed"));
}

#[actix_web::test]
async fn a_window_llama_cpp_python_hides_behind_an_empty_stream_is_asked_for_and_learnt() {
    let (app, chat) = a_chat_of_six_long_turns().await;
    app.upstream.context_length_like_llama_cpp_python(4_096);
    app.upstream.script([Reply::text("Still here.")]);
    let frames = app.send(&chat, json!({"content": "and now?"})).await;
    assert_eq!(finished(&frames)["stop_reason"], "completed", "{frames:?}");
    assert_eq!(content(&frames), "Still here.");
    let received = app.upstream.received();
    let tail: Vec<(bool, Option<u64>)> = received[received.len() - 3..]
        .iter()
        .map(|r| (r.body["stream"] == true, r.body["max_tokens"].as_u64()))
        .collect();
    assert_eq!(
        tail,
        [(true, None), (false, Some(1)), (true, None)],
        "the empty stream, the one-token question that tells the size, the refitted request"
    );
    let sent = &received.last().unwrap().body;
    assert!(crate::fake_upstream::fake_tokens(sent) <= 4_096);
    assert!(frames.iter().any(|f| f.kind() == "x_chat.context_trimmed"));
}

/// Where a tool parameter lacks the bound a grammar-constrained server would enforce.
fn unbounded(schema: &Value, at: &str, out: &mut Vec<String>) {
    match schema["type"].as_str() {
        Some("string") => {
            let bounded = schema.get("maxLength").is_some()
                || schema.get("enum").is_some()
                || schema["anyOf"].as_array().is_some_and(|branches| {
                    branches
                        .iter()
                        .all(|b| b.get("enum").is_some() || b.get("pattern").is_some())
                });
            if !bounded {
                out.push(format!("{at}: a string without maxLength or enum"));
            }
        }
        Some("integer" | "number") => {
            if schema.get("minimum").is_none() || schema.get("maximum").is_none() {
                out.push(format!("{at}: a number without minimum and maximum"));
            }
        }
        Some("array") => {
            if schema.get("maxItems").is_none() {
                out.push(format!("{at}: an array without maxItems"));
            }
            unbounded(&schema["items"], &format!("{at}[]"), out);
        }
        Some("object") => {
            if schema["additionalProperties"] != json!(false) {
                out.push(format!("{at}: an object that allows any property"));
            }
            for (name, property) in schema["properties"].as_object().into_iter().flatten() {
                unbounded(property, &format!("{at}.{name}"), out);
            }
        }
        Some("boolean") => {}
        other => out.push(format!("{at}: no known type ({other:?})")),
    }
}

#[actix_web::test]
async fn every_built_in_tools_parameters_carry_the_bounds_the_server_enforces() {
    let app = spawn_app_with(|config| {
        config.tools.web_search_url = Some("http://127.0.0.1:9/search".into());
        config.tools.gitlab_api_url = Some("http://127.0.0.1:9/api/v4".into());
        config.tools.github_token = Some("ghp_test".into());
        config.tools.gitlab_token = Some("glpat-test".into());
    })
    .await;
    let chat = app.new_chat().await;
    app.upstream.script([Reply::text("ok")]);
    app.send(&chat,
        json!({"content": "hi", "enableTools": true, "web_search_options": {
               "x_tools": ["web_search", "fetch_url", "code_search", "gitlab_code_search", "calculator"]}}),
    )
    .await;
    let offered = app.upstream.received()[0].body["tools"].clone();
    let names: Vec<&str> = offered
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    for expected in [
        "web_search",
        "code_search",
        "gitlab_code_search",
        "ask_user",
        "create_artifact",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} is offered: {names:?}"
        );
    }
    let mut problems = Vec::new();
    for tool in offered.as_array().unwrap() {
        let name = tool["function"]["name"].as_str().unwrap();
        let parameters = &tool["function"]["parameters"];
        unbounded(parameters, name, &mut problems);
        if let Err(err) = jsonschema::meta::validate(parameters) {
            problems.push(format!("{name}: not a valid JSON Schema: {err}"));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}
