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
pub use crate::chat::attachments::IMAGE_TOKENS;
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
    let latest_turn = latest_turn.min(request.messages.len());
    // Leading system messages stay.
    let first = request
        .messages
        .iter()
        .take(latest_turn)
        .take_while(|m| matches!(m.role, Role::System | Role::Developer))
        .count();
    // What always stays is counted; the history between is counted from the newest back, and
    // only as far as the budget reaches: a long chat's oldest turns, left out anyway, are never
    // tokenized (a 1,000-turn chat costs what the window holds, not what the chat holds).
    let mut sizes: Vec<u64> = vec![0; request.messages.len()];
    for index in (0..first).chain(latest_turn..request.messages.len()) {
        sizes[index] = count(&request.messages[index]);
    }
    let kept = tools + sizes.iter().sum::<u64>();
    // Drop whole turns from the oldest: after the cut the history begins with a user message.
    // The cut is the oldest user message from which the rest fits `target` (else the latest
    // turn); counting stops once even the budget is passed.
    let target = budget.saturating_sub(reserve);
    let mut history = 0;
    let mut cut = latest_turn;
    let mut counted = latest_turn;
    while counted > first {
        let index = counted - 1;
        sizes[index] = count(&request.messages[index]);
        history += sizes[index];
        counted = index;
        if kept + history > budget {
            break;
        }
        if kept + history <= target && request.messages[index].role == Role::User {
            cut = index;
        }
    }
    let total = |sizes: &[u64]| tools + sizes.iter().sum::<u64>();
    if counted == first && kept + history <= budget {
        return Ok(None);
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
                tools: request.tools.as_ref().map_or(0, |tools| tools.len()),
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

/// The estimated tokens of a whole request: its messages and tools.
pub fn request_tokens(request: &ChatRequest) -> u64 {
    let chunker = Chunker::default();
    let tools = request.tools.as_ref().map_or(0, |tools| {
        text_tokens(&chunker, &serde_json::to_string(tools).unwrap_or_default())
    });
    tools
        + request
            .messages
            .iter()
            .map(|message| message_tokens(&chunker, message))
            .sum::<u64>()
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
                } else if super::images::is_image(part) {
                    tokens += IMAGE_TOKENS;
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
mod tests;
