//! `code_search` and `gitlab_code_search` against fake GitHub and GitLab servers: real HTTP on
//! 127.0.0.1:0, answering in those APIs' JSON shapes and recording every request's path, query
//! and headers. The tools are built from a `ToolsConfig` pointing at the fakes and run directly.

mod fake_hosts;

use colloquy::config::ToolsConfig;
use colloquy::tools::code_search::CodeSearch;
use colloquy::tools::gitlab_code_search::GitlabCodeSearch;
use colloquy::tools::{ProgressKind, Tool};
use secrecy::SecretString;
use serde_json::{Value, json};

use fake_hosts::{
    Canned, FakeHost, GITHUB_HITS, README, Seen, app_source, github_host, gitlab_host,
    widget_source,
};

const GITHUB_TOKEN: &str = "ghp_test_token";
const GITLAB_TOKEN: &str = "glpat-test-token";

fn github_tool(host: &FakeHost, token: Option<&str>) -> CodeSearch {
    CodeSearch::new(&ToolsConfig {
        github_api_url: host.base_url.clone(),
        github_token: token.map(SecretString::from),
        ..ToolsConfig::default()
    })
}

fn gitlab_tool(host: &FakeHost, token: Option<&str>) -> GitlabCodeSearch {
    GitlabCodeSearch::new(&ToolsConfig {
        gitlab_api_url: Some(host.base_url.clone()),
        gitlab_token: token.map(SecretString::from),
        ..ToolsConfig::default()
    })
    .expect("configured with a GitLab API URL")
}

fn with_content(results: &Value) -> Vec<bool> {
    results
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["content"].is_string())
        .collect()
}

#[actix_web::test]
async fn github_search_finds_code_with_full_content_for_the_top_three_only() {
    let host = github_host().await;
    let tool = github_tool(&host, Some(GITHUB_TOKEN));

    let result = tool
        .run(json!({"query": "async handler repo:octo/widgets", "language": "rust", "max_results": 5}))
        .await
        .unwrap();

    assert_eq!(result["mode"], "search");
    assert_eq!(
        result["query"],
        "async handler repo:octo/widgets language:rust"
    );
    assert_eq!(result["total_count"], 7);
    let results = &result["results"];
    assert_eq!(with_content(results), [true, true, true, false, false]);
    assert_eq!(results[0]["repository"], "octo/widgets");
    assert_eq!(results[0]["path"], "src/widget0.rs");
    assert_eq!(
        results[0]["url"],
        "https://github.com/octo/widgets/blob/abc/src/widget0.rs"
    );
    assert_eq!(
        results[0]["content"],
        widget_source(0),
        "base64 with newlines decoded"
    );
    assert_eq!(
        results[4]["snippets"],
        json!(["async fn handle_4(request: Request)"])
    );
    let search = &host.seen()[0];
    assert_eq!(search.path, "/search/code");
    assert_eq!(
        search.query["q"],
        "async handler repo:octo/widgets language:rust"
    );
    assert_eq!(search.query["per_page"], "5");
    let fetched: Vec<String> = host
        .paths()
        .into_iter()
        .filter(|p| p.contains("/contents/"))
        .collect();
    assert_eq!(fetched.len(), 3, "{fetched:?}");
    host.stop().await;
}

#[actix_web::test]
async fn the_github_token_user_agent_and_media_type_are_sent() {
    let host = github_host().await;
    let tool = github_tool(&host, Some(GITHUB_TOKEN));

    tool.run(json!({"query": "widget", "max_results": 1}))
        .await
        .unwrap();

    let seen = host.seen();
    assert_eq!(seen.len(), 2, "the search and one file");
    for request in &seen {
        let headers = &request.headers;
        assert_eq!(
            headers["authorization"],
            format!("Bearer {GITHUB_TOKEN}"),
            "{}",
            request.path
        );
        assert_eq!(headers["user-agent"], "colloquy");
        assert_eq!(headers["x-github-api-version"], "2022-11-28");
    }
    assert_eq!(
        seen[0].headers["accept"], "application/vnd.github.text-match+json",
        "search asks for snippets"
    );
    assert_eq!(seen[1].headers["accept"], "application/vnd.github+json");
    assert_eq!(tool.progress(), Some(ProgressKind::CodeSearching));
    host.stop().await;
}

