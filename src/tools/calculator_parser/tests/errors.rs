//! Unit tests of the calculator's errors: syntax, unknown names, division by zero, arity,
//! empty and too-long input, non-finite results, each with its stable code.

use super::*;

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
