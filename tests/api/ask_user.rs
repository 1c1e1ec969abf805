//! ask_user: a run pauses on a question, and the correlated reply resumes it — over the chat
//! API and /v1, across a restart, exactly once.

use std::time::Duration;

use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::{Value, json};

use crate::fake_upstream::Reply;
use sea_orm::ActiveEnum;

use crate::client::Call;
use crate::helpers::{TestApp, error_body, eventually, spawn_app, spawn_app_with};
use crate::sse::{Frame, content, finished, read_all};

fn ask(question: Value) -> Reply {
    Reply::tool_call("ask_1", "ask_user", question)
}

fn question_event(frames: &[Frame]) -> Value {
    frames
        .iter()
        .map(Frame::json)
        .find(|j| j["type"] == "x_ask_user.question")
        .expect("a question event")
}

async fn reply(
    app: &TestApp,
    chat: &str,
    correlation_id: &str,
    answer: Value,
) -> reqwest::Response {
    app.chat_api()
        .answer_ask(chat, correlation_id)
        .json(&json!({"answer": answer}))
        .call()
        .await
}

async fn ask_status(app: &TestApp, correlation_id: &str) -> String {
    entities::pending_asks::Entity::find()
        .filter(entities::pending_asks::Column::CorrelationId.eq(correlation_id))
        .one(&app.db)
        .await
        .unwrap()
        .unwrap()
        .status
        .to_value()
}

async fn paused_chat(app: &TestApp) -> (String, String) {
    let chat = app.new_chat().await;
    app.upstream
        .script([Reply::text("Let me check one thing.").and_tool_call(
            "ask_1",
            "ask_user",
            json!({"question": "Which language?", "options": ["Rust", "Go"]}),
        )]);
    let frames = app.send_text(&chat, "Write me a server").await;
    let correlation_id = question_event(&frames)["correlation_id"]
        .as_str()
        .unwrap()
        .to_string();
    (chat, correlation_id)
}

#[actix_web::test]
async fn a_question_pauses_the_run_and_the_reply_resumes_it_over_the_chat_api() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    app.upstream.script([
        Reply::text("Let me check one thing.")
            .and_tool_call("ask_1", "ask_user", json!({"question": "Which language?", "options": ["Rust", "Go"], "allow_free_text": false})),
        Reply::text("Here is a Rust server."),
    ]);
    let frames = app.send_text(&chat, "Write me a server").await;
    let question = question_event(&frames);
    assert_eq!(question["question"], "Which language?");
    assert_eq!(question["options"], json!(["Rust", "Go"]));
    assert_eq!(question["style"], "default");
    assert_eq!(question["allow_free_text"], false);
    assert_eq!(question["multi_select"], false);
    let correlation_id = question["correlation_id"].as_str().unwrap().to_string();
    let pending = frames
        .iter()
        .map(Frame::json)
        .find(|j| j["type"] == "x_ask_user.pending_state")
        .unwrap();
    assert_eq!(pending["correlation_id"], correlation_id.as_str());
    assert_eq!(pending["content"], "Let me check one thing.");
    assert_eq!(finished(&frames)["stop_reason"], "paused");
    assert_eq!(frames.last().unwrap().data, "[DONE]");
    assert!(
        app.upstream.received()[0].body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["function"]["name"] == "ask_user")
    );

    let asks: Value = app.chat_api().asks(&chat).read_json().await;
    assert_eq!(asks["data"][0]["correlation_id"], correlation_id.as_str());
    assert_eq!(asks["data"][0]["question"], "Which language?");

    let wrong = reply(&app, &chat, &correlation_id, json!("Haskell")).await;
    assert_eq!(wrong.status(), 400, "not an option and free text is off");
    let resumed = reply(&app, &chat, &correlation_id, json!("Rust")).await;
    assert_eq!(resumed.status(), 200);
    let frames = read_all(resumed).await;
    assert_eq!(content(&frames), "Here is a Rust server.");
    assert_eq!(finished(&frames)["stop_reason"], "completed");
    let continuation = app.upstream.received()[1].body["messages"].clone();
    let last = continuation.as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "tool");
    assert_eq!(last["tool_call_id"], "ask_1");
    assert_eq!(last["content"], json!({"answer": "Rust"}).to_string());

    let messages: Value = app.chat_api().messages(&chat).read_json().await;
    let data = messages["data"].as_array().unwrap();
    assert_eq!(data.len(), 2);
    assert_eq!(
        data[1]["content"],
        "Let me check one thing.\n\nHere is a Rust server."
    );
    assert_eq!(ask_status(&app, &correlation_id).await, "completed");

    let twice = reply(&app, &chat, &correlation_id, json!("Go")).await;
    assert_eq!(twice.status(), 409);
    let asks: Value = app.chat_api().asks(&chat).read_json().await;
    assert_eq!(asks["data"], json!([]));
}

