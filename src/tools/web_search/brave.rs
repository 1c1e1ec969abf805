//! The Brave Search API (`GET {base}/res/v1/web/search?q=…&count=N` with the key in
//! `X-Subscription-Token`): web results, and the infobox's description as the abstract.
//! Titles and descriptions carry `<strong>` marks and entities, made plain text here. A refused
//! key and a spent quota are errors that say so.

use std::time::Duration;

use futures_util::future::BoxFuture;
use reqwest::header::{ACCEPT, HeaderValue};
use serde_json::Value;

use super::{
    MAX_RESULTS, ProviderError, SearchHit, SearchProvider, SearchResponse, fragment_text,
    is_web_url, rate_limited, read_capped, search_failed,
};
use crate::tools::{ToolError, UserLocation};

/// The header Brave reads the subscription token from.
const TOKEN_HEADER: &str = "X-Subscription-Token";

/// The Brave Search API with one subscription token.
pub struct Brave {
    http: reqwest::Client,
    base_url: String,
    token: HeaderValue,
}

impl Brave {
    pub fn new(base_url: &str, api_key: &str, timeout: Duration) -> Result<Self, ProviderError> {
        let mut token = HeaderValue::from_str(api_key).map_err(|_| ProviderError::BadKey)?;
        token.set_sensitive(true);
        Ok(Self {
            http: reqwest::Client::builder()
                .timeout(timeout)
                .user_agent("colloquy")
                .build()?,
            base_url: base_url.trim_end_matches('/').to_string(),
            token,
        })
    }
}

impl SearchProvider for Brave {
    /// A location is Brave's `country` parameter and its `X-Loc-*` headers.
    fn search<'a>(
        &'a self,
        query: &'a str,
        location: Option<&'a UserLocation>,
    ) -> BoxFuture<'a, Result<SearchResponse, ToolError>> {
        Box::pin(async move {
            let mut url = url::Url::parse(&format!("{}/res/v1/web/search", self.base_url))
                .map_err(|err| search_failed(format!("bad Brave Search API URL: {err}")))?;
            url.query_pairs_mut()
                .append_pair("q", query)
                .append_pair("count", &MAX_RESULTS.to_string());
            if let Some(country) = location.and_then(|l| l.country.as_deref()) {
                url.query_pairs_mut().append_pair("country", country);
            }
            let mut request = self
                .http
                .get(url)
                .header(ACCEPT, "application/json")
                .header(TOKEN_HEADER, self.token.clone());
            for (header, value) in location.map(location_headers).unwrap_or_default() {
                request = request.header(header, value);
            }
            let response = request
                .send()
                .await
                .map_err(|err| search_failed(format!("Brave Search is unreachable: {err}")))?;
            let status = response.status().as_u16();
            if !response.status().is_success() {
                let body = read_capped(response, "Brave Search")
                    .await
                    .unwrap_or_default();
                return Err(refusal(status, &body));
            }
            let body = read_capped(response, "Brave Search").await?;
            parse_results(&body)
                .map_err(|err| search_failed(format!("unreadable Brave Search results: {err}")))
        })
    }
}

/// Brave's location headers for what `location` says (values that are not valid header text
/// are left out).
fn location_headers(location: &UserLocation) -> Vec<(&'static str, HeaderValue)> {
    [
        ("X-Loc-Country", &location.country),
        ("X-Loc-State-Name", &location.region),
        ("X-Loc-City", &location.city),
        ("X-Loc-Timezone", &location.timezone),
    ]
    .into_iter()
    .filter_map(|(name, value)| Some((name, HeaderValue::from_str(value.as_deref()?).ok()?)))
    .collect()
}

/// The error for a response that is not a success. Brave answers a bad token with 401 or 403,
/// or (as it does today) 422 with the code `SUBSCRIPTION_TOKEN_INVALID`; a spent quota with 429.
pub(super) fn refusal(status: u16, body: &str) -> ToolError {
    let error: Value = serde_json::from_str(body).unwrap_or_default();
    let code = error["error"]["code"].as_str().unwrap_or_default();
    let detail = error["error"]["detail"].as_str().unwrap_or_default();
    if matches!(status, 401 | 403) || code == "SUBSCRIPTION_TOKEN_INVALID" {
        return ToolError::new(
            "search_key_refused",
            format!(
                "Brave Search refused this server's API key (HTTP {status}): web search is \
                 misconfigured here (tools.brave_api_key)"
            ),
            "Tell the user web search needs a valid Brave Search API key; meanwhile use \
             fetch_url on a URL you know, or answer from what you know.",
        );
    }
    if status == 429 {
        return rate_limited(
            "Brave Search is rate limiting requests (HTTP 429): the API key's rate or monthly \
             quota is spent",
        );
    }
    let detail = if detail.is_empty() {
        String::new()
    } else {
        format!(": {detail}")
    };
    search_failed(format!("Brave Search answered HTTP {status}{detail}"))
}

/// Reads Brave's web search JSON: `web.results[]` (`title`, `url`, `description`) and the
/// first `infobox.results[]`'s `long_desc` (else `description`) as the abstract.
pub(super) fn parse_results(body: &str) -> Result<SearchResponse, serde_json::Error> {
    let body: Value = serde_json::from_str(body)?;
    let text = |value: &Value| fragment_text(value.as_str().unwrap_or_default());
    let hits = body["web"]["results"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|result| {
            let url = result["url"].as_str().filter(|url| is_web_url(url))?;
            Some(SearchHit {
                title: text(&result["title"]),
                url: url.to_string(),
                snippet: text(&result["description"]),
            })
        })
        .collect();
    let infobox = &body["infobox"]["results"][0];
    let mut summary = text(&infobox["long_desc"]);
    if summary.is_empty() {
        summary = text(&infobox["description"]);
    }
    Ok(SearchResponse {
        answer: String::new(),
        summary,
        hits,
    })
}
