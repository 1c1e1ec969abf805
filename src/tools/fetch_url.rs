//! The `fetch_url` tool (docs/spec.md#fetch_url): reads web pages and PDFs as text through the
//! shared `Fetcher`, one URL (its text is the result) or several in parallel (a `pages` object),
//! optionally discovering links and following a few on the same site. It shapes results and shares
//! the character budget; how a page is fetched (SSRF rules, redirects, caching, extraction) is
//! `fetch`'s.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;

use futures_util::future::join_all;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use url::Url;

use super::fetch::{FetchError, Fetcher, Page};
use super::schema::{add_to_description, set_keyword};
use super::{ProgressKind, ToolError, ToolFuture, TypedTool};
use crate::config::ToolsConfig;

/// Discovered links listed per page: enough to explore a site, few enough that a nav-heavy
/// page does not crowd its neighbours out of the result.
pub const MAX_DISCOVERED_LINKS_PER_PAGE: usize = 40;
/// Longest URL the schema allows.
const MAX_URL_CHARS: usize = 2_048;

pub struct FetchUrl {
    fetcher: Arc<Fetcher>,
    limits: Limits,
}

#[derive(Debug, Clone, Copy)]
struct Limits {
    max_urls: usize,
    max_follow: usize,
    max_pages: usize,
    budget_chars: usize,
}

impl FetchUrl {
    pub fn new(fetcher: Arc<Fetcher>, config: &ToolsConfig) -> Self {
        Self {
            fetcher,
            limits: Limits {
                max_urls: config.fetch_max_urls.min(config.fetch_max_pages),
                max_follow: config.fetch_max_follow,
                max_pages: config.fetch_max_pages,
                budget_chars: config.fetch_budget_chars,
            },
        }
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Arguments {
    /// A single URL to fetch. Must be http or https.
    #[schemars(length(min = 1, max = MAX_URL_CHARS))]
    url: Option<String>,
    /// Several URLs to fetch in parallel. Use this or `url`; both are merged and de-duplicated.
    #[schemars(inner(length(min = 1, max = MAX_URL_CHARS)))]
    urls: Option<Vec<String>>,
    /// List the links found on each fetched page, for site exploration.
    #[serde(default)]
    discover_links: bool,
    /// How many discovered same-site links to fetch as well. Only used with discover_links.
    #[serde(default)]
    #[schemars(range(min = 0))]
    max_follow: u64,
}

/// What one call will do, its arguments checked.
#[derive(Debug, PartialEq)]
struct Plan {
    /// Distinct URLs, in the order given (`url` first).
    urls: Vec<String>,
    discover: bool,
    follow: usize,
}

impl Plan {
    fn from_arguments(arguments: Arguments, limits: Limits) -> Result<Self, ToolError> {
        let mut seen = HashSet::new();
        let urls: Vec<String> = arguments
            .url
            .into_iter()
            .chain(arguments.urls.unwrap_or_default())
            .map(|url| url.trim().to_string())
            .filter(|url| !url.is_empty() && seen.insert(dedup_key(url)))
            .collect();
        if urls.is_empty() {
            return Err(ToolError::invalid_arguments(
                "give the page to read as `url`, or several as `urls`",
            ));
        }
        if urls.len() > limits.max_urls {
            return Err(ToolError::new(
                "too_many_urls",
                format!(
                    "{} URLs were given; one call reads at most {}",
                    urls.len(),
                    limits.max_urls
                ),
                format!(
                    "Split the URLs into calls of at most {} each.",
                    limits.max_urls
                ),
            ));
        }
        let discover = arguments.discover_links;
        let follow = arguments.max_follow;
        if follow > limits.max_follow as u64 {
            return Err(ToolError::invalid_arguments(format!(
                "max_follow must be between 0 and {}",
                limits.max_follow
            )));
        }
        Ok(Self {
            urls,
            discover,
            // Fits: at most max_follow, a usize.
            follow: if discover { follow as usize } else { 0 },
        })
    }

    /// One URL without discovery gets the page's text itself as its result.
    fn is_single(&self) -> bool {
        self.urls.len() == 1 && !self.discover
    }
}

/// URLs naming the same page (differing only in spelling or fragment) are one URL.
fn dedup_key(url: &str) -> String {
    match Url::parse(url) {
        Ok(mut parsed) => {
            parsed.set_fragment(None);
            parsed.into()
        }
        Err(_) => url.to_string(),
    }
}

/// One page of a call, fetched or not.
struct Fetched {
    requested: String,
    result: Result<Page, FetchError>,
    followed: bool,
}

impl TypedTool for FetchUrl {
    type Args = Arguments;

    fn name(&self) -> &'static str {
        "fetch_url"
    }

    fn description(&self) -> Cow<'_, str> {
        let Limits {
            max_urls,
            budget_chars,
            ..
        } = self.limits;
        format!(
            "Fetch web pages or PDFs and read their text. Give `url` for one page, or `urls` \
             for up to {max_urls} pages fetched in parallel. Set `discover_links` to list each \
             page's links for exploring a site, and `max_follow` to also read that many \
             same-site links. Pages share a budget of {budget_chars} characters."
        )
        .into()
    }