#[actix_web::test]
async fn max_results_outside_one_to_thirty_is_refused_without_calling_github() {
    let host = github_host().await;
    let tool = github_tool(&host, Some(GITHUB_TOKEN));

    for max_results in [0, 31, -1] {
        let err = tool
            .run(json!({"query": "widget", "max_results": max_results}))
            .await
            .unwrap_err();
        assert_eq!(err.code, "INVALID_ARGUMENTS");
        assert!(err.message.contains("between 1 and 30"), "{}", err.message);
    }
    let result = tool
        .run(json!({"query": "widget", "max_results": 30}))
        .await
        .unwrap();
    assert_eq!(result["results"].as_array().unwrap().len(), GITHUB_HITS);
    let result = tool.run(json!({"query": "widget"})).await.unwrap();
    assert_eq!(
        result["results"].as_array().unwrap().len(),
        5,
        "the default is 5"
    );
    let searches: Vec<Seen> = host
        .seen()
        .into_iter()
        .filter(|s| s.path == "/search/code")
        .collect();
    assert_eq!(searches.len(), 2);
    assert_eq!(searches[0].query["per_page"], "30");
    host.stop().await;
}

#[actix_web::test]
async fn github_search_without_a_token_is_refused_before_calling_github() {
    let host = github_host().await;
    let tool = github_tool(&host, None);

    let err = tool.run(json!({"query": "widget"})).await.unwrap_err();

    assert_eq!(err.code, "no_token");
    assert!(
        err.message
            .contains("code search on GitHub needs a token: set tools.github_token"),
        "{}",
        err.message
    );
    assert!(!err.suggestion.is_empty());
    assert!(host.seen().is_empty());
    let review = tool
        .run(json!({"repository": "octo/widgets"}))
        .await
        .unwrap();
    assert_eq!(review["mode"], "review", "review works without a token");
    assert!(
        host.seen()
            .iter()
            .all(|s| !s.headers.contains_key("authorization"))
    );
    host.stop().await;
}

