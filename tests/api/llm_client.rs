//! The upstream client against the fake upstream over real HTTP.

use std::time::{Duration, Instant};

use colloquy::config::LlmConfig;
use colloquy::llm::wire::{ChatMessage, ChatRequest, FinishReason, ToolDefinition};
use colloquy::llm::{LlmClient, LlmError, TurnAccumulator};
use futures_util::StreamExt;
use serde_json::json;

use crate::fake_upstream::{FakeUpstream, Reply};

fn client(upstream: &FakeUpstream) -> LlmClient {
    LlmClient::new(&LlmConfig {
        base_url: upstream.base_url.clone(),
        model: "fake-model".into(),
        max_retries: 2,
        retry_initial_backoff_ms: 10,
        retry_max_backoff_ms: 3_000,
        read_timeout_secs: 5,
        ..LlmConfig::default()
    })
    .unwrap()
}

fn request() -> ChatRequest {
    ChatRequest::new("fake-model", vec![ChatMessage::user("hello")]).with_tools(vec![
        ToolDefinition::function("calculator", "Evaluate math", json!({"type": "object"})),
    ])
}

/// Streams a turn to its end, returning the accumulated turn and the text deltas seen.
async fn stream_turn(
    client: &LlmClient,
) -> Result<(colloquy::llm::AssistantTurn, Vec<String>), (LlmError, Vec<String>)> {
    let mut stream = client
        .chat_stream(&request())
        .await
        .map_err(|e| (e, vec![]))?;
    let mut acc = TurnAccumulator::default();
    let mut deltas = Vec::new();
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(chunk) => {
                let text = acc.push(&chunk).text;
                if !text.is_empty() {
                    deltas.push(text);
                }
            }
            Err(err) => return Err((err, deltas)),
        }
    }
    Ok((acc.finish(), deltas))
}

#[actix_web::test]
async fn text_streams_as_deltas_with_usage_and_a_finish_reason() {
    let upstream = FakeUpstream::start().await;
    upstream.script([Reply::text("The answer is 42.")]);
    let (turn, deltas) = stream_turn(&client(&upstream)).await.unwrap();
    assert_eq!(deltas, ["The ", "answer ", "is ", "42."]);
    assert_eq!(turn.content, "The answer is 42.");
    assert_eq!(turn.finish_reason, Some(FinishReason::Stop));
    assert_eq!(turn.usage.unwrap().total_tokens, 15);
    let sent = &upstream.received()[0].body;
    assert_eq!(sent["stream"], true);
    assert_eq!(sent["stream_options"]["include_usage"], true);
    assert_eq!(sent["tools"][0]["function"]["name"], "calculator");
    assert_eq!(
        sent["messages"],
        json!([{"role": "user", "content": "hello"}])
    );
}

