//! Server-side tools: one file per tool, each a `Tool` with its definition (what the model
//! sees) and its `run`. Tools do not know about the loop: governance (timeouts, caching,
//! loop detection, truncation) is the agent's. A failing tool returns a `ToolError`, which the
//! loop turns into an error result for the model.
//!
//! Here: the `Tool` trait (its definition; how a call is announced: a research `progress` kind,
//! `own_events`, or `x_research.tool_call` with its `call_message`; whether identical calls may
//! be served from the cache, `cacheable()`, which the research tools opt into: cached results
//! are shared by all chats, and a hit costs no rate-limit slot; `sized` copies for a request's
//! `search_context_size`), `ToolError`, and `select` (the `x_tools` rules). Beside it: a file
//! or folder per tool, most a `TypedTool` (`typed`: arguments as a Rust type, the schema
//! derived from it, a blanket `Tool` impl); `schema` (parameters generated from argument
//! types, calls checked against them); `fetch` (the SSRF-safe `Fetcher`); `code_host` (what
//! both code searches share); `alias` (tools under other names); `search_knowledge` (knowledge
//! bases and the chat's documents as one ranking); `context_size`; `chat_context`; `mcp`.

pub mod alias;
pub mod artifacts;
pub mod ask_user;
pub mod browser;
pub mod calculator;
mod calculator_parser;
pub mod chat_context;
mod code_host;
pub mod code_interpreter;
pub mod code_search;
pub mod context_size;
pub mod email;
pub mod fetch;
pub mod fetch_url;
pub mod file_search;
pub mod gitlab_code_search;
pub mod image_generation;
pub mod images;
pub mod mcp;
pub mod memory;
pub mod registry;
pub mod requested;
pub mod schema;
pub mod search_knowledge;
pub mod sql;
pub mod typed;
pub mod user_location;
pub mod web_search;

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use crate::llm::wire::ToolDefinition;

pub use crate::run::events::ProgressKind;
pub use context_size::SearchContextSize;
pub use requested::Requested;
pub use typed::TypedTool;
pub use user_location::UserLocation;

/// The code of a call whose arguments do not match its tool's parameters.
pub const INVALID_ARGUMENTS: &str = "INVALID_ARGUMENTS";

/// Why a tool call failed, in words the model can act on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    /// Stable code: snake_case, but for `INVALID_ARGUMENTS`, which the spec spells so
    /// (docs/spec.md#tool-schemas).
    pub code: String,
    pub message: String,
    /// What the model could do instead.
    pub suggestion: String,
}

impl ToolError {
    pub fn new(code: &str, message: impl Into<String>, suggestion: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
            suggestion: suggestion.into(),
        }
    }

    /// Arguments that do not match the tool's schema.
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        Self::new(
            INVALID_ARGUMENTS,
            message,
            "Check the tool's parameter schema and call it again with valid arguments.",
        )
    }

    /// The result the model sees: `{"error", "code", "suggestion"}`.
    pub fn to_result(&self) -> Value {
        json!({"error": self.message, "code": self.code, "suggestion": self.suggestion})
    }
}

pub type ToolFuture = BoxFuture<'static, Result<Value, ToolError>>;

