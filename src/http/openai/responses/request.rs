//! A Responses API request as it arrives: its input items (read into chat messages), its tools
//! (server-side ones, `file_search` over vector stores, and the client's functions), and what
//! it asks of the run.

use entities::ids::{ChatId, ResponseId};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::error::{AppError, AppResult};
use crate::http::openai::shared::check_metadata;
use crate::llm::wire::{ChatRequest, ToolDefinition};
use crate::supervisor::launch::{RunOptions, WebSearchOptions};
use crate::tools::file_search::FileSearchLimits;
use crate::tools::mcp::remote::{MAX_REMOTE_SERVERS, RemoteServer};

/// Most input items one request may carry.
const MAX_INPUT_ITEMS: usize = 2_000;
/// Most client functions one request may offer (OpenAI's limit).
const MAX_FUNCTIONS: usize = 128;
/// Most vector stores one file_search tool may name.
const MAX_VECTOR_STORES: usize = 16;

/// The `include` values OpenAI defines. `file_search_call.results` puts the passages' text in
/// `file_search_call` items (docs/spec.md#request-shapes); the others ask for things a Colloquy run
/// does not make (logprobs, images, reasoning), and are accepted as asking for nothing more.
pub const INCLUDE_VALUES: [&str; 8] = [
    "file_search_call.results",
    "web_search_call.results",
    "web_search_call.action.sources",
    "message.input_image.image_url",
    "computer_call_output.output.image_url",
    "code_interpreter_call.outputs",
    "reasoning.encrypted_content",
    "message.output_text.logprobs",
];

/// The client-executed shell tool: offered to the model as a function of this name, its
/// calls returned as `local_shell_call` items (Colloquy never runs them).
pub const LOCAL_SHELL: &str = "local_shell";

/// What `local_shell` asks of the model, as a function's parameters (OpenAI's `exec` action).
fn local_shell_definition() -> ToolDefinition {
    ToolDefinition::function(
        LOCAL_SHELL,
        "Run a command in the user's local shell; the user's machine runs it and returns its \
         output.",
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "array", "items": {"type": "string"},
                            "description": "The program and its arguments."},
                "env": {"type": "object", "additionalProperties": {"type": "string"},
                        "description": "Environment variables to set."},
                "timeout_ms": {"type": "integer", "minimum": 1},
                "working_directory": {"type": "string"}
            },
            "required": ["command"]
        }),
    )
}

/// What `include` asks the output items to carry.
#[derive(Debug, Clone, Copy, Default)]
pub struct Includes {
    /// `file_search_call.results`: the passages' text.
    pub file_search_results: bool,
    /// `web_search_call.action.sources`: the pages a search found.
    pub web_search_sources: bool,
    /// `code_interpreter_call.outputs`: a call's logs and figures.
    pub code_interpreter_outputs: bool,
}

/// A conversation, as `conversation` names it: its id, or `{"id": …}`.
#[derive(Deserialize)]
#[serde(untagged)]
pub enum ConversationRef {
    Id(String),
    Object { id: String },
}

