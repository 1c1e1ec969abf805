//! DuckDuckGo, which needs no key and no server of one's own. Two endpoints asked at once: the
//! HTML results page (`POST {html}/html/`, with the `kl` region for a user's country) gives
//! the results, the Instant Answer API (`GET {api}/?q=…&format=json`) the answer and abstract
//! — and its related topics stand in for results when the page fails. Result links are
//! DuckDuckGo redirects (`/l/?uddg=<target>`), decoded here; ads are skipped. The anti-bot
//! challenge (HTTP 202, or a page with no results and the anomaly form) is a `rate_limited`
//! error, never an empty result list.

use std::sync::LazyLock;
use std::time::Duration;

use futures_util::future::BoxFuture;
use reqwest::header::CONTENT_TYPE;
use scraper::{ElementRef, Html, Selector};
use serde_json::Value;
use url::Url;

use super::locale::duckduckgo_region;
use super::{
    MAX_RESULTS, SearchHit, SearchProvider, SearchResponse, collapse_whitespace, fragment_text,
    is_web_url, rate_limited, read_capped, search_failed,
};
use crate::tools::{ToolError, UserLocation};

/// What the requests say they are: DuckDuckGo's HTML endpoint serves its challenge to clients
/// that look like no browser at all more often.
const USER_AGENT: &str = "Mozilla/5.0 (compatible; colloquy; self-hosted chat)";

/// What a results page is read with.
struct Selectors {
    /// A result block.
    result: Selector,
    /// In a block, the title link and the snippet.
    title_link: Selector,
    snippet: Selector,
    /// The anti-bot page's form (it posts to `anomaly.js`).
    challenge: Selector,
}

impl Selectors {
    fn new() -> Option<Self> {
        Some(Self {
            result: Selector::parse("div.result").ok()?,
            title_link: Selector::parse("a.result__a").ok()?,
            snippet: Selector::parse(".result__snippet").ok()?,
            challenge: Selector::parse(
                "form#challenge-form, form[action*=\"anomaly\"], .anomaly-modal__modal",
            )
            .ok()?,
        })
    }
}

/// Constant selectors, which parse (the unit tests read real pages with them).
static SELECTORS: LazyLock<Option<Selectors>> = LazyLock::new(Selectors::new);

/// DuckDuckGo's two endpoints.
pub struct DuckDuckGo {
    http: reqwest::Client,
    api_base: String,
    html_base: String,
}

impl DuckDuckGo {
    pub fn new(api_base: &str, html_base: &str, timeout: Duration) -> Result<Self, reqwest::Error> {
        Ok(Self {
            http: reqwest::Client::builder()
                .timeout(timeout)
                .user_agent(USER_AGENT)
                .build()?,
            api_base: api_base.trim_end_matches('/').to_string(),
            html_base: html_base.trim_end_matches('/').to_string(),
        })
    }

    async fn instant_answer(&self, query: &str) -> Result<InstantAnswer, ToolError> {
        let mut url = Url::parse(&format!("{}/", self.api_base))
            .map_err(|err| search_failed(format!("bad DuckDuckGo API URL: {err}")))?;
        url.query_pairs_mut()
            .append_pair("q", query)
            .append_pair("format", "json")
            .append_pair("no_html", "1")
            .append_pair("skip_disambig", "1");
        let response = self.http.get(url).send().await.map_err(|err| {
            search_failed(format!(
                "DuckDuckGo's Instant Answer API is unreachable: {err}"
            ))
        })?;
        let status = response.status().as_u16();
        if status == 429 {
            return Err(rate_limited("DuckDuckGo is rate limiting requests"));
        }
        if !response.status().is_success() {
            return Err(search_failed(format!(
                "DuckDuckGo's Instant Answer API answered HTTP {status}"
            )));
        }
        let body = read_capped(response, "DuckDuckGo").await?;
        parse_instant_answer(&body)
            .map_err(|err| search_failed(format!("unreadable DuckDuckGo instant answer: {err}")))
    }

