//! The calculator's syntax tree: `Expr`, its binary operators, and the functions the language
//! knows (names, arity, and how each is applied to numbers).

use super::CalculatorError;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum BinaryOp {
    Add,
    Subtract,
    Multiply,
    Divide,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Function {
    Sqrt,
    Log,
    Ln,
    Sin,
    Cos,
    Tan,
    Abs,
    Floor,
    Ceil,
    Round,
    Min,
    Max,
}

impl Function {
    /// Every function, in the order of the spec; `from_name` searches it.
    pub(super) const ALL: [Self; 12] = [
        Self::Sqrt,
        Self::Log,
        Self::Ln,
        Self::Sin,
        Self::Cos,
        Self::Tan,
        Self::Abs,
        Self::Floor,
        Self::Ceil,
        Self::Round,
        Self::Min,
        Self::Max,
    ];

    /// Looks up a function by its lowercase name.
    pub(super) fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|function| function.name() == name)
    }

    /// The function's name, as written in expressions (lowercase).
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Sqrt => "sqrt",
            Self::Log => "log",
            Self::Ln => "ln",
            Self::Sin => "sin",
            Self::Cos => "cos",
            Self::Tan => "tan",
            Self::Abs => "abs",
            Self::Floor => "floor",
            Self::Ceil => "ceil",
            Self::Round => "round",
            Self::Min => "min",
            Self::Max => "max",
        }
    }

    /// A call of this function on `args`, or `WrongArity` if it takes a different number.
    pub(super) fn call(self, args: Vec<Expr>) -> Result<Expr, CalculatorError> {
        let (ok, expected) = match self {
            Self::Min | Self::Max => (!args.is_empty(), "at least 1"),
            _ => (args.len() == 1, "exactly 1"),
        };
        if ok {
            Ok(Expr::Call {
                function: self,
                args,
            })
        } else {
            Err(CalculatorError::WrongArity {
                function: self.name().to_owned(),
                expected,
                found: args.len(),
            })
        }
    }

    /// Applies the function to already-evaluated, arity-checked arguments.
    pub(super) fn apply(self, args: &[f64]) -> f64 {
        let first = args.first().copied().unwrap_or(f64::NAN);
        match self {
            Self::Sqrt => first.sqrt(),
            Self::Log => first.log10(),
            Self::Ln => first.ln(),
            Self::Sin => first.sin(),
            Self::Cos => first.cos(),
            Self::Tan => first.tan(),
            Self::Abs => first.abs(),
            Self::Floor => first.floor(),
            Self::Ceil => first.ceil(),
            Self::Round => first.round(),
            Self::Min => args.iter().copied().fold(first, f64::min),
            Self::Max => args.iter().copied().fold(first, f64::max),
        }
    }
}

/// The parsed expression. Chains of same-precedence left-associative operators are stored flat,
/// so the tree's depth (and the evaluator's recursion) is bounded by `MAX_DEPTH`, not by length.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Expr {
    Number(f64),
    Negate(Box<Expr>),
    Chain {
        first: Box<Expr>,
        rest: Vec<(BinaryOp, Expr)>,
    },
    Power {
        base: Box<Expr>,
        exponent: Box<Expr>,
    },
    Call {
        function: Function,
        args: Vec<Expr>,
    },
}

impl Expr {
    /// `first` alone, or `first` followed by the operations in `rest`.
    pub(super) fn chain(first: Expr, rest: Vec<(BinaryOp, Expr)>) -> Expr {
        if rest.is_empty() {
            first
        } else {
            Expr::Chain {
                first: Box::new(first),
                rest,
            }
        }
    }
}
