//! The `ask_user` tool (docs/spec.md#ask_user): the model asks the user a clarifying question —
//! free text, options, a confirmation, a 1–5 rating or a form. Running it only validates and
//! normalises the question; the loop then pauses the run until the user's reply (validated here
//! too) arrives.

use std::borrow::Cow;
use std::collections::HashSet;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::schema::set_keyword;
use super::{ToolError, ToolFuture, TypedTool, parse_arguments};
use crate::config::AskUserConfig;

/// Longest form field key.
const MAX_KEY_CHARS: usize = 64;
/// The scale of a rating card (1–5: docs/spec.md#ask_user).
const RATING_RANGE: std::ops::RangeInclusive<i64> = 1..=5;

pub struct AskUser {
    limits: AskUserConfig,
}

impl AskUser {
    pub fn new(limits: AskUserConfig) -> Self {
        Self { limits }
    }
}

/// How the question is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Style {
    Default,
    Confirm,
    Rating,
    Form,
}

/// A form field key: letters, digits, '_' and '-'.
const KEY_PATTERN: &str = "^[A-Za-z0-9_-]+$";

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Arguments {
    /// The question to ask.
    #[schemars(length(min = 1))]
    question: String,
    /// Choices to offer.
    #[schemars(inner(length(min = 1)))]
    options: Option<Vec<String>>,
    /// Whether the user may type an answer besides the options.
    #[serde(default = "yes")]
    allow_free_text: bool,
    /// Whether several options may be chosen.
    #[serde(default)]
    multi_select: bool,
    /// How the question is shown: default (free text and/or options), confirm (yes/no),
    /// rating (1-5), form (structured fields).
    #[serde(default = "default_style")]
    style: Style,
    /// Form fields (style form).
    fields: Option<Vec<Field>>,
}

fn yes() -> bool {
    true
}

fn default_style() -> Style {
    Style::Default
}

/// One field of a form.
#[derive(Deserialize, serde::Serialize, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Field {
    /// What the user is asked for.
    #[schemars(length(min = 1))]
    label: String,
    /// The key its value is answered under.
    #[schemars(length(min = 1, max = MAX_KEY_CHARS), regex(pattern = KEY_PATTERN))]
    key: String,
    /// A hint shown in the empty field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    placeholder: Option<String>,
    /// Whether the form cannot be sent without it.
    #[serde(default)]
    required: bool,
}

fn invalid(message: String) -> ToolError {
    ToolError::new(
        "invalid_question",
        message,
        "Fix the ask_user arguments as the message says and call it again.",
    )
}

impl AskUser {
    fn check_text(&self, what: &str, text: &str) -> Result<(), ToolError> {
        let length = text.trim().chars().count();
        if length == 0 || length > self.limits.max_text_chars {
            return Err(invalid(format!(
                "{what} must be 1-{} characters",
                self.limits.max_text_chars
            )));
        }
        Ok(())
    }

    /// Validates the model's arguments into the stored question.
    pub fn normalise(&self, arguments: Value) -> Result<Value, ToolError> {
        self.question(parse_arguments(arguments)?)
    }

    /// The stored question of parsed arguments, checked against the limits.
    fn question(&self, args: Arguments) -> Result<Value, ToolError> {
        self.check_text("question", &args.question)?;
        let style = args.style;
        let mut options = args.options.unwrap_or_default();
        if options.len() > self.limits.max_options {
            return Err(invalid(format!(
                "at most {} options",
                self.limits.max_options
            )));
        }
        let mut seen = HashSet::new();
        for option in &options {
            self.check_text("each option", option)?;
            if !seen.insert(option.as_str()) {
                return Err(invalid(format!("option {option:?} appears twice")));
            }
        }
        let fields = args.fields.unwrap_or_default();
        if style != Style::Form && !fields.is_empty() {
            return Err(invalid("fields are only for style \"form\"".into()));
        }
        match style {
            Style::Form => {
                if fields.is_empty() || fields.len() > self.limits.max_fields {
                    return Err(invalid(format!(
                        "a form needs 1-{} fields",
                        self.limits.max_fields
                    )));
                }
                let mut keys = HashSet::new();
                for field in &fields {
                    self.check_text("each field label", &field.label)?;
                    if let Some(placeholder) = &field.placeholder {
                        self.check_text("a placeholder", placeholder)?;
                    }
                    let key_ok = !field.key.is_empty()
                        && field.key.chars().count() <= MAX_KEY_CHARS
                        && field
                            .key
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                    if !key_ok {
                        return Err(invalid(format!(
                            "field key {:?} must be 1-{MAX_KEY_CHARS} letters, digits, '_' or '-'",
                            field.key
                        )));
                    }
                    if !keys.insert(field.key.as_str()) {
                        return Err(invalid(format!("field key {:?} appears twice", field.key)));
                    }
                }
            }
            Style::Confirm if options.is_empty() => {
                options = vec!["Yes".into(), "No".into()];
            }
            Style::Rating if !options.is_empty() => {
                return Err(invalid("a rating card takes no options".into()));
            }
            _ => {}
        }
        let allow_free_text = args.allow_free_text;
        if style == Style::Default && options.is_empty() && !allow_free_text {
            return Err(invalid(
                "with allow_free_text false, give options to choose from".into(),
            ));
        }
        Ok(json!({
            "question": args.question.trim(),
            "options": options,
            "allow_free_text": allow_free_text,
            "multi_select": args.multi_select,
            "style": match style {
                Style::Default => "default",
                Style::Confirm => "confirm",
                Style::Rating => "rating",
                Style::Form => "form",
            },
            "fields": fields,
        }))
    }