    /// The results page for `query`, in DuckDuckGo's `region` (`kl`) when there is one.
    async fn results(
        &self,
        query: &str,
        region: Option<&str>,
    ) -> Result<Vec<SearchHit>, ToolError> {
        let form: String = {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            form.append_pair("q", query);
            if let Some(region) = region {
                form.append_pair("kl", region);
            }
            form.finish()
        };
        let response = self
            .http
            .post(format!("{}/html/", self.html_base))
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(form)
            .send()
            .await
            .map_err(|err| search_failed(format!("DuckDuckGo is unreachable: {err}")))?;
        let status = response.status().as_u16();
        // 202 is how DuckDuckGo serves its anti-bot challenge instead of results.
        if status == 202 || status == 429 {
            return Err(challenged(status));
        }
        if !response.status().is_success() {
            return Err(search_failed(format!("DuckDuckGo answered HTTP {status}")));
        }
        let body = read_capped(response, "DuckDuckGo").await?;
        match parse_results_page(&body) {
            ResultsPage::Results(hits) => Ok(hits),
            ResultsPage::Challenge => Err(challenged(status)),
        }
    }
}

fn challenged(status: u16) -> ToolError {
    rate_limited(format!(
        "DuckDuckGo answered with its anti-bot challenge instead of results (HTTP {status}): \
         it is limiting searches from this server"
    ))
}

impl SearchProvider for DuckDuckGo {
    /// A location's country is the results page's `kl` region (`uk-en` for GB); the rest of a
    /// location, and a country without a DuckDuckGo region, are advisory.
    fn search<'a>(
        &'a self,
        query: &'a str,
        location: Option<&'a UserLocation>,
    ) -> BoxFuture<'a, Result<SearchResponse, ToolError>> {
        Box::pin(async move {
            let region = duckduckgo_region(location);
            let (answer, page) =
                tokio::join!(self.instant_answer(query), self.results(query, region));
            combine(answer, page)
        })
    }
}

/// What the Instant Answer API said.
#[derive(Debug, Default, PartialEq)]
pub(super) struct InstantAnswer {
    pub answer: String,
    pub summary: String,
    /// The abstract's source (often Wikipedia), as a result.
    pub abstract_source: Option<SearchHit>,
    /// `Results` (official sites) then `RelatedTopics`, groups flattened.
    pub topics: Vec<SearchHit>,
}

impl InstantAnswer {
    fn is_empty(&self) -> bool {
        self.answer.is_empty() && self.summary.is_empty() && self.topics.is_empty()
    }

    /// Results made of the abstract's source and the topics, for when the results page failed.
    fn as_hits(&mut self) -> Vec<SearchHit> {
        let mut hits: Vec<SearchHit> = self.abstract_source.take().into_iter().collect();
        hits.append(&mut self.topics);
        hits.truncate(MAX_RESULTS);
        hits
    }
}

/// Reads the Instant Answer API's JSON. Fields are read loosely: `Answer` is a string, or for
/// some instant answers an object with a `result`.
pub(super) fn parse_instant_answer(body: &str) -> Result<InstantAnswer, serde_json::Error> {
    let body: Value = serde_json::from_str(body)?;
    let text = |field: &str| fragment_text(body[field].as_str().unwrap_or_default());
    let answer = match &body["Answer"] {
        Value::String(answer) => fragment_text(answer),
        Value::Object(answer) => fragment_text(
            answer
                .get("result")
                .and_then(Value::as_str)
                .unwrap_or_default(),
        ),
        _ => String::new(),
    };
    let mut summary = text("AbstractText");
    if summary.is_empty() {
        summary = text("Definition");
    }
    let source_url = body["AbstractURL"].as_str().unwrap_or_default();
    let abstract_source = (!summary.is_empty() && is_web_url(source_url)).then(|| {
        let heading = text("Heading");
        SearchHit {
            title: if heading.is_empty() {
                source_url.to_string()
            } else {
                heading
            },
            url: source_url.to_string(),
            snippet: summary.clone(),
        }
    });
    let mut topics = Vec::new();
    for list in ["Results", "RelatedTopics"] {
        for item in body[list].as_array().into_iter().flatten() {
            // A group (`{"Name", "Topics": [...]}`) holds topics; groups do not nest further.
            match item["Topics"].as_array() {
                Some(group) => topics.extend(group.iter().filter_map(topic_hit)),
                None => topics.extend(topic_hit(item)),
            }
        }
    }
    Ok(InstantAnswer {
        answer,
        summary,
        abstract_source,
        topics,
    })
}

/// A topic (`{"Text": "Title - description", "FirstURL"}`) as a result.
fn topic_hit(topic: &Value) -> Option<SearchHit> {
    let url = topic["FirstURL"].as_str().filter(|url| is_web_url(url))?;
    let text = fragment_text(topic["Text"].as_str().unwrap_or_default());
    if text.is_empty() {
        return None;
    }
    let (title, snippet) = match text.split_once(" - ") {
        Some((title, rest)) => (title.to_string(), rest.to_string()),
        None => (text.clone(), text.clone()),
    };
    Some(SearchHit {
        title,
        url: url.to_string(),
        snippet,
    })
}