#[actix_web::test]
async fn fragmented_tool_call_arguments_are_reassembled() {
    let upstream = FakeUpstream::start().await;
    let args = json!({"expression": "sqrt(144) + 2^10", "note": "fragments of five chars"});
    upstream.script([
        Reply::tool_call("call_1", "calculator", args.clone()).and_tool_call(
            "call_2",
            "web_search",
            json!({"query": "rust actors"}),
        ),
    ]);
    let (turn, deltas) = stream_turn(&client(&upstream)).await.unwrap();
    assert!(deltas.is_empty());
    assert_eq!(turn.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(turn.tool_calls.len(), 2);
    assert_eq!(turn.tool_calls[0].id, "call_1");
    assert_eq!(turn.tool_calls[0].function.name, "calculator");
    let parsed: serde_json::Value =
        serde_json::from_str(&turn.tool_calls[0].function.arguments).unwrap();
    assert_eq!(parsed, args);
    assert_eq!(turn.tool_calls[1].function.name, "web_search");
}

#[actix_web::test]
async fn an_upstream_500_is_retried_and_then_succeeds() {
    let upstream = FakeUpstream::start().await;
    upstream.script([Reply::status(500, "boom"), Reply::text("recovered")]);
    let (turn, _) = stream_turn(&client(&upstream)).await.unwrap();
    assert_eq!(turn.content, "recovered");
    assert_eq!(upstream.received().len(), 2);
}

#[actix_web::test]
async fn a_persistent_500_becomes_a_typed_error_after_the_retries() {
    let upstream = FakeUpstream::start().await;
    upstream.script([
        Reply::status(500, "boom 1"),
        Reply::status(502, "boom 2"),
        Reply::status(503, "boom 3"),
        Reply::text("never reached"),
    ]);
    let err = client(&upstream).chat(&request()).await.unwrap_err();
    match err {
        LlmError::Status { status, message } => {
            assert_eq!(status, 503);
            assert_eq!(message, "boom 3");
        }
        other => panic!("expected a status error, got {other:?}"),
    }
    assert_eq!(upstream.received().len(), 3, "one attempt and two retries");
}

#[actix_web::test]
async fn a_client_error_from_upstream_is_not_retried() {
    let upstream = FakeUpstream::start().await;
    upstream.script([
        Reply::status(404, "model 'nope' not found"),
        Reply::text("unused"),
    ]);
    let err = client(&upstream).chat(&request()).await.unwrap_err();
    assert!(
        matches!(err, LlmError::Status { status: 404, .. }),
        "{err:?}"
    );
    assert_eq!(err.code(), "upstream_rejected");
    assert_eq!(upstream.received().len(), 1);
}

#[actix_web::test]
async fn a_429_waits_for_retry_after_before_retrying() {
    let upstream = FakeUpstream::start().await;
    upstream.script([
        Reply::status(429, "slow down").retry_after(1),
        Reply::text("ok now"),
    ]);
    let started = Instant::now();
    let (turn, _) = stream_turn(&client(&upstream)).await.unwrap();
    assert_eq!(turn.content, "ok now");
    assert!(
        started.elapsed() >= Duration::from_millis(950),
        "Retry-After: 1 was honoured ({:?})",
        started.elapsed()
    );
}

#[actix_web::test]
async fn a_stream_cut_mid_way_is_a_truncation_error_after_the_delivered_text() {
    let upstream = FakeUpstream::start().await;
    upstream.script([
        Reply::text("one two three four five").cut_after(2),
        Reply::text("not a retry"),
    ]);
    let (err, deltas) = stream_turn(&client(&upstream)).await.unwrap_err();
    assert_eq!(deltas, ["one ", "two "]);
    assert!(matches!(err, LlmError::StreamTruncated(_)), "{err:?}");
    assert_eq!(
        upstream.received().len(),
        1,
        "no retry once tokens were delivered"
    );
}

#[actix_web::test]
async fn garbage_lines_in_the_stream_are_skipped() {
    let upstream = FakeUpstream::start().await;
    upstream.script([Reply::text("clean text despite noise").with_garbage()]);
    let (turn, _) = stream_turn(&client(&upstream)).await.unwrap();
    assert_eq!(turn.content, "clean text despite noise");
    assert_eq!(turn.finish_reason, Some(FinishReason::Stop));
}

#[actix_web::test]
async fn non_streaming_completions_carry_tool_calls_and_usage() {
    let upstream = FakeUpstream::start().await;
    upstream.script([Reply::tool_call(
        "call_9",
        "calculator",
        json!({"expression": "1+1"}),
    )]);
    let completion = client(&upstream).chat(&request()).await.unwrap();
    assert_eq!(upstream.received()[0].body["stream"], false);
    let choice = &completion.choices[0];
    assert_eq!(choice.finish_reason, Some(FinishReason::ToolCalls));
    let calls = choice.message.tool_calls.as_ref().unwrap();
    assert_eq!(calls[0].function.arguments, "{\"expression\":\"1+1\"}");
    assert_eq!(completion.usage.unwrap().prompt_tokens, 20);
}

#[actix_web::test]
async fn a_slow_upstream_can_still_answer_within_the_read_timeout() {
    let upstream = FakeUpstream::start().await;
    upstream.script([Reply::text("slow but sure")
        .delay(Duration::from_millis(300))
        .event_gap(Duration::from_millis(50))]);
    let (turn, _) = stream_turn(&client(&upstream)).await.unwrap();
    assert_eq!(turn.content, "slow but sure");
}

#[actix_web::test]
async fn a_stalled_upstream_hits_the_read_timeout() {
    let upstream = FakeUpstream::start().await;
    upstream.script([Reply::text("too late").delay(Duration::from_secs(3))]);
    let client = LlmClient::new(&LlmConfig {
        base_url: upstream.base_url.clone(),
        first_byte_timeout_secs: 1,
        prompt_tokens_per_sec: 100_000,
        max_retries: 0,
        ..LlmConfig::default()
    })
    .unwrap();
    let err = client.chat(&request()).await.unwrap_err();
    assert!(matches!(err, LlmError::Timeout(_)), "{err:?}");
    assert_eq!(err.code(), "upstream_timeout");
}

#[actix_web::test]
async fn connection_refused_is_a_connect_error() {
    let upstream = FakeUpstream::start().await;
    let client = client(&upstream);
    upstream.stop().await;
    let err = client.chat(&request()).await.unwrap_err();
    assert!(matches!(err, LlmError::Connect(_)), "{err:?}");
}

#[actix_web::test]
async fn embeddings_come_back_in_input_order() {
    let upstream = FakeUpstream::start().await;
    let inputs = vec!["a".to_string(), "bb".to_string(), "ccc".to_string()];
    let vectors = client(&upstream).embeddings(&inputs).await.unwrap();
    assert_eq!(vectors.len(), 3);
    assert_eq!(vectors[0][0], 1.0);
    assert_eq!(vectors[2][0], 3.0);
    let sent = &upstream.received()[0];
    assert_eq!(sent.path, "/v1/embeddings");
    assert_eq!(sent.body["input"], json!(["a", "bb", "ccc"]));
}

#[actix_web::test]
async fn per_token_embeddings_are_mean_pooled() {
    let upstream = FakeUpstream::start().await;
    let client = client(&upstream);
    let inputs = vec!["ab".to_string(), "hello".to_string()];
    let pooled = client.embeddings(&inputs).await.unwrap();
    upstream.embed_per_token();
    let per_token = client.embeddings(&inputs).await.unwrap();
    for (one, mean) in pooled.iter().zip(&per_token) {
        let doubled: Vec<f32> = one.iter().map(|v| v * 2.0).collect();
        assert_eq!(mean, &doubled);
    }
}

#[actix_web::test]
async fn embeddings_go_to_their_own_base_url_when_one_is_set() {
    let embeddings = FakeUpstream::start().await;
    // The chat server is not even running.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let chat_url = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    let client = LlmClient::new(&LlmConfig {
        base_url: chat_url,
        embedding_base_url: Some(embeddings.base_url.clone()),
        max_retries: 0,
        ..LlmConfig::default()
    })
    .unwrap();
    let vectors = client.embeddings(&["text".to_string()]).await.unwrap();
    assert_eq!(vectors.len(), 1);
    let received = embeddings.received();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].path, "/v1/embeddings");
}

