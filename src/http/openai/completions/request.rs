//! A Chat Completions request as it arrives: its fields, what is refused or checked before
//! anything runs (`validate`), and what it asks of the run (`options`, `dialect`, client tools).

use entities::ids::ChatId;
use serde::Deserialize;
use serde_json::Value;

use crate::error::{AppError, AppResult};
use crate::http::sse::Dialect;
use crate::llm::wire::{ChatMessage, ChatRequest, MessageContent, Role, ToolDefinition};
use crate::supervisor::launch::{RunOptions, WebSearchOptions};

/// Most messages one request may carry.
const MAX_MESSAGES: usize = 2_000;

/// Parameters Colloquy cannot honour, refused by name rather than dropped.
const REFUSED: [(&str, &str); 4] = [
    (
        "logprobs",
        "logprobs are not supported: the answer is assembled from a run of several model calls",
    ),
    (
        "top_logprobs",
        "top_logprobs is not supported: the answer is assembled from a run of several model calls",
    ),
    (
        "functions",
        "functions (the legacy form of tools) is not supported; use tools",
    ),
    (
        "function_call",
        "function_call (the legacy form of tool_choice) is not supported; use tool_choice",
    ),
];

/// Most client-side tools one request may offer (OpenAI's limit).
const MAX_CLIENT_TOOLS: usize = 128;

/// Fields this handler reads itself, which the upstream must not see.
const OWN_FIELDS: [&str; 1] = ["n"];

#[derive(Deserialize)]
pub(super) struct CompletionRequest {
    pub(super) model: Option<String>,
    #[serde(default)]
    pub(super) messages: Vec<ChatMessage>,
    #[serde(default)]
    pub(super) stream: bool,
    /// `{include_usage}`: usage on the stream's `x_chat.metadata` chunk, OpenAI's final
    /// usage chunk.
    pub(super) stream_options: Option<StreamOptions>,
    pub(super) temperature: Option<f32>,
    pub(super) top_p: Option<f32>,
    pub(super) max_tokens: Option<u32>,
    pub(super) max_completion_tokens: Option<u32>,
    pub(super) stop: Option<Value>,
    pub(super) tools: Option<Vec<Value>>,
    /// For the server-side tools: `auto`, `none`, `required` or one named function; it
    /// applies to the run's first model call (later calls are `auto`, so the loop can end).
    pub(super) tool_choice: Option<Value>,
    pub(super) web_search_options: Option<WebSearchOptions>,
    pub(super) x_chat_id: Option<ChatId>,
    /// One of the caller's agents (docs/spec.md#agents): its settings for this request, and a new
    /// chat made for it belongs to it.
    pub(super) x_agent_id: Option<entities::ids::AgentId>,
    /// `false`: run without a chat, storing nothing. Otherwise (and by default) a request
    /// without `x_chat_id` runs in a fresh chat of its own (see `in_new_chat`).
    pub(super) store: Option<bool>,
    /// Answers a pending ask_user question and streams the paused run's continuation.
    pub(super) x_ask_user_reply: Option<AskUserReply>,
    /// Everything else: OpenAI parameters passed to the upstream (`response_format`, `seed`,
    /// penalties, `logit_bias`, `user`, `parallel_tool_calls`, ...), checked by `validate`.
    #[serde(flatten)]
    pub(super) extra: serde_json::Map<String, Value>,
}

#[derive(Deserialize)]
pub(super) struct StreamOptions {
    #[serde(default)]
    include_usage: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AskUserReply {
    pub(super) correlation_id: entities::ids::AskCorrelationId,
    pub(super) answer: Value,
}

impl CompletionRequest {
    pub(super) fn validate(&self) -> AppResult<()> {
        if self.messages.is_empty() {
            return Err(AppError::invalid("messages must not be empty"));
        }
        if self.messages.len() > MAX_MESSAGES {
            return Err(AppError::invalid(format!(
                "at most {MAX_MESSAGES} messages per request"
            )));
        }
        self.client_tools()?;
        if let Some(choice) = &self.tool_choice {
            check_tool_choice(choice)?;
        }
        for (field, reason) in REFUSED {
            if self
                .extra
                .get(field)
                .is_some_and(|v| !v.is_null() && *v != false)
            {
                return Err(AppError::invalid(reason));
            }
        }
        if let Some(n) = self.extra.get("n").filter(|n| !n.is_null())
            && n.as_u64() != Some(1)
        {
            return Err(AppError::invalid(format!(
                "n must be 1 (not {n}): Colloquy runs one answer per request; send several requests"
            )));
        }
        let last = &self.messages[self.messages.len() - 1];
        let has_content = !last.text().trim().is_empty()
            || matches!(&last.content, Some(MessageContent::Parts(parts)) if !parts.is_empty());
        let stored = self.x_chat_id.is_some() || self.store == Some(true);
        let allowed = match last.role {
            Role::User => has_content && (!stored || has_text_or_image(last)),
            // The result of a client tool: the conversation goes on from it (in a stored chat,
            // the run that called the tool goes on).
            Role::Tool => last.tool_call_id.is_some() && (!stored || self.x_chat_id.is_some()),
            // A prefill: the model continues the assistant's words, after a user's question.
            Role::Assistant => {
                has_content && !stored && self.messages.iter().any(|m| m.role == Role::User)
            }
            _ => false,
        };
        if !allowed {
            return Err(AppError::invalid(if stored {
                "the last message must be a user message with text or images (a stored chat \
                 continues from it), or with x_chat_id the results of the chat's waiting client \
                 tool calls"
            } else {
                "the last message must be a user message with content, or an assistant message \
                 to continue (a prefill) after a user message"
            }));
        }
        Ok(())
    }