/// What the HTML endpoint's page held.
#[derive(Debug, PartialEq)]
pub(super) enum ResultsPage {
    /// The organic results, ads left out; empty when nothing matched.
    Results(Vec<SearchHit>),
    /// The anti-bot challenge instead of results.
    Challenge,
}

/// Reads the results of DuckDuckGo's HTML page: `<div class="result">` blocks with an
/// `a.result__a` title link and a `.result__snippet`.
pub(super) fn parse_results_page(html: &str) -> ResultsPage {
    let Some(selectors) = SELECTORS.as_ref() else {
        return ResultsPage::Results(Vec::new());
    };
    let document = Html::parse_document(html);
    let hits: Vec<SearchHit> = document
        .select(&selectors.result)
        .filter(|block| !is_ad(block))
        .filter_map(|block| result_hit(&block, selectors))
        .collect();
    if hits.is_empty() && document.select(&selectors.challenge).next().is_some() {
        return ResultsPage::Challenge;
    }
    ResultsPage::Results(hits)
}

fn is_ad(block: &ElementRef) -> bool {
    block
        .value()
        .classes()
        .any(|class| class.starts_with("result--ad"))
}

fn result_hit(block: &ElementRef, selectors: &Selectors) -> Option<SearchHit> {
    let link = block.select(&selectors.title_link).next()?;
    let url = link_target(link.value().attr("href")?)?;
    let title = collapse_whitespace(link.text());
    if title.is_empty() {
        return None;
    }
    let snippet = block
        .select(&selectors.snippet)
        .next()
        .map(|snippet| collapse_whitespace(snippet.text()))
        .unwrap_or_default();
    Some(SearchHit {
        title,
        url,
        snippet,
    })
}

/// Where a result link leads: DuckDuckGo's redirect (`//duckduckgo.com/l/?uddg=<target>&rut=…`)
/// decoded to its target, other links as they are; `None` for an ad's click-through (`y.js`)
/// or anything that is not http(s).
pub(super) fn link_target(href: &str) -> Option<String> {
    let mut url = Url::parse("https://duckduckgo.com/")
        .ok()?
        .join(href)
        .ok()?;
    if on_duckduckgo(&url) && url.path() == "/l/" {
        let target = url
            .query_pairs()
            .find(|(name, _)| name == "uddg")
            .map(|(_, target)| target.into_owned())?;
        url = Url::parse(&target).ok()?;
    }
    if on_duckduckgo(&url) && url.path() == "/y.js" {
        return None;
    }
    is_web_url(url.as_str()).then(|| url.into())
}

fn on_duckduckgo(url: &Url) -> bool {
    url.host_str()
        .is_some_and(|host| host == "duckduckgo.com" || host.ends_with(".duckduckgo.com"))
}

/// One response from the two answers: results from the page, answer and abstract from the
/// Instant Answer API; the API's topics as results when the page failed or had none.
pub(super) fn combine(
    answer: Result<InstantAnswer, ToolError>,
    page: Result<Vec<SearchHit>, ToolError>,
) -> Result<SearchResponse, ToolError> {
    match (answer, page) {
        (Ok(mut instant), Ok(hits)) => Ok(SearchResponse {
            hits: if hits.is_empty() {
                instant.as_hits()
            } else {
                hits
            },
            answer: instant.answer,
            summary: instant.summary,
        }),
        (Err(err), Ok(hits)) => {
            tracing::warn!(%err, "DuckDuckGo's Instant Answer API failed; results only");
            Ok(SearchResponse {
                hits,
                ..SearchResponse::default()
            })
        }
        (Ok(mut instant), Err(err)) if !instant.is_empty() => {
            tracing::warn!(%err, "DuckDuckGo's results page failed; instant answer only");
            Ok(SearchResponse {
                hits: instant.as_hits(),
                answer: instant.answer,
                summary: instant.summary,
            })
        }
        (Ok(_), Err(err)) => Err(err),
        (Err(answer_err), Err(page_err)) => Err(search_failed(format!(
            "DuckDuckGo failed: its results page: {page_err}; its Instant Answer API: {answer_err}"
        ))),
    }
}
