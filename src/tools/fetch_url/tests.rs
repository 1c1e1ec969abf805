use super::*;
use crate::tools::parse_arguments;

const LIMITS: Limits = Limits {
    max_urls: 5,
    max_follow: 3,
    max_pages: 8,
    budget_chars: 24_000,
};

fn plan(arguments: Value) -> Result<Plan, ToolError> {
    Plan::from_arguments(parse_arguments(arguments)?, LIMITS)
}

#[test]
fn url_and_urls_are_merged_and_deduplicated() {
    let plan = plan(json!({
        "url": "https://a.example/x",
        "urls": ["https://a.example/x#top", "https://b.example/", " https://A.example/x "]
    }))
    .unwrap();
    assert_eq!(plan.urls, ["https://a.example/x", "https://b.example/"]);
    assert!(!plan.is_single());
}

#[test]
fn bad_arguments_are_refused_with_a_code() {
    let six: Vec<String> = (0..6).map(|i| format!("https://e.example/{i}")).collect();
    assert_eq!(
        plan(json!({"urls": six})).unwrap_err().code,
        "too_many_urls"
    );
    assert_eq!(plan(json!({})).unwrap_err().code, "INVALID_ARGUMENTS");
    assert_eq!(
        plan(json!({"url": "https://e.example", "discover_links": true, "max_follow": 4}))
            .unwrap_err()
            .code,
        "INVALID_ARGUMENTS"
    );
    assert_eq!(
        plan(json!({"uri": "x"})).unwrap_err().code,
        "INVALID_ARGUMENTS"
    );
}

#[test]
fn max_follow_only_counts_in_discovery_mode() {
    let quiet = plan(json!({"url": "https://e.example", "max_follow": 2})).unwrap();
    assert_eq!(quiet.follow, 0);
    assert!(quiet.is_single());
    let exploring =
        plan(json!({"url": "https://e.example", "discover_links": true, "max_follow": 2})).unwrap();
    assert_eq!(exploring.follow, 2);
    assert!(!exploring.is_single());
}

#[test]
fn truncation_stays_within_the_share_and_says_so() {
    assert_eq!(truncate("short", 10, true), "short");
    let cut = truncate(&"é".repeat(500), 200, true);
    assert_eq!(cut.chars().count(), 200, "{cut}");
    assert!(cut.ends_with("of 500 characters shown; fetch this URL alone to read more]"));
    assert!(cut.starts_with("éé"));
}
