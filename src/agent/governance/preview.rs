//! The UI's one-line preview of a tool result (`resultPreview`): counts of found items, a
//! result or an error as text, else compact JSON written iteratively and cut short.

use serde_json::Value;

use super::truncate::char_boundary_after;

/// The longest preview [`result_preview`] makes (before its "…"): one line of the UI's
/// tool-call card.
pub const PREVIEW_MAX_CHARS: usize = 120;

/// A short human preview of a tool result for the UI's `resultPreview`.
///
/// - An object with an array field `results`, `pages`, `memories` or `items` (checked in that
///   order) → "Found N results" / "Fetched N pages" / "Recalled N memories" / "Found N items"
///   (singular noun when N is 1).
/// - Otherwise, an object whose `result` is a number or string → "Result: {result}".
/// - Otherwise, an object with a non-null `error` → "Error: {error}" (a string as is, anything
///   else as compact JSON).
/// - Otherwise the value's compact JSON.
///
/// Line breaks and tabs become spaces, and text longer than [`PREVIEW_MAX_CHARS`] is cut to
/// that many characters followed by "…".
pub fn result_preview(value: &Value) -> String {
    /// The counted array fields: (field, verb, singular noun, plural noun).
    const COUNTED: [(&str, &str, &str, &str); 4] = [
        ("results", "Found", "result", "results"),
        ("pages", "Fetched", "page", "pages"),
        ("memories", "Recalled", "memory", "memories"),
        ("items", "Found", "item", "items"),
    ];
    if let Value::Object(map) = value {
        for (field, verb, singular, plural) in COUNTED {
            if let Some(Value::Array(items)) = map.get(field) {
                let n = items.len();
                let noun = if n == 1 { singular } else { plural };
                return format!("{verb} {n} {noun}");
            }
        }
        match map.get("result") {
            Some(Value::Number(n)) => return preview_line("Result: ", &n.to_string()),
            Some(Value::String(s)) => return preview_line("Result: ", s),
            _ => {}
        }
        match map.get("error") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => return preview_line("Error: ", s),
            Some(other) => {
                let (json, _) = write_compact(other, PREVIEW_MAX_CHARS + 1);
                return preview_line("Error: ", &json);
            }
        }
    }
    let (json, _) = write_compact(value, PREVIEW_MAX_CHARS + 1);
    preview_line("", &json)
}

/// `prefix` + `text` on one line, cut to [`PREVIEW_MAX_CHARS`] characters with "…" when longer.
fn preview_line(prefix: &str, text: &str) -> String {
    let mut line = String::with_capacity(prefix.len() + text.len().min(4 * PREVIEW_MAX_CHARS));
    for (count, c) in prefix.chars().chain(text.chars()).enumerate() {
        if count == PREVIEW_MAX_CHARS {
            line.push('…');
            return line;
        }
        line.push(if matches!(c, '\n' | '\r' | '\t') {
            ' '
        } else {
            c
        });
    }
    line
}

