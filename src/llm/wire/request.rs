//! A request to `POST {base}/chat/completions`: the model, messages, tools and sampling
//! parameters, with anything else a client sent passed on in `extra`.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ChatMessage, ToolDefinition};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamOptions {
    pub include_usage: bool,
}

/// A request to `POST {base}/chat/completions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    pub model: String,
    pub messages: Vec<ChatMessage>,
    /// Shared: a run offers the same tools on every call, and a call's request is cloned to
    /// be sent (and sent again); the definitions are not.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "shared::serialize",
        deserialize_with = "shared::deserialize"
    )]
    pub tools: Option<Arc<[ToolDefinition]>>,
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

    pub fn with_tools(mut self, tools: impl Into<Arc<[ToolDefinition]>>) -> Self {
        let tools = tools.into();
        self.tools = (!tools.is_empty()).then_some(tools);
        self
    }
}

/// `tools` as the plain list it is on the wire.
mod shared {
    use std::sync::Arc;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::ToolDefinition;

    pub(super) fn serialize<S: Serializer>(
        tools: &Option<Arc<[ToolDefinition]>>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        tools.as_deref().serialize(serializer)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Arc<[ToolDefinition]>>, D::Error> {
        Ok(Option::<Vec<ToolDefinition>>::deserialize(deserializer)?.map(Into::into))
    }
}
