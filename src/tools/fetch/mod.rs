//! Fetching one web page safely, shared by the research tools (fetch_url, web_search's
//! auto-fetch): SSRF checks on every hop and every resolved address, redirects followed by
//! hand, a capped body, text extraction, and a page cache so a page fetched by one tool is free
//! for the next; and the bytes of an image a `/v1` request names by URL (`fetch_image`). Tools
//! decide which pages to fetch and how to shape results; this must not.

pub mod extract;

use std::sync::Arc;
use std::time::Duration;

use moka::future::Cache;
use reqwest::header::{ACCEPT, CONTENT_TYPE, LOCATION};
use reqwest::redirect::Policy;
use url::Url;

use self::extract::ContentKind;
use crate::config::ToolsConfig;
use crate::ssrf::{AllowEntryError, AllowList, CheckedResolver, Guard, Refusal};
pub use crate::ssrf::{HostResolver, SystemResolver};

/// Redirects followed per fetch: enough for http→https→canonical chains, short of loops.
pub const MAX_REDIRECTS: usize = 5;
/// Characters of page text the cache holds in all (moka weighs entries by text length).
const PAGE_CACHE_MAX_CHARS: u64 = 64 * 1024 * 1024;
/// Sent so sites can tell who is fetching.
const USER_AGENT: &str = concat!("Colloquy/", env!("CARGO_PKG_VERSION"), " (fetch_url)");
/// The images a model can read, asked for when fetching one.
const IMAGES_ACCEPTED: &str = "image/png,image/jpeg,image/gif,image/webp;q=0.9,image/*;q=0.5";
/// What we can read, best first.
const ACCEPTED: &str = "text/html,application/xhtml+xml,text/plain;q=0.9,application/pdf;q=0.9,\
                        application/json;q=0.8,text/*;q=0.7";

/// A fetched page, reduced to text.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// Where the page was finally found, after redirects.
    pub url: String,
    /// The media type it was served as (`text/html`), without parameters.
    pub content_type: String,
    pub text: String,
    /// Absolute http(s) links on the page, de-duplicated, in document order.
    pub links: Vec<Link>,
}

pub use crate::retrieval::html::Link;

/// Why a page could not be fetched.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FetchError {
    #[error("invalid URL {url:?}: {reason}")]
    InvalidUrl { url: String, reason: String },
    #[error("unsupported URL scheme {0}: only http and https can be fetched")]
    UnsupportedScheme(String),
    #[error(transparent)]
    Refused(#[from] Refusal),
    #[error("more than {MAX_REDIRECTS} redirects")]
    TooManyRedirects,
    #[error("{url} answered with HTTP status {status}")]
    Status { url: String, status: u16 },
    #[error("unsupported content type {0}")]
    UnsupportedContentType(String),
    #[error("the response is larger than {limit} bytes")]
    TooLarge { limit: usize },
    #[error("the page took longer than {0:?} to fetch")]
    Timeout(Duration),
    #[error("could not fetch {url}: {reason}")]
    Request { url: String, reason: String },
    #[error("{0}")]
    Extraction(String),
}

impl From<crate::retrieval::text::ExtractionError> for FetchError {
    fn from(err: crate::retrieval::text::ExtractionError) -> Self {
        Self::Extraction(err.0)
    }
}

impl FetchError {
    /// A stable snake_case code for tool results.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidUrl { .. } | Self::UnsupportedScheme(_) => "invalid_url",
            Self::Refused(_) => "ssrf_refused",
            Self::TooManyRedirects => "too_many_redirects",
            Self::Status { .. } | Self::Request { .. } => "fetch_failed",
            Self::UnsupportedContentType(_) => "unsupported_content_type",
            Self::TooLarge { .. } => "too_large",
            Self::Timeout(_) => "timeout",
            Self::Extraction(_) => "extraction_failed",
        }
    }
}

