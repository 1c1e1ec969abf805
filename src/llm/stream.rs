//! Streaming: turning the upstream's SSE bytes into `ChatCompletionChunk`s as they arrive, and
//! folding chunks into one `AssistantTurn`. Tool calls arrive as fragments keyed by `index`:
//! the id and name in the first, the arguments spread over many. Reasoning (the
//! `reasoning_content` / `reasoning` fields, or a `<think>` block opening the content) is kept
//! apart from the text. Garbage lines are skipped with a warning; a stream that ends before
//! `[DONE]` or a finish reason is an error.

use std::collections::BTreeMap;

use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt};
use serde_json::Value;

use super::LlmError;
use super::reasoning::{Split, ThinkSplitter};
use super::wire::{ChatCompletionChunk, FinishReason, FunctionCall, ToolCall, Usage};

/// Decodes an SSE byte stream of chat completion chunks. Ends after `data: [DONE]`; ends
/// with `StreamTruncated` if the bytes stop before the model finished.
pub(crate) fn decode_chunks<S, B, E>(
    bytes: S,
) -> impl Stream<Item = Result<ChatCompletionChunk, LlmError>> + Send + 'static
where
    S: Stream<Item = Result<B, E>> + Send + Unpin + 'static,
    B: AsRef<[u8]> + Send + 'static,
    E: std::error::Error + Send + 'static,
{
    let events = bytes.eventsource();
    futures_util::stream::unfold(
        (events, DecodeState::default()),
        |(mut events, mut state)| async move {
            if state.done {
                return None;
            }
            loop {
                let Some(event) = events.next().await else {
                    state.done = true;
                    if state.finished {
                        return None;
                    }
                    let err = LlmError::StreamTruncated("stream ended without [DONE]".into());
                    return Some((Err(err), (events, state)));
                };
                let event = match event {
                    Ok(event) => event,
                    Err(EventStreamError::Utf8(err)) => {
                        state.done = true;
                        let err = LlmError::InvalidResponse(format!("stream is not UTF-8: {err}"));
                        return Some((Err(err), (events, state)));
                    }
                    Err(EventStreamError::Parser(err)) => {
                        tracing::warn!(%err, "skipping an unparsable SSE line from the upstream");
                        continue;
                    }
                    Err(EventStreamError::Transport(err)) => {
                        state.done = true;
                        let silent = (&err as &dyn std::error::Error)
                            .downcast_ref::<std::io::Error>()
                            .is_some_and(|e| e.kind() == std::io::ErrorKind::TimedOut);
                        let err = if silent {
                            LlmError::Timeout(err.to_string())
                        } else {
                            LlmError::StreamTruncated(err.to_string())
                        };
                        return Some((Err(err), (events, state)));
                    }
                };
                let data = event.data.trim();
                if data.is_empty() {
                    continue;
                }
                if data == "[DONE]" {
                    return None;
                }
                match parse_chunk(data) {
                    Ok(Some(chunk)) => {
                        if chunk.choices.iter().any(|c| c.finish_reason.is_some()) {
                            state.finished = true;
                        }
                        return Some((Ok(chunk), (events, state)));
                    }
                    Ok(None) => continue,
                    Err(err) => {
                        state.done = true;
                        return Some((Err(err), (events, state)));
                    }
                }
            }
        },
    )
}

#[derive(Default)]
struct DecodeState {
    /// `[DONE]` seen or a fatal error returned: nothing more to yield.
    done: bool,
    /// A finish reason was seen, so a missing `[DONE]` is tolerated.
    finished: bool,
}

/// Parses one `data:` payload. `Ok(None)` means "not a chunk, skip it" (garbage); an
/// `{"error": ...}` object becomes `StreamError`.
fn parse_chunk(data: &str) -> Result<Option<ChatCompletionChunk>, LlmError> {
    // Nearly every payload is a well-formed chunk: read it straight into its type. An error
    // object would read as an empty chunk (every field has a default), so a payload naming
    // `"error"` takes the slow path below, as does one that does not read.
    if !data.contains("\"error\"")
        && let Ok(chunk) = serde_json::from_str::<ChatCompletionChunk>(data)
    {
        return Ok(Some(chunk));
    }
    let value: Value = match serde_json::from_str(data) {
        Ok(value) => value,
        Err(err) => {
            tracing::warn!(%err, line = %truncate(data, 200), "skipping a non-JSON SSE event");
            return Ok(None);
        }
    };
    if let Some(error) = value.get("error") {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| error.to_string());
        return Err(LlmError::StreamError(message));
    }
    match serde_json::from_value(value) {
        Ok(chunk) => Ok(Some(chunk)),
        Err(err) => {
            tracing::warn!(%err, line = %truncate(data, 200), "skipping a malformed chunk");
            Ok(None)
        }
    }
}

