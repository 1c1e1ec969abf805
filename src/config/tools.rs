//! The `[tools]` section (the research tools' limits, search and code-host endpoints, the SSRF
//! allow-list) and the `[artifacts]` section.

use secrecy::SecretString;
use serde::Deserialize;

use super::lenient;

/// Research tools and their limits (seed 000 "Tool Limits", "Rate Limiting & Caching").
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct ToolsConfig {
    /// Research tool calls per minute per project (API key or user) (seed: 45).
    pub rate_limit_per_minute: u32,
    /// Top web_search results fetched automatically (seed: 2).
    pub web_search_auto_fetch: usize,
    /// Characters shared by the auto-fetched pages of one web_search.
    pub web_search_fetch_budget_chars: usize,
    /// URLs one fetch_url call may name (seed: 5).
    pub fetch_max_urls: usize,
    /// Same-domain discovered links fetch_url may follow (seed: 3).
    pub fetch_max_follow: usize,
    /// Pages one fetch_url call may fetch in all (seed: 8).
    pub fetch_max_pages: usize,
    /// Characters shared equally by the pages of one fetch_url call (seed: 24,000).
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
    /// Most code_search results (seed: 30); its default is 5.
    pub code_search_max_results: u32,
    /// Most gitlab_code_search results (seed: 20).
    pub gitlab_search_max_results: u32,
    /// Results whose full file content is fetched (seed: 3).
    pub code_search_full_content: usize,
    /// Paths one browse call may name (seed: 10).
    pub browse_max_paths: usize,
    /// Longest calculator expression in characters (seed: 1,000).
    pub calculator_max_chars: usize,
    /// SearXNG-compatible search API; `None` disables web_search.
    pub web_search_url: Option<String>,
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
            web_search_url: None,
            github_api_url: "https://api.github.com".into(),
            github_token: None,
            gitlab_api_url: None,
            gitlab_token: None,
            ssrf_allow_list: Vec::new(),
        }
    }
}

/// Artifacts (seed 000 create_artifact).
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct ArtifactsConfig {
    /// Longest artifact identifier (seed: 128).
    pub max_identifier_chars: usize,
    /// Largest artifact content in bytes (seed: 1 MB).
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