    /// Checks a user's answer against the stored question; returns the answer as stored.
    pub fn validate_answer(&self, question: &Value, answer: &Value) -> Result<Value, String> {
        let options: Vec<&str> = question["options"]
            .as_array()
            .map(|o| o.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let free_text = question["allow_free_text"].as_bool().unwrap_or(true);
        let multi = question["multi_select"].as_bool().unwrap_or(false);
        let max = self.limits.max_text_chars;
        let text_ok = |text: &str| {
            let length = text.trim().chars().count();
            if length == 0 || length > max {
                Err(format!("an answer must be 1-{max} characters"))
            } else {
                Ok(())
            }
        };
        let choice_ok = |text: &str| {
            text_ok(text)?;
            if options.contains(&text) || free_text {
                Ok(())
            } else {
                Err(format!("{text:?} is not one of the options {options:?}"))
            }
        };
        match question["style"].as_str().unwrap_or("default") {
            "rating" => match answer.as_i64() {
                Some(n) if RATING_RANGE.contains(&n) => Ok(json!(n)),
                _ => Err("a rating must be a whole number from 1 to 5".into()),
            },
            "confirm" => match answer {
                Value::Bool(_) => Ok(answer.clone()),
                Value::String(text) => choice_ok(text).map(|()| answer.clone()),
                _ => Err("a confirmation is true, false or one of the options".into()),
            },
            "form" => {
                let Some(values) = answer.as_object() else {
                    return Err("a form answer is an object of field values".into());
                };
                let fields = question["fields"].as_array().cloned().unwrap_or_default();
                let keys: Vec<&str> = fields.iter().filter_map(|f| f["key"].as_str()).collect();
                if let Some(unknown) = values.keys().find(|k| !keys.contains(&k.as_str())) {
                    return Err(format!("{unknown:?} is not a field of this form"));
                }
                for field in &fields {
                    let key = field["key"].as_str().unwrap_or_default();
                    match values.get(key) {
                        Some(Value::String(text)) if !text.trim().is_empty() => text_ok(text)?,
                        Some(Value::String(_)) | Some(Value::Null) | None => {
                            if field["required"].as_bool().unwrap_or(false) {
                                return Err(format!("field {key:?} is required"));
                            }
                        }
                        Some(_) => return Err(format!("field {key:?} must be text")),
                    }
                }
                Ok(answer.clone())
            }
            _ => match answer {
                Value::String(text) => choice_ok(text).map(|()| answer.clone()),
                Value::Array(items) if multi => {
                    if items.is_empty() {
                        return Err("choose at least one option".into());
                    }
                    let mut seen = HashSet::new();
                    for item in items {
                        let text = item.as_str().ok_or("each choice must be text")?;
                        choice_ok(text)?;
                        if !seen.insert(text) {
                            return Err(format!("{text:?} is chosen twice"));
                        }
                    }
                    Ok(answer.clone())
                }
                Value::Array(_) => Err("this question takes a single answer".into()),
                _ => Err("the answer must be text or a list of options".into()),
            },
        }
    }
}

impl TypedTool for AskUser {
    type Args = Arguments;

    fn name(&self) -> &'static str {
        "ask_user"
    }