    fn parameters(&self, mut parameters: Value) -> Value {
        let Limits {
            max_urls,
            max_follow,
            ..
        } = self.limits;
        set_keyword(&mut parameters, "/properties/urls", "maxItems", max_urls);
        add_to_description(
            &mut parameters,
            "/properties/urls",
            &format!("At most {max_urls}."),
        );
        set_keyword(
            &mut parameters,
            "/properties/max_follow",
            "maximum",
            max_follow,
        );
        add_to_description(
            &mut parameters,
            "/properties/max_follow",
            &format!("From 0 to {max_follow}."),
        );
        parameters
    }

    fn progress(&self) -> Option<ProgressKind> {
        Some(ProgressKind::Reading)
    }
    /// Its result depends only on the arguments (and the outside world, for the cache's
    /// five minutes).
    fn cacheable(&self) -> bool {
        true
    }

    fn call(&self, arguments: Arguments) -> ToolFuture {
        let fetcher = Arc::clone(&self.fetcher);
        let limits = self.limits;
        Box::pin(async move {
            let plan = Plan::from_arguments(arguments, limits)?;
            if plan.is_single() {
                // One page is returned as its plain text itself (docs/spec.md#fetch_url): the
                // model reads it as it is, without JSON's escapes.
                let url = &plan.urls[0];
                let page = fetcher.fetch_page(url).await.map_err(tool_error)?;
                let content = truncate(&page.text, limits.budget_chars, false);
                return Ok(Value::String(content));
            }
            let pages = fetch_all(&fetcher, &plan, limits).await;
            Ok(pages_result(&pages, &plan, limits))
        })
    }
}

/// Fetches the plan's URLs in parallel, then (in discovery mode) up to `follow` same-site links
/// none of them fetched, never more than `max_pages` pages in all.
async fn fetch_all(fetcher: &Fetcher, plan: &Plan, limits: Limits) -> Vec<Fetched> {
    let fetch = |url: String, followed: bool| async move {
        let result = fetcher.fetch_page(&url).await;
        Fetched {
            requested: url,
            result,
            followed,
        }
    };
    let mut pages = join_all(
        plan.urls
            .iter()
            .take(limits.max_pages)
            .map(|url| fetch(url.clone(), false)),
    )
    .await;
    let room = limits.max_pages.saturating_sub(pages.len());
    let to_follow = links_to_follow(&pages, plan.follow.min(room));
    pages.extend(join_all(to_follow.into_iter().map(|url| fetch(url, true))).await);
    pages
}

