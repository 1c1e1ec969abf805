//! What the upstream answers: token usage (with the reasoning tokens where the server counts
//! them), finish reasons (unknown ones accepted), a whole completion, and the chunks of a
//! streamed one with their content, reasoning and tool-call fragments.

use serde::{Deserialize, Serialize};

use super::{ChatMessage, Role};
use crate::llm::reasoning::{Split, ThinkSplitter};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
    #[serde(default)]
    pub total_tokens: u64,
    /// Counted by Colloquy (cl100k_base) because the upstream reported none, as servers that
    /// ignore `stream_options.include_usage` do; sent only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
    /// OpenAI's breakdown of `completion_tokens`: how many the model spent reasoning, when the
    /// upstream says (sent on only then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens_details: Option<CompletionTokensDetails>,
}

/// The part of `completion_tokens` Colloquy reads: the reasoning tokens. Other fields servers
/// send here are ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CompletionTokensDetails {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
}

impl Usage {
    pub fn add(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.total_tokens += other.total_tokens;
        self.estimated |= other.estimated;
        let reasoning = match (self.reasoning_tokens(), other.reasoning_tokens()) {
            (None, None) => None,
            (mine, theirs) => Some(mine.unwrap_or(0) + theirs.unwrap_or(0)),
        };
        self.completion_tokens_details = reasoning.map(|tokens| CompletionTokensDetails {
            reasoning_tokens: Some(tokens),
        });
    }

    /// The reasoning tokens the upstream reported, if it did.
    pub fn reasoning_tokens(&self) -> Option<u64> {
        self.completion_tokens_details
            .and_then(|details| details.reasoning_tokens)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    Length,
    ToolCalls,
    ContentFilter,
    /// The legacy name some servers still send for tool calls.
    FunctionCall,
    #[serde(other)]
    Other,
}

/// The response to a non-streaming request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatCompletion {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub model: String,
    #[serde(default)]
    pub created: i64,
    pub choices: Vec<Choice>,
    #[serde(default)]
    pub usage: Option<Usage>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    #[serde(default)]
    pub index: u32,
    pub message: AnswerMessage,
    #[serde(default)]
    pub finish_reason: Option<FinishReason>,
}

/// A non-streamed answer's message, and its reasoning where the server puts it beside the
/// content. The reasoning is not part of `ChatMessage`, so it can never be sent back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerMessage {
    #[serde(flatten)]
    pub message: ChatMessage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
}

/// The message's own fields (`tool_calls`, `content`, ...) read through.
impl std::ops::Deref for AnswerMessage {
    type Target = ChatMessage;

    fn deref(&self) -> &ChatMessage {
        &self.message
    }
}

impl AnswerMessage {
    /// The reasoning (a field, or a `<think>` block opening the content) and the answer's text.
    pub fn split(&self) -> Split {
        let mut split = ThinkSplitter::split(&self.message.text());
        let field = [&self.reasoning_content, &self.reasoning]
            .into_iter()
            .flatten()
            .find(|text| !text.is_empty());
        if let Some(field) = field {
            split.reasoning.insert_str(0, field);
        }
        split
    }
}

/// One `data:` object of a streaming response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatCompletionChunk {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub model: String,
    #[serde(default)]
    pub created: i64,
    #[serde(default)]
    pub choices: Vec<ChunkChoice>,
    #[serde(default)]
    pub usage: Option<Usage>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkChoice {
    #[serde(default)]
    pub index: u32,
    #[serde(default)]
    pub delta: Delta,
    #[serde(default)]
    pub finish_reason: Option<FinishReason>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Delta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Reasoning, as llama.cpp's server, vLLM and DeepSeek name it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// Reasoning, as Ollama's OpenAI endpoint and newer vLLM name it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCallDelta>>,
}

/// A fragment of a tool call: the id and name come in the first fragment of an index, the
/// arguments arrive in pieces.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ToolCallDelta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<FunctionCallDelta>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FunctionCallDelta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<String>,
}
