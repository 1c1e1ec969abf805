use super::*;

#[test]
fn identifiers_follow_the_seed_rules() {
    for good in ["fibonacci.py", "auth-flow", "A_b.C-9", &"x".repeat(128)] {
        assert!(check_identifier(good, 128).is_ok(), "{good}");
    }
    for bad in [
        "",
        "has space",
        "slash/name",
        "ünï",
        &"x".repeat(129),
        "a;b",
    ] {
        assert!(check_identifier(bad, 128).is_err(), "{bad}");
    }
}

#[test]
fn types_come_from_the_seed_table() {
    assert_eq!(check_type("text/markdown").unwrap(), "text/markdown");
    assert_eq!(check_type("Text/X-Python").unwrap(), "text/x-python");
    assert_eq!(check_type("text/x-c++").unwrap(), "text/x-c++");
    assert!(check_type("application/zip").is_err());
    assert!(check_type("text/x-").is_err());
    assert!(check_type("text/x-a b").is_err());
}
