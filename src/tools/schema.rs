//! Tool parameters as JSON Schemas. A built-in tool's schema is generated from its argument type
//! (`schemars`: doc comments become descriptions, attributes bounds), with the limits that come
//! from configuration patched in by `set_keyword`. `check_arguments` validates any tool's
//! arguments (built-in or not) against the schema it advertises (`jsonschema`), filling in
//! defaults first; a violation is an `INVALID_ARGUMENTS` error naming the field. Nothing here
//! knows the loop.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

use super::ToolError;

/// The parameters schema of argument type `T`, in the shape OpenAI-compatible servers accept:
/// subschemas inline, no `$schema` or title, optional properties typed as their value (not
/// `[type, "null"]`) and without the width formats schemars gives Rust integers. Derived once
/// per type: every run builds its tools' definitions, and deriving is most of their cost.
pub fn parameters_for<T: JsonSchema + 'static>() -> Value {
    static DERIVED: LazyLock<Mutex<HashMap<std::any::TypeId, Value>>> =
        LazyLock::new(Mutex::default);
    let key = std::any::TypeId::of::<T>();
    let known = DERIVED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(&key)
        .cloned();
    if let Some(parameters) = known {
        return parameters;
    }
    let parameters = derive_parameters::<T>();
    DERIVED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(key, parameters.clone());
    parameters
}

/// `parameters_for`, derived afresh.
fn derive_parameters<T: JsonSchema>() -> Value {
    let settings = SchemaSettings::draft2020_12().with(|settings| {
        settings.inline_subschemas = true;
        settings.meta_schema = None;
    });
    let mut parameters = settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    if let Some(root) = parameters.as_object_mut() {
        root.remove("title");
        root.remove("description");
    }
    tidy(&mut parameters);
    parameters
}

/// Drops `null` from type lists, and `format`s of integers and numbers (`uint64`, `double`):
/// they say how Rust stores a value, not what a model may send. Our own types nest a few levels,
/// so recursing is bounded by the code, never by outside input.
fn tidy(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    if let Some(Value::Array(types)) = object.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            object.insert("type".into(), only);
        }
    }
    if matches!(
        object.get("type").and_then(Value::as_str),
        Some("integer" | "number")
    ) {
        object.remove("format");
    }
    if let Some(Value::Array(choices)) = object.get_mut("enum") {
        choices.retain(|choice| !choice.is_null());
    }
    for (key, child) in object.iter_mut() {
        match key.as_str() {
            "properties" | "$defs" => {
                for property in child.as_object_mut().into_iter().flat_map(Map::values_mut) {
                    tidy(property);
                }
            }
            "items" | "additionalProperties" => tidy(child),
            "anyOf" | "oneOf" | "allOf" => {
                for branch in child.as_array_mut().into_iter().flatten() {
                    tidy(branch);
                }
            }
            _ => {}
        }
    }
}

/// Sets `keyword` of the schema at JSON pointer `at` inside `parameters` (e.g.
/// `/properties/expression`, `maxLength`): for limits that come from configuration.
pub fn set_keyword(parameters: &mut Value, at: &str, keyword: &str, value: impl Into<Value>) {
    if let Some(Value::Object(schema)) = parameters.pointer_mut(at) {
        schema.insert(keyword.into(), value.into());
    }
}

/// Appends `text` to the description of the schema at `at`: for what configuration decides.
pub fn add_to_description(parameters: &mut Value, at: &str, text: &str) {
    if let Some(Value::Object(schema)) = parameters.pointer_mut(at) {
        let description = match schema.get("description").and_then(Value::as_str) {
            Some(given) => format!("{given} {text}"),
            None => text.to_string(),
        };
        schema.insert("description".into(), description.into());
    }
}

/// Most distinct schemas whose compiled validators are kept; past it the cache starts afresh.
/// Built-in tools have a dozen, one per configuration; tools from other servers add theirs.
const MAX_COMPILED_SCHEMAS: usize = 512;
/// Errors reported per call: enough to fix a call at once, few enough to stay readable.
const MAX_REPORTED_ERRORS: usize = 5;
/// Longest rendering of a wrong value quoted in an error.
const MAX_QUOTED_CHARS: usize = 80;

