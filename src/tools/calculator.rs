//! The `calculator` tool (seed 000): evaluates arithmetic with the hand-written parser in
//! `calculator_parser`, never executing code. Result: `{"expression", "result"}`.

use serde::Deserialize;
use serde_json::{Value, json};

use super::calculator_parser::{CalculatorError, MAX_EXPRESSION_CHARS, evaluate};
use super::{ProgressKind, Tool, ToolError, ToolFuture, parse_arguments};
use crate::llm::wire::ToolDefinition;

pub struct Calculator;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Arguments {
    expression: String,
}

impl Tool for Calculator {
    fn name(&self) -> &'static str {
        "calculator"
    }

    fn definition(&self) -> ToolDefinition {
        ToolDefinition::function(
            "calculator",
            "Evaluate a mathematical expression exactly instead of guessing. Operators: + - * / ^. \
             Functions: sqrt, log (base 10), ln, sin, cos, tan, abs, floor, ceil, round, min, max. \
             Constants: pi, e.",
            json!({
                "type": "object",
                "properties": {
                    "expression": {
                        "type": "string",
                        "description": format!("The expression, at most {MAX_EXPRESSION_CHARS} characters, e.g. \"10000 * (1 + 0.05)^3\"."),
                    }
                },
                "required": ["expression"],
                "additionalProperties": false
            }),
        )
    }

    fn progress(&self) -> Option<ProgressKind> {
        Some(ProgressKind::Calculating)
    }

    fn run(&self, arguments: Value) -> ToolFuture {
        Box::pin(async move {
            let Arguments { expression } = parse_arguments(arguments)?;
            let result = evaluate(&expression).map_err(calculator_error)?;
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

    #[tokio::test]
    async fn results_and_errors_have_the_seed_shape() {
        let ok = Calculator
            .run(json!({"expression": "10000 * (1 + 0.05)^3"}))
            .await
            .unwrap();
        assert_eq!(
            ok,
            json!({"expression": "10000 * (1 + 0.05)^3", "result": 11576.25})
        );
        let err = Calculator
            .run(json!({"expression": "1/0"}))
            .await
            .unwrap_err();
        assert_eq!(err.code, "division_by_zero");
        let result = err.to_result();
        assert!(result["error"].is_string() && result["suggestion"].is_string());
        let err = Calculator.run(json!({"expr": "1"})).await.unwrap_err();
        assert_eq!(err.code, "invalid_arguments");
    }
}
