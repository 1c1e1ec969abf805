//! The `[tools]` section (the research tools' limits, the web search provider, search and
//! code-host endpoints, the SSRF allow-list) and the `[artifacts]` section.

use secrecy::SecretString;
use serde::Deserialize;

use super::lenient;

/// Research tools and their limits (docs/spec.md#tool-limits, #rate-limit-and-cache). "spec":
/// the value given there.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct ToolsConfig {
    /// Research tool calls per minute per project (API key or user) (spec: 45).
    pub rate_limit_per_minute: u32,
    /// Top web_search results fetched automatically (spec: 2).
    pub web_search_auto_fetch: usize,
    /// Characters shared by the auto-fetched pages of one web_search.
    pub web_search_fetch_budget_chars: usize,
    /// URLs one fetch_url call may name (spec: 5).
    pub fetch_max_urls: usize,
    /// Same-domain discovered links fetch_url may follow (spec: 3).
    pub fetch_max_follow: usize,
    /// Pages one fetch_url call may fetch in all (spec: 8).
    pub fetch_max_pages: usize,
    /// Characters shared equally by the pages of one fetch_url call (spec: 24,000).
    pub fetch_budget_chars: usize,
    /// Largest response body fetch_url reads, in bytes.
    pub fetch_max_response_bytes: usize,
    /// Seconds a single page fetch may take. Two waves (pages, then followed links) must fit in
    /// the 15 s tool timeout.
    pub fetch_timeout_secs: u64,
    /// Seconds one fetched page's text extraction (HTML parsing, PDF reading) may take. Pages
    /// are hostile input: one that needs longer is an `extraction_failed` result, never a
    /// worker held for minutes.
    pub fetch_extraction_budget_secs: u64,
    /// Most code_search results (spec: 30); its default is 5.
    pub code_search_max_results: u32,
    /// Most gitlab_code_search results (spec: 20).
    pub gitlab_search_max_results: u32,
    /// Results whose full file content is fetched (spec: 3).
    pub code_search_full_content: usize,
    /// Paths one browse call may name (spec: 10).
    pub browse_max_paths: usize,
    /// Longest calculator expression in characters (spec: 1,000).
    pub calculator_max_chars: usize,
    /// Which search engine web_search asks: `duckduckgo` (no key, no server of one's own),
    /// `searxng` (needs `web_search_url`), `brave` (needs `brave_api_key`) or `none` (the tool
    /// stays offered but answers that search is not configured). Unset: `searxng` when
    /// `web_search_url` is set, else `duckduckgo`; read it through `search_provider()`.
    pub web_search_provider: Option<WebSearchProvider>,
    /// A SearXNG instance's base URL (its JSON API at `/search`); setting it without naming a
    /// provider selects `searxng`.
    pub web_search_url: Option<String>,
    /// DuckDuckGo's Instant Answer API, which gives web_search its `answer` and `abstract`.
    /// Configurable so tests can point it at a fake server.
    pub duckduckgo_api_url: String,
    /// DuckDuckGo's HTML endpoint (results at `/html/`), which gives web_search its results.
    pub duckduckgo_html_url: String,
    /// Brave Search API base URL.
    pub brave_api_url: String,
    /// Brave Search API subscription token; required by provider `brave`.
    #[serde(deserialize_with = "lenient::secret")]
    pub brave_api_key: Option<SecretString>,
    /// GitHub REST API base URL.
    pub github_api_url: String,
    #[serde(deserialize_with = "lenient::secret")]
    pub github_token: Option<SecretString>,
    /// GitLab v4 API base URL; `None` disables gitlab_code_search.
    pub gitlab_api_url: Option<String>,
    #[serde(deserialize_with = "lenient::secret")]
    pub gitlab_token: Option<SecretString>,
    /// `HOST:PORT` entries (IPv6 as `[ADDRESS]:PORT`) fetch_url may reach despite the SSRF
    /// rules, each on its port only; an entry without a port is refused at start-up. For
    /// tests only; empty by default.
    pub ssrf_allow_list: Vec<String>,
}

