//! Summarising the oldest turns of a history that outgrows the model's context (the
//! `summarize` context strategy). The turns fitting leaves out are condensed by the model into
//! a rolling summary: each call reads the summary so far and the next batch of turns, so a
//! history of any length is read in pieces that each fit the context. The summary is kept with
//! how many of the left-out messages it covers and a digest of them, so the next turn extends
//! it instead of reading everything again; a different branch (another digest) starts afresh.

use sha2::{Digest, Sha256};

use crate::chat::persistence::HistorySummary;
use crate::llm::wire::{ChatMessage, ChatRequest, MessageContent, Role, Usage};
use crate::llm::{LlmClient, LlmError};
use crate::retrieval::chunk::Chunker;

/// Model calls one request may spend on summarising; older turns beyond what they can read
/// are left out without a summary.
pub const MAX_SUMMARY_CALLS: usize = 4;
/// Most tokens a summary may have.
const MAX_SUMMARY_TOKENS: u32 = 512;
/// Tokens the summarising instruction and its framing take, at the most.
const INSTRUCTION_TOKENS: u64 = 160;

const INSTRUCTION: &str = "You condense the earlier part of a conversation so that it can \
continue without it. Write a summary of at most 200 words: who wants what, facts and \
numbers that were established, decisions made, and questions still open. Keep names, \
figures and code identifiers exactly. Write only the summary, in the conversation's \
language, without a preamble.";

/// The tokens a summary may take in a context of `context_length`.
pub fn summary_tokens(context_length: u32) -> u32 {
    (context_length / 8).min(MAX_SUMMARY_TOKENS)
}

/// How the left-out messages were summarised.
#[derive(Debug, Clone)]
pub struct Summarized {
    pub summary: HistorySummary,
    /// What the summarising calls cost.
    pub usage: Usage,
    /// Model calls made (0 when the kept summary already covered everything).
    pub calls: usize,
}

