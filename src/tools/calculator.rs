//! The `calculator` tool (docs/spec.md#calculator): evaluates arithmetic with the hand-written
//! parser in `calculator_parser`, never executing code. Result: `{"expression", "result"}`.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::calculator_parser::{CalculatorError, evaluate};
use super::schema::{add_to_description, set_keyword};
use super::{ProgressKind, ToolError, ToolFuture, TypedTool};
use crate::config::ToolsConfig;

pub struct Calculator {
    /// Longest expression, in characters (`tools.calculator_max_chars`).
    max_chars: usize,
}

impl Calculator {
    pub fn new(config: &ToolsConfig) -> Self {
        Self {
            max_chars: config.calculator_max_chars,
        }
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Arguments {
    /// The expression, e.g. "10000 * (1 + 0.05)^3".
    #[schemars(length(min = 1))]
    expression: String,
}

impl TypedTool for Calculator {
    type Args = Arguments;

    fn name(&self) -> &'static str {
        "calculator"
    }

    fn description(&self) -> Cow<'_, str> {
        "Evaluate a mathematical expression exactly instead of guessing. Operators: + - * / ^. \
         Functions: sqrt, log (base 10), ln, sin, cos, tan, abs, floor, ceil, round, min, max. \
         Constants: pi, e."
            .into()
    }

    fn parameters(&self, mut parameters: Value) -> Value {
        let expression = "/properties/expression";
        set_keyword(&mut parameters, expression, "maxLength", self.max_chars);
        let limit = format!("It may be at most {} characters long.", self.max_chars);
        add_to_description(&mut parameters, expression, &limit);
        parameters
    }

    fn progress(&self) -> Option<ProgressKind> {
        Some(ProgressKind::Calculating)
    }
    /// Its result depends only on the arguments (and the outside world, for the cache's
    /// five minutes).
    fn cacheable(&self) -> bool {
        true
    }

    fn call(&self, Arguments { expression }: Arguments) -> ToolFuture {
        let max_chars = self.max_chars;
        Box::pin(async move {
            let result = evaluate(&expression, max_chars).map_err(calculator_error)?;
            Ok(json!({"expression": expression, "result": result}))
        })
    }
}

fn calculator_error(err: CalculatorError) -> ToolError {
    let suggestion = match &err {
        CalculatorError::UnknownName { .. } => {
            "Use only the supported functions and constants, or substitute numbers for variables."
        }
        CalculatorError::TooLong { .. } => "Split the calculation into smaller expressions.",
        CalculatorError::TooDeep { .. } => {
            "Remove redundant parentheses and signs, or compute inner parts in separate calls."
        }
        CalculatorError::DivisionByZero | CalculatorError::NotFinite => {
            "Check the inputs: the result is undefined or out of range."
        }
        _ => "Fix the expression's syntax and call the calculator again.",
    };
    ToolError::new(err.code(), err.to_string(), suggestion)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Tool;

    fn calculator() -> Calculator {
        Calculator::new(&ToolsConfig::default())
    }

    #[tokio::test]
    async fn results_and_errors_have_the_seed_shape() {
        let ok = calculator()
            .run(json!({"expression": "10000 * (1 + 0.05)^3"}))
            .await
            .unwrap();
        assert_eq!(
            ok,
            json!({"expression": "10000 * (1 + 0.05)^3", "result": 11576.25})
        );
        let err = calculator()
            .run(json!({"expression": "1/0"}))
            .await
            .unwrap_err();
        assert_eq!(err.code, "division_by_zero");
        let result = err.to_result();
        assert!(result["error"].is_string() && result["suggestion"].is_string());
        let err = calculator().run(json!({"expr": "1"})).await.unwrap_err();
        assert_eq!(err.code, "INVALID_ARGUMENTS");
    }

    #[tokio::test]
    async fn the_configured_length_limit_applies_and_is_advertised() {
        let tool = Calculator::new(&ToolsConfig {
            calculator_max_chars: 12,
            ..ToolsConfig::default()
        });
        let parameters = tool.definition().function.parameters.unwrap();
        let description = parameters["properties"]["expression"]["description"].clone();
        assert!(
            description
                .as_str()
                .unwrap()
                .contains("at most 12 characters"),
            "{description}"
        );
        let err = tool
            .run(json!({"expression": "1 + 2 + 3 + 4"}))
            .await
            .unwrap_err();
        assert_eq!(err.code, "too_long");
        assert_eq!(err.message, "expression is longer than 12 characters");
        let ok = tool.run(json!({"expression": "1 + 2 + 3"})).await.unwrap();
        assert_eq!(ok["result"], 6.0);
    }

    #[tokio::test]
    async fn deep_nesting_is_a_clear_error_whatever_the_length_limit() {
        let tool = Calculator::new(&ToolsConfig {
            calculator_max_chars: 100_000,
            ..ToolsConfig::default()
        });
        let err = tool
            .run(json!({"expression": format!("{}1", "-".repeat(99_999))}))
            .await
            .unwrap_err();
        assert_eq!(err.code, "too_deep");
        assert_eq!(err.message, "expression is nested more than 32 levels deep");
    }
}
