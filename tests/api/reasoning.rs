//! Reasoning as its own stream: from each upstream shape (`reasoning_content`, `reasoning`, a
//! `<think>` block cut across chunks) a run streams the reasoning apart from the answer — on the
//! chat API, `/v1` (streaming and not) and the Responses API —, keeps it with the answer, counts
//! the upstream's reasoning tokens, replays it to a client re-attaching after a restart, and
//! never sends it back to the model.

use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::{ReasoningShape, Reply};
use crate::helpers::{TestApp, run_client, spawn_app};
use crate::sse::{Frame, content, read_all};

const SHAPES: [ReasoningShape; 3] = [
    ReasoningShape::ReasoningContent,
    ReasoningShape::Reasoning,
    ReasoningShape::Think,
];
const THINKING: &str = "The user greets me. I should greet them back.";
const ANSWER: &str = "Hello there!";

/// The reasoning a stream's `x_chat.reasoning` lines carry, joined.
fn reasoning_of(frames: &[Frame]) -> String {
    frames
        .iter()
        .map(Frame::json)
        .filter(|line| line["type"] == "x_chat.reasoning")
        .map(|line| line["delta"].as_str().expect("a delta").to_string())
        .collect()
}

/// Every upstream request's body, as text.
fn sent_upstream(app: &TestApp) -> Vec<String> {
    app.upstream
        .received()
        .into_iter()
        .filter(|r| r.path == "/v1/chat/completions")
        .map(|r| r.body.to_string())
        .collect()
}

/// No request the model got carries the reasoning (nor a `<think>` tag).
fn assert_never_sent_back(app: &TestApp) {
    for body in sent_upstream(app) {
        assert!(
            !body.contains("I should greet them back") && !body.contains("think>"),
            "the reasoning went back to the model: {body}"
        );
    }
}

