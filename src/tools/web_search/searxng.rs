//! SearXNG's JSON API (`GET {base}/search?q=…&format=json`, with `language=<locale>` for a
//! user's country): results, its first answer and the first infobox's content as the abstract.
//! The instance is the operator's own server.

use std::time::Duration;

use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::Value;

use super::locale::searxng_language;
use super::{SearchHit, SearchProvider, SearchResponse, is_web_url, rate_limited, search_failed};
use crate::tools::{ToolError, UserLocation};

/// A SearXNG instance.
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

impl SearchProvider for Searxng {
    /// A location's country is SearXNG's `language` locale (`en-GB`: its principal language
    /// there), which SearXNG passes on as a region to the engines that take one; the rest of
    /// a location, and a country the table does not know, are advisory.
    fn search<'a>(
        &'a self,
        query: &'a str,
        location: Option<&'a UserLocation>,
    ) -> BoxFuture<'a, Result<SearchResponse, ToolError>> {
        Box::pin(async move {
            let mut url = url::Url::parse(&format!("{}/search", self.base_url))
                .map_err(|err| search_failed(format!("bad search engine URL: {err}")))?;
            url.query_pairs_mut()
                .append_pair("q", query)
                .append_pair("format", "json");
            if let Some(language) = searxng_language(location) {
                url.query_pairs_mut().append_pair("language", &language);
            }
            let response =
                self.http.get(url).send().await.map_err(|err| {
                    search_failed(format!("the search engine is unreachable: {err}"))
                })?;
            if response.status().as_u16() == 429 {
                return Err(rate_limited("the search engine is rate limiting requests"));
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
            Ok(from_body(body))
        })
    }
}

fn from_body(body: SearxngBody) -> SearchResponse {
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
        .filter(|r| is_web_url(&r.url))
        .map(|r| SearchHit {
            title: r.title,
            url: r.url,
            snippet: r.content,
        })
        .collect();
    SearchResponse {
        answer,
        summary,
        hits,
    }
}