/// Same-site links found on the fetched pages, in page then document order, that no page of
/// this call was fetched from.
fn links_to_follow(pages: &[Fetched], count: usize) -> Vec<String> {
    let mut fetched: HashSet<String> = HashSet::new();
    for page in pages {
        fetched.insert(dedup_key(&page.requested));
        if let Ok(found) = &page.result {
            fetched.insert(dedup_key(&found.url));
        }
    }
    let mut chosen = Vec::new();
    for found in pages.iter().filter_map(|page| page.result.as_ref().ok()) {
        let host = Url::parse(&found.url)
            .ok()
            .and_then(|url| url.host_str().map(str::to_ascii_lowercase));
        for link in &found.links {
            if chosen.len() == count {
                return chosen;
            }
            let same_site = Url::parse(&link.url)
                .ok()
                .and_then(|url| url.host_str().map(str::to_ascii_lowercase))
                .is_some_and(|link_host| Some(link_host) == host);
            if same_site && fetched.insert(dedup_key(&link.url)) {
                chosen.push(link.url.clone());
            }
        }
    }
    chosen
}

/// The multi-page result (`{discover_links_enabled, total_pages, pages}`,
/// docs/spec.md#fetch_url); the budget is shared
/// equally by the pages that were fetched.
fn pages_result(pages: &[Fetched], plan: &Plan, limits: Limits) -> Value {
    let fetched = pages.iter().filter(|page| page.result.is_ok()).count();
    let share = limits.budget_chars / fetched.max(1);
    let entries: Vec<Value> = pages
        .iter()
        .map(|page| {
            let mut entry = Map::new();
            entry.insert("url".into(), json!(page.requested));
            match &page.result {
                Ok(found) => {
                    entry.insert("content".into(), json!(truncate(&found.text, share, true)));
                    entry.insert("error".into(), json!(false));
                    if plan.discover && !page.followed {
                        let links: Vec<Value> = found
                            .links
                            .iter()
                            .take(MAX_DISCOVERED_LINKS_PER_PAGE)
                            .map(|link| json!({"url": link.url, "text": link.text}))
                            .collect();
                        entry.insert("discovered_links".into(), Value::Array(links));
                    }
                }
                Err(err) => {
                    entry.insert("content".into(), json!(""));
                    entry.insert("error".into(), json!(true));
                    entry.insert("error_message".into(), json!(err.to_string()));
                    entry.insert("code".into(), json!(err.code()));
                }
            }
            if page.followed {
                entry.insert("followed_from_discovery".into(), json!(true));
            }
            Value::Object(entry)
        })
        .collect();
    json!({
        "discover_links_enabled": plan.discover,
        "total_pages": entries.len(),
        "pages": entries,
    })
}

/// Cuts `text` to at most `share` characters, marker included, saying so when it does.
fn truncate(text: &str, share: usize, shared: bool) -> String {
    let total = text.chars().count();
    if total <= share {
        return text.to_string();
    }
    let hint = if shared {
        "; fetch this URL alone to read more"
    } else {
        ""
    };
    let marker_for =
        |shown: usize| format!("\n[truncated: {shown} of {total} characters shown{hint}]");
    let shown = share.saturating_sub(marker_for(share).chars().count());
    let mut out: String = text.chars().take(shown).collect();
    out.push_str(&marker_for(shown));
    out
}

fn tool_error(err: FetchError) -> ToolError {
    let suggestion = match &err {
        FetchError::InvalidUrl { .. } | FetchError::UnsupportedScheme(_) => {
            "Pass a complete http:// or https:// URL."
        }
        FetchError::Refused(_) => {
            "Only public web addresses can be fetched; do not retry this address."
        }
        FetchError::TooManyRedirects => {
            "The address redirects too often; try the final URL directly or another source."
        }
        FetchError::Status { .. } | FetchError::Request { .. } => {
            "Check the URL, or read another source (for example one found with web_search)."
        }
        FetchError::UnsupportedContentType(_) => {
            "Only HTML, PDF and text can be read; look for an HTML or PDF version of this content."
        }
        FetchError::TooLarge { .. } => {
            "The document is too large to read; look for a smaller page or a summary."
        }
        FetchError::Timeout(_) => {
            "The site is slow or unreachable; try another source or try again later."
        }
        FetchError::Extraction(_) => "The document could not be read; try another source.",
    };
    ToolError::new(err.code(), err.to_string(), suggestion)
}

#[cfg(test)]
mod tests;
