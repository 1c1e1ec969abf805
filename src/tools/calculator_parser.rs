//! The calculator's expression language: a hand-written tokenizer, a depth-limited
//! recursive-descent parser and an evaluator for `+ - * / ^` (`**`), parentheses, unary signs,
//! the functions sqrt/log/ln/sin/cos/tan/abs/floor/ceil/round/min/max and the constants pi and e.
//! Every failure is a `CalculatorError` with a stable code; no input can panic or exhaust the stack.

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

// ---------------------------------------------------------------------------------------------
// Tokenizer
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq)]
enum TokenKind {
    Number(f64),
    Name,
    Plus,
    Minus,
    Star,
    Slash,
    Caret,
    LeftParen,
    RightParen,
    Comma,
}

#[derive(Debug, Clone, PartialEq)]
struct Token {
    kind: TokenKind,
    /// The token's source text, for error messages and name lookup.
    text: String,
    /// Zero-based character offset of the token's first character.
    position: usize,
}

fn tokenize(expression: &str) -> Result<Vec<Token>, CalculatorError> {
    let chars: Vec<char> = expression.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while let Some(&ch) = chars.get(i) {
        let start = i;
        let kind = match ch {
            c if c.is_whitespace() => {
                i += 1;
                continue;
            }
            '0'..='9' | '.' => {
                let (value, end) = lex_number(&chars, start)?;
                i = end;
                TokenKind::Number(value)
            }
            c if c.is_ascii_alphabetic() => {
                i += 1;
                while chars
                    .get(i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    i += 1;
                }
                TokenKind::Name
            }
            '*' if chars.get(i + 1) == Some(&'*') => {
                i += 2;
                TokenKind::Caret
            }
            _ => {
                i += 1;
                match ch {
                    '+' => TokenKind::Plus,
                    '-' => TokenKind::Minus,
                    '*' => TokenKind::Star,
                    '/' => TokenKind::Slash,
                    '^' => TokenKind::Caret,
                    '(' => TokenKind::LeftParen,
                    ')' => TokenKind::RightParen,
                    ',' => TokenKind::Comma,
                    _ => {
                        return Err(CalculatorError::UnexpectedChar {
                            ch,
                            position: start,
                        });
                    }
                }
            }
        };
        tokens.push(Token {
            kind,
            text: chars[start..i].iter().collect(),
            position: start,
        });
    }
    Ok(tokens)
}

/// Lexes `digits [. digits] [(e|E) [+|-] digits]` (at least one mantissa digit) starting at
/// `start`; returns the value and the index just past the literal.
fn lex_number(chars: &[char], start: usize) -> Result<(f64, usize), CalculatorError> {
    let is_digit = |i: usize| chars.get(i).is_some_and(char::is_ascii_digit);
    let text_until = |end: usize| chars[start..end].iter().collect::<String>();

    let mut i = start;
    let mut mantissa_digits = 0;
    while is_digit(i) {
        i += 1;
        mantissa_digits += 1;
    }
    if chars.get(i) == Some(&'.') {
        i += 1;
        while is_digit(i) {
            i += 1;
            mantissa_digits += 1;
        }
    }
    if mantissa_digits == 0 {
        return Err(CalculatorError::InvalidNumber {
            text: text_until(i),
        });
    }
    if matches!(chars.get(i), Some('e' | 'E')) {
        i += 1;
        if matches!(chars.get(i), Some('+' | '-')) {
            i += 1;
        }
        if !is_digit(i) {
            return Err(CalculatorError::InvalidNumber {
                text: text_until(i),
            });
        }
        while is_digit(i) {
            i += 1;
        }
    }
    // A second decimal point (`1.2.3`) or a point after an exponent (`1e2.5`) is one bad number,
    // not two numbers side by side.
    if chars.get(i) == Some(&'.') {
        while chars
            .get(i)
            .is_some_and(|c| c.is_ascii_digit() || *c == '.')
        {
            i += 1;
        }
        return Err(CalculatorError::InvalidNumber {
            text: text_until(i),
        });
    }
    let text = text_until(i);
    let value = text
        .parse::<f64>()
        .map_err(|_| CalculatorError::InvalidNumber { text })?;
    // A literal such as `1e400` overflows to infinity.
    Ok((finite(value)?, i))
}

