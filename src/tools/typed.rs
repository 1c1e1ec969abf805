//! `TypedTool`: a built-in tool whose arguments are a Rust type. Its parameters schema is derived
//! from that type (`schema::parameters_for`, then the tool's own `parameters` for the limits
//! configuration decides), and its calls arrive parsed; a blanket `impl Tool` is the dynamic
//! interface the loop sees, so a model's arguments are parsed in one place, with one
//! `INVALID_ARGUMENTS` error. Tools whose schema is only known at run time (an MCP server's,
//! an alias, test doubles) implement `Tool` directly.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::schema::parameters_for;
use super::{
    ProgressKind, SearchContextSize, SharedTool, Tool, ToolFuture, UserLocation, parse_arguments,
};
use crate::llm::wire::ToolDefinition;

/// A server-side tool with typed arguments; each method means what `Tool`'s of the same name
/// does, and the optional ones have the same defaults.
pub trait TypedTool: Send + Sync + 'static {
    /// What a call carries: its JSON Schema is the tool's parameters, and a call whose
    /// arguments do not deserialize is refused with `INVALID_ARGUMENTS` before `call`. (A
    /// public tool's `Args` is a public type with private fields: the doc comments of its
    /// fields are the descriptions the model reads; the type's own is left out.)
    type Args: DeserializeOwned + JsonSchema + Send + 'static;

    /// The name the model calls it by.
    fn name(&self) -> &str;
    /// The description sent to the model.
    fn description(&self) -> Cow<'_, str>;
    /// The parameters sent to the model, given those derived from `Args`: for the limits that
    /// come from configuration (`schema::set_keyword`, `schema::add_to_description`).
    fn parameters(&self, derived: Value) -> Value {
        derived
    }
    /// `Tool::progress`.
    fn progress(&self) -> Option<ProgressKind>;
    /// `Tool::own_events`.
    fn own_events(&self) -> bool {
        false
    }
    /// What a person reads while a call runs (`Tool::call_message`). A call is announced even
    /// when its arguments do not parse (it is then refused): `args` is `None`.
    fn call_message(&self, args: Option<&Self::Args>) -> String {
        let _ = args;
        format!("Running {}", self.name())
    }
    /// `Tool::cacheable`.
    fn cacheable(&self) -> bool {
        false
    }
    /// `Tool::pauses`.
    fn pauses(&self) -> bool {
        false
    }
    /// Runs one call with its parsed arguments. The future is dropped if the call times out or
    /// its run is cancelled.
    fn call(&self, args: Self::Args) -> ToolFuture;
    /// Runs the model's call `call_id` (`Tool::run_call`); others just `call`.
    fn call_with_id(&self, call_id: &str, args: Self::Args) -> ToolFuture {
        let _ = call_id;
        self.call(args)
    }
    /// `Tool::sized`.
    fn sized(&self, size: SearchContextSize) -> Option<SharedTool> {
        let _ = size;
        None
    }
    /// `Tool::located`.
    fn located(&self, location: &UserLocation) -> Option<SharedTool> {
        let _ = location;
        None
    }
    /// `Tool::location`.
    fn location(&self) -> Option<&UserLocation> {
        None
    }
    /// `Tool::context_size`.
    fn context_size(&self) -> Option<SearchContextSize> {
        None
    }
    /// `Tool::requested`.
    fn requested(&self) -> Option<super::Requested> {
        None
    }
    /// `Tool::cache_scope`.
    fn cache_scope(&self) -> &str {
        ""
    }
    /// `Tool::result_limit`.
    fn result_limit(&self) -> Option<usize> {
        None
    }
    /// `Tool::time_limit`.
    fn time_limit(&self) -> Option<std::time::Duration> {
        None
    }
}

/// The definition of a tool taking `A`, its derived parameters passed through `parameters`:
/// what the blanket `Tool::definition` sends, for `describe` functions that list a tool without
/// an instance.
pub fn definition<A: JsonSchema + 'static>(
    name: &str,
    description: &str,
    parameters: impl FnOnce(Value) -> Value,
) -> ToolDefinition {
    ToolDefinition::function(name, description, parameters(parameters_for::<A>()))
}

impl<T: TypedTool> Tool for T {
    fn name(&self) -> &str {
        TypedTool::name(self)
    }

    fn definition(&self) -> ToolDefinition {
        definition::<T::Args>(TypedTool::name(self), &self.description(), |derived| {
            self.parameters(derived)
        })
    }

    fn progress(&self) -> Option<ProgressKind> {
        TypedTool::progress(self)
    }

    fn own_events(&self) -> bool {
        TypedTool::own_events(self)
    }

    fn call_message(&self, arguments: &Value) -> String {
        let args = T::Args::deserialize(arguments).ok();
        TypedTool::call_message(self, args.as_ref())
    }

    fn cacheable(&self) -> bool {
        TypedTool::cacheable(self)
    }

    fn pauses(&self) -> bool {
        TypedTool::pauses(self)
    }

    fn run(&self, arguments: Value) -> ToolFuture {
        match parse_arguments(arguments) {
            Ok(args) => self.call(args),
            Err(err) => Box::pin(async move { Err(err) }),
        }
    }

    fn run_call(&self, call_id: &str, arguments: Value) -> ToolFuture {
        match parse_arguments(arguments) {
            Ok(args) => self.call_with_id(call_id, args),
            Err(err) => Box::pin(async move { Err(err) }),
        }
    }

    fn sized(&self, size: SearchContextSize) -> Option<SharedTool> {
        TypedTool::sized(self, size)
    }

    fn located(&self, location: &UserLocation) -> Option<SharedTool> {
        TypedTool::located(self, location)
    }

    fn location(&self) -> Option<&UserLocation> {
        TypedTool::location(self)
    }

    fn context_size(&self) -> Option<SearchContextSize> {
        TypedTool::context_size(self)
    }

    fn requested(&self) -> Option<super::Requested> {
        TypedTool::requested(self)
    }

    fn cache_scope(&self) -> &str {
        TypedTool::cache_scope(self)
    }

    fn result_limit(&self) -> Option<usize> {
        TypedTool::result_limit(self)
    }

    fn time_limit(&self) -> Option<std::time::Duration> {
        TypedTool::time_limit(self)
    }
}

#[cfg(test)]
mod tests;