/// Why a `Fetcher` could not be built (at start-up).
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    AllowList(#[from] AllowEntryError),
    #[error("cannot build the HTTP client: {0}")]
    Client(#[from] reqwest::Error),
}

/// Fetches pages through one HTTP client whose every connection goes to a checked address.
pub struct Fetcher {
    client: reqwest::Client,
    guard: Arc<Guard>,
    resolver: Arc<dyn HostResolver>,
    cache: Cache<String, Page>,
    max_response_bytes: usize,
    timeout: Duration,
    extraction_budget: Duration,
}

impl Fetcher {
    /// A fetcher resolving names with the system resolver.
    pub fn new(config: &ToolsConfig, cache_ttl: Duration) -> Result<Self, BuildError> {
        Self::with_resolver(config, cache_ttl, Arc::new(SystemResolver))
    }

    /// A fetcher resolving names with `resolver` (tests map names to any address).
    pub fn with_resolver(
        config: &ToolsConfig,
        cache_ttl: Duration,
        resolver: Arc<dyn HostResolver>,
    ) -> Result<Self, BuildError> {
        let guard = Arc::new(Guard::new(AllowList::parse(&config.ssrf_allow_list)?));
        let timeout = Duration::from_secs(config.fetch_timeout_secs);
        let client = reqwest::Client::builder()
            .redirect(Policy::none())
            .no_proxy()
            .timeout(timeout)
            .user_agent(USER_AGENT)
            .dns_resolver(Arc::new(CheckedResolver {
                inner: Arc::clone(&resolver),
                guard: Arc::clone(&guard),
            }))
            .build()?;
        let cache = Cache::builder()
            .time_to_live(cache_ttl)
            .max_capacity(PAGE_CACHE_MAX_CHARS)
            .weigher(|_: &String, page: &Page| u32::try_from(page.text.len()).unwrap_or(u32::MAX))
            .build();
        Ok(Self {
            client,
            guard,
            resolver,
            cache,
            max_response_bytes: config.fetch_max_response_bytes,
            timeout,
            extraction_budget: Duration::from_secs(config.fetch_extraction_budget_secs),
        })
    }

    /// Checks `url` against the SSRF rules, as a fetch does before its request.
    pub fn check_url(&self, url: &Url) -> Result<(), crate::ssrf::Refusal> {
        self.guard.check_url(url)
    }

    /// Checks `url` as `check_url` does, then resolves a host name as this fetcher's
    /// connections would and refuses it when ANY address it resolves to is off limits (an
    /// allow-listed name excepted), for callers that must refuse a private name before
    /// connecting. Connections stay guarded all the same (the name may resolve differently
    /// then). A name that does not resolve passes: connecting reports that.
    pub async fn check_resolved(&self, url: &Url) -> Result<(), Refusal> {
        self.guard.check_url(url)?;
        let name = match url.host() {
            Some(url::Host::Domain(name)) if crate::ssrf::parse_host_ip(name).is_none() => name,
            // An address, judged by `check_url`.
            _ => return Ok(()),
        };
        let Ok(ips) = self.resolver.resolve(name).await else {
            return Ok(());
        };
        for ip in ips {
            self.guard.filter_resolved(name, vec![ip])?;
        }
        Ok(())
    }

    /// A client for another protocol spoken over HTTP (a remote MCP server's), whose every
    /// connection goes to a checked address as the fetcher's do: no proxy, no redirects,
    /// `connect_timeout`; no overall timeout (its callers bound each exchange).
    pub fn guarded_client(&self, connect_timeout: Duration) -> Result<reqwest::Client, BuildError> {
        Ok(reqwest::Client::builder()
            .redirect(Policy::none())
            .no_proxy()
            .connect_timeout(connect_timeout)
            .user_agent(USER_AGENT)
            .dns_resolver(Arc::new(CheckedResolver {
                inner: Arc::clone(&self.resolver),
                guard: Arc::clone(&self.guard),
            }))
            .build()?)
    }

    /// The cached page for `url`, if one was fetched within the cache's lifetime.
    pub async fn cached(&self, url: &str) -> Option<Page> {
        let url = parse_fetchable(url).ok()?;
        self.cache.get(url.as_str()).await
    }

    /// Fetches `url` (or serves it from the cache) and extracts its text. Concurrent fetches
    /// of the same URL share one request.
    pub async fn fetch_page(&self, url: &str) -> Result<Page, FetchError> {
        let url = parse_fetchable(url)?;
        let key = url.to_string();
        let page = self
            .cache
            .try_get_with(key.clone(), self.fetch_fresh(url))
            .await
            .map_err(|err| (*err).clone())?;
        if page.url != key && !self.cache.contains_key(&page.url) {
            self.cache.insert(page.url.clone(), page.clone()).await;
        }
        Ok(page)
    }

    async fn fetch_fresh(&self, url: Url) -> Result<Page, FetchError> {
        tokio::time::timeout(self.timeout, self.follow_redirects(url))
            .await
            .unwrap_or(Err(FetchError::Timeout(self.timeout)))
    }

    async fn follow_redirects(&self, url: Url) -> Result<Page, FetchError> {
        let (response, url) = self.open(url, ACCEPTED, self.timeout).await?;
        self.read_page(response, url).await
    }

    /// Requests `url`, following redirects by hand (each hop checked), until a successful
    /// answer; returns it with the URL it came from.
    async fn open(
        &self,
        mut url: Url,
        accept: &str,
        timeout: Duration,
    ) -> Result<(reqwest::Response, Url), FetchError> {
        for _ in 0..=MAX_REDIRECTS {
            self.guard.check_url(&url)?;
            let response = self
                .client
                .get(url.clone())
                .header(ACCEPT, accept)
                .timeout(timeout)
                .send()
                .await
                .map_err(|err| self.request_error(err, &url))?;
            let status = response.status();
            if status.is_redirection()
                && let Some(location) = response.headers().get(LOCATION)
            {
                let location = location.to_str().unwrap_or_default();
                let next = url.join(location).map_err(|err| FetchError::InvalidUrl {
                    url: location.to_string(),
                    reason: err.to_string(),
                })?;
                url = check_scheme(next)?;
                url.set_fragment(None);
                continue;
            }
            if !status.is_success() {
                return Err(FetchError::Status {
                    url: url.to_string(),
                    status: status.as_u16(),
                });
            }
            return Ok((response, url));
        }
        Err(FetchError::TooManyRedirects)
    }

    /// Fetches the bytes of an image at `url` (never cached): at most `max_bytes`, within
    /// `timeout`, refused unless it is served as an image (or without a type). Whether the
    /// bytes really are an image is the caller's to check.
    pub async fn fetch_image(
        &self,
        url: &str,
        max_bytes: usize,
        timeout: Duration,
    ) -> Result<Vec<u8>, FetchError> {
        let url = parse_fetchable(url)?;
        let fetch = async {
            let (response, url) = self.open(url, IMAGES_ACCEPTED, timeout).await?;
            let media_type = response
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|value| value.to_str().ok())
                .map(|value| extract::parse_content_type(value).0)
                .unwrap_or_default();
            let generic = ["", "application/octet-stream", "binary/octet-stream"];
            if !media_type.starts_with("image/") && !generic.contains(&media_type.as_str()) {
                return Err(FetchError::UnsupportedContentType(media_type));
            }
            self.read_body(response, &url, max_bytes).await
        };
        tokio::time::timeout(timeout, fetch)
            .await
            .unwrap_or(Err(FetchError::Timeout(timeout)))
    }

    async fn read_page(&self, response: reqwest::Response, url: Url) -> Result<Page, FetchError> {
        let header = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .map(extract::parse_content_type);
        let declared = match &header {
            Some((media_type, _)) if !media_type.is_empty() => {
                Some(ContentKind::from_media_type(media_type)?)
            }
            _ => None,
        };
        let body = self
            .read_body(response, &url, self.max_response_bytes)
            .await?;
        let kind = match declared {
            Some(kind) => kind,
            None => ContentKind::sniff(&body)?,
        };
        let (media_type, charset) = header.unwrap_or_default();
        let base = url.clone();
        // Parsing a large page or PDF is CPU work: keep it off the async workers, within its
        // budget. The extractors stop themselves at the deadline; the outer timeout (with a
        // second's grace) is for the one step that cannot look at it, lopdf's loading.
        let budget = self.extraction_budget;
        let deadline = extract::Deadline::after(budget);
        let extraction = tokio::task::spawn_blocking(move || {
            extract::extract(kind, &body, charset.as_deref(), &base, &deadline)
        });
        let (text, links) = tokio::time::timeout(budget + Duration::from_secs(1), extraction)
            .await
            .map_err(|_| {
                FetchError::Extraction(format!(
                    "reading the content took longer than its budget of {:.1} s",
                    budget.as_secs_f32()
                ))
            })?
            .map_err(|_| FetchError::Extraction(format!("could not extract text from {url}")))??;
        Ok(Page {
            url: url.into(),
            content_type: match (media_type.is_empty(), kind) {
                (false, _) => media_type,
                (true, ContentKind::Html) => "text/html".into(),
                (true, ContentKind::Pdf) => "application/pdf".into(),
                (true, ContentKind::Text) => "text/plain".into(),
            },
            text,
            links,
        })
    }

    /// Reads the body, refusing it as soon as it passes `limit` bytes.
    async fn read_body(
        &self,
        mut response: reqwest::Response,
        url: &Url,
        limit: usize,
    ) -> Result<Vec<u8>, FetchError> {
        if response
            .content_length()
            .is_some_and(|length| length > limit as u64)
        {
            return Err(FetchError::TooLarge { limit });
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|err| self.request_error(err, url))?
        {
            if body.len() + chunk.len() > limit {
                return Err(FetchError::TooLarge { limit });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    /// Names a failed request's cause: an SSRF refusal from the resolver, a timeout, or the
    /// innermost transport error.
    fn request_error(&self, err: reqwest::Error, url: &Url) -> FetchError {
        if err.is_timeout() {
            return FetchError::Timeout(self.timeout);
        }
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&err);
        let mut innermost = err.to_string();
        while let Some(cause) = source {
            if let Some(refusal) = cause.downcast_ref::<Refusal>() {
                return FetchError::Refused(refusal.clone());
            }
            innermost = cause.to_string();
            source = cause.source();
        }
        FetchError::Request {
            url: url.to_string(),
            reason: innermost,
        }
    }
}

/// Parses a URL a tool was given: http or https, without its fragment.
fn parse_fetchable(url: &str) -> Result<Url, FetchError> {
    let mut parsed = Url::parse(url.trim()).map_err(|err| FetchError::InvalidUrl {
        url: url.to_string(),
        reason: err.to_string(),
    })?;
    parsed.set_fragment(None);
    check_scheme(parsed)
}

fn check_scheme(url: Url) -> Result<Url, FetchError> {
    match url.scheme() {
        "http" | "https" => Ok(url),
        other => Err(FetchError::UnsupportedScheme(other.to_string())),
    }
}
