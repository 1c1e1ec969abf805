//! Unit tests of web_search's providers: each engine's real response shapes read into results,
//! DuckDuckGo's redirects, ads and anti-bot page, how its two answers combine, and the
//! provider of a server without search.

use super::duckduckgo::{
    InstantAnswer, ResultsPage, combine, link_target, parse_instant_answer, parse_results_page,
};
use super::*;
use crate::tools::Tool;

/// A results page as html.duckduckgo.com serves it: an ad first, then results whose links are
/// DuckDuckGo redirects (one to a target with its own query string), one direct link, entities.
const DDG_RESULTS_PAGE: &str = r#"<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml">
<head><meta http-equiv="content-type" content="text/html; charset=UTF-8"><title>rust async at DuckDuckGo</title></head>
<body class="body--html">
<div id="links" class="results">
  <div class="result results_links results_links_deep result--ad ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title">
        <a rel="nofollow" class="result__a" href="https://duckduckgo.com/y.js?ad_domain=courses.example&amp;ad_provider=bingv7aa&amp;ad_type=txad&amp;u3=https%3A%2F%2Fcourses.example">Learn Rust Fast - Online Course</a>
      </h2>
      <a class="result__snippet" href="https://duckduckgo.com/y.js?ad_domain=courses.example">Sponsored: become a Rust expert in 3 days.</a>
    </div>
  </div>
  <div class="result results_links results_links_deep web-result ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title">
        <a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Frust%2Dlang.github.io%2Fasync%2Dbook%2F%3Fpage%3D1%26lang%3Den&amp;rut=5f2c6a9d0e1b">Asynchronous Programming in <b>Rust</b> &amp; Tokio</a>
      </h2>
      <div class="result__extras">
        <div class="result__extras__url">
          <a class="result__url" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Frust%2Dlang.github.io%2Fasync%2Dbook%2F&amp;rut=5f2c6a9d0e1b">rust-lang.github.io/async-book</a>
        </div>
      </div>
      <a class="result__snippet" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Frust%2Dlang.github.io%2Fasync%2Dbook%2F&amp;rut=5f2c6a9d0e1b">Futures, executors &amp; <b>async</b>/<b>await</b>
        in Rust.</a>
      <div class="clear"></div>
    </div>
  </div>
  <div class="result results_links results_links_deep web-result ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title">
        <a rel="nofollow" class="result__a" href="https://tokio.rs/tokio/tutorial">Tutorial | Tokio</a>
      </h2>
      <a class="result__snippet" href="https://tokio.rs/tokio/tutorial">Tokio is an asynchronous runtime for the Rust programming language.</a>
    </div>
  </div>
  <div class="result results_links results_links_deep web-result ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title">
        <a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fduckduckgo.com%2Fy.js%3Fad_domain%3Dsneaky.example&amp;rut=1">A disguised ad</a>
      </h2>
    </div>
  </div>
  <div class="nav-link">
    <form action="/html/" method="post"><input type="submit" class="btn btn--alt" value="Next" /></form>
  </div>
</div>
</body></html>"#;

/// DuckDuckGo's anti-bot page, served instead of results.
const DDG_CHALLENGE_PAGE: &str = r#"<!DOCTYPE html><html><head><title>DuckDuckGo</title></head>
<body>
<form id="challenge-form" action="//duckduckgo.com/anomaly.js?sv=html&amp;cc=sre&amp;ti=1&amp;q=rust" method="POST">
  <div class="anomaly-modal__modal" data-testid="anomaly-modal">
    <div class="anomaly-modal__title">Unfortunately, bots use DuckDuckGo too.</div>
    <div class="anomaly-modal__description">Please complete the following challenge to confirm this search was made by a human.</div>
  </div>
</form>
</body></html>"#;