impl ConversationRef {
    pub fn id(&self) -> &str {
        match self {
            Self::Id(id) | Self::Object { id } => id,
        }
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
pub enum Input {
    Text(String),
    Items(Vec<Value>),
}

#[derive(Deserialize)]
pub struct ResponsesRequest {
    pub model: Option<String>,
    pub input: Option<Input>,
    pub instructions: Option<String>,
    #[serde(default)]
    pub stream: bool,
    pub temperature: Option<f32>,
    pub top_p: Option<f32>,
    pub max_output_tokens: Option<u32>,
    #[serde(default)]
    pub tools: Vec<Value>,
    pub tool_choice: Option<Value>,
    pub parallel_tool_calls: Option<bool>,
    #[serde(default)]
    pub include: Vec<String>,
    /// `{"format": {"type": "text" | "json_object" | "json_schema", ...}}`.
    pub text: Option<Value>,
    pub metadata: Option<Map<String, Value>>,
    /// Stored unless `false` (OpenAI's default is to store).
    pub store: Option<bool>,
    pub previous_response_id: Option<ResponseId>,
    pub conversation: Option<ConversationRef>,
    /// Run as a turn of this stored chat (its history is the context).
    pub x_chat_id: Option<ChatId>,
    /// Stream Colloquy's own progress events (`x_research.*`, `x_artifact.*`, …,
    /// `x_chat.metadata`) between OpenAI's. Off by default: a strict SDK's stream helper
    /// knows only OpenAI's event types.
    #[serde(default)]
    pub x_events: bool,
    /// Everything else, refused by name when it is something Colloquy cannot honour.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ResponsesRequest {
    /// Refuses what cannot be honoured, before anything runs or is stored.
    pub fn validate(&self) -> AppResult<()> {
        if let Some(unknown) = self
            .include
            .iter()
            .find(|value| !INCLUDE_VALUES.contains(&value.as_str()))
        {
            return Err(AppError::invalid(format!(
                "include value {unknown:?} is not one OpenAI defines ({})",
                INCLUDE_VALUES.join(", ")
            )));
        }
        if self.previous_response_id.is_some() && self.conversation.is_some() {
            return Err(AppError::invalid(
                "previous_response_id and conversation cannot both be given",
            ));
        }
        if self.store == Some(false) && self.conversation.is_some() {
            return Err(AppError::invalid(
                "store: false cannot be used with conversation: a conversation keeps its items",
            ));
        }
        if self.extra.get("background").is_some_and(|v| *v == true) {
            return Err(AppError::invalid(
                "background responses are not supported: stream, or wait for the answer",
            ));
        }
        if let Some(metadata) = &self.metadata {
            check_metadata(metadata)?;
        }
        if let Some(format) = self.text.as_ref().map(|t| &t["format"])
            && !format.is_null()
            && !matches!(
                format["type"].as_str(),
                Some("text" | "json_object" | "json_schema")
            )
        {
            return Err(AppError::invalid(
                "text.format.type must be text, json_object or json_schema",
            ));
        }
        self.functions()?;
        Ok(())
    }

    /// The input as a list of items (a string is one user message).
    pub fn input_items(&self) -> AppResult<Vec<Value>> {
        let items = match &self.input {
            None => Vec::new(),
            Some(Input::Text(text)) => {
                vec![json!({"type": "message", "role": "user", "content": text})]
            }
            Some(Input::Items(items)) => items.clone(),
        };
        if items.len() > MAX_INPUT_ITEMS {
            return Err(AppError::invalid(format!(
                "at most {MAX_INPUT_ITEMS} input items"
            )));
        }
        Ok(items)
    }

    /// The client's functions, as chat tool definitions: at most `MAX_FUNCTIONS`, each named
    /// once with 1-64 letters, digits, `_` or `-`; `local_shell` is one of them.
    pub fn functions(&self) -> AppResult<Vec<ToolDefinition>> {
        let mut functions: Vec<ToolDefinition> = Vec::new();
        for (index, tool) in self.tools.iter().enumerate() {
            if tool["type"] == LOCAL_SHELL {
                if functions.iter().any(|f| f.function.name == LOCAL_SHELL) {
                    return Err(AppError::invalid(format!(
                        "tools[{index}]: local_shell is named twice"
                    )));
                }
                functions.push(local_shell_definition());
                continue;
            }
            if tool["type"] != "function" {
                continue;
            }
            let name = tool["name"].as_str().unwrap_or_default();
            let valid = (1..=64).contains(&name.len())
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !valid {
                return Err(AppError::invalid(format!(
                    "tools[{index}] is a function whose name must be 1-64 letters, digits, _ or -"
                )));
            }
            if functions.iter().any(|f| f.function.name == name) {
                return Err(AppError::invalid(format!(
                    "tools name the function {name} twice"
                )));
            }
            let parameters = match &tool["parameters"] {
                Value::Null => json!({"type": "object", "properties": {}}),
                parameters => parameters.clone(),
            };
            functions.push(ToolDefinition::function(
                name,
                tool["description"].as_str().unwrap_or_default(),
                parameters,
            ));
        }
        if functions.len() > MAX_FUNCTIONS {
            return Err(AppError::invalid(format!(
                "at most {MAX_FUNCTIONS} functions per request"
            )));
        }
        Ok(functions)
    }

    /// The vector stores the `file_search` tool names, if it names any.
    pub fn vector_store_ids(&self) -> AppResult<Option<Vec<String>>> {
        let Some(tool) = self.tools.iter().find(|t| t["type"] == "file_search") else {
            return Ok(None);
        };
        let Some(ids) = tool["vector_store_ids"].as_array() else {
            return Ok(None);
        };
        if ids.len() > MAX_VECTOR_STORES {
            return Err(AppError::invalid(format!(
                "file_search may name at most {MAX_VECTOR_STORES} vector stores"
            )));
        }
        ids.iter()
            .map(|id| {
                id.as_str().map(str::to_string).ok_or_else(|| {
                    AppError::invalid("file_search.vector_store_ids must be strings")
                })
            })
            .collect::<AppResult<Vec<_>>>()
            .map(Some)
    }

    /// What `include` asks of the output items.
    pub fn includes(&self) -> Includes {
        let asks = |value: &str| self.include.iter().any(|v| v == value);
        Includes {
            file_search_results: asks("file_search_call.results"),
            web_search_sources: asks("web_search_call.action.sources"),
            code_interpreter_outputs: asks("code_interpreter_call.outputs"),
        }
    }

    /// The `file_search` tool's `max_num_results` (1-50) and
    /// `ranking_options.score_threshold` (0-1), refused outside those ranges.
    pub fn file_search_limits(&self) -> AppResult<FileSearchLimits> {
        let Some(tool) = self.tools.iter().find(|t| t["type"] == "file_search") else {
            return Ok(FileSearchLimits::default());
        };
        let max_num_results = match &tool["max_num_results"] {
            Value::Null => None,
            value => match value.as_u64() {
                Some(n @ 1..=50) => Some(n as usize),
                _ => {
                    return Err(AppError::invalid(
                        "file_search.max_num_results must be an integer from 1 to 50",
                    ));
                }
            },
        };
        let score_threshold = match &tool["ranking_options"]["score_threshold"] {
            Value::Null => None,
            value => match value.as_f64() {
                Some(t) if (0.0..=1.0).contains(&t) => Some(t as f32),
                _ => {
                    return Err(AppError::invalid(
                        "file_search.ranking_options.score_threshold must be a number from 0 to 1",
                    ));
                }
            },
        };
        Ok(FileSearchLimits {
            max_num_results,
            score_threshold,
        })
    }

    /// What the run is asked: tools, sampling, the output format.
    pub fn options(&self, default_model: &str) -> AppResult<RunOptions> {
        let mut web_search = None;
        let mut image_generation = None;
        let mut code_interpreter = None;
        let mut remote_mcp: Vec<RemoteServer> = Vec::new();
        for (index, tool) in self.tools.iter().enumerate() {
            match tool["type"].as_str() {
                Some("mcp") => {
                    let server = tool
                        .as_object()
                        .ok_or_else(|| {
                            AppError::invalid(format!("tools[{index}] must be an object"))
                        })
                        .and_then(|tool| {
                            RemoteServer::parse(index, tool).map_err(AppError::InvalidRequest)
                        })?;
                    if remote_mcp.iter().any(|known| known.label == server.label) {
                        return Err(AppError::invalid(format!(
                            "tools[{index}]: server_label {} is used twice",
                            server.label
                        )));
                    }
                    if remote_mcp.len() == MAX_REMOTE_SERVERS {
                        return Err(AppError::invalid(format!(
                            "a request may name at most {MAX_REMOTE_SERVERS} MCP servers"
                        )));
                    }
                    remote_mcp.push(server);
                }
                Some("image_generation") => {
                    let partials = &tool["partial_images"];
                    if !partials.is_null() && partials.as_u64().is_none_or(|n| n > 3) {
                        return Err(AppError::invalid(
                            "image_generation.partial_images must be an integer from 0 to 3",
                        ));
                    }
                    image_generation = tool.as_object().cloned();
                }
                Some("code_interpreter") => {
                    code_interpreter = Some(
                        crate::tools::code_interpreter::Choice::parse(&tool["container"])
                            .map_err(AppError::InvalidRequest)?,
                    );
                }
                Some("web_search_preview" | "web_search") => {
                    web_search = Some(
                        serde_json::from_value::<WebSearchOptions>(tool.clone()).map_err(
                            |err| {
                                AppError::invalid(format!("invalid {} tool: {err}", tool["type"]))
                            },
                        )?,
                    );
                }
                Some("file_search" | "function" | LOCAL_SHELL) => {}
                other => {
                    return Err(AppError::invalid(format!(
                        "tools[{index}]: type {} is not supported; Colloquy offers \
                         web_search_preview (its server-side tools), file_search, \
                         image_generation, code_interpreter, mcp, local_shell and function",
                        other.unwrap_or("(missing)")
                    )));
                }
            }
        }
        let mut template = ChatRequest::new(
            self.model
                .clone()
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| default_model.to_string()),
            Vec::new(),
        );
        template.temperature = self.temperature;
        template.top_p = self.top_p;
        template.max_tokens = self.max_output_tokens;
        template.tool_choice = self.tool_choice.as_ref().map(chat_tool_choice);
        if let Some(parallel) = self.parallel_tool_calls {
            template
                .extra
                .insert("parallel_tool_calls".into(), json!(parallel));
        }
        if let Some(format) = self.text.as_ref().map(|t| &t["format"])
            && let Some(response_format) = response_format(format)
        {
            template
                .extra
                .insert("response_format".into(), response_format);
        }
        Ok(RunOptions {
            tools_enabled: web_search.is_some(),
            web_search,
            template: Some(template),
            client_tools: self.functions()?,
            instructions: self.instructions.clone().filter(|i| !i.trim().is_empty()),
            image_generation,
            code_interpreter,
            remote_mcp,
            ..RunOptions::default()
        })
    }

    /// The request as the response object echoes it.
    pub fn echo(&self, model: &str) -> Value {
        json!({
            "model": model,
            "instructions": self.instructions,
            "max_output_tokens": self.max_output_tokens,
            "temperature": self.temperature.unwrap_or(1.0),
            "top_p": self.top_p.unwrap_or(1.0),
            "tools": echoed_tools(&self.tools),
            "tool_choice": self.tool_choice.clone().unwrap_or(json!("auto")),
            "parallel_tool_calls": self.parallel_tool_calls.unwrap_or(true),
            "text": self.text.clone().unwrap_or(json!({"format": {"type": "text"}})),
            "metadata": self.metadata.clone().unwrap_or_default(),
            "store": self.store != Some(false),
            "truncation": "disabled",
            "previous_response_id": self.previous_response_id,
            "conversation": self.conversation.as_ref().map(|c| json!({"id": c.id()})),
        })
    }
}

/// The Responses `tool_choice` in Chat Completions' words (a named function is
/// `{"type": "function", "name"}` here, `{"type": "function", "function": {"name"}}` there).
fn chat_tool_choice(choice: &Value) -> Value {
    match choice["name"].as_str() {
        Some(name) if choice["type"] == "function" => {
            json!({"type": "function", "function": {"name": name}})
        }
        _ => choice.clone(),
    }
}

/// `text.format` as Chat Completions' `response_format`.
fn response_format(format: &Value) -> Option<Value> {
    match format["type"].as_str()? {
        "json_schema" => {
            let mut schema = format.clone();
            if let Some(fields) = schema.as_object_mut() {
                fields.remove("type");
            }
            Some(json!({"type": "json_schema", "json_schema": schema}))
        }
        "json_object" => Some(json!({"type": "json_object"})),
        _ => None,
    }
}

/// The request's tools as the response echoes them: an `mcp` tool's header values redacted
/// (they are credentials, never stored or shown).
fn echoed_tools(tools: &[Value]) -> Vec<Value> {
    tools
        .iter()
        .map(|tool| {
            let mut tool = tool.clone();
            if tool["type"] == "mcp"
                && let Some(headers) = tool.get_mut("headers").and_then(Value::as_object_mut)
            {
                for value in headers.values_mut() {
                    *value = json!("<redacted>");
                }
            }
            tool
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_tool_choices_are_said_in_chat_completions_words() {
        let format = json!({"type": "json_schema", "name": "n", "schema": {"type": "object"},
            "strict": true});
        assert_eq!(
            response_format(&format),
            Some(json!({"type": "json_schema", "json_schema": {"name": "n",
                "schema": {"type": "object"}, "strict": true}}))
        );
        assert_eq!(response_format(&json!({"type": "text"})), None);
        assert_eq!(
            chat_tool_choice(&json!({"type": "function", "name": "look"})),
            json!({"type": "function", "function": {"name": "look"}})
        );
        assert_eq!(chat_tool_choice(&json!("required")), json!("required"));
    }

    #[test]
    fn metadata_keeps_openais_limits() {
        let mut metadata = Map::new();
        metadata.insert("k".into(), json!("v"));
        assert!(check_metadata(&metadata).is_ok());
        metadata.insert("n".into(), json!(1));
        assert!(check_metadata(&metadata).is_err());
        let many: Map<String, Value> = (0..17).map(|i| (format!("k{i}"), json!("v"))).collect();
        assert!(check_metadata(&many).is_err());
    }
}
