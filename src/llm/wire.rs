//! OpenAI Chat Completions wire types, as sent to and received from the upstream. Fields the
//! servers disagree on are optional and defaulted, so a missing `usage` or `created` from one
//! server never fails a request; unknown fields are ignored.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    /// OpenAI's newer name for system messages; sent on as-is.
    Developer,
    User,
    Assistant,
    Tool,
}

/// A message's content: plain text, or a list of typed parts (text, images) kept as sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MessageContent {
    Text(String),
    Parts(Vec<Value>),
}

impl MessageContent {
    /// The text of the content: the string, or the `text` parts joined.
    pub fn text(&self) -> String {
        match self {
            Self::Text(text) => text.clone(),
            Self::Parts(parts) => parts
                .iter()
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

impl From<String> for MessageContent {
    fn from(text: String) -> Self {
        Self::Text(text)
    }
}

impl From<&str> for MessageContent {
    fn from(text: &str) -> Self {
        Self::Text(text.to_string())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: Role,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<MessageContent>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl ChatMessage {
    fn plain(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: Some(MessageContent::Text(content.into())),
            tool_calls: None,
            tool_call_id: None,
            name: None,
        }
    }

    pub fn system(content: impl Into<String>) -> Self {
        Self::plain(Role::System, content)
    }

    pub fn user(content: impl Into<String>) -> Self {
        Self::plain(Role::User, content)
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        Self::plain(Role::Assistant, content)
    }

    /// An assistant turn that called tools. Its `content` is always sent, `""` when the model
    /// said nothing: llama-cpp-python's chat templates fail on a missing `content` (an empty
    /// 200 answer) and refuse `null` (500); every server accepts `""`.
    pub fn assistant_with_tools(content: Option<String>, tool_calls: Vec<ToolCall>) -> Self {
        Self {
            role: Role::Assistant,
            content: Some(MessageContent::Text(content.unwrap_or_default())),
            tool_calls: (!tool_calls.is_empty()).then_some(tool_calls),
            tool_call_id: None,
            name: None,
        }
    }

    /// The result of one tool call, fed back to the model.
    pub fn tool_result(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            role: Role::Tool,
            content: Some(MessageContent::Text(content.into())),
            tool_calls: None,
            tool_call_id: Some(tool_call_id.into()),
            name: None,
        }
    }

    pub fn text(&self) -> String {
        self.content
            .as_ref()
            .map(MessageContent::text)
            .unwrap_or_default()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    pub function: FunctionCall,
}

fn function_type() -> String {
    "function".into()
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionCall {
    pub name: String,
    /// JSON text, exactly as the model produced it (it may not parse).
    #[serde(default)]
    pub arguments: String,
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    #[serde(rename = "type")]
    pub kind: String,
    pub function: FunctionDefinition,
}

impl ToolDefinition {
    pub fn function(name: &str, description: &str, parameters: Value) -> Self {
        Self {
            kind: "function".into(),
            function: FunctionDefinition {
                name: name.into(),
                description: Some(description.into()),
                parameters: Some(parameters),
                strict: None,
            },
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionDefinition {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
    /// OpenAI's structured-outputs flag on a client's tool, passed on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamOptions {
    pub include_usage: bool,
}

/// A request to `POST {base}/chat/completions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    pub model: String,
    pub messages: Vec<ChatMessage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<ToolDefinition>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    #[serde(default)]
    pub stream: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Value>,
    /// Other parameters a client sent (`response_format`, `seed`, penalties, `logit_bias`,
    /// `user`, `parallel_tool_calls`, ...), passed to the upstream as they are.
    #[serde(flatten, default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra: serde_json::Map<String, Value>,
}

impl ChatRequest {
    pub fn new(model: impl Into<String>, messages: Vec<ChatMessage>) -> Self {
        Self {
            model: model.into(),
            messages,
            tools: None,
            tool_choice: None,
            stream: false,
            stream_options: None,
            temperature: None,
            top_p: None,
            max_tokens: None,
            stop: None,
            extra: serde_json::Map::new(),
        }
    }

    pub fn with_tools(mut self, tools: Vec<ToolDefinition>) -> Self {
        self.tools = (!tools.is_empty()).then_some(tools);
        self
    }
}

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
}

impl Usage {
    pub fn add(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.total_tokens += other.total_tokens;
        self.estimated |= other.estimated;
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
    pub message: ChatMessage,
    #[serde(default)]
    pub finish_reason: Option<FinishReason>,
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

/// `GET {base}/models`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelList {
    #[serde(default = "list_object")]
    pub object: String,
    pub data: Vec<Model>,
}

fn list_object() -> String {
    "list".into()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Model {
    pub id: String,
    #[serde(default = "model_object")]
    pub object: String,
    #[serde(default)]
    pub created: i64,
    #[serde(default)]
    pub owned_by: String,
}

fn model_object() -> String {
    "model".into()
}

#[derive(Debug, Clone, Serialize)]
pub struct EmbeddingRequest<'a> {
    pub model: &'a str,
    pub input: &'a [String],
}

/// One input's embedding: a vector, or (llama-server without `--pooling`) one vector per token.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "Value")]
pub enum EmbeddingVectors {
    Pooled(Vec<f32>),
    PerToken(Vec<Vec<f32>>),
}

impl TryFrom<Value> for EmbeddingVectors {
    type Error = String;

    /// Says what the server sent instead of a vector, so the fix is plain.
    fn try_from(value: Value) -> Result<Self, Self::Error> {
        let numbers = |items: &[Value]| -> Option<Vec<f32>> {
            items.iter().map(|v| v.as_f64().map(|n| n as f32)).collect()
        };
        let items = match &value {
            Value::Array(items) => items,
            Value::Null => return Err("an embedding is null, not a list of numbers".into()),
            Value::Bool(_) => return Err("an embedding is a boolean, not a list of numbers".into()),
            Value::Number(_) => {
                return Err("an embedding is a number, not a list of numbers".into());
            }
            Value::String(text) => {
                let shown: String = text.chars().take(40).collect();
                return Err(format!(
                    "an embedding is the string {shown:?}, not a list of numbers (base64 \
                     encoding is not supported)"
                ));
            }
            Value::Object(_) => {
                return Err("an embedding is an object, not a list of numbers".into());
            }
        };
        if let Some(vector) = numbers(items) {
            return Ok(Self::Pooled(vector));
        }
        let tokens: Option<Vec<Vec<f32>>> = items
            .iter()
            .map(|token| token.as_array().and_then(|t| numbers(t)))
            .collect();
        tokens.map(Self::PerToken).ok_or_else(|| {
            "an embedding is neither a list of numbers nor a list of per-token lists; \
             start llama-server with --pooling mean"
                .into()
        })
    }
}

impl EmbeddingVectors {
    /// The input's vector: per-token vectors are mean-pooled, as `--pooling mean` would.
    pub fn pooled(self) -> Result<Vec<f32>, super::LlmError> {
        let tokens = match self {
            Self::Pooled(vector) => return Ok(vector),
            Self::PerToken(tokens) => tokens,
        };
        let width = tokens.first().map_or(0, Vec::len);
        if width == 0 || tokens.iter().any(|t| t.len() != width) {
            return Err(super::LlmError::InvalidResponse(
                "the embedding server returned per-token vectors of uneven or no length; \
                 start llama-server with --pooling mean"
                    .into(),
            ));
        }
        let mut mean = vec![0.0f32; width];
        for token in &tokens {
            for (sum, value) in mean.iter_mut().zip(token) {
                *sum += value;
            }
        }
        let count = tokens.len() as f32;
        mean.iter_mut().for_each(|sum| *sum /= count);
        Ok(mean)
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct EmbeddingResponse {
    pub data: Vec<Embedding>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Embedding {
    #[serde(default)]
    pub index: usize,
    pub embedding: EmbeddingVectors,
}

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
}