/// A digest of `messages` (role, text and tool calls), to tell whether a kept summary was made
/// of the same messages.
pub fn digest(messages: &[&ChatMessage]) -> String {
    let mut hasher = Sha256::new();
    for message in messages {
        let line = serde_json::json!([message.role, message.text(), message.tool_calls]);
        hasher.update(line.to_string().as_bytes());
        hasher.update(b"\n");
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The summary of `dropped` (the messages fitting left out, oldest first), extending `kept`
/// when it was made of a prefix of them. `model` and `context_length` are the run's.
pub async fn summarize(
    llm: &LlmClient,
    model: &str,
    context_length: u32,
    dropped: &[ChatMessage],
    kept: Option<HistorySummary>,
) -> Result<Summarized, LlmError> {
    let chunker = Chunker::default();
    let answer = summary_tokens(context_length);
    // What one call may read: its context less the answer, the margin, the instruction and the
    // summary so far.
    let readable = super::context::prompt_budget(context_length, Some(answer))
        .saturating_sub(INSTRUCTION_TOKENS + u64::from(answer))
        .max(64);
    // Messages with nothing to say (an empty answer to a failed turn) are not counted.
    let messages: Vec<&ChatMessage> = dropped.iter().filter(|m| has_text(m)).collect();
    // Rendering and counting the whole left-out history is CPU work that grows with it: on the
    // blocking pool, not the arbiter the run shares with chat sessions.
    let owned: Vec<ChatMessage> = messages.iter().map(|m| (*m).clone()).collect();
    let counted = tokio::task::spawn_blocking(move || {
        let lines: Vec<String> = owned.iter().map(|m| render(m, readable)).collect();
        let sizes: Vec<u64> = lines
            .iter()
            .map(|line| chunker.encode(line).len() as u64 + 1)
            .collect();
        (lines, sizes)
    })
    .await;
    let (lines, sizes) = match counted {
        Ok(counted) => counted,
        Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
        Err(err) => {
            return Err(LlmError::InvalidResponse(format!(
                "summarising stopped: {err}"
            )));
        }
    };
    // The newest messages the calls can read; older ones are left out unsummarised.
    let mut start = lines.len();
    let mut capacity = readable * MAX_SUMMARY_CALLS as u64;
    while start > 0 && sizes[start - 1] <= capacity {
        capacity -= sizes[start - 1];
        start -= 1;
    }
    let mut summary = match kept {
        Some(kept)
            if (start..=lines.len()).contains(&kept.covers)
                && kept.digest == digest(&messages[..kept.covers]) =>
        {
            kept
        }
        _ => HistorySummary {
            from: start,
            covers: start,
            digest: String::new(),
            text: String::new(),
        },
    };
    let mut usage = Usage::default();
    let mut calls = 0;
    while summary.covers < lines.len() && calls < MAX_SUMMARY_CALLS {
        let mut end = summary.covers;
        let mut batch = 0;
        while end < lines.len() && (end == summary.covers || batch + sizes[end] <= readable) {
            batch += sizes[end];
            end += 1;
        }
        let transcript = lines[summary.covers..end].join("\n");
        let prompt = if summary.text.is_empty() {
            format!("The conversation so far:\n\n{transcript}")
        } else {
            format!(
                "Summary of the conversation before this part:\n{}\n\nHow it went on:\n\n{transcript}",
                summary.text
            )
        };
        let mut request = ChatRequest::new(
            model,
            vec![ChatMessage::system(INSTRUCTION), ChatMessage::user(prompt)],
        );
        request.max_tokens = Some(answer);
        request.temperature = Some(0.0);
        let completion = llm.chat(&request).await?;
        calls += 1;
        let text = completion
            .choices
            .first()
            .map(|choice| choice.message.split().text)
            .unwrap_or_default();
        let text = text.trim();
        if text.is_empty() {
            return Err(LlmError::InvalidResponse(
                "the model answered the summary request with no text".into(),
            ));
        }
        usage.add(match completion.usage {
            Some(reported) if super::usage::is_real(Some(&reported)) => reported,
            _ => super::usage::estimate_off_thread(&request, text).await,
        });
        summary.text = text.to_string();
        summary.covers = end;
    }
    summary.digest = digest(&messages[..summary.covers]);
    Ok(Summarized {
        summary,
        usage,
        calls,
    })
}

/// How many of `dropped` have something to summarise (the count a summary's `covers` is of).
pub fn with_text(dropped: &[ChatMessage]) -> usize {
    dropped.iter().filter(|m| has_text(m)).count()
}

fn has_text(message: &ChatMessage) -> bool {
    !message.text().trim().is_empty() || message.tool_calls.as_ref().is_some_and(|c| !c.is_empty())
}

/// One message as a line of the transcript the model summarises, cut to `max_tokens`.
fn render(message: &ChatMessage, max_tokens: u64) -> String {
    let who = match message.role {
        Role::System | Role::Developer => "Instructions",
        Role::User => "User",
        Role::Assistant => "Assistant",
        Role::Tool => "Tool result",
    };
    let mut text = match &message.content {
        Some(MessageContent::Text(text)) => text.clone(),
        Some(MessageContent::Parts(_)) => message.text(),
        None => String::new(),
    };
    for call in message.tool_calls.as_deref().unwrap_or_default() {
        text.push_str(&format!(
            "\n(called {} with {})",
            call.function.name, call.function.arguments
        ));
    }
    let line = format!("{who}: {}", text.trim());
    let limit = usize::try_from(max_tokens).unwrap_or(usize::MAX).max(1);
    let cut = Chunker::new(limit, 0).chunk(&line);
    match cut.as_slice() {
        [whole] => whole.text.clone(),
        [first, ..] => format!("{} […]", first.text),
        [] => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digest_changes_with_any_message_and_not_otherwise() {
        let a = [ChatMessage::user("one"), ChatMessage::assistant("two")];
        let b = [ChatMessage::user("one"), ChatMessage::assistant("two!")];
        fn refs(m: &[ChatMessage]) -> Vec<&ChatMessage> {
            m.iter().collect()
        }
        assert_eq!(digest(&refs(&a)), digest(&refs(&a.clone())));
        assert_ne!(digest(&refs(&a)), digest(&refs(&b)));
        assert_ne!(digest(&refs(&a)), digest(&refs(&a[..1])));
    }

    #[test]
    fn the_summary_budget_grows_with_the_context_up_to_a_ceiling() {
        assert_eq!(summary_tokens(2_048), 256);
        assert_eq!(summary_tokens(4_096), 512);
        assert_eq!(summary_tokens(131_072), 512);
    }

    #[test]
    fn long_messages_are_cut_to_what_one_call_can_read() {
        let chunker = Chunker::default();
        let line = render(&ChatMessage::user("word ".repeat(1_000)), 50);
        assert!(line.starts_with("User: word"));
        assert!(line.ends_with("[…]"));
        assert!(chunker.encode(&line).len() <= 55);
        assert_eq!(
            render(&ChatMessage::assistant("short"), 50),
            "Assistant: short"
        );
    }

    #[test]
    fn messages_without_text_are_not_counted() {
        let dropped = [
            ChatMessage::user("a"),
            ChatMessage::assistant(""),
            ChatMessage::user("b"),
        ];
        assert_eq!(with_text(&dropped), 2);
    }
}