/// One step of [`write_compact`]'s iterative walk.
enum Step<'a> {
    /// Write this value (pushing its children as further steps).
    Value(&'a Value),
    /// Write an object key.
    Key(&'a str),
    /// Write punctuation.
    Raw(&'static str),
}

/// Compact JSON of `value` for a preview: stops once more than `max_chars` characters are
/// written and cuts there; the flag says whether it did. Iterative and bounded, so a huge or
/// deep value costs no more than its preview.
fn write_compact(value: &Value, max_chars: usize) -> (String, bool) {
    // More than 4 bytes per allowed character guarantees more than `max_chars` characters.
    let byte_budget = max_chars.saturating_mul(4);
    let mut out = String::new();
    let mut steps = vec![Step::Value(value)];
    while let Some(step) = steps.pop() {
        if out.len() > byte_budget {
            break;
        }
        match step {
            Step::Raw(text) => out.push_str(text),
            Step::Key(key) => push_json_string(&mut out, key),
            Step::Value(Value::Null) => out.push_str("null"),
            Step::Value(Value::Bool(b)) => out.push_str(if *b { "true" } else { "false" }),
            Step::Value(Value::Number(n)) => out.push_str(&n.to_string()),
            Step::Value(Value::String(s)) => push_json_string(&mut out, s),
            Step::Value(Value::Array(items)) => {
                out.push('[');
                steps.push(Step::Raw("]"));
                for (i, item) in items.iter().enumerate().rev() {
                    steps.push(Step::Value(item));
                    if i > 0 {
                        steps.push(Step::Raw(","));
                    }
                }
            }
            Step::Value(Value::Object(map)) => {
                out.push('{');
                steps.push(Step::Raw("}"));
                let entries: Vec<(&String, &Value)> = map.iter().collect();
                for (i, (key, item)) in entries.into_iter().enumerate().rev() {
                    steps.push(Step::Value(item));
                    steps.push(Step::Raw(":"));
                    steps.push(Step::Key(key));
                    if i > 0 {
                        steps.push(Step::Raw(","));
                    }
                }
            }
        }
    }
    match char_boundary_after(&out, max_chars) {
        Some(cut) => {
            out.truncate(cut);
            (out, true)
        }
        None => (out, false),
    }
}

/// Appends `text` as a JSON string literal, escaped by `serde_json`.
fn push_json_string(out: &mut String, text: &str) {
    out.push_str(&Value::from(text).to_string());
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn counted_arrays_are_previewed_as_counts() {
        assert_eq!(
            result_preview(&json!({"results": [1, 2, 3, 4, 5]})),
            "Found 5 results"
        );
        assert_eq!(result_preview(&json!({"results": [1]})), "Found 1 result");
        assert_eq!(
            result_preview(&json!({"pages": [{}, {}]})),
            "Fetched 2 pages"
        );
        assert_eq!(result_preview(&json!({"pages": [{}]})), "Fetched 1 page");
        assert_eq!(
            result_preview(&json!({"memories": []})),
            "Recalled 0 memories"
        );
        assert_eq!(
            result_preview(&json!({"memories": ["m"]})),
            "Recalled 1 memory"
        );
        assert_eq!(result_preview(&json!({"items": [1, 2]})), "Found 2 items");
        assert_eq!(
            result_preview(&json!({"items": [1], "results": [1, 2], "result": 3})),
            "Found 2 results"
        );
    }

    #[test]
    fn a_non_array_counted_field_is_not_counted() {
        assert_eq!(
            result_preview(&json!({"results": "none", "result": 1})),
            "Result: 1"
        );
    }

    #[test]
    fn results_and_errors_are_previewed_as_text() {
        assert_eq!(result_preview(&json!({"result": 42})), "Result: 42");
        assert_eq!(result_preview(&json!({"result": 2.5})), "Result: 2.5");
        assert_eq!(
            result_preview(&json!({"expression": "6*7", "result": "42"})),
            "Result: 42"
        );
        assert_eq!(
            result_preview(&json!({"error": "division by zero"})),
            "Error: division by zero"
        );
        assert_eq!(
            result_preview(&json!({"error": {"code": 404}})),
            r#"Error: {"code":404}"#
        );
        assert_eq!(
            result_preview(&json!({"result": "line one\nline two"})),
            "Result: line one line two"
        );
    }

    #[test]
    fn a_null_error_or_non_scalar_result_falls_back_to_json() {
        assert_eq!(
            result_preview(&json!({"error": null, "ok": true})),
            r#"{"error":null,"ok":true}"#
        );
        assert_eq!(
            result_preview(&json!({"result": [1, 2]})),
            r#"{"result":[1,2]}"#
        );
    }

    #[test]
    fn other_values_are_previewed_as_compact_json_cut_at_120_characters() {
        assert_eq!(
            result_preview(&json!({"a": 1, "b": [true]})),
            r#"{"a":1,"b":[true]}"#
        );
        assert_eq!(result_preview(&json!("plain")), r#""plain""#);
        assert_eq!(result_preview(&json!(null)), "null");

        let long = json!({"text": "é".repeat(500)});
        let preview = result_preview(&long);
        assert!(preview.ends_with('…'));
        assert_eq!(preview.chars().count(), PREVIEW_MAX_CHARS + 1);
        assert!(preview.starts_with(r#"{"text":"éé"#));

        // Exactly 120 characters is not cut.
        let exact = json!("x".repeat(PREVIEW_MAX_CHARS - 2));
        assert_eq!(result_preview(&exact).chars().count(), PREVIEW_MAX_CHARS);
        assert!(!result_preview(&exact).ends_with('…'));
    }

    #[test]
    fn long_results_and_errors_are_cut_at_120_characters() {
        let preview = result_preview(&json!({"error": "e".repeat(300)}));
        assert!(preview.starts_with("Error: eee"));
        assert!(preview.ends_with('…'));
        assert_eq!(preview.chars().count(), PREVIEW_MAX_CHARS + 1);
    }
}
