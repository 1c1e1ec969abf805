//! Every request a session's page makes, answered by Colloquy: the DevTools protocol's Fetch
//! domain pauses it, and Colloquy makes it itself through an HTTP client whose resolver hands
//! out only addresses the SSRF `Guard` passed (as `fetch_url`'s does), then fulfils the paused
//! request with the response. A refused request is failed before anything leaves. Chromium's
//! own network goes to a sink that answers nothing (`sink`), so a request the Fetch domain does
//! not see (a WebSocket) cannot reach anything. What would go round the page's interception is
//! kept from happening (`CONFINE`, run in every frame before its scripts): no service worker
//! (its script and fetches are the browser's, not the page's), no new window (a new target,
//! whose first requests no one pauses); a link or form aimed at another window opens in the
//! page. A page that would be a download is refused.

mod forward;

use forward::Failure;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::fetch::{
    EnableParams, EventRequestPaused, FailRequestParams, RequestPattern, RequestStage,
};
use chromiumoxide::cdp::browser_protocol::network::ResourceType;
use chromiumoxide::cdp::browser_protocol::page::AddScriptToEvaluateOnNewDocumentParams;
use futures_util::StreamExt;
use reqwest::redirect::Policy;
use tokio::sync::Semaphore;
use url::Url;

use crate::ssrf::{CheckedResolver, Guard, HostResolver};

/// Requests of one page answered at once: a page's images and scripts load in parallel, and
/// a page asking for thousands waits its turn rather than opening thousands of connections.
const CONCURRENT_REQUESTS: usize = 8;
/// Refused requests remembered per session, for the next action to report (the latest ones).
const MAX_REMEMBERED_REFUSALS: usize = 20;
/// The script every frame of a session's page runs before its own (see the module's doc).
const CONFINE: &str = r#"(() => {
  try { delete Navigator.prototype.serviceWorker; } catch (e) {}
  window.open = () => null;
  const here = (event) => {
    const target = event.target && event.target.closest
      && event.target.closest("a[href], area[href], form");
    if (target) target.target = "_self";
  };
  document.addEventListener("click", here, true);
  document.addEventListener("submit", here, true);
})();"#;

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
        page.execute(AddScriptToEvaluateOnNewDocumentParams::new(CONFINE))
            .await?;
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
}