/// Compiled validators by the text of their schema, so a call costs one lookup; `None` for a
/// schema `jsonschema` cannot compile (calls of that tool then go unchecked, as before).
static COMPILED: LazyLock<Mutex<HashMap<String, Option<Arc<jsonschema::Validator>>>>> =
    LazyLock::new(Default::default);

fn validator(parameters: &Value) -> Option<Arc<jsonschema::Validator>> {
    let key = parameters.to_string();
    let mut compiled = COMPILED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(found) = compiled.get(&key) {
        return found.clone();
    }
    let built = jsonschema::options()
        .should_validate_formats(true)
        .build(parameters)
        .map(Arc::new)
        .map_err(|err| tracing::warn!(error = %err, "a tool's parameters schema does not compile; its calls are not checked"))
        .ok();
    if compiled.len() >= MAX_COMPILED_SCHEMAS {
        compiled.clear();
    }
    compiled.insert(key, built.clone());
    built
}

/// Checks the arguments of a call of `tool` against its `parameters` schema. Before checking, an
/// optional top-level property given as `null` is read as left out, and left-out properties with
/// a `default` get it, so the tool sees them filled in. A violation names each field and what
/// is wrong with it.
pub fn check_arguments(
    tool: &str,
    parameters: &Value,
    arguments: &mut Value,
) -> Result<(), ToolError> {
    apply_defaults(parameters, arguments);
    let Some(validator) = validator(parameters) else {
        return Ok(());
    };
    let problems: Vec<String> = validator
        .iter_errors(arguments)
        .take(MAX_REPORTED_ERRORS)
        .map(|error| {
            let path = error.instance_path().as_str().to_string();
            let what = describe(&error);
            if path.is_empty() {
                what
            } else {
                format!("{path}: {what}")
            }
        })
        .collect();
    if problems.is_empty() {
        return Ok(());
    }
    let required: Vec<&str> = parameters["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let needs = if required.is_empty() {
        String::new()
    } else {
        format!(" (required: {})", required.join(", "))
    };
    Err(ToolError::new(
        super::INVALID_ARGUMENTS,
        format!(
            "the arguments of {tool} do not match its parameters: {}",
            problems.join("; ")
        ),
        format!(
            "Call {tool} again with the fields named here corrected, as its parameters \
             schema describes{needs}."
        ),
    ))
}

/// `null`s of optional top-level properties removed, then top-level defaults filled in.
fn apply_defaults(parameters: &Value, arguments: &mut Value) {
    let (Some(properties), Some(given)) = (
        parameters.get("properties").and_then(Value::as_object),
        arguments.as_object_mut(),
    ) else {
        return;
    };
    let required = |name: &str| {
        parameters["required"]
            .as_array()
            .is_some_and(|names| names.iter().any(|n| n == name))
    };
    given.retain(|name, value| !value.is_null() || required(name));
    for (name, schema) in properties {
        if let Some(default) = schema.get("default")
            && !default.is_null()
            && !given.contains_key(name)
        {
            given.insert(name.clone(), default.clone());
        }
    }
}

/// What is wrong, in `jsonschema`'s words; for `anyOf`/`oneOf`, what each choice wanted, so the
/// model sees the accepted values rather than "not valid under any of the schemas".
fn describe(error: &jsonschema::ValidationError<'_>) -> String {
    use jsonschema::error::ValidationErrorKind;
    let said = shorten_instance(error.to_string(), error.instance());
    let (ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context }) =
        error.kind()
    else {
        return said;
    };
    let wanted: Vec<String> = context
        .iter()
        .filter_map(|branch| branch.first())
        .map(|branch| shorten_instance(branch.to_string(), branch.instance()))
        .collect();
    if wanted.is_empty() {
        return said;
    }
    wanted.join(", or ")
}

/// An error's text with a long quoted value (a whole document sent as `content`) cut short.
fn shorten_instance(message: String, instance: &Value) -> String {
    let quoted = instance.to_string();
    if quoted.chars().count() <= MAX_QUOTED_CHARS {
        return message;
    }
    let short: String = quoted.chars().take(MAX_QUOTED_CHARS).collect();
    message.replacen(&quoted, &format!("{short}…"), 1)
}

#[cfg(test)]
mod tests;