impl Default for ToolsConfig {
    fn default() -> Self {
        Self {
            rate_limit_per_minute: 45,
            web_search_auto_fetch: 2,
            web_search_fetch_budget_chars: 12_000,
            fetch_max_urls: 5,
            fetch_max_follow: 3,
            fetch_max_pages: 8,
            fetch_budget_chars: 24_000,
            fetch_max_response_bytes: 10 * 1024 * 1024,
            fetch_timeout_secs: 6,
            fetch_extraction_budget_secs: 5,
            code_search_max_results: 30,
            gitlab_search_max_results: 20,
            code_search_full_content: 3,
            browse_max_paths: 10,
            calculator_max_chars: 1_000,
            web_search_provider: None,
            web_search_url: None,
            duckduckgo_api_url: "https://api.duckduckgo.com".into(),
            duckduckgo_html_url: "https://html.duckduckgo.com".into(),
            brave_api_url: "https://api.search.brave.com".into(),
            brave_api_key: None,
            github_api_url: "https://api.github.com".into(),
            github_token: None,
            gitlab_api_url: None,
            gitlab_token: None,
            ssrf_allow_list: Vec::new(),
        }
    }
}

/// The search engine behind web_search (`tools.web_search_provider`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WebSearchProvider {
    /// DuckDuckGo: its Instant Answer API and its HTML results page; needs no key.
    DuckDuckGo,
    /// A SearXNG instance at `tools.web_search_url`.
    Searxng,
    /// The Brave Search API with `tools.brave_api_key`.
    Brave,
    /// `none`: no search engine; web_search answers every call with a `search_unavailable`
    /// error, so a request naming it is told why rather than silently losing it.
    #[serde(rename = "none")]
    Disabled,
}

impl ToolsConfig {
    /// The provider web_search uses: the one named, else SearXNG when its URL is set (as
    /// configurations before providers existed meant), else DuckDuckGo.
    pub fn search_provider(&self) -> WebSearchProvider {
        match (self.web_search_provider, &self.web_search_url) {
            (Some(provider), _) => provider,
            (None, Some(_)) => WebSearchProvider::Searxng,
            (None, None) => WebSearchProvider::DuckDuckGo,
        }
    }

    /// Why the web search settings cannot work, if they cannot.
    pub(super) fn web_search_problem(&self) -> Option<String> {
        let web_url = |url: &str| {
            url::Url::parse(url)
                .is_ok_and(|url| matches!(url.scheme(), "http" | "https") && url.has_host())
        };
        let (setting, url) = match self.search_provider() {
            WebSearchProvider::Disabled => return None,
            WebSearchProvider::Searxng => match &self.web_search_url {
                None => {
                    return Some(
                        "tools.web_search_provider = \"searxng\" needs tools.web_search_url, \
                         the SearXNG instance's URL"
                            .into(),
                    );
                }
                Some(url) => ("tools.web_search_url", url.as_str()),
            },
            WebSearchProvider::Brave => {
                if self.brave_api_key.is_none() {
                    return Some(
                        "tools.web_search_provider = \"brave\" needs tools.brave_api_key \
                         (COLLOQUY_TOOLS__BRAVE_API_KEY), a Brave Search API key"
                            .into(),
                    );
                }
                ("tools.brave_api_url", self.brave_api_url.as_str())
            }
            WebSearchProvider::DuckDuckGo => {
                if !web_url(&self.duckduckgo_api_url) {
                    return Some("tools.duckduckgo_api_url must be an http(s) URL".into());
                }
                (
                    "tools.duckduckgo_html_url",
                    self.duckduckgo_html_url.as_str(),
                )
            }
        };
        (!web_url(url)).then(|| format!("{setting} must be an http(s) URL"))
    }
}

/// Artifacts (docs/spec.md#artifacts).
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct ArtifactsConfig {
    /// Longest artifact identifier (spec: 128).
    pub max_identifier_chars: usize,
    /// Largest artifact content in bytes (spec: 1 MB).
    pub max_content_bytes: usize,
}

impl Default for ArtifactsConfig {
    fn default() -> Self {
        Self {
            max_identifier_chars: 128,
            max_content_bytes: 1_000_000,
        }
    }
}