/// The Instant Answer API's answer (`format=json&no_html=1`), fields as it sends them.
const DDG_INSTANT_ANSWER: &str = r#"{
  "Abstract": "",
  "AbstractSource": "Wikipedia",
  "AbstractText": "Rust is a general-purpose programming language emphasizing performance, type safety &amp; concurrency.",
  "AbstractURL": "https://en.wikipedia.org/wiki/Rust_(programming_language)",
  "Answer": "Rust 1.0 was released on May 15, 2015.",
  "AnswerType": "",
  "Definition": "",
  "Entity": "programming language",
  "Heading": "Rust (programming language)",
  "Image": "/i/a2f06e4d.png",
  "Infobox": {"content": [{"data_type": "string", "label": "Designed by", "value": "Graydon Hoare"}], "meta": []},
  "Redirect": "",
  "RelatedTopics": [
    {"FirstURL": "https://duckduckgo.com/Cargo_(package_manager)", "Icon": {"Height": "", "URL": "", "Width": ""},
     "Result": "<a href=\"https://duckduckgo.com/Cargo_(package_manager)\">Cargo (package manager)</a> Rust's build system.",
     "Text": "Cargo (package manager) - Rust's build system and package manager."},
    {"Name": "Programming languages",
     "Topics": [
       {"FirstURL": "https://duckduckgo.com/Go_(programming_language)", "Icon": {"Height": "", "URL": "", "Width": ""},
        "Result": "<a href=\"https://duckduckgo.com/Go_(programming_language)\">Go (programming language)</a>",
        "Text": "Go (programming language) - A statically typed, compiled language designed at Google."},
       {"FirstURL": "javascript:alert(1)", "Text": "Not a web link - skipped"}
     ]}
  ],
  "Results": [
    {"FirstURL": "https://www.rust-lang.org/", "Icon": {"Height": 16, "URL": "/i/rust-lang.org.ico", "Width": 16},
     "Result": "<a href=\"https://www.rust-lang.org/\"><b>Official site</b></a>", "Text": "Official site"}
  ],
  "Type": "A",
  "meta": {"id": "wikipedia_fathead", "name": "Wikipedia"}
}"#;

/// Brave's `/res/v1/web/search` answer, with its `<strong>` marks and entities.
const BRAVE_RESULTS: &str = r#"{
  "query": {"original": "rust async", "show_strict_warning": false, "is_navigational": false, "more_results_available": true},
  "mixed": {"type": "mixed", "main": [{"type": "web", "index": 0, "all": false}, {"type": "web", "index": 1, "all": false}], "top": [], "side": []},
  "type": "search",
  "web": {
    "type": "search",
    "results": [
      {"title": "Asynchronous Programming in <strong>Rust</strong>", "url": "https://rust-lang.github.io/async-book/",
       "is_source_local": false, "is_source_both": false,
       "description": "<strong>Rust</strong>&#x27;s <strong>async</strong> story: futures, executors &amp; more.",
       "page_age": "2024-03-01T00:00:00", "language": "en", "family_friendly": true, "type": "search_result", "subtype": "generic",
       "profile": {"name": "Github", "url": "https://rust-lang.github.io/async-book/", "long_name": "rust-lang.github.io", "img": "https://imgs.search.brave.com/x"},
       "meta_url": {"scheme": "https", "netloc": "rust-lang.github.io", "hostname": "rust-lang.github.io", "favicon": "https://imgs.search.brave.com/y", "path": "› async-book"},
       "age": "March 1, 2024"},
      {"title": "Tokio - An asynchronous <strong>Rust</strong> runtime", "url": "https://tokio.rs/",
       "description": "Tokio is an event-driven, non-blocking I/O platform.", "type": "search_result"},
      {"title": "Not a web page", "url": "ftp://files.example/rust", "description": "skipped"}
    ],
    "family_friendly": true
  },
  "infobox": {"type": "graph", "results": [
    {"type": "infobox", "subtype": "generic", "title": "Rust", "description": "Programming language",
     "long_desc": "Rust is a <strong>multi-paradigm</strong>, general-purpose programming language.",
     "url": "https://en.wikipedia.org/wiki/Rust_(programming_language)"}
  ]}
}"#;

