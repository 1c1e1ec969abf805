//! Workflow templating: `{{input.<path>}}` (the run's input) and `{{steps.<id>.result}}`
//! (an earlier step's result, optionally `.<path>` into it). Parsing finds every reference,
//! so a workflow is checked when saved; rendering fails on a value that is missing, never
//! leaving a placeholder in what a step is sent. Nothing here recurses: JSON arguments are
//! rendered as their text (placeholders can only sit inside JSON strings).

use serde_json::Value;

/// Longest placeholder (between the braces), a bound on what is scanned as a path.
const MAX_PLACEHOLDER_CHARS: usize = 200;

/// What a placeholder names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reference {
    /// The run's input, or a path into it.
    Input(Vec<String>),
    /// An earlier step's result, or a path into it.
    Step { id: String, path: Vec<String> },
}

impl std::fmt::Display for Reference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Input(path) if path.is_empty() => f.write_str("input"),
            Self::Input(path) => write!(f, "input.{}", path.join(".")),
            Self::Step { id, path } if path.is_empty() => write!(f, "steps.{id}.result"),
            Self::Step { id, path } => write!(f, "steps.{id}.result.{}", path.join(".")),
        }
    }
}

/// Why a template is not valid, or cannot be filled in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("a placeholder opened with {{{{ is never closed with }}}}")]
    Unclosed,
    #[error(
        "the placeholder {{{{{0}}}}} is not one of {{{{input.<name>}}}} or {{{{steps.<step id>.result}}}}"
    )]
    Malformed(String),
    #[error("{{{{{0}}}}} has no value")]
    Missing(String),
}

/// Each placeholder of `text`, in order, with its byte range.
fn placeholders(text: &str) -> Result<Vec<(std::ops::Range<usize>, Reference)>, TemplateError> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(start) = text[from..].find("{{").map(|i| i + from) {
        let end = text[start + 2..]
            .find("}}")
            .map(|i| i + start + 2)
            .ok_or(TemplateError::Unclosed)?;
        let inner = text[start + 2..end].trim();
        found.push((start..end + 2, parse_reference(inner)?));
        from = end + 2;
    }
    Ok(found)
}

fn parse_reference(inner: &str) -> Result<Reference, TemplateError> {
    let malformed =
        || TemplateError::Malformed(inner.chars().take(MAX_PLACEHOLDER_CHARS).collect());
    if inner.len() > MAX_PLACEHOLDER_CHARS {
        return Err(malformed());
    }
    let parts: Vec<&str> = inner.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(malformed());
    }
    let owned = |parts: &[&str]| parts.iter().map(|p| p.to_string()).collect::<Vec<_>>();
    match parts.as_slice() {
        ["input", rest @ ..] => Ok(Reference::Input(owned(rest))),
        ["steps", id, "result", rest @ ..] => Ok(Reference::Step {
            id: id.to_string(),
            path: owned(rest),
        }),
        _ => Err(malformed()),
    }
}

/// Every reference in `text` (checked on save).
pub fn references(text: &str) -> Result<Vec<Reference>, TemplateError> {
    Ok(placeholders(text)?.into_iter().map(|(_, r)| r).collect())
}

/// The value at `path` inside `value` (object keys, array indexes).
pub fn lookup<'a>(value: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(value, |at, key| match at {
        Value::Object(map) => map.get(key),
        Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    })
}

/// A value as text in a template: a string as itself, anything else as JSON.
pub fn as_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// `text` with each placeholder replaced by `value_of` its reference (as text, through
/// `escape`); a reference without a value is an error naming it.
fn render_with(
    text: &str,
    value_of: &dyn Fn(&Reference) -> Option<String>,
    escape: &dyn Fn(&str) -> String,
) -> Result<String, TemplateError> {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (range, reference) in placeholders(text)? {
        let value =
            value_of(&reference).ok_or_else(|| TemplateError::Missing(reference.to_string()))?;
        out.push_str(&text[copied..range.start]);
        out.push_str(&escape(&value));
        copied = range.end;
    }
    out.push_str(&text[copied..]);
    Ok(out)
}

/// A prompt with its placeholders filled in.
pub fn render(
    text: &str,
    value_of: &dyn Fn(&Reference) -> Option<String>,
) -> Result<String, TemplateError> {
    render_with(text, value_of, &|value| value.to_string())
}

/// Tool arguments with the placeholders in their strings filled in (each value escaped as
/// JSON string content, so the arguments stay valid JSON whatever the value holds).
pub fn render_json(
    arguments: &Value,
    value_of: &dyn Fn(&Reference) -> Option<String>,
) -> Result<Value, TemplateError> {
    let escape = |value: &str| {
        let quoted = Value::String(value.to_string()).to_string();
        quoted[1..quoted.len() - 1].to_string()
    };
    let text = render_with(&arguments.to_string(), value_of, &escape)?;
    // unwrap-free: the text was valid JSON and only string contents changed, escaped.
    serde_json::from_str(&text).map_err(|err| TemplateError::Malformed(err.to_string()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn references_are_found_in_order() {
        let found =
            references("Summarise {{ steps.search.result }} for {{input.audience}}").unwrap();
        assert_eq!(
            found,
            vec![
                Reference::Step {
                    id: "search".into(),
                    path: vec![]
                },
                Reference::Input(vec!["audience".into()]),
            ]
        );
    }

    #[test]
    fn malformed_and_unclosed_placeholders_are_refused() {
        assert_eq!(references("{{input.a"), Err(TemplateError::Unclosed));
        assert!(matches!(
            references("{{steps.a}}"),
            Err(TemplateError::Malformed(_))
        ));
        assert!(matches!(
            references("{{env.HOME}}"),
            Err(TemplateError::Malformed(_))
        ));
        assert!(matches!(
            references("{{input..a}}"),
            Err(TemplateError::Malformed(_))
        ));
    }

    #[test]
    fn rendering_fills_values_and_names_a_missing_one() {
        let input = json!({"who": "ops", "n": 3});
        let value_of = |r: &Reference| match r {
            Reference::Input(path) => lookup(&input, path).map(as_text),
            Reference::Step { .. } => None,
        };
        assert_eq!(
            render("for {{input.who}} x{{input.n}}", &value_of).unwrap(),
            "for ops x3"
        );
        assert_eq!(
            render("{{input.nope}}", &value_of),
            Err(TemplateError::Missing("input.nope".into()))
        );
    }

    #[test]
    fn json_rendering_escapes_values_inside_strings() {
        let value_of = |_: &Reference| Some("say \"hi\"\n".to_string());
        let rendered = render_json(&json!({"q": "{{input.x}}!", "n": 1}), &value_of).unwrap();
        assert_eq!(rendered, json!({"q": "say \"hi\"\n!", "n": 1}));
    }
}
