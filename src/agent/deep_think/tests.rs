use serde_json::json;

use super::discovery::target;
use super::plan::{self, parse};
use super::report::{self, check};
use super::subtask::{Finding, TaskStatus};
use crate::agent::sources::{Source, Sources, merge};

fn tools() -> Vec<String> {
    ["web_search", "fetch_url", "calculator"]
        .map(String::from)
        .to_vec()
}

fn plan_of(count: usize) -> String {
    let subtasks: Vec<_> = (1..=count)
        .map(|n| json!({"id": n.to_string(), "query": format!("angle {n}"), "tools": ["web_search"]}))
        .collect();
    json!({"title": "A title", "subtasks": subtasks}).to_string()
}

#[test]
fn a_well_formed_plan_is_read_as_it_is() {
    let plan = parse(&plan_of(4), &tools(), 3, 7, "q").unwrap();
    assert_eq!(plan.title, "A title");
    assert_eq!(plan.source, "model");
    assert_eq!(plan.subtasks.len(), 4);
    assert_eq!(plan.subtasks[2].id, "3");
    assert_eq!(plan.subtasks[2].query, "angle 3");
    assert_eq!(plan.subtasks[2].tools, ["web_search"]);
    assert_eq!(plan.proposed, None);
}

#[test]
fn more_than_the_most_sub_tasks_are_cut_and_fewer_than_the_least_refused() {
    let plan = parse(&plan_of(9), &tools(), 3, 7, "q").unwrap();
    assert_eq!(plan.subtasks.len(), 7);
    assert_eq!(plan.proposed, Some(9));
    assert_eq!(plan.subtasks[6].query, "angle 7");
    let err = parse(&plan_of(2), &tools(), 3, 7, "q").unwrap_err();
    assert!(err.contains("2 usable sub-tasks"), "{err}");
}

#[test]
fn a_malformed_plan_is_repaired() {
    let answer = "Sure! Here it is:\n```json\n{\"steps\": [\"plain string step\", \
                  {\"id\": 7, \"question\": \"numeric id\", \"tools\": [\"teleport\", \"fetch_url\"]}, \
                  {\"id\": 7, \"query\": \"duplicate id\"}, {\"tools\": []}]}\n```\nGood luck.";
    let plan = parse(answer, &tools(), 3, 7, "The question?").unwrap();
    assert_eq!(plan.source, "repaired");
    assert_eq!(plan.title, "The question?");
    let ids: Vec<&str> = plan.subtasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        ids,
        ["1", "7", "3"],
        "missing and duplicate ids are given positions"
    );
    assert_eq!(plan.subtasks[0].query, "plain string step");
    assert_eq!(plan.subtasks[0].tools, tools(), "no tools named: every one");
    assert_eq!(
        plan.subtasks[1].tools,
        ["fetch_url"],
        "unknown tools dropped"
    );
}

#[test]
fn an_answer_without_a_plan_is_an_error_that_says_why() {
    for (answer, why) in [
        ("I cannot plan this.", "not a JSON object"),
        ("{\"title\": \"x\"}", "no \"subtasks\" list"),
        ("42", "not a JSON object"),
    ] {
        let err = parse(answer, &tools(), 3, 7, "q").unwrap_err();
        assert!(err.contains(why), "{answer}: {err}");
    }
}

#[test]
fn the_fallback_plan_asks_the_question_from_three_sides() {
    let plan = plan::fallback("Why is the sky blue?", &tools());
    assert_eq!(plan.source, "fallback");
    assert_eq!(plan.subtasks.len(), 3);
    assert!(
        plan.subtasks
            .iter()
            .all(|t| t.query.starts_with("Why is the sky blue?") && t.tools == tools())
    );
}

fn source(url: &str, title: &str) -> Source {
    Source {
        url: url.into(),
        title: title.into(),
        fetched: true,
    }
}

#[test]
fn only_citations_of_listed_sources_and_links_to_seen_pages_survive() {
    let seen = [
        source("https://a.example/1", "One"),
        source("https://b.example/2", "Two"),
        source("https://c.example/3", ""),
    ];
    let text = "# R\n\nFirst [1]. Both [1, 9]. Invented [12]. Array [x] and [link](https://b.example/2) \
                and [fake](https://evil.example/z), bare https://c.example/3 and https://nope.example/q.\n\n\
                ## References\n1. https://evil.example/z";
    let checked = check(text, &seen);
    assert_eq!(checked.removed, 4, "{}", checked.report);
    let body = checked.report.split("\n\n## Sources").next().unwrap();
    assert_eq!(
        body,
        "# R\n\nFirst [1]. Both [1]. Invented. Array [x] and [link](https://b.example/2) and \
         fake, bare https://c.example/3 and ."
    );
    assert_eq!(
        checked.sources_section,
        "\n\n## Sources\n\n1. [One](https://a.example/1)\n"
    );
    assert!(!checked.report.contains("evil.example"));
}

#[test]
fn a_report_that_cites_nothing_lists_every_source_and_one_without_sources_lists_none() {
    let seen = [
        source("https://a.example/1", "One"),
        source("https://b.example/2", ""),
    ];
    let checked = check("No citations here.", &seen);
    assert!(checked.report.ends_with(
        "## Sources\n\n1. [One](https://a.example/1)\n2. [https://b.example/2](https://b.example/2)\n"
    ));
    let checked = check("Nothing [1].", &[]);
    assert_eq!(checked.report, "Nothing.");
    assert_eq!(checked.sources_section, "");
}

