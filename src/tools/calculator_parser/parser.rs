//! The calculator's parser: a depth-limited recursive descent from `Token`s to an `Expr`,
//! resolving names to constants and functions.

use super::ast::{BinaryOp, Expr, Function};
use super::tokenizer::{Token, TokenKind};
use super::{CalculatorError, MAX_DEPTH};

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
pub(super) struct Parser {
    tokens: Vec<Token>,
    next: usize,
    depth: usize,
}

impl Parser {
    pub(super) fn new(tokens: Vec<Token>) -> Self {
        Self {
            tokens,
            next: 0,
            depth: 0,
        }
    }

    // The recursive methods keep their frames small (no cloned tokens, no closures, no helper
    // frames between levels): in a debug build each nesting level costs a few KiB of stack.

    /// Parses the whole token list as one expression.
    pub(super) fn parse(mut self) -> Result<Expr, CalculatorError> {
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