fn hit(title: &str, url: &str, snippet: &str) -> SearchHit {
    SearchHit {
        title: title.into(),
        url: url.into(),
        snippet: snippet.into(),
    }
}

#[test]
fn duckduckgo_results_decode_redirects_and_entities_and_skip_ads() {
    let ResultsPage::Results(hits) = parse_results_page(DDG_RESULTS_PAGE) else {
        panic!("a results page is not a challenge");
    };
    assert_eq!(
        hits,
        [
            hit(
                "Asynchronous Programming in Rust & Tokio",
                "https://rust-lang.github.io/async-book/?page=1&lang=en",
                "Futures, executors & async/await in Rust."
            ),
            hit(
                "Tutorial | Tokio",
                "https://tokio.rs/tokio/tutorial",
                "Tokio is an asynchronous runtime for the Rust programming language."
            ),
        ]
    );
}

#[test]
fn duckduckgo_result_links_lead_to_their_targets() {
    assert_eq!(
        link_target("//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.org%2Fa%20b%3Fx%3D1&rut=abc")
            .as_deref(),
        Some("https://example.org/a%20b?x=1")
    );
    assert_eq!(
        link_target("/l/?uddg=http%3A%2F%2Fexample.org%2F").as_deref(),
        Some("http://example.org/"),
        "a relative redirect"
    );
    assert_eq!(
        link_target("https://example.org/page").as_deref(),
        Some("https://example.org/page")
    );
    assert_eq!(link_target("https://duckduckgo.com/y.js?ad_domain=x"), None);
    assert_eq!(
        link_target("//duckduckgo.com/l/?rut=abc"),
        None,
        "no target"
    );
    assert_eq!(
        link_target("//duckduckgo.com/l/?uddg=javascript%3Aalert(1)"),
        None
    );
}

#[test]
fn duckduckgo_anti_bot_page_is_a_challenge_and_an_empty_page_is_no_results() {
    assert_eq!(
        parse_results_page(DDG_CHALLENGE_PAGE),
        ResultsPage::Challenge
    );
    let empty = r#"<html><body><div id="links" class="results"><div class="no-results">No results.</div></div></body></html>"#;
    assert_eq!(parse_results_page(empty), ResultsPage::Results(Vec::new()));
}

#[test]
fn duckduckgo_instant_answer_gives_answer_abstract_and_flattened_topics() {
    let instant = parse_instant_answer(DDG_INSTANT_ANSWER).unwrap();
    assert_eq!(instant.answer, "Rust 1.0 was released on May 15, 2015.");
    assert_eq!(
        instant.summary,
        "Rust is a general-purpose programming language emphasizing performance, type safety & \
         concurrency."
    );
    assert_eq!(
        instant.abstract_source,
        Some(hit(
            "Rust (programming language)",
            "https://en.wikipedia.org/wiki/Rust_(programming_language)",
            &instant.summary
        ))
    );
    assert_eq!(
        instant.topics,
        [
            hit(
                "Official site",
                "https://www.rust-lang.org/",
                "Official site"
            ),
            hit(
                "Cargo (package manager)",
                "https://duckduckgo.com/Cargo_(package_manager)",
                "Rust's build system and package manager."
            ),
            hit(
                "Go (programming language)",
                "https://duckduckgo.com/Go_(programming_language)",
                "A statically typed, compiled language designed at Google."
            ),
        ]
    );
}

#[test]
fn duckduckgo_answer_may_be_an_object_or_absent() {
    let object = r#"{"Answer": {"from": "calculator", "id": "calculator", "result": "<b>42</b>", "signal": "high"},
                     "AbstractText": "", "RelatedTopics": []}"#;
    assert_eq!(parse_instant_answer(object).unwrap().answer, "42");
    let nothing = r#"{"Answer": "", "AbstractText": "", "AbstractURL": "", "Heading": "", "RelatedTopics": [], "Results": []}"#;
    assert_eq!(
        parse_instant_answer(nothing).unwrap(),
        InstantAnswer::default()
    );
    assert!(parse_instant_answer("<html>not json</html>").is_err());
}