#[actix_web::test]
async fn github_review_gathers_metadata_languages_readme_tree_and_recent_commits() {
    let host = github_host().await;
    let tool = github_tool(&host, Some(GITHUB_TOKEN));

    let review = tool
        .run(json!({"repository": "https://github.com/octo/widgets"}))
        .await
        .unwrap();

    assert_eq!(review["mode"], "review");
    assert_eq!(review["repository"], "octo/widgets");
    assert_eq!(review["description"], "Async widgets");
    assert_eq!(review["stars"], 1234);
    assert_eq!(review["forks"], 56);
    assert_eq!(review["open_issues"], 7);
    assert_eq!(review["default_branch"], "main");
    assert_eq!(review["topics"], json!(["async", "widgets"]));
    assert_eq!(review["license"], "MIT");
    assert_eq!(review["updated_at"], "2024-05-01T10:00:00Z");
    assert_eq!(
        review["languages"],
        json!([{"name": "Rust", "percent": 90.0}, {"name": "Shell", "percent": 10.0}])
    );
    assert_eq!(review["readme"]["content"], README);
    let entries = review["tree"]["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 500, "capped");
    assert_eq!(entries[0], "src/");
    assert_eq!(entries[1], "src/widget0.rs");
    assert_eq!(review["tree"]["truncated"], true);
    assert_eq!(
        review["recent_commits"][0],
        json!({"sha": "c0ffee1", "message": "Make widgets async", "author": "Ada", "date": "2024-04-30T09:00:00Z"})
    );
    assert!(review.get("warnings").is_none(), "{review}");
    let paths = host.paths();
    assert!(
        paths.contains(&"/repos/octo/widgets/git/trees/main".to_string()),
        "{paths:?}"
    );
    let commits = host
        .seen()
        .into_iter()
        .find(|s| s.path.ends_with("/commits"))
        .unwrap();
    assert_eq!(commits.query["per_page"], "10");
    host.stop().await;
}

#[actix_web::test]
async fn github_browse_returns_a_files_content_and_a_directorys_listing() {
    let host = github_host().await;
    let tool = github_tool(&host, Some(GITHUB_TOKEN));

    let result = tool
        .run(json!({"repository": "octo/widgets", "path": "src/widget2.rs", "paths": ["src", "missing.rs"]}))
        .await
        .unwrap();

    assert_eq!(result["mode"], "browse");
    let results = result["results"].as_array().unwrap();
    assert_eq!(results[0]["path"], "src/widget2.rs");
    assert_eq!(results[0]["type"], "file");
    assert_eq!(results[0]["content"], widget_source(2));
    assert_eq!(results[1]["type"], "dir");
    assert_eq!(
        results[1]["entries"],
        json!([{"name": "widget0.rs", "path": "src/widget0.rs", "type": "file", "size": 120},
               {"name": "nested", "path": "src/nested", "type": "dir", "size": 0}])
    );
    assert_eq!(
        results[2]["code"], "not_found",
        "one missing path does not sink the others"
    );
    host.stop().await;
}

#[actix_web::test]
async fn browsing_more_than_ten_paths_is_refused() {
    let host = github_host().await;
    let github = github_tool(&host, Some(GITHUB_TOKEN));
    let gitlab_host = gitlab_host().await;
    let gitlab = gitlab_tool(&gitlab_host, Some(GITLAB_TOKEN));
    let paths: Vec<String> = (0..11).map(|i| format!("src/widget{i}.rs")).collect();

    let github_err = github
        .run(json!({"repository": "octo/widgets", "paths": paths}))
        .await
        .unwrap_err();
    let gitlab_err = gitlab
        .run(json!({"repository": "group/project", "paths": paths}))
        .await
        .unwrap_err();

    for err in [github_err, gitlab_err] {
        assert_eq!(err.code, "INVALID_ARGUMENTS");
        assert!(err.message.contains("at most 10 paths"), "{}", err.message);
    }
    assert!(host.seen().is_empty() && gitlab_host.seen().is_empty());
    let ten = &paths[..10];
    let result = github
        .run(json!({"repository": "octo/widgets", "paths": ten}))
        .await
        .unwrap();
    assert_eq!(result["results"].as_array().unwrap().len(), 10);
    host.stop().await;
    gitlab_host.stop().await;
}

#[actix_web::test]
async fn an_exhausted_github_rate_limit_is_reported_with_its_reset_time() {
    let host = github_host().await;
    let reset = chrono::Utc::now().timestamp() + 600;
    host.answer(
        "/repos/octo/widgets",
        Canned {
            status: 403,
            headers: vec![
                ("x-ratelimit-limit", "60".into()),
                ("x-ratelimit-remaining", "0".into()),
                ("x-ratelimit-reset", reset.to_string()),
            ],
            body: json!({"message": "API rate limit exceeded for 127.0.0.1. (But here's the good news: Authenticated requests get a higher rate limit.)",
                         "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}),
        },
    );
    let tool = github_tool(&host, None);

    let err = tool
        .run(json!({"repository": "octo/widgets"}))
        .await
        .unwrap_err();

    assert_eq!(err.code, "rate_limited");
    let at = chrono::DateTime::from_timestamp(reset, 0)
        .unwrap()
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    assert!(err.message.contains(&at), "{}", err.message);
    assert!(!err.suggestion.is_empty());
    host.stop().await;
}

#[actix_web::test]
async fn an_unknown_github_repository_is_not_found() {
    let host = github_host().await;
    let tool = github_tool(&host, Some(GITHUB_TOKEN));

    let review = tool
        .run(json!({"repository": "nobody/nothing"}))
        .await
        .unwrap_err();
    let browse = tool
        .run(json!({"repository": "octo/widgets", "path": "missing.rs"}))
        .await
        .unwrap_err();

    assert_eq!(review.code, "not_found");
    assert!(
        review.message.contains("nobody/nothing"),
        "{}",
        review.message
    );
    assert_eq!(browse.code, "not_found");
    assert!(browse.message.contains("missing.rs"), "{}", browse.message);
    host.stop().await;
}

#[actix_web::test]
async fn conflicting_or_malformed_arguments_are_refused_as_invalid() {
    let host = github_host().await;
    let tool = github_tool(&host, Some(GITHUB_TOKEN));

    for arguments in [
        json!({"query": "widget", "repository": "octo/widgets"}),
        json!({"repository": "not-a-repository"}),
        json!({"repository": "a/b/c"}),
        json!({"path": "src/lib.rs"}),
        json!({"query": "widget", "path": "src"}),
        json!({}),
        json!({"query": "widget", "unknown": true}),
    ] {
        let err = tool.run(arguments.clone()).await.unwrap_err();
        assert_eq!(err.code, "INVALID_ARGUMENTS", "{arguments}");
        assert!(!err.suggestion.is_empty());
    }
    assert!(host.seen().is_empty());
    host.stop().await;
}

#[actix_web::test]
async fn gitlab_search_finds_blobs_with_full_content_for_the_top_three_and_sends_the_token() {
    let host = gitlab_host().await;
    let tool = gitlab_tool(&host, Some(GITLAB_TOKEN));

    let result = tool
        .run(json!({"query": "async websocket handler", "language": "python", "max_results": 5}))
        .await
        .unwrap();

    assert_eq!(result["mode"], "search");
    let results = &result["results"];
    assert_eq!(with_content(results), [true, true, true, false, false]);
    assert_eq!(results[0]["repository"], "group/project");
    assert_eq!(results[0]["project_id"], 42);
    assert_eq!(results[0]["path"], "src/app0.py");
    assert_eq!(results[0]["startline"], 4);
    assert_eq!(results[0]["snippet"], "async def handler_0(websocket):\n");
    assert_eq!(
        results[0]["url"],
        "https://gitlab.example/group/project/-/blob/main/src/app0.py#L4"
    );
    assert_eq!(results[2]["content"], app_source(2));
    let seen = host.seen();
    let search = seen.iter().find(|s| s.path == "/search").unwrap();
    assert_eq!(search.query["scope"], "blobs");
    assert_eq!(
        search.query["search"],
        "async websocket handler extension:py"
    );
    assert_eq!(search.query["per_page"], "5");
    let raw: Vec<&Seen> = seen.iter().filter(|s| s.path.ends_with("/raw")).collect();
    assert_eq!(raw.len(), 3);
    assert!(raw.iter().all(|s| s.query["ref"] == "main"));
    for seen in &seen {
        assert_eq!(seen.headers["private-token"], GITLAB_TOKEN, "{}", seen.path);
        assert_eq!(seen.headers["user-agent"], "colloquy");
    }
    host.stop().await;
}

#[actix_web::test]
async fn gitlab_search_with_a_repository_is_scoped_to_the_url_encoded_project() {
    let host = gitlab_host().await;
    let tool = gitlab_tool(&host, None);

    let result = tool
        .run(json!({"query": "handler", "repository": "https://gitlab.example/group/project"}))
        .await
        .unwrap();

    assert_eq!(result["results"].as_array().unwrap().len(), 5);
    assert_eq!(host.seen()[0].path, "/projects/group%2Fproject/search");
    assert!(
        host.paths()
            .contains(&"/projects/42/repository/files/src%2Fapp0.py/raw".to_string()),
        "file paths are URL-encoded too: {:?}",
        host.paths()
    );
    host.stop().await;
}

#[actix_web::test]
async fn gitlab_max_results_outside_one_to_twenty_is_refused() {
    let host = gitlab_host().await;
    let tool = gitlab_tool(&host, Some(GITLAB_TOKEN));

    for max_results in [0, 21] {
        let err = tool
            .run(json!({"query": "handler", "max_results": max_results}))
            .await
            .unwrap_err();
        assert_eq!(err.code, "INVALID_ARGUMENTS");
        assert!(err.message.contains("between 1 and 20"), "{}", err.message);
    }
    let result = tool
        .run(json!({"query": "handler", "max_results": 20}))
        .await
        .unwrap();
    assert_eq!(result["results"].as_array().unwrap().len(), 6);
    host.stop().await;
}

#[actix_web::test]
async fn gitlab_global_search_refused_without_a_token_asks_for_one() {
    let host = gitlab_host().await;
    let tool = gitlab_tool(&host, None);

    let err = tool.run(json!({"query": "handler"})).await.unwrap_err();

    assert_eq!(err.code, "no_token");
    assert!(
        err.suggestion.contains("tools.gitlab_token"),
        "{}",
        err.suggestion
    );
    assert!(!host.seen()[0].headers.contains_key("private-token"));
    host.stop().await;
}

#[actix_web::test]
async fn gitlab_review_addresses_the_project_by_its_url_encoded_path_then_by_id() {
    let host = gitlab_host().await;
    let tool = gitlab_tool(&host, Some(GITLAB_TOKEN));

    let review = tool
        .run(json!({"repository": "https://gitlab.example/group/project"}))
        .await
        .unwrap();

    assert_eq!(host.seen()[0].path, "/projects/group%2Fproject");
    assert_eq!(review["mode"], "review");
    assert_eq!(review["repository"], "group/project");
    assert_eq!(review["url"], "https://gitlab.example/group/project");
    assert_eq!(review["description"], "Backend service");
    assert_eq!(review["stars"], 12);
    assert_eq!(review["forks"], 3);
    assert_eq!(review["default_branch"], "main");
    assert_eq!(review["topics"], json!(["python"]));
    assert_eq!(review["updated_at"], "2024-05-02T08:00:00.000Z");
    assert_eq!(review["license"], "Apache License 2.0");
    assert_eq!(
        review["languages"][0],
        json!({"name": "Python", "percent": 80.5})
    );
    assert_eq!(
        review["readme"]["path"], "docs/README.md",
        "from readme_url"
    );
    assert_eq!(review["readme"]["content"], "# Project\n\nIt serves.\n");
    assert_eq!(
        review["tree"],
        json!({"entries": ["docs/", "docs/README.md", "src/", "src/app0.py"], "truncated": false})
    );
    assert_eq!(
        review["recent_commits"],
        json!([{"sha": "9f8e7d6c5b4a", "message": "Serve websockets", "author": "Linus",
                "date": "2024-05-02T08:00:00.000+00:00"}])
    );
    assert!(review.get("warnings").is_none(), "{review}");
    let tree = host
        .seen()
        .into_iter()
        .find(|s| s.path.ends_with("/tree"))
        .unwrap();
    assert_eq!(tree.query["recursive"], "true");
    assert_eq!(tree.query["per_page"], "100");
    host.stop().await;
}

#[actix_web::test]
async fn gitlab_browse_returns_a_files_content_and_a_directorys_listing() {
    let host = gitlab_host().await;
    let tool = gitlab_tool(&host, Some(GITLAB_TOKEN));

    let result = tool
        .run(json!({"repository": "group/project", "paths": ["src/app1.py", "src"]}))
        .await
        .unwrap();

    assert_eq!(result["mode"], "browse");
    let results = result["results"].as_array().unwrap();
    assert_eq!(results[0]["type"], "file");
    assert_eq!(results[0]["content"], app_source(1));
    assert_eq!(
        results[0]["url"],
        "https://gitlab.example/group/project/-/blob/main/src/app1.py"
    );
    assert_eq!(results[1]["type"], "dir");
    assert_eq!(
        results[1]["entries"],
        json!([{"name": "app0.py", "path": "src/app0.py", "type": "file"},
               {"name": "lib", "path": "src/lib", "type": "dir"}])
    );
    let paths = host.paths();
    assert!(
        paths.contains(&"/projects/42/repository/files/src%2Fapp1.py/raw".to_string()),
        "{paths:?}"
    );
    host.stop().await;
}

#[actix_web::test]
async fn gitlab_rate_limits_and_unknown_projects_become_error_results() {
    let host = gitlab_host().await;
    host.answer(
        "/projects/busy%2Fproject",
        Canned {
            status: 429,
            headers: vec![
                ("retry-after", "30".into()),
                ("ratelimit-remaining", "0".into()),
            ],
            body: json!("Retry later\n"),
        },
    );
    let tool = gitlab_tool(&host, Some(GITLAB_TOKEN));

    let limited = tool
        .run(json!({"repository": "busy/project"}))
        .await
        .unwrap_err();
    let missing = tool
        .run(json!({"repository": "group/missing"}))
        .await
        .unwrap_err();
    let missing_path = tool
        .run(json!({"repository": "group/project", "path": "nope.py"}))
        .await
        .unwrap_err();

    assert_eq!(limited.code, "rate_limited");
    assert!(
        limited.message.contains("in 30 seconds") || limited.message.contains("in 29 seconds"),
        "{}",
        limited.message
    );
    assert_eq!(missing.code, "not_found");
    assert!(
        missing.message.contains("group/missing"),
        "{}",
        missing.message
    );
    assert_eq!(missing_path.code, "not_found");
    assert!(
        missing_path.message.contains("nope.py"),
        "{}",
        missing_path.message
    );
    host.stop().await;
}

#[test]
fn gitlab_code_search_exists_only_when_its_api_url_is_configured() {
    assert!(GitlabCodeSearch::new(&ToolsConfig::default()).is_none());
}
