//! Fitting a request into the model's context window. Tokens are counted with cl100k_base (the
//! tokenizer Colloquy has; a model's own may count more, hence the margin), and the request
//! loses its oldest turns first: the system prompt (with memories and passages) and the latest
//! turn (the user's message and this run's tool exchanges) are kept. If they alone do not fit,
//! this run's oldest tool results are shortened; if even that is not enough, the request is
//! refused before it reaches the model, naming both sizes.

use serde_json::{Value, json};

use crate::llm::wire::{ChatMessage, ChatRequest, MessageContent, Role};
use crate::retrieval::chunk::Chunker;

/// Tokens a message costs beyond its text (role and separators).
const TOKENS_PER_MESSAGE: u64 = 4;
/// Share of the context kept free because the model's tokenizer may count more than cl100k.
const MARGIN_PERCENT: u64 = 15;
/// Most tokens kept for the answer when the request sets no `max_tokens`.
const DEFAULT_ANSWER_RESERVE: u64 = 1_024;
/// Fewest tokens left for the answer (at most an eighth of the context) when a request fits
/// only by leaving less room than usual; the request's `max_tokens` is then set to the room.
const MIN_ANSWER_RESERVE: u64 = 256;
/// What a tool result shortened to fit says instead.
pub const REMOVED_RESULT: &str =
    "{\"note\":\"this result was removed to fit the model's context window\"}";

/// What fitting did to a request that did not fit as it was.
#[derive(Debug, Clone, PartialEq)]
pub struct Trimmed {
    /// Earlier messages left out, oldest first.
    pub dropped_messages: usize,
    /// The messages left out, for a summary to stand in for them.
    pub dropped: Vec<ChatMessage>,
    /// How many of the left-out messages a summary stands in for (set by the caller).
    pub summarized_messages: usize,
    /// This run's tool results shortened.
    pub shortened_results: usize,
    /// The estimated prompt size after fitting, in tokens.
    pub prompt_tokens: u64,
    pub context_length: u32,
    /// The room left for the answer when it is less than usual (the request's `max_tokens`
    /// is set to it).
    pub answer_tokens: Option<u32>,
}

impl Trimmed {
    /// The `x_chat.context_trimmed` event's payload.
    pub fn payload(&self) -> Value {
        json!({
            "dropped_messages": self.dropped_messages,
            "summarized_messages": self.summarized_messages,
            "shortened_results": self.shortened_results,
            "prompt_tokens": self.prompt_tokens,
            "context_length": self.context_length,
            "answer_tokens": self.answer_tokens,
        })
    }
}

/// The request cannot fit: what it needs at the least, and what the model has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooLarge {
    pub needed_tokens: u64,
    /// How many of them the definitions of the tools offered take, and how many tools.
    pub tool_tokens: u64,
    pub tools: usize,
    /// Tokens the prompt may use: the context less the answer's reserve and the margin.
    pub prompt_budget: u64,
    pub context_length: u32,
}

impl TooLarge {
    pub fn message(&self) -> String {
        let (what, remedy) = if self.tool_tokens * 4 >= self.needed_tokens && self.tools > 0 {
            (
                format!(
                    "the request needs about {} tokens ({} of them for the definitions of the \
                     {} tools offered)",
                    self.needed_tokens, self.tool_tokens, self.tools
                ),
                "turn tools off or offer fewer, shorten the message, or use a model with a \
                 larger context",
            )
        } else {
            (
                format!("the message needs about {} tokens", self.needed_tokens),
                "shorten the message or use a model with a larger context",
            )
        };
        format!(
            "{what}, but the model's context holds {} tokens ({} for the prompt once room is \
             kept for the answer); {remedy}",
            self.context_length, self.prompt_budget
        )
    }
}

/// Tokens the prompt may use in a context of `context_length`, when `max_tokens` (if any) is
/// kept for the answer.
pub fn prompt_budget(context_length: u32, max_tokens: Option<u32>) -> u64 {
    let context = u64::from(context_length);
    let reserve = max_tokens
        .map(u64::from)
        .unwrap_or_else(|| (context / 4).min(DEFAULT_ANSWER_RESERVE));
    let margin = context * MARGIN_PERCENT / 100;
    context.saturating_sub(reserve).saturating_sub(margin)
}