fn timed_client(upstream: &FakeUpstream, adjust: impl FnOnce(&mut LlmConfig)) -> LlmClient {
    let mut config = LlmConfig {
        base_url: upstream.base_url.clone(),
        model: "fake-model".into(),
        max_retries: 2,
        retry_initial_backoff_ms: 10,
        first_byte_timeout_secs: 1,
        prompt_tokens_per_sec: 1_000,
        read_timeout_secs: 1,
        ..LlmConfig::default()
    };
    adjust(&mut config);
    LlmClient::new(&config).unwrap()
}

async fn drain(client: &LlmClient, request: &ChatRequest) -> Result<String, LlmError> {
    let mut stream = client.chat_stream(request).await?;
    let mut acc = TurnAccumulator::default();
    while let Some(chunk) = stream.next().await {
        acc.push(&chunk?);
    }
    Ok(acc.finish().content)
}

#[actix_web::test]
async fn a_long_prompt_gets_a_longer_first_byte_allowance_and_a_timeout_is_not_resent() {
    let upstream = FakeUpstream::start().await;
    let client = timed_client(&upstream, |_| {});
    // Headers at once, then 2 s of silence while the "server reads the prompt".
    upstream.script([Reply::text("read it").silent_first(Duration::from_secs(2))]);
    let started = Instant::now();
    let err = drain(&client, &request()).await.unwrap_err();
    assert!(matches!(err, LlmError::Timeout(_)), "{err:?}");
    assert!(
        started.elapsed() < Duration::from_millis(1_900),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        upstream.received().len(),
        1,
        "a request the server accepted is not sent again"
    );

    // About 3,000 tokens of prompt: 3 s more at 1,000 tokens a second.
    upstream.script([Reply::text("read it").silent_first(Duration::from_secs(2))]);
    let long = ChatRequest::new("fake-model", vec![ChatMessage::user("word ".repeat(2_400))]);
    assert_eq!(drain(&client, &long).await.unwrap(), "read it");
}

#[actix_web::test]
async fn a_server_that_freezes_mid_answer_fails_between_chunks_without_a_retry() {
    let upstream = FakeUpstream::start().await;
    let client = timed_client(&upstream, |_| {});
    upstream
        .script([Reply::text("one two three four five").stall_after(3, Duration::from_secs(10))]);
    let started = Instant::now();
    let err = drain(&client, &request()).await.unwrap_err();
    assert!(matches!(err, LlmError::Timeout(_)), "{err:?}");
    assert_eq!(err.code(), "upstream_timeout");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(upstream.received().len(), 1);
}

#[actix_web::test]
async fn retries_stop_at_the_retry_deadline() {
    let upstream = FakeUpstream::start().await;
    let client = timed_client(&upstream, |config| {
        config.max_retries = 50;
        config.retry_initial_backoff_ms = 100;
        config.retry_max_backoff_ms = 200;
        config.retry_deadline_secs = 1;
    });
    upstream.script((0..60).map(|_| Reply::status(503, "busy")));
    let started = Instant::now();
    let err = client.chat(&request()).await.unwrap_err();
    assert_eq!(err.code(), "upstream_error", "{err:?}");
    assert!(
        started.elapsed() < Duration::from_millis(1_500),
        "{:?}",
        started.elapsed()
    );
    let attempts = upstream.received().len();
    assert!((3..50).contains(&attempts), "{attempts} attempts");
}
