//! A workflow's steps: what the API takes (`StepSpec`: an id and either a tool call or a model
//! prompt) and the checks a workflow passes before it is saved — step ids unique and well
//! formed, tools this server has, every `{{steps.<id>.result}}` naming an earlier step (a later
//! one or itself would be a cycle), limits on counts and sizes.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::AutomationError;
use super::template::{self, Reference};

/// Steps a workflow may have: enough for a real recipe, few enough that one run stays short.
pub const MAX_STEPS: usize = 20;
/// Longest step id.
pub const MAX_STEP_ID_CHARS: usize = 64;
/// Longest prompt of a prompt step (before templating).
pub const MAX_PROMPT_CHARS: usize = 20_000;
/// Longest tool arguments of a tool step, as JSON text (before templating).
pub const MAX_ARGUMENTS_CHARS: usize = 20_000;

/// One step as the API takes and shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepSpec {
    /// Unique in the workflow: lowercase letters, digits, `_` and `-`.
    pub id: String,
    /// A tool call: the tool's name…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// …and its arguments (a JSON object; strings may hold placeholders).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// A model prompt (may hold placeholders).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
}

/// What a checked step does.
#[derive(Debug, Clone, PartialEq)]
pub enum StepAction {
    Tool { name: String, arguments: Value },
    Prompt { text: String },
}

/// A checked step.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub id: String,
    pub action: StepAction,
}

impl Step {
    /// `tool` or `prompt`, for events and views.
    pub fn kind(&self) -> &'static str {
        match self.action {
            StepAction::Tool { .. } => "tool",
            StepAction::Prompt { .. } => "prompt",
        }
    }

    /// The tool's name, for a tool step.
    pub fn tool_name(&self) -> Option<&str> {
        match &self.action {
            StepAction::Tool { name, .. } => Some(name),
            StepAction::Prompt { .. } => None,
        }
    }

    /// Every placeholder of the step.
    pub fn references(&self) -> Result<Vec<Reference>, template::TemplateError> {
        match &self.action {
            StepAction::Tool { arguments, .. } => template::references(&arguments.to_string()),
            StepAction::Prompt { text } => template::references(text),
        }
    }
}

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.chars().count() <= MAX_STEP_ID_CHARS
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