/// A server-side tool.
pub trait Tool: Send + Sync + 'static {
    /// The name the model calls it by: fixed for built-in tools, chosen at connection for an
    /// MCP server's (`mcp`).
    fn name(&self) -> &str;
    /// The definition sent to the model.
    fn definition(&self) -> ToolDefinition;
    /// The `x_research.*` event this tool's calls announce; `None` for non-research tools
    /// (which announce `x_research.tool_call` unless they have `own_events`).
    fn progress(&self) -> Option<ProgressKind>;
    /// Whether the tool's calls have an event family of their own (`x_artifact.*`,
    /// `x_ask_user.*`, file_search's `response.file_search_call.*`), so they are not announced
    /// as `x_research.tool_call` (that event is for tools without a specific one:
    /// docs/spec.md#research-events).
    fn own_events(&self) -> bool {
        false
    }
    /// What a person reads while a call runs (`x_research.tool_call`'s `message`).
    fn call_message(&self, arguments: &Value) -> String {
        let _ = arguments;
        format!("Running {}", self.name())
    }
    /// Whether identical calls may be served from the result cache, which is shared by every
    /// chat and user: opt in only for tools whose result depends on nothing but the arguments
    /// (never a chat's own data).
    fn cacheable(&self) -> bool {
        false
    }
    /// Whether a successful call pauses the run until the user replies (ask_user). The call's
    /// result is then the question, and the user's reply becomes the tool result (send_email
    /// with confirmation: the send the reply allows, `supervisor::resume`).
    fn pauses(&self) -> bool {
        false
    }
    /// Runs one call. The future is dropped if the call times out or its run is cancelled.
    fn run(&self, arguments: Value) -> ToolFuture;
    /// Runs the model's call `call_id`: for tools whose events name the call (file_search's
    /// `item_id`). Others just `run`.
    fn run_call(&self, call_id: &str, arguments: Value) -> ToolFuture {
        let _ = call_id;
        self.run(arguments)
    }
    /// This tool as a request's `search_context_size` asks (web_search: more or less page
    /// text); `None` for tools the size does not change.
    fn sized(&self, size: SearchContextSize) -> Option<SharedTool> {
        let _ = size;
        None
    }
    /// This tool for a user near `location` (web_search: told to the engines that take it);
    /// `None` for tools a location does not change.
    fn located(&self, location: &UserLocation) -> Option<SharedTool> {
        let _ = location;
        None
    }
    /// The location this copy was `located` near, so a paused run that resumes gets the same
    /// copy back; `None` for tools a location does not change.
    fn location(&self) -> Option<&UserLocation> {
        None
    }
    /// The `search_context_size` this copy was `sized` to, so a paused run that resumes gets
    /// the same copy back; `None` for tools the size does not change.
    fn context_size(&self) -> Option<SearchContextSize> {
        None
    }
    /// What a request asked of this copy (a Responses file_search's stores and limits, an
    /// image_generation tool's fields), so a paused run that resumes gets the same copy back;
    /// `None` for the server's own copy.
    fn requested(&self) -> Option<Requested> {
        None
    }
    /// What a result depends on besides the arguments (a sized copy's size): part of the
    /// result cache's key, so copies of one tool never serve each other's results.
    fn cache_scope(&self) -> &str {
        ""
    }
    /// The characters of its result the model may get when its own budget asks for more than
    /// the loop's `agent.max_tool_result_chars` (web_search's page text at
    /// `search_context_size` high): the loop cuts a result at the larger of the two.
    fn result_limit(&self) -> Option<usize> {
        None
    }
    /// How long a call may take when the tool bounds its calls itself (the code interpreter:
    /// its own time limit, and a sandbox's start): the loop waits that long when it is longer
    /// than `agent.tool_timeout_secs`, so the tool's own limit is the one that ends a call.
    fn time_limit(&self) -> Option<std::time::Duration> {
        None
    }
    /// The images a result of this tool refers to (`result`: its text as the model reads it),
    /// which a model that reads images is shown after the round's results; each is read by the
    /// `images::ImageSource` of its scheme. None for most tools.
    fn images(&self, result: &str) -> Vec<images::ImageRef> {
        let _ = result;
        Vec::new()
    }
}

pub type SharedTool = Arc<dyn Tool>;

/// Parses a tool's arguments into its typed form, with a message naming what is wrong.
pub fn parse_arguments<T: serde::de::DeserializeOwned>(arguments: Value) -> Result<T, ToolError> {
    serde_json::from_value(arguments).map_err(|err| ToolError::invalid_arguments(err.to_string()))
}

/// Tools used when a request opts in without naming any (docs/spec.md#x_tools).
pub const DEFAULT_RESEARCH_TOOLS: [&str; 2] = ["web_search", "fetch_url"];

/// Every research tool Colloquy has, with the setting a server needs for it to offer it (empty:
/// always offered), for saying why a name is not offered here.
pub const RESEARCH_TOOLS: [(&str, &str); 5] = [
    ("web_search", ""),
    ("fetch_url", ""),
    ("calculator", ""),
    ("code_search", "tools.github_token"),
    ("gitlab_code_search", "tools.gitlab_api_url"),
];

