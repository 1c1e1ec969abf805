//! OpenAI Chat Completions wire types, as sent to and received from the upstream. Fields the
//! servers disagree on are optional and defaulted, so a missing `usage` or `created` from one
//! server never fails a request; unknown fields are ignored.
//!
//! Here: the re-exports. Beside it: `messages` (roles, messages, tool calls and tool
//! definitions), `request` (`ChatRequest`), `response` (usage, finish reasons, completions and
//! streamed chunks), `models` (`GET /models`) and `embeddings` (`/embeddings`, per-token vectors
//! pooled).

mod embeddings;
mod messages;
mod models;
mod request;
mod response;

pub use embeddings::{Embedding, EmbeddingRequest, EmbeddingResponse, EmbeddingVectors};
pub use messages::{
    ChatMessage, FunctionCall, FunctionDefinition, MessageContent, Role, ToolCall, ToolDefinition,
};
pub use models::{Model, ModelList};
pub use request::{ChatRequest, StreamOptions};
pub use response::{
    AnswerMessage, ChatCompletion, ChatCompletionChunk, Choice, ChunkChoice,
    CompletionTokensDetails, Delta, FinishReason, FunctionCallDelta, ToolCallDelta, Usage,
};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn assistant_tool_turns_serialize_as_openai_expects() {
        let message = ChatMessage::assistant_with_tools(
            None,
            vec![ToolCall {
                id: "call_1".into(),
                kind: "function".into(),
                function: FunctionCall {
                    name: "calculator".into(),
                    arguments: "{\"expression\":\"1+1\"}".into(),
                },
            }],
        );
        assert_eq!(
            serde_json::to_value(&message).unwrap(),
            json!({"role": "assistant", "content": "", "tool_calls": [{"id": "call_1",
                "type": "function",
                "function": {"name": "calculator", "arguments": "{\"expression\":\"1+1\"}"}}]})
        );
    }

    #[test]
    fn content_parts_and_unknown_finish_reasons_are_accepted() {
        let message: ChatMessage = serde_json::from_value(json!({
            "role": "user",
            "content": [{"type": "text", "text": "hello"}, {"type": "image_url", "image_url": {}}]
        }))
        .unwrap();
        assert_eq!(message.text(), "hello");
        let chunk: ChatCompletionChunk = serde_json::from_value(json!({
            "choices": [{"index": 0, "delta": {}, "finish_reason": "eos_token"}]
        }))
        .unwrap();
        assert_eq!(chunk.choices[0].finish_reason, Some(FinishReason::Other));
    }

    #[test]
    fn a_non_streamed_answer_keeps_its_reasoning_apart() {
        for (message, reasoning, text) in [
            (
                json!({"role": "assistant", "content": "Hi", "reasoning_content": "think"}),
                "think",
                "Hi",
            ),
            (
                json!({"role": "assistant", "content": "Hi", "reasoning": "think"}),
                "think",
                "Hi",
            ),
            (
                json!({"role": "assistant", "content": "\n<think>\nthink\n</think>\n\nHi"}),
                "think",
                "Hi",
            ),
            (
                json!({"role": "assistant", "content": "Hi <think>x</think>"}),
                "",
                "Hi <think>x</think>",
            ),
        ] {
            let completion: ChatCompletion = serde_json::from_value(json!({
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]
            }))
            .unwrap();
            let split = completion.choices[0].message.split();
            assert_eq!(
                (split.reasoning.as_str(), split.text.as_str()),
                (reasoning, text)
            );
            // What would be sent back is the message alone, without its reasoning.
            let back = serde_json::to_value(&completion.choices[0].message.message).unwrap();
            assert!(back.get("reasoning_content").is_none() && back.get("reasoning").is_none());
        }
    }
}
