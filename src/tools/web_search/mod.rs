//! The `web_search` tool (docs/spec.md#web_search): asks a search engine behind `SearchProvider`,
//! then fetches the top results through the SSRF-safe `Fetcher` in parallel, sharing a character
//! budget equally, so the model gets snippets and page text in one call. Pages fetched here land in
//! the fetcher's cache, where fetch_url finds them. The engines are configuration
//! (`tools.web_search_provider`): `duckduckgo` (no key), `searxng`, `brave`, or `Unavailable`,
//! which answers with an error so a requested web_search is never dropped in silence. Providers
//! call their engine with their own client: the engine is trusted configuration, not a URL chosen
//! by the model, so the SSRF guard is for the fetched pages only.

mod brave;
mod duckduckgo;
mod locale;
mod searxng;

#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::{BoxFuture, join_all};
use schemars::JsonSchema;
use secrecy::ExposeSecret;
use serde::Deserialize;
use serde_json::{Value, json};

use super::fetch::Fetcher;
use super::{
    ProgressKind, SearchContextSize, SharedTool, ToolError, ToolFuture, TypedTool, UserLocation,
};
use crate::config::{ToolsConfig, WebSearchProvider};

pub use brave::Brave;
pub use duckduckgo::DuckDuckGo;
pub use searxng::Searxng;

/// Most results passed on to the model.
const MAX_RESULTS: usize = 10;
/// Longest query accepted, in characters.
const MAX_QUERY_CHARS: usize = 500;
/// Room a result takes beside its pages' text: the answer, the abstract and up to
/// `MAX_RESULTS` titles, URLs and snippets in JSON (about 500 characters each).
const RESULTS_ROOM_CHARS: usize = 6_000;

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
    /// Searches for `query`, near `location` where the engine can be told.
    fn search<'a>(
        &'a self,
        query: &'a str,
        location: Option<&'a UserLocation>,
    ) -> BoxFuture<'a, Result<SearchResponse, ToolError>>;
}

/// The provider `config` names, built with its endpoints and a client whose requests time out
/// as a page fetch does.
pub fn provider(config: &ToolsConfig) -> Result<Arc<dyn SearchProvider>, ProviderError> {
    let timeout = Duration::from_secs(config.fetch_timeout_secs);
    Ok(match config.search_provider() {
        WebSearchProvider::DuckDuckGo => Arc::new(DuckDuckGo::new(
            &config.duckduckgo_api_url,
            &config.duckduckgo_html_url,
            timeout,
        )?),
        WebSearchProvider::Searxng => {
            let url = config
                .web_search_url
                .as_deref()
                .ok_or(ProviderError::Missing("tools.web_search_url"))?;
            Arc::new(Searxng::new(url, timeout)?)
        }
        WebSearchProvider::Brave => {
            let key = config
                .brave_api_key
                .as_ref()
                .ok_or(ProviderError::Missing("tools.brave_api_key"))?;
            Arc::new(Brave::new(
                &config.brave_api_url,
                key.expose_secret(),
                timeout,
            )?)
        }
        WebSearchProvider::Disabled => Arc::new(Unavailable),
    })
}

/// Why a configured provider cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error("web search provider needs {0}")]
    Missing(&'static str),
    #[error("cannot build the search client: {0}")]
    Client(#[from] reqwest::Error),
    #[error("the search API key is not a valid header value")]
    BadKey,
}

/// The provider of a server with no search engine (`web_search_provider = "none"`): every
/// call is an error saying so, which the model can act on.
pub struct Unavailable;

impl SearchProvider for Unavailable {
    fn search<'a>(
        &'a self,
        _query: &'a str,
        _location: Option<&'a UserLocation>,
    ) -> BoxFuture<'a, Result<SearchResponse, ToolError>> {
        Box::pin(async {
            Err(ToolError::new(
                "search_unavailable",
                "web search is not configured on this server",
                "Use fetch_url on a URL you know, or answer from what you know and say that \
                 you could not search the web.",
            ))
        })
    }
}

/// Largest engine answer read, in bytes: a results page is tens of kilobytes; more is not a
/// results page.
const MAX_ENGINE_ANSWER_BYTES: usize = 2 * 1024 * 1024;

fn search_failed(message: String) -> ToolError {
    ToolError::new(
        "search_failed",
        message,
        "Try again later or with a different query, or answer from what you know.",
    )
}

fn rate_limited(message: impl Into<String>) -> ToolError {
    ToolError::new(
        "rate_limited",
        message,
        "Wait a little before searching again, or use fetch_url on a URL you know.",
    )
}

/// Whether `url` is one a result may point at: http or https.
fn is_web_url(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|url| matches!(url.scheme(), "http" | "https"))
}