fn instant() -> InstantAnswer {
    parse_instant_answer(DDG_INSTANT_ANSWER).unwrap()
}

#[test]
fn duckduckgo_results_come_from_the_page_and_the_answer_from_the_api() {
    let page = vec![hit("Page result", "https://example.org/", "from the page")];
    let response = combine(Ok(instant()), Ok(page.clone())).unwrap();
    assert_eq!(response.hits, page);
    assert_eq!(response.answer, "Rust 1.0 was released on May 15, 2015.");
    assert!(response.summary.starts_with("Rust is a general-purpose"));
    let results_only = combine(Err(search_failed("api down".into())), Ok(page.clone())).unwrap();
    assert_eq!(results_only.hits, page);
    assert_eq!(results_only.answer, "");
}

#[test]
fn duckduckgo_falls_back_to_related_topics_when_the_page_fails() {
    let blocked = rate_limited("challenge");
    let response = combine(Ok(instant()), Err(blocked.clone())).unwrap();
    let urls: Vec<&str> = response.hits.iter().map(|h| h.url.as_str()).collect();
    assert_eq!(
        urls,
        [
            "https://en.wikipedia.org/wiki/Rust_(programming_language)",
            "https://www.rust-lang.org/",
            "https://duckduckgo.com/Cargo_(package_manager)",
            "https://duckduckgo.com/Go_(programming_language)",
        ]
    );
    assert_eq!(response.answer, "Rust 1.0 was released on May 15, 2015.");
    let nothing_to_fall_back_on = combine(Ok(InstantAnswer::default()), Err(blocked.clone()));
    assert_eq!(nothing_to_fall_back_on.unwrap_err(), blocked);
    let both = combine(Err(search_failed("api down".into())), Err(blocked)).unwrap_err();
    assert_eq!(both.code, "search_failed");
    assert!(both.message.contains("challenge"), "{}", both.message);
    assert!(both.message.contains("api down"), "{}", both.message);
}

#[test]
fn brave_results_are_plain_text_with_the_infobox_as_abstract() {
    let response = brave::parse_results(BRAVE_RESULTS).unwrap();
    assert_eq!(
        response.hits,
        [
            hit(
                "Asynchronous Programming in Rust",
                "https://rust-lang.github.io/async-book/",
                "Rust's async story: futures, executors & more."
            ),
            hit(
                "Tokio - An asynchronous Rust runtime",
                "https://tokio.rs/",
                "Tokio is an event-driven, non-blocking I/O platform."
            ),
        ]
    );
    assert_eq!(
        response.summary,
        "Rust is a multi-paradigm, general-purpose programming language."
    );
    assert_eq!(response.answer, "");
    let no_results = brave::parse_results(r#"{"type": "search", "query": {"original": "zzz"}}"#);
    assert_eq!(no_results.unwrap(), SearchResponse::default());
}

#[test]
fn a_refused_brave_key_is_said_so_whatever_status_brave_chose() {
    let invalid_token = r#"{"type": "ErrorResponse", "error": {"id": "ade84851-a6f3-4cf9-8c76-1dc897718b0b",
        "status": 422, "code": "SUBSCRIPTION_TOKEN_INVALID", "detail": "The provided subscription token is invalid.",
        "meta": {"component": "authentication"}}, "time": 1754364294}"#;
    for (status, body) in [(401, ""), (403, "{}"), (422, invalid_token)] {
        let err = brave::refusal(status, body);
        assert_eq!(err.code, "search_key_refused", "HTTP {status}");
        assert!(err.message.contains("refused this server's API key"));
    }
    assert_eq!(brave::refusal(429, "").code, "rate_limited");
    let validation = r#"{"type": "ErrorResponse", "error": {"id": "x", "status": 422, "code": "VALIDATION",
        "detail": "Unable to validate request parameter(s)", "meta": {}}, "time": 1754364294}"#;
    let err = brave::refusal(422, validation);
    assert_eq!(err.code, "search_failed");
    assert_eq!(
        err.message,
        "Brave Search answered HTTP 422: Unable to validate request parameter(s)"
    );
}

