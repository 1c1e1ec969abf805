//! What a request asks of its run (`RunOptions`, `web_search_options` of
//! docs/spec.md#request-shapes), and the one limit on a message's length, checked wherever a
//! message enters.

use entities::ids::ChatId;
use serde::Deserialize;

use crate::config::Config;
use crate::error::{AppError, AppResult};
use crate::llm::wire::{ChatMessage, ChatRequest, Role};

/// `web_search_options` (docs/spec.md#request-shapes), in both APIs.
#[derive(Debug, Clone, Default, Deserialize, serde::Serialize)]
pub struct WebSearchOptions {
    pub max_iterations: Option<u32>,
    pub x_tools: Option<Vec<String>>,
    /// How much page text a web search brings back (`low`, `medium`, `high`); another value
    /// is refused with the request.
    pub search_context_size: Option<crate::tools::SearchContextSize>,
    pub x_deep_think: Option<bool>,
    /// Where the user roughly is: told to the search engines as each takes it (Brave's
    /// location, SearXNG's locale, DuckDuckGo's region), advisory where one cannot be told.
    pub user_location: Option<crate::tools::UserLocation>,
}

/// What a request asks of its run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Research tools on (they are opt-in: docs/spec.md#which-tools-a-run-has).
    pub tools_enabled: bool,
    pub web_search: Option<WebSearchOptions>,
    /// Model, sampling; messages are filled in by the launcher.
    pub template: Option<ChatRequest>,
    /// The client's own tools (Chat Completions `tools`): offered beside the server-side
    /// ones; a call of one ends the run, for the client to run it.
    pub client_tools: Vec<crate::llm::wire::ToolDefinition>,
    /// The message's `enableTools` (docs/spec.md#agents), when it has one: tools on or off for this
    /// message, within what the agent allows.
    pub enable_tools: Option<bool>,
    /// The agent whose settings the run uses (a chat's, or `x_agent_id`'s); filled by the
    /// launcher for chats.
    pub agent: Option<crate::chat::agents::Agent>,
    /// The Responses API's `instructions`: for a turn of a stored chat, added to the system
    /// prompt of this run only (a request without a chat sends them as its system message).
    pub instructions: Option<String>,
    /// The vector stores (each a chat's documents, owned by the caller) a Responses
    /// `file_search` tool named: file_search searches exactly these.
    pub file_search: Option<Vec<ChatId>>,
    /// A Responses `file_search` tool's `max_num_results` and `score_threshold`, for every
    /// file_search call of the run (over the named stores or the chat's own documents).
    pub file_search_limits: crate::tools::file_search::FileSearchLimits,
    /// A Responses `image_generation` tool's fields (`size`, `quality`, `output_format`,
    /// `background`, `partial_images`, `model`): the run gets `generate_image` with them.
    pub image_generation: Option<serde_json::Map<String, serde_json::Value>>,
    /// A Responses `code_interpreter` tool's `container`: the run gets `code_interpreter` in it.
    pub code_interpreter: Option<crate::tools::code_interpreter::Choice>,
    /// A Responses request's remote MCP servers (`{"type": "mcp"}`), connected by the door
    /// (`Launcher::open`) before anything is written, into `mcp_sessions`.
    pub remote_mcp: Vec<crate::tools::mcp::remote::RemoteServer>,
    /// Those servers, connected for this run: their tools are the run's.
    pub mcp_sessions: Vec<std::sync::Arc<crate::tools::mcp::remote::RemoteSession>>,
}

/// Refuses a message longer than `http.max_message_chars`: the one limit on a message however
/// it enters (the chat API's send and edit, Chat Completions, Responses, ask_user answers,
/// which also have their own `ask_user.max_text_chars`), with one code,
/// `message_too_long`. Runs are launched only through this module, which checks every message
/// it is given; handlers that store messages before launching check them first.
pub fn check_message_length(config: &Config, role: Role, text: &str) -> AppResult<()> {
    let max = config.http.max_message_chars;
    let chars = text.chars().count();
    if chars > max {
        let role = serde_json::to_value(role)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        return Err(AppError::TooLarge {
            code: "message_too_long",
            message: format!(
                "the {role} message has {chars} characters; a message may have at most {max}"
            ),
        });
    }
    Ok(())
}

/// `check_message_length` for each of `messages`.
pub fn check_message_lengths(config: &Config, messages: &[ChatMessage]) -> AppResult<()> {
    messages
        .iter()
        .try_for_each(|message| check_message_length(config, message.role, &message.text()))
}