/// The chat tools `x_tools` may name (docs/spec.md#x_tools: file_search): a request naming one has
/// it offered in its chat even before it has documents; the browser tools, offered in a stored
/// chat on a server with Chromium.
pub const X_TOOLS_CHAT_TOOLS: [&str; 4] = [
    "file_search",
    browser::BROWSER_ACTION,
    browser::ANALYZE_PAGE,
    code_interpreter::CODE_INTERPRETER,
];

/// Chooses a request's tools from those available (docs/spec.md#x_tools): omitted,
/// empty or all-invalid names mean the defaults; invalid names are ignored; `web_search` brings
/// `fetch_url` along; the calculator is always there. `X_TOOLS_CHAT_TOOLS` are valid names but
/// not chosen here: the launcher gives them with the chat's tools.
pub fn select(available: &[SharedTool], requested: Option<&[String]>) -> Vec<SharedTool> {
    let is_available = |name: &str| available.iter().any(|t| t.name() == name);
    // A chat tool named (file_search, which the launcher adds) is a valid name, so naming it
    // alone does not fall back to the defaults.
    let mut names: Vec<&str> = requested
        .unwrap_or_default()
        .iter()
        .map(String::as_str)
        .filter(|name| is_available(name) || X_TOOLS_CHAT_TOOLS.contains(name))
        .collect();
    if names.is_empty() {
        names.extend(DEFAULT_RESEARCH_TOOLS);
    }
    if names.contains(&"web_search") {
        names.push("fetch_url");
    }
    names.push("calculator");
    let mut chosen: Vec<SharedTool> = Vec::new();
    for name in names {
        if let Some(tool) = available.iter().find(|t| t.name() == name)
            && !chosen.iter().any(|c| c.name() == name)
        {
            chosen.push(Arc::clone(tool));
        }
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Named(&'static str);

    impl Tool for Named {
        fn name(&self) -> &'static str {
            self.0
        }
        fn definition(&self) -> ToolDefinition {
            ToolDefinition::function(self.0, "", json!({"type": "object"}))
        }
        fn progress(&self) -> Option<ProgressKind> {
            Some(ProgressKind::Other)
        }
        fn run(&self, _: Value) -> ToolFuture {
            Box::pin(async { Ok(Value::Null) })
        }
    }

    #[test]
    fn a_tool_is_not_cached_unless_it_says_so() {
        assert!(!Named("anything").cacheable());
    }

    fn available() -> Vec<SharedTool> {
        ["web_search", "fetch_url", "code_search", "calculator"]
            .into_iter()
            .map(|name| Arc::new(Named(name)) as SharedTool)
            .collect()
    }

    fn names(requested: Option<&[&str]>) -> Vec<String> {
        let requested: Option<Vec<String>> =
            requested.map(|r| r.iter().map(|s| s.to_string()).collect());
        select(&available(), requested.as_deref())
            .iter()
            .map(|t| t.name().to_string())
            .collect()
    }

    #[test]
    fn x_tools_selection_follows_the_seed_table() {
        assert_eq!(
            names(None),
            ["web_search", "fetch_url", "calculator"],
            "omitted"
        );
        assert_eq!(
            names(Some(&[])),
            ["web_search", "fetch_url", "calculator"],
            "empty"
        );
        assert_eq!(
            names(Some(&["web_search"])),
            ["web_search", "fetch_url", "calculator"]
        );
        assert_eq!(names(Some(&["code_search"])), ["code_search", "calculator"]);
        assert_eq!(names(Some(&["calculator"])), ["calculator"]);
        assert_eq!(
            names(Some(&["bogus", "code_search"])),
            ["code_search", "calculator"],
            "invalid names are ignored"
        );
        assert_eq!(
            names(Some(&["bogus", "nope"])),
            ["web_search", "fetch_url", "calculator"],
            "all invalid falls back to the defaults"
        );
        assert_eq!(
            names(Some(&["file_search"])),
            ["calculator"],
            "file_search is a valid name, offered with the chat's tools"
        );
        let only_calculator: Vec<SharedTool> = vec![Arc::new(Named("calculator"))];
        let chosen = select(&only_calculator, Some(&["gitlab_code_search".to_string()]));
        assert_eq!(chosen.len(), 1, "unconfigured tools are never offered");
    }
}
