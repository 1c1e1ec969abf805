//! The `web_search` tool (seed 000): asks a search engine (behind `SearchProvider`; SearXNG's
//! JSON API is built in), then fetches the top results through the SSRF-safe `Fetcher` in
//! parallel, sharing a character budget equally, so the model gets snippets and page text in one
//! call. Pages fetched here land in the fetcher's cache, where fetch_url finds them.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::{BoxFuture, join_all};
use serde::Deserialize;
use serde_json::{Value, json};

use super::fetch::Fetcher;
use super::{ProgressKind, Tool, ToolError, ToolFuture, parse_arguments};
use crate::config::ToolsConfig;
use crate::llm::wire::ToolDefinition;

/// Most results passed on to the model.
const MAX_RESULTS: usize = 10;
/// Longest query accepted, in characters.
const MAX_QUERY_CHARS: usize = 500;

/// One search hit.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchHit {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

/// What a search engine answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchResponse {
    pub answer: String,
    pub summary: String,
    pub hits: Vec<SearchHit>,
}

/// A web search engine.
pub trait SearchProvider: Send + Sync + 'static {
    fn search<'a>(&'a self, query: &'a str) -> BoxFuture<'a, Result<SearchResponse, ToolError>>;
}

/// SearXNG's JSON API (`GET {base}/search?q=...&format=json`).
pub struct Searxng {
    http: reqwest::Client,
    base_url: String,
}

impl Searxng {
    pub fn new(base_url: &str, timeout: Duration) -> Result<Self, reqwest::Error> {
        Ok(Self {
            http: reqwest::Client::builder()
                .timeout(timeout)
                .user_agent("colloquy")
                .build()?,
            base_url: base_url.trim_end_matches('/').to_string(),
        })
    }
}

#[derive(Deserialize)]
struct SearxngBody {
    #[serde(default)]
    results: Vec<SearxngResult>,
    #[serde(default)]
    answers: Vec<Value>,
    #[serde(default)]
    infoboxes: Vec<Value>,
}

#[derive(Deserialize)]
struct SearxngResult {
    #[serde(default)]
    url: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    content: String,
}

fn search_failed(message: String) -> ToolError {
    ToolError::new(
        "search_failed",
        message,
        "Try again later or with a different query, or answer from what you know.",
    )
}

impl SearchProvider for Searxng {
    fn search<'a>(&'a self, query: &'a str) -> BoxFuture<'a, Result<SearchResponse, ToolError>> {
        Box::pin(async move {
            let mut url = url::Url::parse(&format!("{}/search", self.base_url))
                .map_err(|err| search_failed(format!("bad search engine URL: {err}")))?;
            url.query_pairs_mut()
                .append_pair("q", query)
                .append_pair("format", "json");
            let response =
                self.http.get(url).send().await.map_err(|err| {
                    search_failed(format!("the search engine is unreachable: {err}"))
                })?;
            if response.status().as_u16() == 429 {
                return Err(ToolError::new(
                    "rate_limited",
                    "the search engine is rate limiting requests",
                    "Wait a little before searching again.",
                ));
            }
            if !response.status().is_success() {
                return Err(search_failed(format!(
                    "the search engine answered HTTP {}",
                    response.status().as_u16()
                )));
            }
            let body: SearxngBody = response
                .json()
                .await
                .map_err(|err| search_failed(format!("unreadable search results: {err}")))?;
            let answer = body
                .answers
                .first()
                .map(|a| match a {
                    Value::String(text) => text.clone(),
                    other => other["answer"].as_str().unwrap_or_default().to_string(),
                })
                .unwrap_or_default();
            let summary = body
                .infoboxes
                .first()
                .and_then(|i| i["content"].as_str())
                .unwrap_or_default()
                .to_string();
            let hits = body
                .results
                .into_iter()
                .filter(|r| r.url.starts_with("http://") || r.url.starts_with("https://"))
                .map(|r| SearchHit {
                    title: r.title,
                    url: r.url,
                    snippet: r.content,
                })
                .collect();
            Ok(SearchResponse {
                answer,
                summary,
                hits,
            })
        })
    }
}

pub struct WebSearch {
    provider: Arc<dyn SearchProvider>,
    fetcher: Arc<Fetcher>,
    auto_fetch: usize,
    budget_chars: usize,
}

impl WebSearch {
    pub fn new(
        provider: Arc<dyn SearchProvider>,
        fetcher: Arc<Fetcher>,
        config: &ToolsConfig,
    ) -> Self {
        Self {
            provider,
            fetcher,
            auto_fetch: config.web_search_auto_fetch,
            budget_chars: config.web_search_fetch_budget_chars,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Arguments {
    query: String,
}

/// Cuts `text` to `max` characters, saying so.
fn within_budget(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((at, _)) => format!("{}\n[truncated to {max} characters]", &text[..at]),
    }
}

impl Tool for WebSearch {
    fn name(&self) -> &'static str {
        "web_search"
    }

    fn definition(&self) -> ToolDefinition {
        ToolDefinition::function(
            "web_search",
            "Search the web. Returns titles, URLs and snippets, plus the text of the top results.",
            json!({
                "type": "object",
                "properties": {"query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS,
                    "description": "The search query to look up on the web."}},
                "required": ["query"],
                "additionalProperties": false
            }),
        )
    }

    fn progress(&self) -> Option<ProgressKind> {
        Some(ProgressKind::Searching)
    }
    /// Its result depends only on the arguments (and the outside world, for the cache's
    /// five minutes).
    fn cacheable(&self) -> bool {
        true
    }

    fn run(&self, arguments: Value) -> ToolFuture {
        let provider = self.provider.clone();
        let fetcher = self.fetcher.clone();
        let auto_fetch = self.auto_fetch;
        let budget = self.budget_chars;
        Box::pin(async move {
            let Arguments { query } = parse_arguments(arguments)?;
            let query = query.trim().to_string();
            if query.is_empty() || query.chars().count() > MAX_QUERY_CHARS {
                return Err(ToolError::invalid_arguments(format!(
                    "query must be 1-{MAX_QUERY_CHARS} characters"
                )));
            }
            let mut response = provider.search(&query).await?;
            response.hits.truncate(MAX_RESULTS);
            let fetches = response
                .hits
                .iter()
                .take(auto_fetch)
                .map(|hit| fetcher.fetch_page(&hit.url));
            let pages: Vec<_> = join_all(fetches)
                .await
                .into_iter()
                .zip(&response.hits)
                .filter_map(|(page, hit)| page.ok().map(|page| (hit.url.clone(), page.text)))
                .collect();
            let share = budget / pages.len().max(1);
            let fetched_pages: Vec<Value> = pages
                .iter()
                .map(|(url, text)| json!({"url": url, "content": within_budget(text, share)}))
                .collect();
            let results: Vec<Value> = response
                .hits
                .iter()
                .map(|hit| json!({"title": hit.title, "url": hit.url, "snippet": hit.snippet}))
                .collect();
            Ok(json!({
                "answer": response.answer,
                "abstract": response.summary,
                "results": results,
                "fetched_pages": fetched_pages,
            }))
        })
    }
}