    fn description(&self) -> Cow<'_, str> {
        "Pause and ask the user a clarifying question when ambiguity prevents a useful \
         answer. Styles: default (free text and/or options), confirm (yes/no), rating (1-5), \
         form (structured fields)."
            .into()
    }

    fn parameters(&self, mut parameters: Value) -> Value {
        let text = self.limits.max_text_chars;
        for at in [
            "/properties/question",
            "/properties/options/items",
            "/properties/fields/items/properties/label",
            "/properties/fields/items/properties/placeholder",
        ] {
            set_keyword(&mut parameters, at, "maxLength", text);
        }
        let options = self.limits.max_options;
        set_keyword(&mut parameters, "/properties/options", "maxItems", options);
        let fields = self.limits.max_fields;
        set_keyword(&mut parameters, "/properties/fields", "maxItems", fields);
        parameters
    }

    fn progress(&self) -> Option<super::ProgressKind> {
        None
    }

    /// `x_ask_user.question` and the rest of its family.
    fn own_events(&self) -> bool {
        true
    }

    fn pauses(&self) -> bool {
        true
    }

    fn call(&self, args: Arguments) -> ToolFuture {
        let result = self.question(args);
        Box::pin(async move { result })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool() -> AskUser {
        AskUser::new(AskUserConfig::default())
    }

    #[test]
    fn each_style_validates_its_arguments() {
        let t = tool();
        assert!(t.normalise(json!({"question": "Which?"})).is_ok());
        let confirm = t
            .normalise(json!({"question": "Go?", "style": "confirm"}))
            .unwrap();
        assert_eq!(confirm["options"], json!(["Yes", "No"]));
        assert!(
            t.normalise(json!({"question": "Rate", "style": "rating", "options": ["a"]}))
                .is_err()
        );
        assert!(
            t.normalise(json!({"question": "Form", "style": "form"}))
                .is_err(),
            "a form needs fields"
        );
        let dup = json!({"question": "F", "style": "form", "fields": [
            {"label": "A", "key": "a"}, {"label": "B", "key": "a"}]});
        assert!(t.normalise(dup).unwrap_err().message.contains("twice"));
        let too_many: Vec<String> = (0..21).map(|i| format!("o{i}")).collect();
        assert!(
            t.normalise(json!({"question": "Q", "options": too_many}))
                .is_err()
        );
        assert!(t.normalise(json!({"question": "x".repeat(4_001)})).is_err());
        assert!(
            t.normalise(json!({"question": "Q", "fields": [{"label": "A", "key": "a"}]}))
                .is_err()
        );
        assert!(
            t.normalise(json!({"question": "Q", "allow_free_text": false}))
                .is_err()
        );
        assert!(
            t.normalise(json!({"question": "Q", "style": "poll"}))
                .is_err()
        );
    }

    #[test]
    fn answers_are_checked_against_their_question() {
        let t = tool();
        let closed = t
            .normalise(json!({"question": "Pick", "options": ["a", "b"], "allow_free_text": false}))
            .unwrap();
        assert!(t.validate_answer(&closed, &json!("a")).is_ok());
        assert!(t.validate_answer(&closed, &json!("c")).is_err());
        assert!(
            t.validate_answer(&closed, &json!(["a", "b"])).is_err(),
            "single select"
        );
        let multi = t
            .normalise(json!({"question": "Pick", "options": ["a", "b"], "allow_free_text": false, "multi_select": true}))
            .unwrap();
        assert!(t.validate_answer(&multi, &json!(["a", "b"])).is_ok());
        assert!(t.validate_answer(&multi, &json!(["a", "a"])).is_err());
        let rating = t
            .normalise(json!({"question": "Rate", "style": "rating"}))
            .unwrap();
        assert!(t.validate_answer(&rating, &json!(5)).is_ok());
        assert!(t.validate_answer(&rating, &json!(6)).is_err());
        assert!(t.validate_answer(&rating, &json!("5")).is_err());
        let form = t
            .normalise(json!({"question": "Who", "style": "form", "fields": [
                {"label": "Name", "key": "name", "required": true}, {"label": "Team", "key": "team"}]}))
            .unwrap();
        assert!(t.validate_answer(&form, &json!({"name": "Ada"})).is_ok());
        assert!(
            t.validate_answer(&form, &json!({"team": "x"}))
                .unwrap_err()
                .contains("required")
        );
        assert!(
            t.validate_answer(&form, &json!({"name": "Ada", "age": "3"}))
                .is_err()
        );
        let confirm = t
            .normalise(json!({"question": "Go?", "style": "confirm"}))
            .unwrap();
        assert!(t.validate_answer(&confirm, &json!(true)).is_ok());
        assert!(t.validate_answer(&confirm, &json!(3)).is_err());
    }
}