/// Fits `request` into `context_length`. `latest_turn` is the index (in `request.messages`)
/// where the latest turn begins: messages from there on are never dropped. When turns must be
/// dropped, enough are dropped to leave `reserve` tokens free (room for a summary of them).
/// Returns `None` when the request fits as it is.
pub fn fit(
    request: &mut ChatRequest,
    latest_turn: usize,
    context_length: u32,
    reserve: u64,
) -> Result<Option<Trimmed>, TooLarge> {
    let chunker = Chunker::default();
    let count = |message: &ChatMessage| message_tokens(&chunker, message);
    let budget = prompt_budget(context_length, request.max_tokens);
    let tools = request.tools.as_ref().map_or(0, |tools| {
        text_tokens(&chunker, &serde_json::to_string(tools).unwrap_or_default())
    });
    let mut sizes: Vec<u64> = request.messages.iter().map(count).collect();
    let total = |sizes: &[u64]| tools + sizes.iter().sum::<u64>();
    if total(&sizes) <= budget {
        return Ok(None);
    }
    let latest_turn = latest_turn.min(request.messages.len());
    // Leading system messages stay.
    let first = request
        .messages
        .iter()
        .take(latest_turn)
        .take_while(|m| matches!(m.role, Role::System | Role::Developer))
        .count();
    // Drop whole turns from the oldest: after the cut the history begins with a user message.
    let target = budget.saturating_sub(reserve);
    let mut cut = first;
    while total(&sizes) - sizes[first..cut].iter().sum::<u64>() > target && cut < latest_turn {
        cut += 1;
        while cut < latest_turn && request.messages[cut].role != Role::User {
            cut += 1;
        }
    }
    let dropped_messages = cut - first;
    let dropped: Vec<ChatMessage> = request.messages.drain(first..cut).collect();
    sizes.drain(first..cut);
    let latest_turn = latest_turn - dropped_messages;
    // Then this run's oldest tool results.
    let mut shortened_results = 0;
    for index in latest_turn..request.messages.len() {
        if total(&sizes) <= budget {
            break;
        }
        let message = &mut request.messages[index];
        if message.role != Role::Tool {
            continue;
        }
        message.content = Some(MessageContent::Text(REMOVED_RESULT.into()));
        sizes[index] = count(message);
        shortened_results += 1;
    }
    let prompt_tokens = total(&sizes);
    let mut answer_tokens = None;
    if prompt_tokens > budget {
        // Last, less room for the answer than usual, if the request left it to us.
        let context = u64::from(context_length);
        let floor = MIN_ANSWER_RESERVE.min(context / 8);
        let smallest = prompt_budget(context_length, Some(u32::try_from(floor).unwrap_or(0)));
        if request.max_tokens.is_some() || prompt_tokens > smallest {
            return Err(TooLarge {
                needed_tokens: prompt_tokens,
                tool_tokens: tools,
                tools: request.tools.as_ref().map_or(0, Vec::len),
                prompt_budget: if request.max_tokens.is_some() {
                    budget
                } else {
                    smallest
                },
                context_length,
            });
        }
        let room = smallest - prompt_tokens + floor;
        answer_tokens = Some(u32::try_from(room).unwrap_or(u32::MAX));
        request.max_tokens = answer_tokens;
    }
    Ok(Some(Trimmed {
        dropped_messages,
        dropped,
        summarized_messages: 0,
        shortened_results,
        prompt_tokens,
        context_length,
        answer_tokens,
    }))
}

/// The estimated tokens of `text`.
pub fn tokens(text: &str) -> u64 {
    text_tokens(&Chunker::default(), text)
}

fn text_tokens(chunker: &Chunker, text: &str) -> u64 {
    chunker.encode(text).len() as u64
}