fn truncate(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

/// One finished model turn: its text, its reasoning, the tool calls it asked for, why it
/// stopped, its usage.
#[derive(Debug, Clone, PartialEq)]
pub struct AssistantTurn {
    pub content: String,
    pub reasoning: String,
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: Option<FinishReason>,
    pub usage: Option<Usage>,
}

/// A tool call being assembled from fragments.
#[derive(Debug, Default)]
struct PartialToolCall {
    id: Option<String>,
    name: String,
    arguments: String,
}

/// Folds streamed chunks (choice 0) into an `AssistantTurn`.
#[derive(Debug, Default)]
pub struct TurnAccumulator {
    content: String,
    reasoning: String,
    splitter: ThinkSplitter,
    tool_calls: BTreeMap<u32, PartialToolCall>,
    finish_reason: Option<FinishReason>,
    usage: Option<Usage>,
}

impl TurnAccumulator {
    /// Applies one chunk; returns the reasoning and the text it added, for streaming to the
    /// client (a `<think>` tag's pieces are held until they are told apart).
    pub fn push(&mut self, chunk: &ChatCompletionChunk) -> Split {
        if let Some(usage) = chunk.usage {
            self.usage = Some(usage);
        }
        let Some(choice) = chunk.choices.iter().find(|c| c.index == 0) else {
            return Split::default();
        };
        if let Some(reason) = &choice.finish_reason {
            self.finish_reason = Some(reason.clone());
        }
        for (position, delta) in choice.delta.tool_calls.iter().flatten().enumerate() {
            // Servers that send whole calls in one chunk sometimes omit `index`.
            let index = delta.index.unwrap_or(position as u32);
            let call = self.tool_calls.entry(index).or_default();
            if let Some(id) = delta.id.as_ref().filter(|id| !id.is_empty()) {
                call.id.get_or_insert_with(|| id.clone());
            }
            if let Some(function) = &delta.function {
                if let Some(name) = &function.name
                    && call.name.is_empty()
                {
                    call.name.push_str(name);
                }
                if let Some(fragment) = &function.arguments {
                    call.arguments.push_str(fragment);
                }
            }
        }
        let mut out = Split::default();
        // A server that sends both names sends the same text twice: one is read.
        let field = [&choice.delta.reasoning_content, &choice.delta.reasoning]
            .into_iter()
            .flatten()
            .find(|text| !text.is_empty());
        if let Some(reasoning) = field {
            out.reasoning.push_str(reasoning);
        }
        if let Some(text) = choice.delta.content.as_deref().filter(|t| !t.is_empty()) {
            let split = self.splitter.push(text);
            out.reasoning.push_str(&split.reasoning);
            out.text = split.text;
        }
        self.reasoning.push_str(&out.reasoning);
        self.content.push_str(&out.text);
        out
    }

    /// The stream ended: what the `<think>` splitter still held (an unterminated block's end,
    /// or content that only looked like the start of one). Call once, before `finish`.
    pub fn close(&mut self) -> Split {
        let out = self.splitter.finish();
        self.reasoning.push_str(&out.reasoning);
        self.content.push_str(&out.text);
        out
    }

    /// The text so far (what a cancelled run persists).
    pub fn content(&self) -> &str {
        &self.content
    }

    /// The reasoning so far.
    pub fn reasoning(&self) -> &str {
        &self.reasoning
    }

    pub fn finish(mut self) -> AssistantTurn {
        self.close();
        let tool_calls = self
            .tool_calls
            .into_values()
            .filter(|call| !call.name.is_empty())
            .map(|call| ToolCall {
                id: call
                    .id
                    .unwrap_or_else(|| format!("call_{}", uuid::Uuid::new_v4().simple())),
                kind: "function".into(),
                function: FunctionCall {
                    name: call.name,
                    arguments: if call.arguments.trim().is_empty() {
                        "{}".into()
                    } else {
                        call.arguments
                    },
                },
            })
            .collect();
        AssistantTurn {
            content: self.content,
            reasoning: self.reasoning,
            tool_calls,
            finish_reason: self.finish_reason,
            usage: self.usage,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn chunk(value: Value) -> ChatCompletionChunk {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn tool_call_fragments_are_joined_by_index() {
        let mut acc = TurnAccumulator::default();
        let chunks = [
            json!({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
                {"index": 0, "id": "call_a", "type": "function", "function": {"name": "web_search", "arguments": ""}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 1, "id": "call_b", "function": {"name": "calculator", "arguments": "{\"expr"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "function": {"arguments": "{\"query\": "}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 1, "function": {"arguments": "ession\": \"2+2\"}"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "function": {"arguments": "\"rust\"}"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
                   "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}}),
        ];
        for c in chunks {
            assert!(acc.push(&chunk(c)).is_empty());
        }
        let turn = acc.finish();
        assert_eq!(turn.finish_reason, Some(FinishReason::ToolCalls));
        assert_eq!(turn.usage.unwrap().total_tokens, 10);
        assert_eq!(turn.tool_calls.len(), 2);
        assert_eq!(turn.tool_calls[0].id, "call_a");
        assert_eq!(turn.tool_calls[0].function.name, "web_search");
        assert_eq!(
            turn.tool_calls[0].function.arguments,
            "{\"query\": \"rust\"}"
        );
        assert_eq!(
            turn.tool_calls[1].function.arguments,
            "{\"expression\": \"2+2\"}"
        );
    }

    #[test]
    fn text_deltas_are_returned_and_accumulated() {
        let mut acc = TurnAccumulator::default();
        let first = acc.push(&chunk(
            json!({"choices": [{"index": 0, "delta": {"content": "Hel"}}]}),
        ));
        let second = acc.push(&chunk(
            json!({"choices": [{"index": 0, "delta": {"content": "lo"}}]}),
        ));
        assert_eq!(first.text, "Hel");
        assert_eq!(second.text, "lo");
        assert_eq!(acc.finish().content, "Hello");
    }

    #[test]
    fn reasoning_fields_stream_apart_from_the_text() {
        for field in ["reasoning_content", "reasoning"] {
            let mut acc = TurnAccumulator::default();
            let thought = acc.push(&chunk(
                json!({"choices": [{"index": 0, "delta": {field: "Let me think.", "content": ""}}]}),
            ));
            assert_eq!(thought.reasoning, "Let me think.");
            assert_eq!(thought.text, "");
            let said = acc.push(&chunk(
                json!({"choices": [{"index": 0, "delta": {"content": "Hi", field: null}}]}),
            ));
            assert_eq!((said.reasoning.as_str(), said.text.as_str()), ("", "Hi"));
            let turn = acc.finish();
            assert_eq!(turn.reasoning, "Let me think.");
            assert_eq!(turn.content, "Hi");
        }
    }

    #[test]
    fn a_server_sending_both_reasoning_fields_is_read_once() {
        let mut acc = TurnAccumulator::default();
        acc.push(&chunk(json!({"choices": [{"index": 0, "delta":
            {"reasoning_content": "once", "reasoning": "once"}}]})));
        assert_eq!(acc.finish().reasoning, "once");
    }

    #[test]
    fn a_think_block_split_over_chunks_is_reasoning_and_the_held_end_comes_at_close() {
        let mut acc = TurnAccumulator::default();
        let mut reasoning = String::new();
        let mut text = String::new();
        for piece in ["<th", "ink>\nPonder", "ing.</thi", "nk>\n\nAns", "wer"] {
            let got = acc.push(&chunk(
                json!({"choices": [{"index": 0, "delta": {"content": piece}}]}),
            ));
            reasoning.push_str(&got.reasoning);
            text.push_str(&got.text);
        }
        let rest = acc.close();
        assert!(rest.is_empty());
        assert_eq!(
            (reasoning.as_str(), text.as_str()),
            ("Pondering.", "Answer")
        );
        let mut open = TurnAccumulator::default();
        open.push(&chunk(
            json!({"choices": [{"index": 0, "delta": {"content": "<think>cut off "}}]}),
        ));
        let turn = open.finish();
        assert_eq!(
            (turn.reasoning.as_str(), turn.content.as_str()),
            ("cut off", "")
        );
    }

    #[test]
    fn reasoning_tokens_are_read_from_the_usage_details() {
        let mut acc = TurnAccumulator::default();
        acc.push(&chunk(json!({"choices": [], "usage": {"prompt_tokens": 5,
            "completion_tokens": 9, "total_tokens": 14,
            "completion_tokens_details": {"reasoning_tokens": 6, "accepted_prediction_tokens": null}}})));
        assert_eq!(acc.finish().usage.unwrap().reasoning_tokens(), Some(6));
    }

    async fn decode_all(raw: &'static str) -> Vec<Result<ChatCompletionChunk, LlmError>> {
        let bytes = futures_util::stream::iter(
            raw.as_bytes()
                .chunks(7)
                .map(|piece| Ok::<_, std::io::Error>(piece.to_vec())),
        );
        decode_chunks(bytes).collect().await
    }

    #[tokio::test]
    async fn garbage_lines_are_skipped_and_done_ends_the_stream() {
        let raw = ": keep-alive\n\ndata: not json at all\n\nnonsense line\n\n\
                   data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\n\
                   data: [DONE]\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"after\"}}]}\n\n";
        let items = decode_all(raw).await;
        assert_eq!(items.len(), 1, "{items:?}");
        let chunk = items[0].as_ref().unwrap();
        assert_eq!(chunk.choices[0].delta.content.as_deref(), Some("ok"));
    }

    #[tokio::test]
    async fn a_stream_that_stops_early_is_truncated() {
        let raw = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"par\"}}]}\n\n";
        let items = decode_all(raw).await;
        assert_eq!(items.len(), 2);
        assert!(
            matches!(items[1], Err(LlmError::StreamTruncated(_))),
            "{items:?}"
        );
    }

    #[tokio::test]
    async fn an_error_object_mid_stream_is_reported() {
        let raw = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n\
                   data: {\"error\":{\"message\":\"model overloaded\"}}\n\n";
        let items = decode_all(raw).await;
        match &items[1] {
            Err(LlmError::StreamError(message)) => assert_eq!(message, "model overloaded"),
            other => panic!("expected a stream error, got {other:?}"),
        }
    }

    #[test]
    fn a_payload_reads_the_same_whichever_path_it_takes() {
        // The direct read and the read through a `Value` agree on chunks, including one whose
        // text quotes the word "error" and one with fields Colloquy does not know.
        for data in [
            r#"{"id":"c1","model":"m","created":7,"choices":[{"index":0,"delta":{"role":"assistant","content":"say \"error\" twice"},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":"r"},"logprobs":null}],"system_fingerprint":"x"}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}"#,
        ] {
            let through_value: ChatCompletionChunk =
                serde_json::from_value(serde_json::from_str(data).unwrap()).unwrap();
            assert_eq!(parse_chunk(data).unwrap(), Some(through_value), "{data}");
        }
        // An error object is an error however it is spaced; garbage is skipped.
        assert!(matches!(
            parse_chunk(r#"{ "error" : { "message": "slow down" } }"#),
            Err(LlmError::StreamError(message)) if message == "slow down"
        ));
        assert!(matches!(parse_chunk("{not json"), Ok(None)));
        assert!(matches!(parse_chunk(r#"{"choices":"many"}"#), Ok(None)));
    }

    /// Pieces of upstream SSE: real chunk lines, broken JSON, comments, stray fields and
    /// split points anywhere, including inside a multi-byte character.
    fn sse_piece() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        prop_oneof![
            Just(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"h\xc3\xa9\"}}]}\n\n".to_vec()),
            Just(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":3,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{\"}}]}}]}\n\n".to_vec()),
            Just(b"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n".to_vec()),
            Just(b"data: [DONE]\n\n".to_vec()),
            Just(b": keep-alive\n\n".to_vec()),
            Just(b"data: {not json\n\n".to_vec()),
            Just(b"event: error\ndata: {\"error\":{\"message\":\"x\"}}\n\n".to_vec()),
            Just(b"\r\n".to_vec()),
            proptest::collection::vec(proptest::num::u8::ANY, 0..64),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

        #[test]
        fn any_upstream_bytes_decode_to_chunks_or_errors_without_panicking(
            pieces in proptest::collection::vec(sse_piece(), 0..40),
            cut in 1usize..97,
        ) {
            let bytes = pieces.concat();
            // Delivered in arbitrary slices, as TCP would.
            let slices: Vec<Result<Vec<u8>, std::io::Error>> =
                bytes.chunks(cut).map(|slice| Ok(slice.to_vec())).collect();
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let items: Vec<_> = runtime.block_on(
                decode_chunks(futures_util::stream::iter(slices)).collect::<Vec<_>>(),
            );
            let mut turn = TurnAccumulator::default();
            for chunk in items.iter().flatten() {
                turn.push(chunk);
            }
            let _ = turn.finish();
            // Whatever came, the stream ends, and at most one error ends it.
            proptest::prop_assert!(items.iter().filter(|i| i.is_err()).count() <= 1);
        }
    }
}
