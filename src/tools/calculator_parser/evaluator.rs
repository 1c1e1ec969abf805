//! The calculator's evaluator: an `Expr` → a finite number.

use super::ast::{BinaryOp, Expr};
use super::{CalculatorError, finite};

/// Evaluates a parsed expression, failing on division by zero or any non-finite intermediate.
pub(super) fn eval(expr: &Expr) -> Result<f64, CalculatorError> {
    match expr {
        Expr::Number(value) => finite(*value),
        Expr::Negate(operand) => Ok(-eval(operand)?),
        Expr::Chain { first, rest } => {
            let mut acc = eval(first)?;
            for (op, operand) in rest {
                let rhs = eval(operand)?;
                acc = finite(match op {
                    BinaryOp::Add => acc + rhs,
                    BinaryOp::Subtract => acc - rhs,
                    BinaryOp::Multiply => acc * rhs,
                    BinaryOp::Divide if rhs == 0.0 => {
                        return Err(CalculatorError::DivisionByZero);
                    }
                    BinaryOp::Divide => acc / rhs,
                })?;
            }
            Ok(acc)
        }
        Expr::Power { base, exponent } => {
            let base = eval(base)?;
            let exponent = eval(exponent)?;
            finite(base.powf(exponent))
        }
        Expr::Call { function, args } => {
            let values = args.iter().map(eval).collect::<Result<Vec<_>, _>>()?;
            finite(function.apply(&values))
        }
    }
}