    /// The client's `tools`, checked: functions with a name of at most 64 letters, digits,
    /// `_` or `-`, each named once, at most `MAX_CLIENT_TOOLS`.
    pub(super) fn client_tools(&self) -> AppResult<Vec<ToolDefinition>> {
        let raw = self.tools.clone().unwrap_or_default();
        if raw.len() > MAX_CLIENT_TOOLS {
            return Err(AppError::invalid(format!(
                "at most {MAX_CLIENT_TOOLS} client-side tools per request, not {}",
                raw.len()
            )));
        }
        let mut tools: Vec<ToolDefinition> = Vec::with_capacity(raw.len());
        for (index, value) in raw.into_iter().enumerate() {
            let tool: ToolDefinition = serde_json::from_value(value).map_err(|err| {
                AppError::invalid(format!(
                    "client-side tools are {{\"type\": \"function\", \"function\": {{\"name\", \
                     \"description\", \"parameters\"}}}}; tools[{index}] is not: {err}"
                ))
            })?;
            let name = &tool.function.name;
            let valid = tool.kind == "function"
                && (1..=64).contains(&name.len())
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !valid {
                return Err(AppError::invalid(format!(
                    "client-side tools[{index}] must be of type function with a name of 1-64 \
                     letters, digits, _ or -"
                )));
            }
            if tools.iter().any(|t| t.function.name == *name) {
                return Err(AppError::invalid(format!(
                    "client-side tools name {name} twice"
                )));
            }
            tools.push(tool);
        }
        Ok(tools)
    }

    /// Whether a request without `x_chat_id` runs in a fresh chat of its own (so the chat
    /// tools — artifacts, memory, ask_user — work, and the client may continue there):
    /// unless `store: false`, and unless the conversation is one a stored chat cannot hold
    /// (client-side tools, a tool result or a prefill last).
    pub(super) fn in_new_chat(&self) -> bool {
        match self.store {
            Some(store) => store,
            None => {
                let last = &self.messages[self.messages.len() - 1];
                self.tools.as_ref().is_none_or(Vec::is_empty)
                    && last.role == Role::User
                    && has_text_or_image(last)
            }
        }
    }

    pub(super) fn dialect(&self) -> Dialect {
        Dialect::OpenAi {
            include_usage: self
                .stream_options
                .as_ref()
                .is_some_and(|options| options.include_usage),
        }
    }

    pub(super) fn options(&self, default_model: &str) -> RunOptions {
        let mut template = ChatRequest::new(
            self.model
                .clone()
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| default_model.to_string()),
            Vec::new(),
        );
        template.temperature = self.temperature;
        template.top_p = self.top_p;
        template.max_tokens = self.max_completion_tokens.or(self.max_tokens);
        template.stop = self.stop.clone();
        template.tool_choice = self.tool_choice.clone();
        template.extra = self
            .extra
            .iter()
            .filter(|(key, _)| !key.starts_with("x_") && !OWN_FIELDS.contains(&key.as_str()))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        RunOptions {
            tools_enabled: self.web_search_options.is_some(),
            web_search: self.web_search_options.clone(),
            template: Some(template),
            // Checked by `validate`.
            client_tools: self.client_tools().unwrap_or_default(),
            ..RunOptions::default()
        }
    }
}

/// Whether a message has something a stored chat can keep: text, or an image.
fn has_text_or_image(message: &ChatMessage) -> bool {
    let image = |part: &Value| part["type"] == "image_url";
    !message.text().trim().is_empty()
        || matches!(&message.content, Some(MessageContent::Parts(parts)) if parts.iter().any(image))
}

/// `tool_choice` as OpenAI defines it: a mode, or `{"type": "function", "function": {"name"}}`.
fn check_tool_choice(choice: &Value) -> AppResult<()> {
    let named = choice["type"] == "function" && choice["function"]["name"].is_string();
    match choice.as_str() {
        Some("auto" | "none" | "required") => Ok(()),
        None if named => Ok(()),
        _ => Err(AppError::invalid(
            "tool_choice must be \"auto\", \"none\", \"required\" or \
             {\"type\": \"function\", \"function\": {\"name\": …}}",
        )),
    }
}
