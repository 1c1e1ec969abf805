//! Every request a session's page makes, answered by Colloquy: the DevTools protocol's Fetch
//! domain pauses it, and Colloquy makes it itself through an HTTP client whose resolver hands
//! out only addresses the SSRF `Guard` passed (as `fetch_url`'s does), then fulfils the paused
//! request with the response. A refused request is failed before anything leaves. Chromium's
//! own network goes to a proxy that does not exist, so a request the Fetch domain does not see
//! (a WebSocket, a worker's) cannot reach anything. A page that would be a download is refused.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::fetch::{
    EnableParams, EventRequestPaused, FailRequestParams, FulfillRequestParams, HeaderEntry,
    RequestPattern, RequestStage,
};
use chromiumoxide::cdp::browser_protocol::network::{ErrorReason, GetCookiesParams, ResourceType};
use futures_util::StreamExt;
use reqwest::redirect::Policy;
use tokio::sync::Semaphore;
use url::Url;

use crate::ssrf::{CheckedResolver, Guard, HostResolver, Refusal};

/// Requests of one page answered at once: a page's images and scripts load in parallel, and
/// a page asking for thousands waits its turn rather than opening thousands of connections.
const CONCURRENT_REQUESTS: usize = 8;
/// Refused requests remembered per session, for the next action to report (the latest ones).
const MAX_REMEMBERED_REFUSALS: usize = 20;
/// Request headers not passed on: the client sets its own framing and host, asks for no
/// encoding it would have to undo, and never lets a cached copy answer `304`.
const DROPPED_REQUEST_HEADERS: [&str; 8] = [
    "host",
    "content-length",
    "connection",
    "accept-encoding",
    "if-none-match",
    "if-modified-since",
    "transfer-encoding",
    "upgrade",
];
/// Response headers not passed back: the body handed to Chromium is whole and decoded.
const DROPPED_RESPONSE_HEADERS: [&str; 4] = [
    "content-length",
    "content-encoding",
    "transfer-encoding",
    "connection",
];

/// A request the guard refused, kept so the action that caused it can say so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedRequest {
    pub url: String,
    /// A document (a navigation, a redirect, a frame's page), not a resource of one.
    pub document: bool,
    /// The frame it was for: the main frame's document is the page itself.
    pub frame: String,
    pub reason: String,
}

/// The requests refused lately in one session.
#[derive(Debug, Clone, Default)]
pub struct Refusals(Arc<Mutex<Vec<RefusedRequest>>>);

impl Refusals {
    fn push(&self, refused: RefusedRequest) {
        let mut list = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if list.len() == MAX_REMEMBERED_REFUSALS {
            list.remove(0);
        }
        list.push(refused);
    }

    /// The refusals since the last call, oldest first.
    pub fn take(&self) -> Vec<RefusedRequest> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// What the interception needs: the guard, the client connecting only to checked addresses,
/// and the limits.
#[derive(Clone)]
pub struct Gate {
    guard: Arc<Guard>,
    client: reqwest::Client,
    max_response_bytes: usize,
}

impl Gate {
    pub fn new(
        guard: Arc<Guard>,
        resolver: Arc<dyn HostResolver>,
        timeout: Duration,
        max_response_bytes: usize,
    ) -> Result<Self, reqwest::Error> {
        let client = reqwest::Client::builder()
            // Chromium follows redirects itself, each one a new request paused here.
            .redirect(Policy::none())
            .no_proxy()
            .timeout(timeout)
            .dns_resolver(Arc::new(CheckedResolver {
                inner: resolver,
                guard: Arc::clone(&guard),
            }))
            .build()?;
        Ok(Self {
            guard,
            client,
            max_response_bytes,
        })
    }

    /// Checks a URL a session is told to open: http(s) only, and a host the guard allows
    /// (a name is judged again, resolved, when the page requests it).
    pub fn check_navigation(&self, url: &Url) -> Result<(), String> {
        match url.scheme() {
            "http" | "https" => {}
            other => {
                return Err(format!(
                    "{other}: URLs cannot be opened: only http and https pages can"
                ));
            }
        }
        self.guard.check_url(url).map_err(|r| r.to_string())
    }

