//! The calculator's expression language: a hand-written tokenizer, a depth-limited
//! recursive-descent parser and an evaluator for `+ - * / ^` (`**`), parentheses, unary signs,
//! the functions sqrt/log/ln/sin/cos/tan/abs/floor/ceil/round/min/max and the constants pi and e.
//! Every failure is a `CalculatorError` with a stable code; no input can panic or exhaust the stack.
//!
//! The stages, one file each: `tokenizer` (characters → tokens), `parser` (tokens → `ast`, the
//! syntax tree and its functions), `evaluator` (tree → number). This file holds the limits, the
//! error type and `evaluate`, which runs the three.

mod ast;
mod evaluator;
mod parser;
mod tokenizer;

#[cfg(test)]
mod tests;

use evaluator::eval;
use parser::Parser;
use tokenizer::tokenize;

/// Deepest nesting of parentheses / unary operators / function calls / exponents accepted.
///
/// 32 is far beyond anything a person or a model writes on purpose (`((((1))))` is 4), yet it
/// bounds the parser's recursion: measured at up to 6 KiB of stack per level in a debug build
/// (nested calls; under 200 KiB at the limit, so even a 256 KiB thread holds it) and about
/// 1 KiB in release. It is independent of the length limit (`tools.calculator_max_chars`,
/// which the caller passes in): without it, 100,000 characters of `(` would recurse 100,000
/// levels deep.
pub const MAX_DEPTH: usize = 32;

/// Decimal places kept in a result whose magnitude is below `ROUNDING_LIMIT`.
///
/// An `f64` carries 15-17 significant digits; keeping 10 decimals removes the binary noise in
/// the last few digits (`0.1 + 0.2` gives `0.3`) while staying far finer than any precision a
/// calculator user asks for.
const ROUNDING_DECIMALS: usize = 10;

/// Results at or above this magnitude are returned unrounded (the spec's limit).
///
/// At 1e15 an `f64` has no fractional digits left to clean up, so rounding would only cost time.
const ROUNDING_LIMIT: f64 = 1e15;

/// Every name the language knows, listed in the unknown-name message so the caller can correct
/// itself; it must match `Function::ALL` and the constants in `Parser::resolve_name`.
const KNOWN_NAMES_HINT: &str = "functions: sqrt, log, ln, sin, cos, tan, abs, floor, ceil, round, \
                                min, max; constants: pi, e";

/// Everything that can go wrong while evaluating an expression. Positions are zero-based
/// character offsets into the expression.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CalculatorError {
    /// The expression is empty or only whitespace.
    #[error("expression is empty")]
    Empty,
    /// The expression has more than `max` characters.
    #[error("expression is longer than {max} characters")]
    TooLong { max: usize },
    /// A character that is not part of the language.
    #[error("unexpected character '{ch}' at position {position}")]
    UnexpectedChar { ch: char, position: usize },
    /// The expression stops where an operand or a closing parenthesis is still needed.
    #[error("unexpected end of expression")]
    UnexpectedEnd,
    /// A valid token in a place where it does not belong.
    #[error("unexpected '{found}' at position {position}")]
    UnexpectedToken { found: String, position: usize },
    /// A name that is neither a known function nor a known constant.
    #[error("unknown name '{name}' ({KNOWN_NAMES_HINT})")]
    UnknownName { name: String },
    /// A function called with the wrong number of arguments.
    #[error("{function}() takes {expected} argument(s) but was given {found}")]
    WrongArity {
        function: String,
        expected: &'static str,
        found: usize,
    },
    /// A divisor that evaluates to zero.
    #[error("division by zero")]
    DivisionByZero,
    /// Parentheses, unary signs, function calls or exponents nested more than `max` deep.
    #[error("expression is nested more than {max} levels deep")]
    TooDeep { max: usize },
    /// A result or intermediate value that is NaN or infinite.
    #[error(
        "result is not a finite number (e.g. square root or logarithm of a negative number, \
         logarithm of zero, or overflow)"
    )]
    NotFinite,
    /// A malformed numeric literal such as `1e` or `1.2.3`.
    #[error("invalid number '{text}'")]
    InvalidNumber { text: String },
}

impl CalculatorError {
    /// A stable code for the error, in `snake_case`, for machine consumers.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::Empty => "empty",
            Self::TooLong { .. } => "too_long",
            Self::UnexpectedChar { .. }
            | Self::UnexpectedEnd
            | Self::UnexpectedToken { .. }
            | Self::InvalidNumber { .. } => "syntax_error",
            Self::UnknownName { .. } => "unknown_name",
            Self::WrongArity { .. } => "wrong_arity",
            Self::DivisionByZero => "division_by_zero",
            Self::TooDeep { .. } => "too_deep",
            Self::NotFinite => "not_finite",
        }
    }
}

/// Evaluates an arithmetic expression of at most `max_chars` characters. The result is rounded to 10 decimal places when its
/// magnitude is below 1e15 (to remove floating-point noise) and is never `-0.0`, NaN or infinite.
///
/// # Errors
///
/// Any `CalculatorError`: the expression is empty, too long, too deeply nested or malformed,
/// names an unknown function or constant, calls a function with the wrong number of arguments,
/// divides by zero, or produces a value that is not finite.
pub fn evaluate(expression: &str, max_chars: usize) -> Result<f64, CalculatorError> {
    if expression.chars().count() > max_chars {
        return Err(CalculatorError::TooLong { max: max_chars });
    }
    if expression.trim().is_empty() {
        return Err(CalculatorError::Empty);
    }
    let tokens = tokenize(expression)?;
    let ast = Parser::new(tokens).parse()?;
    let value = eval(&ast)?;
    Ok(clean(value))
}

/// Rounds away floating-point noise and turns `-0.0` into `0.0`.
fn clean(value: f64) -> f64 {
    let rounded = if value.abs() < ROUNDING_LIMIT {
        // Formatting rounds the exact binary value correctly, and parsing the decimal back gives
        // the nearest f64, so values that need no rounding come back unchanged.
        format!("{value:.ROUNDING_DECIMALS$}")
            .parse::<f64>()
            .unwrap_or(value)
    } else {
        value
    };
    if rounded == 0.0 { 0.0 } else { rounded }
}

/// Returns `value` if it is finite, `NotFinite` otherwise.
fn finite(value: f64) -> Result<f64, CalculatorError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(CalculatorError::NotFinite)
    }
}
