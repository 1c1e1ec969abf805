//! A run's usage as `x_chat.metadata` reports it (docs/spec.md#usage-metadata: research
//! tokens counted apart): OpenAI's three counts for the whole run, then the same
//! three for `research` (model calls that asked for tools; Deep Think's discovery, plan and
//! sub-tasks) and for the `answer` (the rest: the final answer, a Deep Think synthesis).

use serde_json::{Value, json};

use crate::llm::wire::Usage;

fn counts(prompt: u64, completion: u64) -> Value {
    json!({"prompt_tokens": prompt, "completion_tokens": completion,
           "total_tokens": prompt + completion})
}

/// `usage` with its research and answer parts; the whole alone when the research part is not
/// known (a run replayed from its stored row).
pub fn breakdown(usage: &Usage, research: Option<&Usage>) -> Value {
    let mut value = json!(usage);
    if let Some(research) = research {
        value["research"] = counts(research.prompt_tokens, research.completion_tokens);
        value["answer"] = counts(
            usage.prompt_tokens.saturating_sub(research.prompt_tokens),
            usage
                .completion_tokens
                .saturating_sub(research.completion_tokens),
        );
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn research_and_answer_add_up_to_the_whole() {
        let usage = Usage {
            prompt_tokens: 300,
            completion_tokens: 40,
            total_tokens: 340,
            ..Usage::default()
        };
        let research = Usage {
            prompt_tokens: 120,
            completion_tokens: 15,
            total_tokens: 135,
            ..Usage::default()
        };
        let value = breakdown(&usage, Some(&research));
        assert_eq!(value["total_tokens"], 340);
        assert_eq!(
            value["research"],
            json!({"prompt_tokens": 120, "completion_tokens": 15, "total_tokens": 135})
        );
        assert_eq!(
            value["answer"],
            json!({"prompt_tokens": 180, "completion_tokens": 25, "total_tokens": 205})
        );
        let unknown = breakdown(&usage, None);
        assert!(unknown.get("research").is_none() && unknown.get("answer").is_none());
    }
}