/// Checks `specs` (with `has_tool` saying which tool names this server can run in a step)
/// and returns the steps.
pub fn check_steps(
    specs: &[StepSpec],
    has_tool: &dyn Fn(&str) -> bool,
) -> Result<Vec<Step>, AutomationError> {
    let invalid = |message: String| AutomationError::InvalidWorkflow(message);
    if specs.is_empty() {
        return Err(invalid("a workflow needs at least one step".into()));
    }
    if specs.len() > MAX_STEPS {
        return Err(invalid(format!(
            "a workflow has at most {MAX_STEPS} steps; this one has {}",
            specs.len()
        )));
    }
    let mut steps: Vec<Step> = Vec::with_capacity(specs.len());
    for spec in specs {
        if !valid_id(&spec.id) {
            return Err(invalid(format!(
                "step id {:?} must be 1 to {MAX_STEP_ID_CHARS} lowercase letters, digits, '_' or '-'",
                spec.id
            )));
        }
        if steps.iter().any(|s| s.id == spec.id) {
            return Err(invalid(format!("two steps have the id {:?}", spec.id)));
        }
        let action = match (&spec.tool, &spec.prompt) {
            (Some(name), None) => {
                if !has_tool(name) {
                    return Err(AutomationError::UnknownTool(format!(
                        "step {:?} calls {name:?}, a tool this server cannot run in a workflow",
                        spec.id
                    )));
                }
                let arguments = spec
                    .arguments
                    .clone()
                    .unwrap_or_else(|| Value::Object(Default::default()));
                if !arguments.is_object() {
                    return Err(invalid(format!(
                        "step {:?}: arguments must be a JSON object",
                        spec.id
                    )));
                }
                if arguments.to_string().len() > MAX_ARGUMENTS_CHARS {
                    return Err(invalid(format!(
                        "step {:?}: arguments are longer than {MAX_ARGUMENTS_CHARS} characters",
                        spec.id
                    )));
                }
                StepAction::Tool {
                    name: name.clone(),
                    arguments,
                }
            }
            (None, Some(text)) => {
                if spec.arguments.is_some() {
                    return Err(invalid(format!(
                        "step {:?}: a prompt step takes no arguments",
                        spec.id
                    )));
                }
                if text.trim().is_empty() || text.chars().count() > MAX_PROMPT_CHARS {
                    return Err(invalid(format!(
                        "step {:?}: a prompt must have 1 to {MAX_PROMPT_CHARS} characters",
                        spec.id
                    )));
                }
                StepAction::Prompt { text: text.clone() }
            }
            _ => {
                return Err(invalid(format!(
                    "step {:?} must have either \"tool\" (with \"arguments\") or \"prompt\"",
                    spec.id
                )));
            }
        };
        let step = Step {
            id: spec.id.clone(),
            action,
        };
        let references = step.references().map_err(|err| {
            AutomationError::InvalidTemplate(format!("step {:?}: {err}", step.id))
        })?;
        for reference in references {
            if let Reference::Step { id, .. } = &reference {
                if id == &step.id {
                    return Err(AutomationError::InvalidTemplate(format!(
                        "step {:?} refers to its own result ({{{{{reference}}}}}): a cycle",
                        step.id
                    )));
                }
                if !steps.iter().any(|s| &s.id == id) {
                    let later = specs.iter().any(|s| &s.id == id);
                    return Err(AutomationError::InvalidTemplate(if later {
                        format!(
                            "step {:?} refers to {{{{{reference}}}}}, a step that runs after it: steps may use only earlier results (a cycle otherwise)",
                            step.id
                        )
                    } else {
                        format!(
                            "step {:?} refers to {{{{{reference}}}}}, but the workflow has no step {id:?}",
                            step.id
                        )
                    }));
                }
            }
        }
        steps.push(step);
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn specs(value: Value) -> Vec<StepSpec> {
        serde_json::from_value(value).unwrap()
    }

    fn check(value: Value) -> Result<Vec<Step>, AutomationError> {
        check_steps(&specs(value), &|name| name == "calculator")
    }

    #[test]
    fn a_tool_then_a_prompt_using_its_result_is_valid() {
        let steps = check(json!([
            {"id": "sum", "tool": "calculator", "arguments": {"expression": "{{input.expr}}"}},
            {"id": "say", "prompt": "Explain {{steps.sum.result}}"}
        ]))
        .unwrap();
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[1].kind(), "prompt");
    }

    #[test]
    fn forward_self_and_unknown_step_references_are_refused() {
        let forward = check(json!([
            {"id": "a", "prompt": "{{steps.b.result}}"},
            {"id": "b", "prompt": "x"}
        ]));
        assert!(
            matches!(forward, Err(AutomationError::InvalidTemplate(m)) if m.contains("after it"))
        );
        let own = check(json!([{"id": "a", "prompt": "{{steps.a.result}}"}]));
        assert!(matches!(own, Err(AutomationError::InvalidTemplate(m)) if m.contains("cycle")));
        let unknown = check(json!([{"id": "a", "prompt": "{{steps.zz.result}}"}]));
        assert!(
            matches!(unknown, Err(AutomationError::InvalidTemplate(m)) if m.contains("no step"))
        );
    }

    #[test]
    fn unknown_tools_duplicate_ids_and_empty_workflows_are_refused() {
        assert!(matches!(
            check(json!([{"id": "a", "tool": "rm_rf", "arguments": {}}])),
            Err(AutomationError::UnknownTool(_))
        ));
        assert!(matches!(
            check(json!([{"id": "a", "prompt": "x"}, {"id": "a", "prompt": "y"}])),
            Err(AutomationError::InvalidWorkflow(_))
        ));
        assert!(matches!(
            check(json!([])),
            Err(AutomationError::InvalidWorkflow(_))
        ));
        assert!(matches!(
            check(json!([{"id": "a", "prompt": "x", "tool": "calculator"}])),
            Err(AutomationError::InvalidWorkflow(_))
        ));
    }
}