#[actix_web::test]
async fn the_openai_api_pauses_and_resumes_with_x_ask_user_reply() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    app.upstream.script([
        ask(json!({"question": "Rate the idea", "style": "rating"})),
        Reply::text("Thanks for the 4."),
    ]);
    let paused = app
        .openai().chat_completions().json(&json!({"messages": [{"role": "user", "content": "idea"}], "x_chat_id": chat, "stream": true})).call()
        .await;
    let frames = read_all(paused).await;
    let correlation_id = question_event(&frames)["correlation_id"]
        .as_str()
        .unwrap()
        .to_string();
    let out_of_range = app
        .openai()
        .chat_completions()
        .json(&json!({"x_ask_user_reply": {"correlation_id": correlation_id, "answer": 9}}))
        .call()
        .await;
    assert_eq!(out_of_range.status(), 400);
    let resumed = app
        .openai().chat_completions().json(&json!({"x_ask_user_reply": {"correlation_id": correlation_id, "answer": 4}, "stream": true})).call()
        .await;
    assert_eq!(resumed.status(), 200);
    let frames = read_all(resumed).await;
    assert_eq!(content(&frames), "Thanks for the 4.");
    let again = app
        .openai()
        .chat_completions()
        .json(&json!({"x_ask_user_reply": {"correlation_id": correlation_id, "answer": 4}}))
        .call()
        .await;
    assert_eq!(again.status(), 409);
    let unknown = app
        .openai()
        .chat_completions()
        .json(&json!({"x_ask_user_reply": {"correlation_id": "ask_nope", "answer": 4}}))
        .call()
        .await;
    assert_eq!(unknown.status(), 404);
}

#[actix_web::test]
async fn a_question_asked_before_a_restart_is_answered_after_it() {
    let app = spawn_app().await;
    let (chat, correlation_id) = paused_chat(&app).await;
    let app = app.restart().await;
    app.upstream.script([Reply::text("Go it is.")]);
    let asks: Value = app.chat_api().asks(&chat).read_json().await;
    assert_eq!(asks["data"][0]["correlation_id"], correlation_id.as_str());
    let resumed = reply(&app, &chat, &correlation_id, json!("Go")).await;
    assert_eq!(resumed.status(), 200);
    let frames = read_all(resumed).await;
    assert_eq!(content(&frames), "Go it is.");
    let continuation = app.upstream.received().last().unwrap().body["messages"].clone();
    assert_eq!(continuation[0]["content"], "Write me a server");
    assert_eq!(ask_status(&app, &correlation_id).await, "completed");
}

#[actix_web::test]
async fn an_answer_claimed_by_a_process_that_died_is_delivered_once_after_restart() {
    let app = spawn_app().await;
    let (chat, correlation_id) = paused_chat(&app).await;
    // The reply was claimed (stored) and then the process died before the continuation ran.
    assert!(
        colloquy::chat::asks::claim(
            &app.db,
            &entities::ids::AskCorrelationId::from_string(&correlation_id),
            &json!("Rust")
        )
        .await
        .unwrap()
    );
    app.upstream.script([Reply::text("Rust server coming up.")]);
    let app = app.restart().await;
    eventually(
        "delivering the stored answer",
        Duration::from_secs(10),
        || async { (ask_status(&app, &correlation_id).await == "completed").then_some(()) },
    )
    .await;
    let messages: Value = app.chat_api().messages(&chat).read_json().await;
    let data = messages["data"].as_array().unwrap();
    assert_eq!(data.len(), 2);
    assert!(
        data[1]["content"]
            .as_str()
            .unwrap()
            .ends_with("Rust server coming up.")
    );
    let last = app.upstream.received().last().unwrap().body["messages"]
        .as_array()
        .unwrap()
        .last()
        .cloned()
        .unwrap();
    assert_eq!(last["content"], json!({"answer": "Rust"}).to_string());
    let twice = reply(&app, &chat, &correlation_id, json!("Go")).await;
    assert_eq!(twice.status(), 409);
    let app = app.restart().await;
    // Start-up resumes unfinished answers before it serves: had it resumed this completed one
    // again, that run would be live now.
    assert!(
        app.state.runs().live().is_empty(),
        "a completed answer was resumed again"
    );
    let messages: Value = app.chat_api().messages(&chat).read_json().await;
    assert_eq!(
        messages["data"].as_array().unwrap().len(),
        2,
        "not delivered a second time"
    );
}

#[actix_web::test]
async fn an_expired_question_is_gone() {
    let app = spawn_app_with(|config| config.ask_user.expiry_hours = 0).await;
    let (chat, correlation_id) = paused_chat(&app).await;
    let late = reply(&app, &chat, &correlation_id, json!("Rust")).await;
    assert_eq!(late.status(), 410);
    assert_eq!(error_body(late).await["code"], "gone");
    assert_eq!(ask_status(&app, &correlation_id).await, "expired");
}