    /// Starts answering `page`'s requests (all of them, from the request stage): until the
    /// page's events end, with its session.
    pub async fn intercept(&self, page: &Page, refusals: Refusals) -> chromiumoxide::Result<()> {
        let mut paused = page.event_listener::<EventRequestPaused>().await?;
        page.execute(EnableParams {
            patterns: Some(vec![RequestPattern {
                url_pattern: Some("*".into()),
                resource_type: None,
                request_stage: Some(RequestStage::Request),
            }]),
            handle_auth_requests: Some(false),
        })
        .await?;
        let gate = self.clone();
        let page = page.clone();
        let slots = Arc::new(Semaphore::new(CONCURRENT_REQUESTS));
        tokio::spawn(async move {
            while let Some(event) = paused.next().await {
                let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
                    return;
                };
                let (gate, page, refusals) = (gate.clone(), page.clone(), refusals.clone());
                tokio::spawn(async move {
                    gate.answer(&page, &event, &refusals).await;
                    drop(slot);
                });
            }
        });
        Ok(())
    }

    /// Answers one paused request: fulfilled with what the checked client got, or failed.
    async fn answer(&self, page: &Page, event: &EventRequestPaused, refusals: &Refusals) {
        let request_id = event.request_id.clone();
        let outcome = self.forward(page, event).await;
        let sent = match outcome {
            Ok(fulfil) => page
                .execute(fulfil.into_params(request_id))
                .await
                .map(|_| ()),
            Err(failure) => {
                match &failure {
                    Failure::Refused(reason) => {
                        refusals.push(RefusedRequest {
                            url: event.request.url.clone(),
                            document: event.resource_type == ResourceType::Document,
                            frame: event.frame_id.inner().clone(),
                            reason: reason.clone(),
                        });
                        tracing::info!(url = %event.request.url, %reason, "browser request refused");
                    }
                    Failure::Failed(why) => {
                        tracing::debug!(url = %event.request.url, %why, "browser request failed");
                    }
                }
                page.execute(FailRequestParams::new(request_id, failure.reason()))
                    .await
                    .map(|_| ())
            }
        };
        if let Err(err) = sent {
            tracing::debug!(%err, "could not answer a paused browser request");
        }
    }

    /// Makes the request through the checked client.
    async fn forward(&self, page: &Page, event: &EventRequestPaused) -> Result<Fulfil, Failure> {
        let request = &event.request;
        let url = Url::parse(&request.url).map_err(|err| Failure::Refused(err.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Failure::Refused(format!(
                "{} requests are not made",
                url.scheme()
            )));
        }
        self.guard
            .check_url(&url)
            .map_err(|r: Refusal| Failure::Refused(r.to_string()))?;
        let method = reqwest::Method::from_bytes(request.method.as_bytes())
            .map_err(|err| Failure::Refused(err.to_string()))?;
        let mut outgoing = self.client.request(method, url.clone());
        let mut has_cookie = false;
        if let Some(headers) = request.headers.inner().as_object() {
            for (name, value) in headers {
                let lower = name.to_ascii_lowercase();
                if DROPPED_REQUEST_HEADERS.contains(&lower.as_str()) {
                    continue;
                }
                has_cookie |= lower == "cookie";
                if let Some(value) = value.as_str() {
                    outgoing = outgoing.header(name.as_str(), value);
                }
            }
        }
        if !has_cookie && let Some(cookie) = cookie_header(page, &url).await {
            outgoing = outgoing.header("cookie", cookie);
        }
        if let Some(entries) = &request.post_data_entries {
            let mut body = Vec::new();
            for entry in entries {
                if let Some(bytes) = &entry.bytes {
                    let encoded: &str = bytes.as_ref();
                    let decoded = base64::engine::general_purpose::STANDARD
                        .decode(encoded)
                        .map_err(|err| Failure::Failed(err.to_string()))?;
                    body.extend(decoded);
                }
            }
            outgoing = outgoing.body(body);
        }
        let mut response = outgoing.send().await.map_err(|err| {
            // The resolver's refusal arrives wrapped in reqwest's connect error.
            let text = error_chain(&err);
            match text.find("refused: ") {
                Some(at) => Failure::Refused(text[at..].to_string()),
                None => Failure::Failed(text),
            }
        })?;
        if event.resource_type == ResourceType::Document && is_download(response.headers()) {
            return Err(Failure::Refused(format!(
                "{url} is a download, and downloads are refused"
            )));
        }
        let status = response.status();
        let headers: Vec<HeaderEntry> = response
            .headers()
            .iter()
            .filter(|(name, _)| !DROPPED_RESPONSE_HEADERS.contains(&name.as_str()))
            .filter_map(|(name, value)| {
                value
                    .to_str()
                    .ok()
                    .map(|value| HeaderEntry::new(name.as_str(), value))
            })
            .collect();
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|err| Failure::Failed(err.to_string()))?
        {
            if body.len() + chunk.len() > self.max_response_bytes {
                return Err(Failure::Failed(format!(
                    "{url} is larger than {} bytes",
                    self.max_response_bytes
                )));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Fulfil {
            status: status.as_u16(),
            phrase: status.canonical_reason().unwrap_or("").to_string(),
            headers,
            body,
        })
    }
}