#[test]
fn fragment_text_drops_marks_and_decodes_entities() {
    assert_eq!(
        fragment_text("<strong>Fish</strong> &amp; chips\n  at &lt;5&gt;"),
        "Fish & chips at <5>"
    );
    assert_eq!(fragment_text("  plain   text "), "plain text");
    assert_eq!(fragment_text("Rust<b>acean</b>"), "Rustacean");
}

#[tokio::test]
async fn a_server_without_search_answers_with_a_clear_error() {
    let err = Unavailable.search("anything", None).await.unwrap_err();
    assert_eq!(err.code, "search_unavailable");
    assert_eq!(err.message, "web search is not configured on this server");
    assert!(err.suggestion.contains("fetch_url"));
}

#[test]
fn a_provider_is_built_for_every_valid_configuration() {
    let mut config = ToolsConfig::default();
    assert!(provider(&config).is_ok(), "duckduckgo, the default");
    config.web_search_provider = Some(WebSearchProvider::Brave);
    assert!(matches!(
        provider(&config),
        Err(ProviderError::Missing("tools.brave_api_key"))
    ));
    config.brave_api_key = Some("key".into());
    assert!(provider(&config).is_ok());
    config.web_search_provider = Some(WebSearchProvider::Disabled);
    assert!(provider(&config).is_ok());
}

#[test]
fn a_sized_copy_brings_back_the_text_its_size_asks_for_under_its_own_cache_scope() {
    let config = ToolsConfig::default();
    let fetcher = Arc::new(Fetcher::new(&config, Duration::from_secs(60)).unwrap());
    let search = WebSearch::new(Arc::new(Unavailable), fetcher, &config);
    assert_eq!(search.budget_chars(), 12_000);
    assert_eq!(Tool::cache_scope(&search), "medium");
    let high = Tool::sized(&search, SearchContextSize::High).unwrap();
    let low = Tool::sized(&search, SearchContextSize::Low).unwrap();
    assert_eq!((high.name(), high.cache_scope()), ("web_search", "high"));
    assert_eq!(low.cache_scope(), "low");
    // Its result is cut above its pages' budget, never below the loop's default.
    let limit = |tool: &dyn Tool| tool.result_limit().unwrap();
    assert!(limit(high.as_ref()) > 24_000);
    assert!(limit(&search) > 12_000 && limit(&search) < limit(high.as_ref()));
    assert!(limit(low.as_ref()) > 4_000 && limit(low.as_ref()) < limit(&search));
}

#[test]
fn a_located_copy_keeps_its_location_through_sizing_under_its_own_cache_scope() {
    let config = ToolsConfig::default();
    let fetcher = Arc::new(Fetcher::new(&config, Duration::from_secs(60)).unwrap());
    let search = WebSearch::new(Arc::new(Unavailable), fetcher, &config);
    assert_eq!(Tool::location(&search), None);
    let oslo = UserLocation {
        country: Some("NO".into()),
        city: Some("Oslo".into()),
        ..UserLocation::default()
    };
    let located = Tool::located(&search, &oslo).unwrap();
    assert_eq!(located.location(), Some(&oslo));
    assert_eq!(located.cache_scope(), "medium|NO||Oslo|");
    // Sized after it was located (a resumed run's order is sized, then located): both kept.
    let high = located.sized(SearchContextSize::High).unwrap();
    assert_eq!(high.location(), Some(&oslo));
    assert_eq!(high.context_size(), Some(SearchContextSize::High));
    assert_ne!(high.cache_scope(), located.cache_scope());
}
