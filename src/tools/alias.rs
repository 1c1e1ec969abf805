//! Other names for tools Colloquy has (docs/spec.md#tool-aliases): `browse_url` (fetch_url's
//! single-URL mode: `{url}` → the page's text). An `Alias` is offered only to agents whose
//! `enabled_tools` name it; it runs the tool it stands for, with that tool's governance.
//! (`search_knowledge` is a tool of its own: `search_knowledge`.)

use serde_json::{Value, json};

use super::{ProgressKind, SharedTool, Tool, ToolFuture};
use crate::llm::wire::ToolDefinition;

/// fetch_url's single-URL mode under its own name.
pub const BROWSE_URL: &str = "browse_url";

/// A tool under another name, with its own description and parameters, whose arguments are
/// passed to the tool it stands for unchanged (the parameters are a subset of that tool's).
pub struct Alias {
    name: &'static str,
    description: &'static str,
    parameters: Value,
    inner: SharedTool,
}

impl Alias {
    /// `browse_url` over `fetch_url`.
    pub fn browse_url(fetch_url: SharedTool) -> Self {
        Self {
            name: BROWSE_URL,
            description: "Fetch and read content from a URL. Returns the page's text.",
            parameters: json!({
                "type": "object",
                "properties": {"url": {"type": "string", "minLength": 1, "maxLength": 2048,
                    "description": "The http or https URL to read."}},
                "required": ["url"],
                "additionalProperties": false
            }),
            inner: fetch_url,
        }
    }

    /// The names of the aliases, for checking an agent's `enabled_tools`.
    pub const NAMES: [&'static str; 1] = [BROWSE_URL];
}

impl Tool for Alias {
    fn name(&self) -> &'static str {
        self.name
    }

    fn definition(&self) -> ToolDefinition {
        ToolDefinition::function(self.name, self.description, self.parameters.clone())
    }

    fn progress(&self) -> Option<ProgressKind> {
        self.inner.progress()
    }

    fn cacheable(&self) -> bool {
        self.inner.cacheable()
    }

    fn cache_scope(&self) -> &str {
        self.inner.cache_scope()
    }

    fn own_events(&self) -> bool {
        self.inner.own_events()
    }

    fn result_limit(&self) -> Option<usize> {
        self.inner.result_limit()
    }

    fn call_message(&self, arguments: &Value) -> String {
        self.inner.call_message(arguments)
    }

    fn run(&self, arguments: Value) -> ToolFuture {
        self.inner.run(arguments)
    }

    fn run_call(&self, call_id: &str, arguments: Value) -> ToolFuture {
        self.inner.run_call(call_id, arguments)
    }
}
