//! The calculator's tokenizer: an expression's characters → `Token`s (numbers, names,
//! operators, parentheses, commas), each with its source text and position.

use super::{CalculatorError, finite};

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum TokenKind {
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
pub(super) struct Token {
    pub(super) kind: TokenKind,
    /// The token's source text, for error messages and name lookup.
    pub(super) text: String,
    /// Zero-based character offset of the token's first character.
    pub(super) position: usize,
}

pub(super) fn tokenize(expression: &str) -> Result<Vec<Token>, CalculatorError> {
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
