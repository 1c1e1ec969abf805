//! Usage when the upstream reports none (servers that ignore `stream_options.include_usage`,
//! such as llama-cpp-python, or report zeros): the request and the answer counted with
//! cl100k_base and marked `estimated`, never zeros shown as if measured.

use crate::llm::wire::{ChatRequest, MessageContent, ToolCall, Usage};
use crate::retrieval::chunk::Chunker;

/// Tokens a message costs beyond its text (its role and separators), as OpenAI counts them.
const TOKENS_PER_MESSAGE: u64 = 4;

/// Whether `reported` is a real measurement of a turn that produced `content`.
pub fn is_real(reported: Option<&Usage>) -> bool {
    reported.is_some_and(|usage| usage.prompt_tokens > 0 || usage.completion_tokens > 0)
}

/// `estimate` on the blocking pool: counting a whole request is CPU work that grows with the
/// context, and runs live on arbiters shared with chat sessions.
pub async fn estimate_off_thread(request: &ChatRequest, content: &str) -> Usage {
    let (request, content) = (request.clone(), content.to_string());
    tokio::task::spawn_blocking(move || estimate(&request, &content, &[]))
        .await
        .unwrap_or_default()
}

/// An estimate of what `request` and its answer (`content`, `tool_calls`) cost.
pub fn estimate(request: &ChatRequest, content: &str, tool_calls: &[ToolCall]) -> Usage {
    let chunker = Chunker::default();
    let count = |text: &str| chunker.encode(text).len() as u64;
    let calls = |calls: &[ToolCall]| -> u64 {
        calls
            .iter()
            .map(|call| count(&call.function.name) + count(&call.function.arguments))
            .sum()
    };
    let mut prompt = 0;
    for message in &request.messages {
        prompt += TOKENS_PER_MESSAGE;
        match &message.content {
            Some(MessageContent::Text(text)) => prompt += count(text),
            Some(MessageContent::Parts(parts)) => {
                for part in parts {
                    if let Some(text) = part["text"].as_str() {
                        prompt += count(text);
                    } else if super::images::is_image(part) {
                        prompt += super::context::IMAGE_TOKENS;
                    }
                }
            }
            None => {}
        }
        prompt += calls(message.tool_calls.as_deref().unwrap_or_default());
    }
    if let Some(tools) = &request.tools {
        prompt += count(&serde_json::to_string(tools).unwrap_or_default());
    }
    let completion = count(content) + calls(tool_calls);
    Usage {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: prompt + completion,
        estimated: true,
        completion_tokens_details: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::wire::ChatMessage;

    #[test]
    fn an_estimate_counts_the_request_and_the_answer() {
        let request = ChatRequest::new(
            "m",
            vec![
                ChatMessage::system("Be brief."),
                ChatMessage::user("What is the capital of France?"),
            ],
        );
        let usage = estimate(&request, "Paris is the capital of France.", &[]);
        assert!(usage.estimated);
        // 2 messages × 4 + "Be brief." (3) + the question (7).
        assert_eq!(usage.prompt_tokens, 18);
        assert_eq!(usage.completion_tokens, 7);
        assert_eq!(usage.total_tokens, 25);
    }

    #[test]
    fn an_image_counts_a_fixed_cost_not_its_base64() {
        let mut message = ChatMessage::user("");
        message.content = Some(MessageContent::Parts(vec![
            serde_json::json!({"type": "image_url",
                "image_url": {"url": format!("data:image/png;base64,{}", "A".repeat(100_000))}}),
        ]));
        let usage = estimate(&ChatRequest::new("m", vec![message]), "", &[]);
        assert_eq!(
            usage.prompt_tokens,
            TOKENS_PER_MESSAGE + super::super::context::IMAGE_TOKENS
        );
    }

    #[test]
    fn zeros_or_nothing_are_not_a_measurement() {
        assert!(!is_real(None));
        assert!(!is_real(Some(&Usage::default())));
        assert!(is_real(Some(&Usage {
            prompt_tokens: 3,
            ..Usage::default()
        })));
    }
}