/// Whether a document response would be saved rather than shown: an attachment, or a type a
/// browser does not render (Chromium would wait on a download that is denied).
fn is_download(headers: &reqwest::header::HeaderMap) -> bool {
    let header = |name: reqwest::header::HeaderName| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    };
    if header(reqwest::header::CONTENT_DISPOSITION).starts_with("attachment") {
        return true;
    }
    let kind = header(reqwest::header::CONTENT_TYPE);
    let media = kind.split(';').next().unwrap_or("").trim();
    let shown = media.is_empty()
        || media.starts_with("text/")
        || media.starts_with("image/")
        || media.ends_with("+xml")
        || matches!(
            media,
            "application/xml" | "application/json" | "application/javascript"
        );
    !shown
}

/// The cookies the session's profile holds for `url`, as a `Cookie` header: the paused
/// request's headers do not carry them.
async fn cookie_header(page: &Page, url: &Url) -> Option<String> {
    let cookies = page
        .execute(GetCookiesParams {
            urls: Some(vec![url.to_string()]),
        })
        .await
        .ok()?;
    let pairs: Vec<String> = cookies
        .result
        .cookies
        .iter()
        .map(|c| format!("{}={}", c.name, c.value))
        .collect();
    (!pairs.is_empty()).then(|| pairs.join("; "))
}

/// An error with its causes, one line.
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// A response to hand back to the paused request.
struct Fulfil {
    status: u16,
    phrase: String,
    headers: Vec<HeaderEntry>,
    body: Vec<u8>,
}

impl Fulfil {
    fn into_params(
        self,
        request_id: chromiumoxide::cdp::browser_protocol::fetch::RequestId,
    ) -> FulfillRequestParams {
        let mut params = FulfillRequestParams::new(request_id, i64::from(self.status));
        params.response_headers = Some(self.headers);
        params.body = Some(
            base64::engine::general_purpose::STANDARD
                .encode(&self.body)
                .into(),
        );
        if !self.phrase.is_empty() {
            params.response_phrase = Some(self.phrase);
        }
        params
    }
}

/// Why a paused request was not fulfilled.
enum Failure {
    /// The SSRF guard refused it.
    Refused(String),
    /// It was allowed but did not succeed.
    Failed(String),
}

impl Failure {
    fn reason(&self) -> ErrorReason {
        match self {
            Failure::Refused(_) => ErrorReason::BlockedByClient,
            Failure::Failed(_) => ErrorReason::Failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{CONTENT_DISPOSITION, CONTENT_TYPE, HeaderMap, HeaderValue};

    fn headers(pairs: &[(reqwest::header::HeaderName, &'static str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(name, value)| (name.clone(), HeaderValue::from_static(value)))
            .collect()
    }

    #[test]
    fn attachments_and_types_a_browser_does_not_show_are_downloads() {
        assert!(is_download(&headers(&[(
            CONTENT_DISPOSITION,
            "attachment; filename=a.txt"
        )])));
        assert!(is_download(&headers(&[(CONTENT_TYPE, "application/zip")])));
        assert!(is_download(&headers(&[(
            CONTENT_TYPE,
            "application/octet-stream"
        )])));
        for shown in [
            "text/html; charset=utf-8",
            "image/png",
            "image/svg+xml",
            "application/json",
        ] {
            assert!(!is_download(&headers(&[(CONTENT_TYPE, shown)])), "{shown}");
        }
        assert!(
            !is_download(&HeaderMap::new()),
            "no type: sniffed and shown"
        );
    }
}