#[actix_web::test]
async fn each_upstream_shape_streams_apart_on_the_chat_api_is_stored_and_is_not_replayed() {
    for shape in SHAPES {
        let app = spawn_app().await;
        app.upstream.script([
            Reply::reasoned(shape, THINKING, ANSWER),
            Reply::text("Fine, thanks."),
        ]);
        let chat = app.new_chat().await;
        let frames = app.send_text(&chat, "Hi!").await;
        assert_eq!(reasoning_of(&frames), THINKING, "{shape:?}");
        assert_eq!(
            content(&frames),
            ANSWER,
            "{shape:?}: no reasoning in the text"
        );
        let first_reasoning = frames
            .iter()
            .position(|f| f.kind() == "x_chat.reasoning")
            .unwrap();
        let first_text = frames.iter().position(|f| f.kind() == "content").unwrap();
        assert!(first_reasoning < first_text, "{shape:?}: reasoning first");
        let elapsed: Vec<u64> = frames
            .iter()
            .map(Frame::json)
            .filter(|line| line["type"] == "x_chat.reasoning")
            .map(|line| line["elapsed_ms"].as_u64().expect("elapsed_ms"))
            .collect();
        assert!(elapsed.windows(2).all(|w| w[0] <= w[1]), "{elapsed:?}");

        // Kept with the answer, in the messages API and the tree.
        let messages: Value = app.chat_api().messages(&chat).read_json().await;
        let answer = messages["data"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(answer["role"], "assistant");
        assert_eq!(answer["content"], ANSWER, "{shape:?}");
        assert_eq!(answer["reasoning"]["text"], THINKING, "{shape:?}");
        assert!(answer["reasoning"]["duration_ms"].is_u64(), "{answer}");
        let tree: Value = app.chat_api().tree(&chat).read_json().await;
        assert_eq!(tree["data"][1]["reasoning"]["text"], THINKING);
        assert!(
            tree["data"][0].get("reasoning").is_none(),
            "a question has none"
        );

        // The next turn sends the answer back, never its reasoning.
        let frames = app.send_text(&chat, "How are you?").await;
        assert_eq!(content(&frames), "Fine, thanks.");
        let last = app.upstream.received().last().unwrap().body.clone();
        let history = last["messages"].as_array().unwrap();
        assert!(
            history
                .iter()
                .any(|m| m["role"] == "assistant" && m["content"] == ANSWER),
            "{last}"
        );
        assert_never_sent_back(&app);
    }
}

#[actix_web::test]
async fn v1_streams_reasoning_as_its_own_lines_with_a_reasoning_content_delta_and_counts_its_tokens()
 {
    for shape in SHAPES {
        let app = spawn_app().await;
        app.upstream.script([
            Reply::reasoned(shape, THINKING, ANSWER).with_reasoning_tokens(11),
            Reply::text("Again."),
        ]);
        let response = app
            .openai()
            .chat_completions()
            .json(&json!({"model": "fake-model", "stream": true,
                        "stream_options": {"include_usage": true},
                        "messages": [{"role": "user", "content": "Hi!"}]}))
            .call()
            .await;
        assert_eq!(response.status(), 200);
        let chat = response.headers()["x-chat-id"]
            .to_str()
            .unwrap()
            .to_string();
        let frames = read_all(response).await;
        assert_eq!(content(&frames), ANSWER, "{shape:?}");
        let lines: Vec<Value> = frames
            .iter()
            .map(Frame::json)
            .filter(|line| line["type"] == "x_chat.reasoning")
            .collect();
        assert!(!lines.is_empty(), "{shape:?}");
        let mut via_choices = String::new();
        for line in &lines {
            assert_eq!(line["object"], "chat.completion.chunk");
            let delta = &line["choices"][0]["delta"];
            assert_eq!(delta["reasoning_content"], line["delta"], "{line}");
            assert!(delta.get("content").is_none(), "{line}");
            via_choices.push_str(delta["reasoning_content"].as_str().unwrap());
        }
        assert_eq!(via_choices, THINKING, "{shape:?}");
        let metadata = frames
            .iter()
            .map(Frame::json)
            .find(|line| line["type"] == "x_chat.metadata")
            .expect("x_chat.metadata");
        assert_eq!(
            metadata["usage"]["completion_tokens_details"]["reasoning_tokens"], 11,
            "{metadata}"
        );

        // The same chat, continued over /v1: the model gets the answer, not the thinking.
        let response = app
            .openai()
            .chat_completions()
            .json(&json!({"model": "fake-model", "x_chat_id": chat,
                        "messages": [{"role": "user", "content": "Again?"}]}))
            .call()
            .await;
        assert_eq!(response.status(), 200);
        assert_never_sent_back(&app);
    }
}

#[actix_web::test]
async fn v1_without_streaming_answers_with_reasoning_content_thinking_metadata_and_reasoning_tokens()
 {
    for shape in SHAPES {
        let app = spawn_app().await;
        app.upstream
            .script([Reply::reasoned(shape, THINKING, ANSWER).with_reasoning_tokens(9)]);
        let response = app
            .openai()
            .chat_completions()
            .json(&json!({"model": "fake-model",
                        "messages": [{"role": "user", "content": "Hi!"}]}))
            .call()
            .await;
        assert_eq!(response.status(), 200);
        let body: Value = response.json().await.unwrap();
        let message = &body["choices"][0]["message"];
        assert_eq!(message["content"], ANSWER, "{shape:?}: {body}");
        assert_eq!(message["reasoning_content"], THINKING, "{shape:?}");
        assert_eq!(body["x_metadata"]["thinking"], THINKING);
        assert!(
            body["x_metadata"].get("x_chat").is_none(),
            "the deltas are accumulated, not listed: {body}"
        );
        assert_eq!(
            body["usage"]["completion_tokens_details"]["reasoning_tokens"],
            9
        );
    }
}

#[actix_web::test]
async fn a_plain_answer_has_no_reasoning_anywhere() {
    let app = spawn_app().await;
    app.upstream.script([Reply::text("Plain.")]);
    let response = app
        .openai()
        .chat_completions()
        .json(&json!({"model": "fake-model", "messages": [{"role": "user", "content": "Hi"}]}))
        .call()
        .await;
    let body: Value = response.json().await.unwrap();
    assert!(
        body["choices"][0]["message"]
            .get("reasoning_content")
            .is_none()
    );
    assert!(body["x_metadata"].get("thinking").is_none());
    assert!(body["usage"].get("completion_tokens_details").is_none());
}

#[actix_web::test]
async fn the_responses_api_puts_a_reasoning_item_before_the_message_and_reports_its_tokens() {
    for shape in SHAPES {
        let app = spawn_app().await;
        app.upstream.script([
            Reply::reasoned(shape, THINKING, ANSWER).with_reasoning_tokens(13),
            Reply::text("Second."),
        ]);
        let response = app
            .openai()
            .create_response()
            .json(&json!({"model": "fake-model", "input": "Hi!"}))
            .call()
            .await;
        assert_eq!(response.status(), 200);
        let body: Value = response.json().await.unwrap();
        let output = body["output"].as_array().unwrap();
        assert_eq!(output.len(), 2, "{body}");
        assert_eq!(output[0]["type"], "reasoning");
        assert!(output[0]["id"].as_str().unwrap().starts_with("rs_"));
        assert_eq!(
            output[0]["summary"],
            json!([{"type": "summary_text", "text": THINKING}]),
            "{shape:?}"
        );
        assert_eq!(output[1]["type"], "message");
        assert_eq!(body["output_text"], ANSWER);
        assert_eq!(
            body["usage"]["output_tokens_details"]["reasoning_tokens"],
            13
        );
        assert_eq!(body["x_metadata"]["thinking"], THINKING);
        // The stored response is the same object.
        let id = body["id"].as_str().unwrap();
        let stored: Value = app.openai().response(id).read_json().await;
        assert_eq!(stored["output"], body["output"]);

        let next = app
            .openai()
            .create_response()
            .json(&json!({"model": "fake-model", "input": "More?", "previous_response_id": id}))
            .call()
            .await;
        assert_eq!(next.status(), 200);
        assert_never_sent_back(&app);
    }
}

#[actix_web::test]
async fn reasoning_around_a_tool_call_is_kept_in_order_with_its_time_summed() {
    let app = spawn_app().await;
    app.upstream.script([
        Reply::tool_call("c1", "calculator", json!({"expression": "6*7"}))
            .with_reasoning(ReasoningShape::ReasoningContent, "I need to multiply."),
        Reply::reasoned(ReasoningShape::Think, "It is 42.", "6*7 is 42."),
    ]);
    let chat = app.new_chat().await;
    let frames = app
        .send(
            &chat,
            json!({"content": "6*7?", "web_search_options": {"x_tools": ["calculator"]}}),
        )
        .await;
    assert_eq!(reasoning_of(&frames), "I need to multiply.It is 42.");
    assert_eq!(content(&frames), "6*7 is 42.");
    let kinds: Vec<String> = frames.iter().map(Frame::kind).collect();
    let tool = kinds.iter().position(|k| k == "tool_call").unwrap();
    let reasoned: Vec<usize> = kinds
        .iter()
        .enumerate()
        .filter(|(_, k)| *k == "x_chat.reasoning")
        .map(|(i, _)| i)
        .collect();
    assert!(
        reasoned.first().unwrap() < &tool && reasoned.last().unwrap() > &tool,
        "{kinds:?}"
    );
    let messages: Value = app.chat_api().messages(&chat).read_json().await;
    let answer = messages["data"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        answer["reasoning"]["text"], "I need to multiply.\n\nIt is 42.",
        "each call's reasoning, apart: {answer}"
    );
    let last_elapsed = frames
        .iter()
        .map(Frame::json)
        .rfind(|line| line["type"] == "x_chat.reasoning")
        .unwrap()["elapsed_ms"]
        .as_u64()
        .unwrap();
    assert_eq!(answer["reasoning"]["duration_ms"], last_elapsed);
    // The tool round's request carried the first answer's tool call, not its reasoning.
    let second = &sent_upstream(&app)[1];
    assert!(second.contains("\"tool_calls\""), "{second}");
    assert!(!second.contains("I need to multiply"), "{second}");
}

#[actix_web::test]
async fn a_client_re_attaching_after_a_restart_gets_the_stored_reasoning_before_the_answer() {
    let app = spawn_app().await;
    app.upstream.script([Reply::reasoned(
        ReasoningShape::ReasoningContent,
        THINKING,
        ANSWER,
    )]);
    let chat = app.new_chat().await;
    let frames = app.send_text(&chat, "Hi!").await;
    let run_id = crate::sse::finished(&frames)["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    let app = app.restart().await;
    let response = app
        .chat_api()
        .run_events(&chat, &run_id)
        .with_query("after=0")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let replayed = read_all(response).await;
    assert_eq!(reasoning_of(&replayed), THINKING);
    assert_eq!(content(&replayed), ANSWER);
    let kinds: Vec<String> = replayed.iter().map(Frame::kind).collect();
    let reasoning_at = kinds.iter().position(|k| k == "x_chat.reasoning").unwrap();
    let content_at = kinds.iter().position(|k| k == "content").unwrap();
    assert!(reasoning_at < content_at, "{kinds:?}");
}

/// What the SDK clients' rounds are answered with: per shape, the reasoned reply to each of
/// the six calls a round makes (stream, stream helper, plain, a follow-up, Responses create
/// and stream), the follow-up a plain text.
fn sdk_script() -> Vec<Reply> {
    SHAPES
        .iter()
        .flat_map(|&shape| {
            let reasoned = || Reply::reasoned(shape, THINKING, ANSWER).with_reasoning_tokens(7);
            [
                reasoned(),
                reasoned(),
                reasoned(),
                Reply::text("Then nothing."),
                reasoned(),
                reasoned(),
            ]
        })
        .collect()
}

/// Checks what an SDK client saw in each round (one per shape), and that the model never got
/// the reasoning back.
fn assert_sdk_rounds(app: &TestApp, seen: &Value) {
    let rounds = seen.as_array().expect("a list of rounds");
    assert_eq!(rounds.len(), SHAPES.len());
    for (shape, round) in SHAPES.iter().zip(rounds) {
        let what = format!("{shape:?}: {round}");
        assert_eq!(round["stream_content"], ANSWER, "{what}");
        assert_eq!(round["stream_reasoning"], THINKING, "{what}");
        assert_eq!(round["stream_reasoning_content"], THINKING, "{what}");
        assert_eq!(round["stream_reasoning_tokens"], 7, "{what}");
        assert_eq!(round["helper_content"], ANSWER, "{what}");
        assert_eq!(round["content"], ANSWER, "{what}");
        assert_eq!(round["reasoning_content"], THINKING, "{what}");
        assert_eq!(round["thinking"], THINKING, "{what}");
        assert_eq!(round["reasoning_tokens"], 7, "{what}");
        assert_eq!(round["follow_up"], "Then nothing.", "{what}");
        assert_eq!(
            round["response_types"],
            json!(["reasoning", "message"]),
            "{what}"
        );
        assert_eq!(round["response_summary"], json!([THINKING]), "{what}");
        assert_eq!(round["response_text"], ANSWER, "{what}");
        assert_eq!(round["response_reasoning_tokens"], 7, "{what}");
        assert_eq!(round["stream_summary_deltas"], THINKING, "{what}");
        // The reasoning item's lifecycle, then the message's (repeated deltas counted once).
        let mut types: Vec<&str> = round["stream_event_types"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        types.dedup();
        assert_eq!(
            types,
            [
                "response.output_item.added",
                "response.reasoning_summary_part.added",
                "response.reasoning_summary_text.delta",
                "response.reasoning_summary_text.done",
                "response.reasoning_summary_part.done",
                "response.output_item.added",
            ],
            "{what}"
        );
        assert_eq!(round["stream_equals_created"], true, "{what}");
    }
    assert_never_sent_back(app);
}

#[actix_web::test]
async fn the_official_python_client_reads_reasoning_from_each_shape_apart_from_the_answer() {
    let python = tokio::task::spawn_blocking(crate::openai_python::python_with_openai)
        .await
        .unwrap();
    let app = spawn_app().await;
    app.upstream.script(sdk_script());
    let script = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/python/reasoning_client.py");
    let mut command = std::process::Command::new(python);
    command.arg(script).env("ROUNDS", SHAPES.len().to_string());
    let seen = run_client(&app, command).await;
    assert_sdk_rounds(&app, &seen);
}

#[actix_web::test]
async fn the_official_node_client_and_vercels_ai_sdk_read_reasoning_from_each_shape() {
    let dir = tokio::task::spawn_blocking(crate::openai_node::node_clients)
        .await
        .unwrap();
    let app = spawn_app().await;
    let mut script = sdk_script();
    // Then Vercel's AI SDK (openai-compatible provider), streaming: it reads `reasoning_content`.
    script.push(Reply::reasoned(ReasoningShape::Think, THINKING, ANSWER));
    app.upstream.script(script);
    let mut command = std::process::Command::new("node");
    command
        .arg("reasoning_client.mjs")
        .current_dir(dir)
        .env("ROUNDS", SHAPES.len().to_string());
    let seen = run_client(&app, command).await;
    assert_sdk_rounds(&app, &seen["rounds"]);
    assert_eq!(seen["vercel"]["text"], ANSWER, "{seen}");
    assert_eq!(seen["vercel"]["reasoning"], THINKING, "{seen}");
}