#[actix_web::test]
async fn another_users_question_is_not_found() {
    let app = spawn_app().await;
    let (chat, correlation_id) = paused_chat(&app).await;
    let eve = app.create_user_with_key("eve").await;
    let stolen = app
        .as_key(&eve)
        .chat_api()
        .answer_ask(&chat, &correlation_id)
        .json(&json!({"answer": "Go"}))
        .send()
        .await
        .unwrap();
    assert_eq!(stolen.status(), 404);
    let via_openai = app
        .as_key(&eve)
        .openai()
        .chat_completions()
        .json(&json!({"x_ask_user_reply": {"correlation_id": correlation_id, "answer": "Go"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(via_openai.status(), 404);
    let listing = app
        .as_key(&eve)
        .chat_api()
        .asks(&chat)
        .send()
        .await
        .unwrap();
    assert_eq!(listing.status(), 404);
    assert_eq!(ask_status(&app, &correlation_id).await, "pending");
}

#[actix_web::test]
async fn editing_while_a_question_is_pending_cancels_it() {
    let app = spawn_app().await;
    let (chat, correlation_id) = paused_chat(&app).await;
    let messages: Value = app.chat_api().messages(&chat).read_json().await;
    let user_id = messages["data"][0]["id"].as_str().unwrap().to_string();
    app.upstream.script([Reply::text("A Go server, then.")]);
    let edited = app
        .chat_api()
        .edit_message(&chat, &user_id)
        .json(&json!({"content": "Write me a Go server"}))
        .call()
        .await;
    let frames = read_all(edited).await;
    let cancelled = frames
        .iter()
        .map(Frame::json)
        .find(|j| j["type"] == "x_ask_user.cancelled")
        .unwrap();
    assert_eq!(cancelled["correlation_id"], correlation_id.as_str());
    assert_eq!(ask_status(&app, &correlation_id).await, "cancelled");
    let late = reply(&app, &chat, &correlation_id, json!("Rust")).await;
    assert_eq!(late.status(), 409);
    let asks: Value = app.chat_api().asks(&chat).read_json().await;
    assert_eq!(asks["data"], json!([]));
}

#[actix_web::test]
async fn invalid_question_arguments_are_an_error_result_the_model_can_correct() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    app.upstream.script([
        ask(json!({"question": "Your details?", "style": "form"})),
        Reply::text("I'll just assume."),
    ]);
    let frames = app.send_text(&chat, "sign me up").await;
    let result = frames
        .iter()
        .find(|f| f.kind() == "tool_result")
        .unwrap()
        .json();
    assert_eq!(result["success"], false);
    assert!(result["error"].as_str().unwrap().contains("fields"));
    assert_eq!(finished(&frames)["stop_reason"], "completed");
    let fed_back: Value = serde_json::from_str(
        app.upstream.received()[1].body["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["content"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(fed_back["code"], "invalid_question");
}

#[actix_web::test]
async fn form_answers_are_validated_against_their_fields() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    app.upstream.script([
        ask(json!({"question": "Details?", "style": "form", "fields": [
            {"label": "Name", "key": "name", "required": true},
            {"label": "Team", "key": "team", "placeholder": "optional"}]})),
        Reply::text("Welcome, Ada."),
    ]);
    let frames = app.send_text(&chat, "sign me up").await;
    let question = question_event(&frames);
    assert_eq!(question["fields"][0]["key"], "name");
    let correlation_id = question["correlation_id"].as_str().unwrap();
    let missing = reply(&app, &chat, correlation_id, json!({"team": "core"})).await;
    assert_eq!(missing.status(), 400);
    assert!(
        error_body(missing).await["message"]
            .as_str()
            .unwrap()
            .contains("required")
    );
    let ok = reply(&app, &chat, correlation_id, json!({"name": "Ada"})).await;
    assert_eq!(ok.status(), 200);
    assert_eq!(content(&read_all(ok).await), "Welcome, Ada.");
}

#[actix_web::test]
async fn every_recent_question_is_listed_with_its_outcome_for_a_reloaded_page() {
    let app = spawn_app().await;
    let (chat, first) = paused_chat(&app).await;
    app.upstream.script([
        Reply::text("Rust, then."),
        Reply::tool_call(
            "ask_2",
            "ask_user",
            json!({"question": "Proceed?", "style": "confirm"}),
        ),
        Reply::text("Moving on."),
    ]);
    read_all(reply(&app, &chat, &first, json!("Rust")).await).await;
    let frames = app.send_text(&chat, "Next step").await;
    let second = question_event(&frames)["correlation_id"]
        .as_str()
        .unwrap()
        .to_string();
    app.send_text(&chat, "Skip that").await;

    let all: Value = app
        .chat_api()
        .asks(&chat)
        .with_query("status=all")
        .read_json()
        .await;
    let outcomes: Vec<(String, String, Value)> = all["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["correlation_id"].as_str().unwrap().to_string(),
                a["status"].as_str().unwrap().to_string(),
                a["answer"].clone(),
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        vec![
            (first, "completed".to_string(), json!("Rust")),
            (second, "cancelled".to_string(), Value::Null),
        ]
    );
    let pending: Value = app.chat_api().asks(&chat).read_json().await;
    assert_eq!(pending["data"], json!([]));
    let bad = app
        .chat_api()
        .asks(&chat)
        .with_query("status=some")
        .call()
        .await;
    assert_eq!(bad.status(), 400);
}

#[actix_web::test]
async fn an_answers_tool_calls_are_recorded_before_and_after_a_pause_and_a_restart() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    app.upstream.script([
        Reply::tool_call("call_1", "calculator", json!({"expression": "6*7"})),
        ask(json!({"question": "Which precision?", "options": ["1", "2"]})),
    ]);
    let response = app
        .chat_api()
        .send_message(&chat)
        .json(&json!({"content": "compute", "enableTools": true}))
        .call()
        .await;
    let frames = read_all(response).await;
    let correlation_id = question_event(&frames)["correlation_id"]
        .as_str()
        .unwrap()
        .to_string();

    let app = app.restart().await;
    app.upstream.script([
        Reply::tool_call("call_2", "calculator", json!({"expression": "1/0"})),
        Reply::text("42, and 1/0 has no value."),
    ]);
    let resumed = reply(&app, &chat, &correlation_id, json!("2")).await;
    assert_eq!(resumed.status(), 200);
    assert_eq!(
        content(&read_all(resumed).await),
        "42, and 1/0 has no value."
    );

    let tree: Value = app.chat_api().tree(&chat).read_json().await;
    let answer = tree["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .expect("the answer is stored");
    let tools = answer["tools"]
        .as_array()
        .expect("the answer lists its tool calls");
    let summary: Vec<(&str, &str, bool)> = tools
        .iter()
        .map(|t| {
            (
                t["id"].as_str().unwrap(),
                t["name"].as_str().unwrap(),
                t["success"].as_bool().unwrap(),
            )
        })
        .collect();
    // The question itself is shown as its card, not as a tool call.
    assert_eq!(
        summary,
        [
            ("call_1", "calculator", true),
            ("call_2", "calculator", false)
        ]
    );
    assert_eq!(tools[0]["arguments"]["expression"], "6*7");
    assert_eq!(tools[0]["preview"], "Result: 42.0");
    assert!(
        tools[1]["error"].as_str().is_some_and(|e| !e.is_empty()),
        "the failed call keeps its error: {}",
        tools[1]
    );
    let user = tree["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap();
    assert!(user.get("tools").is_none(), "only answers carry tool calls");
}

#[actix_web::test]
async fn a_resumed_run_counts_its_research_calls_against_the_same_project() {
    let app = spawn_app_with(|config| config.tools.rate_limit_per_minute = 1).await;
    let chat = app.new_chat().await;
    // The first round spends the key's one research call of the minute, and asks.
    app.upstream.script([
        Reply::tool_call("c1", "calculator", json!({"expression": "6*7"})).and_tool_call(
            "ask_1",
            "ask_user",
            json!({"question": "Which language?", "options": ["Rust", "Go"]}),
        ),
        Reply::tool_call("c2", "calculator", json!({"expression": "6*8"})),
        Reply::text("done"),
    ]);
    let response = app
        .chat_api()
        .send_message(&chat)
        .json(&json!({"content": "compute", "enableTools": true}))
        .call()
        .await;
    let frames = read_all(response).await;
    let first = frames
        .iter()
        .map(Frame::json)
        .find(|j| j["type"] == "tool_result" && j["name"] == "calculator")
        .unwrap();
    assert_eq!(first["success"], true);
    let correlation_id = question_event(&frames)["correlation_id"]
        .as_str()
        .unwrap()
        .to_string();
    // The same key answers: the resumed run's call counts against it, and is refused.
    let frames = read_all(reply(&app, &chat, &correlation_id, json!("Go")).await).await;
    let second = frames
        .iter()
        .map(Frame::json)
        .find(|j| j["type"] == "tool_result" && j["name"] == "calculator")
        .expect("the resumed run's call");
    assert_eq!(second["success"], false, "{second}");
    assert!(
        second["error"]
            .as_str()
            .unwrap()
            .starts_with("Research tool rate limit exceeded"),
        "{second}"
    );
}