// ---------------------------------------------------------------------------------------------
// Parser
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq)]
enum BinaryOp {
    Add,
    Subtract,
    Multiply,
    Divide,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Function {
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
    const ALL: [Self; 12] = [
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
    fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|function| function.name() == name)
    }

    /// The function's name, as written in expressions (lowercase).
    fn name(self) -> &'static str {
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
    fn call(self, args: Vec<Expr>) -> Result<Expr, CalculatorError> {
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
    fn apply(self, args: &[f64]) -> f64 {
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
enum Expr {
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
    fn chain(first: Expr, rest: Vec<(BinaryOp, Expr)>) -> Expr {
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

/// What a name in the expression refers to.
enum Name {
    Constant(f64),
    Function(Function),
}

/// Recursive-descent parser over the grammar
///
/// ```text
/// expression := term (('+' | '-') term)*
/// term       := unary (('*' | '/') unary)*
/// unary      := ('+' | '-') unary | power
/// power      := primary ('^' unary)?          -- right-associative, binds tighter than unary
/// primary    := number | constant | function '(' expression (',' expression)* ')'
///             | function '(' ')' | '(' expression ')'
/// ```
struct Parser {
    tokens: Vec<Token>,
    next: usize,
    depth: usize,
}

impl Parser {
    fn new(tokens: Vec<Token>) -> Self {
        Self {
            tokens,
            next: 0,
            depth: 0,
        }
    }

    // The recursive methods keep their frames small (no cloned tokens, no closures, no helper
    // frames between levels): in a debug build each nesting level costs a few KiB of stack.

    /// Parses the whole token list as one expression.
    fn parse(mut self) -> Result<Expr, CalculatorError> {
        let expr = self.expression()?;
        if self.next < self.tokens.len() {
            Err(self.unexpected(self.next))
        } else {
            Ok(expr)
        }
    }

    fn peek_kind(&self) -> Option<TokenKind> {
        self.tokens.get(self.next).map(|token| token.kind)
    }

    /// Consumes the next token if it has the given kind.
    fn eat(&mut self, kind: TokenKind) -> bool {
        if self.peek_kind() == Some(kind) {
            self.next += 1;
            true
        } else {
            false
        }
    }

    /// Consumes the next token, which must have the given kind.
    fn expect(&mut self, kind: TokenKind) -> Result<(), CalculatorError> {
        if self.eat(kind) {
            Ok(())
        } else {
            Err(self.unexpected(self.next))
        }
    }

    /// The error for the token at `index`, or `UnexpectedEnd` if the tokens ran out.
    fn unexpected(&self, index: usize) -> CalculatorError {
        match self.tokens.get(index) {
            Some(token) => CalculatorError::UnexpectedToken {
                found: token.text.clone(),
                position: token.position,
            },
            None => CalculatorError::UnexpectedEnd,
        }
    }

    /// Goes one nesting level deeper, failing with `TooDeep` past `MAX_DEPTH`. Only successful
    /// parses call `leave`: any error ends the whole parse.
    fn enter(&mut self) -> Result<(), CalculatorError> {
        if self.depth >= MAX_DEPTH {
            return Err(CalculatorError::TooDeep { max: MAX_DEPTH });
        }
        self.depth += 1;
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn expression(&mut self) -> Result<Expr, CalculatorError> {
        let first = self.term()?;
        let mut rest = Vec::new();
        loop {
            let op = match self.peek_kind() {
                Some(TokenKind::Plus) => BinaryOp::Add,
                Some(TokenKind::Minus) => BinaryOp::Subtract,
                _ => break,
            };
            self.next += 1;
            rest.push((op, self.term()?));
        }
        Ok(Expr::chain(first, rest))
    }

    fn term(&mut self) -> Result<Expr, CalculatorError> {
        let first = self.unary()?;
        let mut rest = Vec::new();
        loop {
            let op = match self.peek_kind() {
                Some(TokenKind::Star) => BinaryOp::Multiply,
                Some(TokenKind::Slash) => BinaryOp::Divide,
                _ => break,
            };
            self.next += 1;
            rest.push((op, self.unary()?));
        }
        Ok(Expr::chain(first, rest))
    }

    fn unary(&mut self) -> Result<Expr, CalculatorError> {
        let negate = match self.peek_kind() {
            Some(TokenKind::Minus) => true,
            Some(TokenKind::Plus) => false,
            _ => return self.power(),
        };
        self.next += 1;
        self.enter()?;
        let operand = self.unary()?;
        self.leave();
        Ok(if negate {
            Expr::Negate(Box::new(operand))
        } else {
            operand
        })
    }

    fn power(&mut self) -> Result<Expr, CalculatorError> {
        let base = self.primary()?;
        if !self.eat(TokenKind::Caret) {
            return Ok(base);
        }
        // The exponent is a `unary`, so `2^-1` works and `2^3^2` is `2^(3^2)`.
        self.enter()?;
        let exponent = self.unary()?;
        self.leave();
        Ok(Expr::Power {
            base: Box::new(base),
            exponent: Box::new(exponent),
        })
    }

    fn primary(&mut self) -> Result<Expr, CalculatorError> {
        let index = self.next;
        let kind = self.peek_kind().ok_or(CalculatorError::UnexpectedEnd)?;
        self.next += 1;
        match kind {
            TokenKind::Number(value) => Ok(Expr::Number(value)),
            TokenKind::LeftParen => {
                self.enter()?;
                let inner = self.expression()?;
                self.leave();
                self.expect(TokenKind::RightParen)?;
                Ok(inner)
            }
            TokenKind::Name => match self.resolve_name(index)? {
                Name::Constant(value) => Ok(Expr::Number(value)),
                Name::Function(function) => self.call(function),
            },
            _ => Err(self.unexpected(index)),
        }
    }

    /// Looks up the name token at `index` as a constant or a function, case-insensitively.
    fn resolve_name(&self, index: usize) -> Result<Name, CalculatorError> {
        let text = self
            .tokens
            .get(index)
            .map_or("", |token| token.text.as_str());
        let lower = text.to_ascii_lowercase();
        match lower.as_str() {
            "pi" => Ok(Name::Constant(std::f64::consts::PI)),
            "e" => Ok(Name::Constant(std::f64::consts::E)),
            _ => Function::from_name(&lower)
                .map(Name::Function)
                .ok_or_else(|| CalculatorError::UnknownName {
                    name: text.to_owned(),
                }),
        }
    }

    /// Parses a function's parenthesized, comma-separated (possibly empty) argument list.
    fn call(&mut self, function: Function) -> Result<Expr, CalculatorError> {
        self.expect(TokenKind::LeftParen)?;
        self.enter()?;
        let mut args = Vec::new();
        if !self.eat(TokenKind::RightParen) {
            loop {
                args.push(self.expression()?);
                if !self.eat(TokenKind::Comma) {
                    break;
                }
            }
            self.expect(TokenKind::RightParen)?;
        }
        self.leave();
        function.call(args)
    }
}

// ---------------------------------------------------------------------------------------------
// Evaluator
// ---------------------------------------------------------------------------------------------

/// Evaluates a parsed expression, failing on division by zero or any non-finite intermediate.
fn eval(expr: &Expr) -> Result<f64, CalculatorError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The spec's (and the configuration's default) length limit.
    const MAX_EXPRESSION_CHARS: usize = 1_000;

    fn evaluate(expression: &str) -> Result<f64, CalculatorError> {
        super::evaluate(expression, MAX_EXPRESSION_CHARS)
    }

    fn ok(expression: &str) -> f64 {
        match evaluate(expression) {
            Ok(value) => value,
            Err(error) => panic!("{expression:?} failed: {error}"),
        }
    }

    fn err(expression: &str) -> CalculatorError {
        match evaluate(expression) {
            Ok(value) => panic!("{expression:?} unexpectedly gave {value}"),
            Err(error) => error,
        }
    }

    /// Deterministic printable-ASCII junk from a linear congruential generator.
    fn junk(seed: u64, len: usize, alphabet: &[u8]) -> String {
        let mut state = seed;
        (0..len)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let index = usize::try_from(state >> 33).unwrap() % alphabet.len();
                char::from(alphabet[index])
            })
            .collect()
    }

    #[test]
    fn spec_examples() {
        assert_eq!(evaluate("10000 * (1 + 0.05)^3"), Ok(11576.25));
        assert_eq!(evaluate("sqrt(144) + 2^3"), Ok(20.0));
        assert_eq!(evaluate("sin(pi/2)"), Ok(1.0));
        assert_eq!(evaluate("log(1000)"), Ok(3.0));
        assert_eq!(evaluate("max(42, 17) * min(3, 5)"), Ok(126.0));
        assert_eq!(evaluate("abs(-273.15) + ceil(2.1)"), Ok(276.15));
    }

    #[test]
    fn precedence_and_associativity() {
        assert_eq!(ok("2 + 3 * 4"), 14.0);
        assert_eq!(ok("(2+3)*4"), 20.0);
        assert_eq!(ok("-2^2"), -4.0);
        assert_eq!(ok("(-2)^2"), 4.0);
        assert_eq!(ok("2^3^2"), 512.0);
        assert_eq!(ok("2**3**2"), 512.0);
        assert_eq!(ok("2^-1"), 0.5);
        assert_eq!(ok("10 - 4 - 3"), 3.0);
        assert_eq!(ok("64 / 4 / 2"), 8.0);
        assert_eq!(ok("2 * -3"), -6.0);
        assert_eq!(ok("--3"), 3.0);
        assert_eq!(ok("+-+3"), -3.0);
        assert_eq!(ok("-(2 + 3) * 2"), -10.0);
    }

    #[test]
    fn numbers() {
        assert_eq!(ok("2"), 2.0);
        assert_eq!(ok("3.5"), 3.5);
        assert_eq!(ok(".5"), 0.5);
        assert_eq!(ok("1e3"), 1000.0);
        assert_eq!(ok("2.5E-2"), 0.025);
        assert_eq!(ok("1e+2"), 100.0);
        assert_eq!(ok("0.1 + 0.2"), 0.3);
        assert_eq!(ok("1e20 + 1"), 1e20);
    }

    #[test]
    fn functions_and_constants() {
        assert_eq!(ok("ln(e)"), 1.0);
        assert_eq!(ok("round(2.5)"), 3.0);
        assert_eq!(ok("round(-2.5)"), -3.0);
        assert_eq!(ok("round(2.4)"), 2.0);
        assert_eq!(ok("floor(-2.5)"), -3.0);
        assert_eq!(ok("floor(-2)"), -2.0);
        assert_eq!(ok("ceil(-2.5)"), -2.0);
        assert_eq!(ok("cos(0)"), 1.0);
        assert_eq!(ok("tan(0)"), 0.0);
        assert_eq!(ok("abs(-3)"), 3.0);
        assert_eq!(ok("min(7)"), 7.0);
        assert_eq!(ok("max(1, 9, 3, -4)"), 9.0);
        assert_eq!(ok("min(1, 9, 3, -4)"), -4.0);
        assert!((ok("pi") - std::f64::consts::PI).abs() < 1e-10);
        assert!((ok("e") - std::f64::consts::E).abs() < 1e-10);
        assert_eq!(ok("sqrt(max(16, 9))"), 4.0);
    }

    #[test]
    fn names_are_case_insensitive_and_whitespace_is_free() {
        assert_eq!(ok("SQRT(16) + Pi - PI"), 4.0);
        assert_eq!(ok("LN(E)"), 1.0);
        assert_eq!(ok("  max ( 1 ,\t2 )\n* 3 "), 6.0);
        assert_eq!(ok("2 ** 3"), 8.0);
    }

    #[test]
    fn negative_zero_becomes_zero() {
        let value = ok("-0");
        assert!(value == 0.0 && value.is_sign_positive());
        let value = ok("sin(-pi)");
        assert!(value == 0.0 && value.is_sign_positive());
        let value = ok("round(-0.4)");
        assert!(value == 0.0 && value.is_sign_positive());
    }

    #[test]
    fn syntax_errors() {
        assert_eq!(err("2 +"), CalculatorError::UnexpectedEnd);
        assert_eq!(err("(1"), CalculatorError::UnexpectedEnd);
        assert_eq!(
            err("1 2"),
            CalculatorError::UnexpectedToken {
                found: "2".into(),
                position: 2
            }
        );
        assert_eq!(
            err(")"),
            CalculatorError::UnexpectedToken {
                found: ")".into(),
                position: 0
            }
        );
        assert_eq!(
            err("2 # 3"),
            CalculatorError::UnexpectedChar {
                ch: '#',
                position: 2
            }
        );
        assert_eq!(
            err("1e"),
            CalculatorError::InvalidNumber { text: "1e".into() }
        );
        assert_eq!(
            err("1.2.3"),
            CalculatorError::InvalidNumber {
                text: "1.2.3".into()
            }
        );
        assert_eq!(
            err("."),
            CalculatorError::InvalidNumber { text: ".".into() }
        );
        assert_eq!(
            err("2 * * 3"),
            CalculatorError::UnexpectedToken {
                found: "*".into(),
                position: 4
            }
        );
        assert_eq!(
            err("sqrt 4"),
            CalculatorError::UnexpectedToken {
                found: "4".into(),
                position: 5
            }
        );
        assert_eq!(err("sqrt"), CalculatorError::UnexpectedEnd);
        assert_eq!(
            err("pi(2)"),
            CalculatorError::UnexpectedToken {
                found: "(".into(),
                position: 2
            }
        );
        assert_eq!(
            err("max(1,)"),
            CalculatorError::UnexpectedToken {
                found: ")".into(),
                position: 6
            }
        );
        assert_eq!(
            err("2pi"),
            CalculatorError::UnexpectedToken {
                found: "pi".into(),
                position: 1
            }
        );
        assert_eq!(
            err("√4"),
            CalculatorError::UnexpectedChar {
                ch: '√',
                position: 0
            }
        );
        for expression in ["2 +", "(1", "1 2", ")", "1e", "2 # 3", "()"] {
            assert_eq!(err(expression).code(), "syntax_error", "{expression:?}");
        }
    }

    #[test]
    fn unknown_names() {
        let error = err("foo(1)");
        assert_eq!(error, CalculatorError::UnknownName { name: "foo".into() });
        assert_eq!(error.code(), "unknown_name");
        assert!(error.to_string().contains("sqrt"));
        assert_eq!(
            err("x + 1"),
            CalculatorError::UnknownName { name: "x".into() }
        );
    }

    #[test]
    fn division_by_zero() {
        assert_eq!(err("1/0"), CalculatorError::DivisionByZero);
        assert_eq!(err("1/(2-2)"), CalculatorError::DivisionByZero);
        assert_eq!(err("0/0"), CalculatorError::DivisionByZero);
        assert_eq!(err("1/-0"), CalculatorError::DivisionByZero);
        assert_eq!(err("1/0").code(), "division_by_zero");
    }

    #[test]
    fn wrong_arity() {
        let error = err("sqrt(1, 2)");
        assert_eq!(
            error,
            CalculatorError::WrongArity {
                function: "sqrt".into(),
                expected: "exactly 1",
                found: 2
            }
        );
        assert_eq!(error.code(), "wrong_arity");
        assert_eq!(
            err("max()"),
            CalculatorError::WrongArity {
                function: "max".into(),
                expected: "at least 1",
                found: 0
            }
        );
        assert_eq!(err("abs()").code(), "wrong_arity");
    }

    #[test]
    fn empty_and_too_long() {
        assert_eq!(err(""), CalculatorError::Empty);
        assert_eq!(err(" \t\n "), CalculatorError::Empty);
        assert_eq!(err("").code(), "empty");

        let longest = format!("1{}", "+1".repeat((MAX_EXPRESSION_CHARS - 1) / 2));
        assert_eq!(longest.chars().count(), 999);
        assert_eq!(ok(&longest), 500.0);
        let exactly_max = format!("{longest} ");
        assert_eq!(exactly_max.chars().count(), MAX_EXPRESSION_CHARS);
        assert_eq!(ok(&exactly_max), 500.0);

        let too_long = "1".repeat(MAX_EXPRESSION_CHARS + 1);
        let error = err(&too_long);
        assert_eq!(
            error,
            CalculatorError::TooLong {
                max: MAX_EXPRESSION_CHARS
            }
        );
        assert_eq!(error.code(), "too_long");
        // The limit counts characters, not bytes.
        assert_eq!(
            err(&"é".repeat(MAX_EXPRESSION_CHARS)),
            CalculatorError::UnexpectedChar {
                ch: 'é',
                position: 0
            }
        );
    }

    #[test]
    fn not_finite() {
        for expression in [
            "sqrt(-1)",
            "ln(0)",
            "log(0)",
            "ln(-1)",
            "10^400",
            "1e400",
            "(-8)^(1/3)",
        ] {
            assert_eq!(
                err(expression),
                CalculatorError::NotFinite,
                "{expression:?}"
            );
        }
        // Overflow in an intermediate is an error even if the final result would be finite.
        assert_eq!(err("1 / 10^400"), CalculatorError::NotFinite);
        assert_eq!(err("sqrt(-1)").code(), "not_finite");
    }

    #[test]
    fn depth_limit() {
        let nested = |n: usize| format!("{}1{}", "(".repeat(n), ")".repeat(n));
        assert_eq!(ok(&nested(MAX_DEPTH)), 1.0);
        assert_eq!(
            err(&nested(MAX_DEPTH + 1)),
            CalculatorError::TooDeep { max: MAX_DEPTH }
        );
        assert_eq!(ok(&format!("{}1", "-".repeat(MAX_DEPTH))), 1.0);
        assert_eq!(
            err(&format!("{}1", "-".repeat(MAX_DEPTH + 1))),
            CalculatorError::TooDeep { max: MAX_DEPTH }
        );
        let calls = |n: usize| format!("{}1{}", "abs(".repeat(n), ")".repeat(n));
        assert_eq!(ok(&calls(MAX_DEPTH)), 1.0);
        assert_eq!(err(&calls(MAX_DEPTH + 1)).code(), "too_deep");
        let towers = |n: usize| format!("1{}", "^1".repeat(n));
        assert_eq!(ok(&towers(MAX_DEPTH)), 1.0);
        assert_eq!(err(&towers(MAX_DEPTH + 1)).code(), "too_deep");
    }

    #[test]
    fn pathological_inputs_fail_without_panicking() {
        // The spec's case: 500 + 1 + 500 = 1,001 characters, so the length check fires first.
        let parens = format!("{}1{}", "(".repeat(500), ")".repeat(500));
        assert!(evaluate(&parens).is_err());
        // Within the length limit, the depth limit stops it.
        let parens = format!("{}1{}", "(".repeat(499), ")".repeat(499));
        assert_eq!(err(&parens), CalculatorError::TooDeep { max: MAX_DEPTH });
        // Unclosed: still stops at the depth limit rather than recursing 1,000 times.
        assert_eq!(
            err(&"(".repeat(MAX_EXPRESSION_CHARS)),
            CalculatorError::TooDeep { max: MAX_DEPTH }
        );
        let minuses = format!("{}1", "-".repeat(999));
        assert_eq!(err(&minuses), CalculatorError::TooDeep { max: MAX_DEPTH });
        let tower = format!("2{}", "^2".repeat(499));
        assert_eq!(err(&tower).code(), "too_deep");
        let calls = format!("{}1", "sqrt(".repeat(199));
        assert_eq!(err(&calls).code(), "too_deep");

        let printable: Vec<u8> = (b' '..=b'~').collect();
        for seed in 0..20 {
            let input = junk(seed, MAX_EXPRESSION_CHARS, &printable);
            assert!(evaluate(&input).is_err(), "{input:?}");
        }
    }

    #[test]
    fn deepest_inputs_fit_in_half_the_default_stack() {
        // Guards the stack estimate in `MAX_DEPTH`'s doc: the worst valid inputs must parse on a
        // 1 MiB thread (half of Rust's default) even in a debug build.
        let run = std::thread::Builder::new()
            .stack_size(1024 * 1024)
            .spawn(|| {
                let depth = MAX_DEPTH;
                let parens = format!("{}1{}", "(".repeat(depth), ")".repeat(depth));
                let calls = format!("{}1{}", "max(1,".repeat(depth), ")".repeat(depth));
                let mixed = format!(
                    "{}1{}",
                    "(-abs(2^".repeat(depth / 4),
                    "))".repeat(depth / 4)
                );
                let too_deep = format!("{}1", "(".repeat(MAX_EXPRESSION_CHARS - 1));
                [parens, calls, mixed, too_deep].map(|input| evaluate(&input))
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(run[0], Ok(1.0));
        assert_eq!(run[1], Ok(1.0));
        assert!(run[2].is_ok(), "{:?}", run[2]);
        assert_eq!(run[3], Err(CalculatorError::TooDeep { max: MAX_DEPTH }));
    }

    #[test]
    fn the_length_limit_is_the_one_passed_in() {
        assert_eq!(
            super::evaluate("1+2+3", 4),
            Err(CalculatorError::TooLong { max: 4 })
        );
        assert_eq!(super::evaluate("1+2+3", 5), Ok(6.0));
        assert_eq!(
            super::evaluate("1+1", 2).unwrap_err().to_string(),
            "expression is longer than 2 characters"
        );
        let long_sum = format!("1{}", "+1".repeat(49_999));
        assert_eq!(long_sum.chars().count(), 99_999);
        assert_eq!(super::evaluate(&long_sum, 100_000), Ok(50_000.0));
    }

    #[test]
    fn deep_nesting_under_a_large_length_limit_fails_cleanly_on_a_small_stack() {
        // A 100,000-character limit lets 100,000 levels of nesting through the length check;
        // the depth limit must stop them without the stack, here a 256 KiB one.
        const MAX_CHARS: usize = 100_000;
        let run = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                let n = MAX_CHARS / 2 - 1;
                let deep = [
                    format!("{}1{}", "(".repeat(n), ")".repeat(n)),
                    format!("{}1", "(".repeat(MAX_CHARS - 1)),
                    format!("{}1", "-".repeat(MAX_CHARS - 1)),
                    format!("{}1", "+-".repeat(n)),
                    format!(
                        "{}1{}",
                        "abs(".repeat(MAX_CHARS / 5 - 1),
                        ")".repeat(MAX_CHARS / 5 - 1)
                    ),
                    format!("2{}", "^2".repeat(n)),
                    format!("{}1", "(-abs(2^".repeat(MAX_CHARS / 8 - 1)),
                ]
                .map(|input| super::evaluate(&input, MAX_CHARS));
                let deepest_valid = [
                    format!("{}1{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH)),
                    format!("{}1", "-".repeat(MAX_DEPTH)),
                    format!("{}1{}", "max(1,".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH)),
                    format!("1{}", "^1".repeat(MAX_DEPTH)),
                ]
                .map(|input| super::evaluate(&input, MAX_CHARS));
                (deep, deepest_valid)
            })
            .unwrap()
            .join()
            .expect("the parser did not overflow a 256 KiB stack");
        let (deep, deepest_valid) = run;
        for result in deep {
            let error = result.unwrap_err();
            assert_eq!(error, CalculatorError::TooDeep { max: MAX_DEPTH });
            assert_eq!(
                error.to_string(),
                format!("expression is nested more than {MAX_DEPTH} levels deep")
            );
        }
        assert_eq!(deepest_valid, [Ok(1.0), Ok(1.0), Ok(1.0), Ok(1.0)]);
    }

    #[test]
    fn unknown_name_hint_lists_every_name() {
        for function in Function::ALL {
            assert!(KNOWN_NAMES_HINT.contains(function.name()), "{function:?}");
        }
        assert!(KNOWN_NAMES_HINT.contains("pi") && KNOWN_NAMES_HINT.contains(" e"));
    }

    #[test]
    fn fuzzed_near_valid_inputs_never_panic() {
        let alphabet = b"0123456789.eE+-*/^(),  pisqrtlogmaxab";
        for seed in 0..3_000 {
            let len = 1 + usize::try_from(seed % 60).unwrap();
            let input = junk(seed, len, alphabet);
            if let Ok(value) = evaluate(&input) {
                assert!(value.is_finite(), "{input:?} gave {value}");
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// Any expression, nested or not, under a length limit far above the default, is a
        /// number or an error on a 256 KiB stack: never a panic or an overflow.
        #[test]
        fn any_expression_is_a_number_or_an_error_on_a_small_stack(
            pieces in proptest::collection::vec(
                "[0-9.eE+*/^%(), -]|sqrt\\(|log\\(|min\\(|pi|e|1e308|[a-z]{1,4}|\\PC",
                0..400,
            ),
            depth in 0usize..5_000,
        ) {
            let expression = format!("{}{}{}", "(".repeat(depth), pieces.concat(), ")".repeat(depth));
            let outcome = std::thread::Builder::new()
                .stack_size(256 * 1024)
                .spawn(move || super::evaluate(&expression, 100_000).map(f64::is_finite))
                .unwrap()
                .join();
            proptest::prop_assert!(outcome.is_ok(), "panicked");
            if let Ok(Ok(finite)) = outcome {
                proptest::prop_assert!(finite, "results are finite numbers");
            }
        }
    }
}