/// Reads an engine's answer, refusing one past `MAX_ENGINE_ANSWER_BYTES`.
async fn read_capped(mut response: reqwest::Response, engine: &str) -> Result<String, ToolError> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|err| search_failed(format!("{engine}'s answer was cut off: {err}")))?
    {
        if body.len() + chunk.len() > MAX_ENGINE_ANSWER_BYTES {
            return Err(search_failed(format!(
                "{engine} answered with more than {MAX_ENGINE_ANSWER_BYTES} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// The text of an HTML fragment (a snippet with `<strong>` or `<b>` marks, entities):
/// tags dropped, entities decoded, whitespace collapsed.
fn fragment_text(html: &str) -> String {
    if !html.contains(['<', '&']) {
        return collapse_whitespace([html]);
    }
    let fragment = scraper::Html::parse_fragment(html);
    collapse_whitespace(fragment.root_element().text())
}

/// Joins pieces of text (adjacent, as an element's text nodes are) with runs of whitespace
/// made one space, trimmed.
fn collapse_whitespace<'a>(pieces: impl IntoIterator<Item = &'a str>) -> String {
    let joined: String = pieces.into_iter().collect();
    joined.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub struct WebSearch {
    provider: Arc<dyn SearchProvider>,
    fetcher: Arc<Fetcher>,
    auto_fetch: usize,
    /// The configured budget of the fetched pages: `medium`'s.
    configured_budget: usize,
    /// The request's `search_context_size`, which scales the budget.
    size: SearchContextSize,
    /// The request's `user_location`.
    location: Option<Arc<UserLocation>>,
    /// What sets this copy's results apart in the cache: its size and location.
    scope: String,
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
            configured_budget: config.web_search_fetch_budget_chars,
            size: SearchContextSize::Medium,
            location: None,
            scope: SearchContextSize::Medium.as_str().to_string(),
        }
    }

    /// A copy searching at `size`, near `location`.
    fn copy(&self, size: SearchContextSize, location: Option<Arc<UserLocation>>) -> SharedTool {
        let scope = match &location {
            Some(location) => format!("{}|{}", size.as_str(), location.key()),
            None => size.as_str().to_string(),
        };
        Arc::new(Self {
            provider: self.provider.clone(),
            fetcher: self.fetcher.clone(),
            auto_fetch: self.auto_fetch,
            configured_budget: self.configured_budget,
            size,
            location,
            scope,
        })
    }

    /// The characters of page text one search brings back, shared by its fetched pages.
    pub fn budget_chars(&self) -> usize {
        self.size.budget(self.configured_budget)
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Arguments {
    /// The search query to look up on the web.
    #[schemars(length(min = 1, max = MAX_QUERY_CHARS))]
    query: String,
}

/// Cuts `text` to `max` characters, saying so.
fn within_budget(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((at, _)) => format!("{}\n[truncated to {max} characters]", &text[..at]),
    }
}

impl TypedTool for WebSearch {
    type Args = Arguments;

    fn name(&self) -> &'static str {
        "web_search"
    }

    fn description(&self) -> Cow<'_, str> {
        "Search the web. Returns titles, URLs and snippets, plus the text of the top results."
            .into()
    }

    fn progress(&self) -> Option<ProgressKind> {
        Some(ProgressKind::Searching)
    }
    /// Its result depends only on the arguments (and the outside world, for the cache's
    /// five minutes).
    fn cacheable(&self) -> bool {
        true
    }

    /// A copy whose fetched pages share the budget `size` asks for.
    fn sized(&self, size: SearchContextSize) -> Option<SharedTool> {
        Some(self.copy(size, self.location.clone()))
    }

    /// A copy whose searches say where the user is.
    fn located(&self, location: &UserLocation) -> Option<SharedTool> {
        Some(self.copy(self.size, Some(Arc::new(location.clone()))))
    }

    fn location(&self) -> Option<&UserLocation> {
        self.location.as_deref()
    }

    fn context_size(&self) -> Option<SearchContextSize> {
        Some(self.size)
    }

    fn cache_scope(&self) -> &str {
        &self.scope
    }

    /// The pages' budget, a tenth more for JSON's escapes of their text, and the results list:
    /// a search brings back what its `search_context_size` asks for, not the loop's default cut.
    fn result_limit(&self) -> Option<usize> {
        let budget = self.budget_chars();
        Some(budget + budget / 10 + RESULTS_ROOM_CHARS)
    }

    fn call(&self, Arguments { query }: Arguments) -> ToolFuture {
        let provider = self.provider.clone();
        let fetcher = self.fetcher.clone();
        let auto_fetch = self.auto_fetch;
        let budget = self.budget_chars();
        let location = self.location.clone();
        Box::pin(async move {
            let query = query.trim().to_string();
            if query.is_empty() || query.chars().count() > MAX_QUERY_CHARS {
                return Err(ToolError::invalid_arguments(format!(
                    "query must be 1-{MAX_QUERY_CHARS} characters"
                )));
            }
            let mut response = provider.search(&query, location.as_deref()).await?;
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