fn message_tokens(chunker: &Chunker, message: &ChatMessage) -> u64 {
    let mut tokens = TOKENS_PER_MESSAGE;
    match &message.content {
        Some(MessageContent::Text(text)) => tokens += text_tokens(chunker, text),
        Some(MessageContent::Parts(parts)) => {
            for part in parts {
                if let Some(text) = part["text"].as_str() {
                    tokens += text_tokens(chunker, text);
                }
            }
        }
        None => {}
    }
    for call in message.tool_calls.as_deref().unwrap_or_default() {
        tokens += text_tokens(chunker, &call.function.name);
        tokens += text_tokens(chunker, &call.function.arguments);
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::wire::{FunctionCall, ToolCall};

    fn words(n: usize) -> String {
        (0..n).map(|i| format!("word{i} ")).collect()
    }

    fn roles(request: &ChatRequest) -> Vec<&'static str> {
        request
            .messages
            .iter()
            .map(|m| match m.role {
                Role::System | Role::Developer => "system",
                Role::User => "user",
                Role::Assistant => "assistant",
                Role::Tool => "tool",
            })
            .collect()
    }

    #[test]
    fn a_request_that_fits_is_left_alone() {
        let mut request = ChatRequest::new(
            "m",
            vec![ChatMessage::system("Be brief."), ChatMessage::user("hi")],
        );
        let before = request.clone();
        assert_eq!(fit(&mut request, 1, 4_096, 0), Ok(None));
        assert_eq!(request, before);
    }

    /// A system prompt, ten turns of about 300 tokens each, and the latest question.
    fn long_history() -> Vec<ChatMessage> {
        let mut messages = vec![ChatMessage::system("You are helpful.")];
        for turn in 0..10 {
            messages.push(ChatMessage::user(format!(
                "question {turn}: {}",
                words(150)
            )));
            messages.push(ChatMessage::assistant(format!(
                "answer {turn}: {}",
                words(150)
            )));
        }
        messages.push(ChatMessage::user("the latest question"));
        messages
    }

    #[test]
    fn the_oldest_turns_go_first_and_the_system_prompt_and_latest_turn_stay() {
        let messages = long_history();
        let latest = messages.len() - 1;
        let mut request = ChatRequest::new("m", messages);
        let trimmed = fit(&mut request, latest, 4_096, 0)
            .unwrap()
            .expect("trimmed");
        assert!(trimmed.prompt_tokens <= prompt_budget(4_096, None));
        assert_eq!(trimmed.dropped_messages % 2, 0, "whole turns are dropped");
        assert!(trimmed.dropped_messages > 0);
        let kept = roles(&request);
        assert_eq!(kept[0], "system");
        assert_eq!(kept[1], "user", "history resumes at a user message");
        assert_eq!(
            request.messages.last().unwrap().content,
            Some(MessageContent::Text("the latest question".into()))
        );
        // The newest history is what remains.
        let Some(MessageContent::Text(last_answer)) = &request.messages[kept.len() - 2].content
        else {
            panic!("an answer")
        };
        assert!(last_answer.starts_with("answer 9:"));
    }

    #[test]
    fn a_reserve_leaves_room_for_a_summary_and_the_dropped_messages_are_handed_back() {
        let messages = long_history();
        let latest = messages.len() - 1;
        let mut plain = ChatRequest::new("m", messages.clone());
        let without = fit(&mut plain, latest, 4_096, 0).unwrap().unwrap();
        let mut reserved = ChatRequest::new("m", messages.clone());
        let with = fit(&mut reserved, latest, 4_096, 600).unwrap().unwrap();
        assert!(with.dropped_messages > without.dropped_messages);
        assert!(with.prompt_tokens + 600 <= prompt_budget(4_096, None));
        assert_eq!(with.dropped.len(), with.dropped_messages);
        assert_eq!(with.dropped[..], messages[1..1 + with.dropped_messages]);
        assert_eq!(with.summarized_messages, 0);
        // A request that fits keeps everything, whatever the reserve.
        let mut small = ChatRequest::new("m", vec![ChatMessage::user("hi")]);
        assert_eq!(fit(&mut small, 0, 4_096, 3_000), Ok(None));
    }

    #[test]
    fn this_runs_oldest_tool_results_are_shortened_when_history_is_not_enough() {
        let call = ToolCall {
            id: "c1".into(),
            kind: "function".into(),
            function: FunctionCall {
                name: "fetch_url".into(),
                arguments: "{}".into(),
            },
        };
        let messages = vec![
            ChatMessage::user("read these"),
            ChatMessage::assistant_with_tools(Some(String::new()), vec![call.clone()]),
            ChatMessage::tool_result("c1", words(2_000)),
            ChatMessage::assistant_with_tools(Some(String::new()), vec![call]),
            ChatMessage::tool_result("c1", words(200)),
        ];
        let mut request = ChatRequest::new("m", messages);
        let trimmed = fit(&mut request, 0, 4_096, 0).unwrap().expect("trimmed");
        assert_eq!(trimmed.shortened_results, 1);
        assert_eq!(
            request.messages[2].content,
            Some(MessageContent::Text(REMOVED_RESULT.into()))
        );
        assert_ne!(
            request.messages[4].content,
            Some(MessageContent::Text(REMOVED_RESULT.into())),
            "the newest result is kept"
        );
    }

    #[test]
    fn a_latest_message_larger_than_the_context_is_refused_naming_both_sizes() {
        let mut request = ChatRequest::new(
            "m",
            vec![
                ChatMessage::user("old"),
                ChatMessage::assistant("older answer"),
                ChatMessage::user(words(6_000)),
            ],
        );
        let err = fit(&mut request, 2, 4_096, 0).unwrap_err();
        assert_eq!(err.context_length, 4_096);
        assert!(err.needed_tokens > 4_096);
        let message = err.message();
        assert!(
            message.contains(&err.needed_tokens.to_string()),
            "{message}"
        );
        assert!(message.contains("4096"), "{message}");
    }

    #[test]
    fn a_latest_turn_that_fits_only_with_less_room_for_the_answer_gets_a_smaller_max_tokens() {
        // 4,096 tokens: the prompt may have 2,458 with the usual answer room, 3,226 at least.
        let mut request = ChatRequest::new(
            "m",
            vec![
                ChatMessage::system("Be brief."),
                ChatMessage::user(words(1_400)),
            ],
        );
        let trimmed = fit(&mut request, 1, 4_096, 0).unwrap().expect("fitted");
        let room = trimmed.answer_tokens.expect("less room than usual");
        assert_eq!(request.max_tokens, Some(room));
        assert!((256..1_024).contains(&room), "{room}");
        assert_eq!(
            u64::from(room) + trimmed.prompt_tokens + 614,
            4_096,
            "the answer gets what the prompt and the margin leave"
        );
        assert_eq!(trimmed.payload()["answer_tokens"], room);

        // A client's own max_tokens is never lowered: that request is refused instead.
        let mut strict = ChatRequest::new("m", vec![ChatMessage::user(words(1_400))]);
        strict.max_tokens = Some(1_000);
        assert!(fit(&mut strict, 0, 4_096, 0).is_err());
        assert_eq!(strict.max_tokens, Some(1_000));
    }

    #[test]
    fn a_refusal_caused_by_tool_definitions_says_so() {
        let tool = |n: usize| {
            crate::llm::wire::ToolDefinition::function(
                &format!("tool_{n}"),
                &words(300),
                json!({"type": "object", "properties": {}}),
            )
        };
        let mut request = ChatRequest::new("m", vec![ChatMessage::user("hi")])
            .with_tools((0..8).map(tool).collect());
        let err = fit(&mut request, 0, 2_048, 0).unwrap_err();
        assert_eq!(err.tools, 8);
        assert!(err.tool_tokens * 2 > err.needed_tokens);
        let message = err.message();
        assert!(message.contains("definitions of the 8 tools"), "{message}");
        assert!(message.contains("turn tools off"), "{message}");
    }

    #[test]
    fn the_answer_reserve_follows_max_tokens() {
        assert_eq!(prompt_budget(4_096, None), 4_096 - 1_024 - 614);
        assert_eq!(prompt_budget(4_096, Some(100)), 4_096 - 100 - 614);
        assert_eq!(prompt_budget(1_000, None), 1_000 - 250 - 150);
        assert_eq!(prompt_budget(100, Some(500)), 0);
    }
}