#[test]
fn the_artifact_is_named_after_the_time() {
    let at = chrono::DateTime::parse_from_rfc3339("2026-02-27T14:30:12Z")
        .unwrap()
        .with_timezone(&chrono::Utc);
    assert_eq!(report::artifact_name(at), "deep-think-20260227-143012.md");
}

fn finding(query: &str, note: &str, status: TaskStatus) -> Finding {
    Finding {
        id: "1".into(),
        index: 0,
        query: query.into(),
        status,
        note: note.into(),
        sources: Vec::new(),
        usage: Default::default(),
        iterations: 1,
        error: (status == TaskStatus::Failed).then(|| "it broke".into()),
    }
}

#[test]
fn a_findings_list_needs_enough_bullet_points() {
    let findings = [
        finding(
            "prices",
            "Summary.\n- up 10%\n* peaked in March",
            TaskStatus::Completed,
        ),
        finding("banks", "- bought 1,000 t", TaskStatus::Completed),
    ];
    let list = report::findings_list("Gold", &findings, 3).unwrap();
    assert_eq!(
        list,
        "# Gold: findings\n\n## prices\n\n- up 10%\n- peaked in March\n\n## banks\n\n- bought 1,000 t\n"
    );
    assert_eq!(report::findings_list("Gold", &findings[1..], 3), None);
}

#[test]
fn the_report_without_the_model_keeps_every_note_and_says_what_failed() {
    let findings = [
        finding("prices", "- up 10%", TaskStatus::Completed),
        finding("banks", "", TaskStatus::Failed),
    ];
    let text = report::without_model("Gold", "Why.", &findings);
    assert!(text.starts_with("# Gold\n\nWhy.\n"));
    assert!(text.contains("## prices\n\n- up 10%"));
    assert!(text.contains("## banks\n\nThis sub-task failed: it broke."));
}

#[test]
fn a_named_site_or_url_is_found_in_the_question_and_other_dots_are_not() {
    assert_eq!(
        target("What does https://acme.example.com/docs say?").as_deref(),
        Some("https://acme.example.com/docs")
    );
    assert_eq!(
        target("Summarise (rust-lang.org) for me").as_deref(),
        Some("https://rust-lang.org")
    );
    assert_eq!(
        target("Research http://127.0.0.1:8080/site.").as_deref(),
        Some("http://127.0.0.1:8080/site")
    );
    for none in [
        "Compare node.js and deno, e.g. their speed",
        "Is 3.5 more than 3.25?",
        "What is a.b?",
    ] {
        assert_eq!(target(none), None, "{none}");
    }
}

#[test]
fn sources_are_the_urls_tools_returned_read_or_listed() {
    let sources = Sources::default();
    sources.collect(&json!({
        "results": [{"title": "A", "url": "https://a.example"}, {"title": "B", "url": "https://b.example"},
                    {"title": "local", "url": "file:///etc/passwd"}],
        "fetched_pages": [{"url": "https://a.example", "content": "..."}]
    }));
    sources.collect(&json!({"pages": [
        {"url": "https://c.example", "content": "x", "error": false},
        {"url": "https://d.example", "content": "", "error": true}
    ]}));
    sources.collect(&json!({"url": "https://b.example", "content": "page"}));
    sources.collect(&json!({"results": [{"path": "src/lib.rs", "html_url": "https://github.com/o/r/blob/main/src/lib.rs"}]}));
    let seen = sources.snapshot();
    let urls: Vec<(&str, &str, bool)> = seen
        .iter()
        .map(|s| (s.url.as_str(), s.title.as_str(), s.fetched))
        .collect();
    assert_eq!(
        urls,
        [
            ("https://a.example", "A", true),
            ("https://b.example", "B", true),
            ("https://c.example", "", true),
            (
                "https://github.com/o/r/blob/main/src/lib.rs",
                "src/lib.rs",
                false
            ),
        ]
    );
    let merged = merge([seen.as_slice(), &[source("https://a.example", "other")]]);
    assert_eq!(merged.len(), 4);
    assert_eq!(merged[0].title, "A");
}

#[test]
fn notes_giving_the_same_attributes_of_several_things_make_a_comparison_table() {
    let findings = [
        finding(
            "actix",
            "Summary.\n- Speed: very fast\n- Ecosystem: large | mature\n- Mascot: none",
            TaskStatus::Completed,
        ),
        finding(
            "axum",
            "- **Speed**: fast\n- ecosystem: growing",
            TaskStatus::Completed,
        ),
        finding("rocket", "", TaskStatus::Failed),
        finding(
            "warp",
            "- Speed: fast\n- Released (see https://x.example/a): 2018",
            TaskStatus::Completed,
        ),
    ];
    let table = report::comparison_table("Web servers", &findings).unwrap();
    assert_eq!(
        table,
        "# Web servers: comparison\n\n| | Speed | Ecosystem |\n|---|---|---|\n\
         | actix | very fast | large \\| mature |\n| axum | fast | growing |\n| warp | fast | — |\n"
    );
    // One attribute in common, or one thing described, is no comparison.
    assert_eq!(report::comparison_table("x", &findings[1..]), None);
    assert_eq!(report::comparison_table("x", &findings[..1]), None);
}
