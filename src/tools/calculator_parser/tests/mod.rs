//! Unit tests of the calculator's language: values, precedence, functions and constants, and
//! the limits (depth, length, pathological and fuzzed input, small stacks). The error cases are
//! in `errors`.

mod errors;

use super::ast::Function;
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
