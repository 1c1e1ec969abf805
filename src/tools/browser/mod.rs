//! Browser sessions for `browser_action {sessionId, action, …}` and `analyze_page {sessionId}`
//! (seed 001, issue 34): a headless Chromium per session, driven over the DevTools protocol
//! (`chromiumoxide`), owned by one chat, closed when idle, with its chat, or when Chromium
//! dies. Every request a page makes goes through the SSRF guard (`interception`).
//!
//! Here: the ids, `BrowserError`, the tools' names and what a call's card shows. Beside it:
//! `pool` (`Browsers`: the sessions, the caps, the sweeper), `profiles` (this process's
//! folder of profiles, and removing those of processes gone), `session` (one Chromium),
//! `command_line` (what Chromium is started with), `process` (starting it so it dies with the
//! server), `limits` (its memory bound), `cgroup` (the kernel's bound on it, where the server
//! may make one), `sink` (the proxy its own network is given, where no request should arrive),
//! `interception` (and `forward`, making a paused request), `actions` (what `browser_action`
//! does), `page` (what every action asks of the page), `analyze` (`analyze_page`),
//! `screenshots` (stored PNGs), `tool` (the two `Tool`s, built per run for one chat). It must
//! not reach the network but through `interception`'s checked client.

pub mod actions;
pub mod analyze;
mod cgroup;
mod command_line;
pub mod interception;
mod limits;
mod page;
pub mod pool;
mod process;
mod profiles;
pub mod screenshots;
pub mod session;
mod sink;
pub mod tool;

pub use pool::Browsers;
pub(crate) use process::die_with_parent;
pub use screenshots::{ScreenshotId, Screenshots};
pub use tool::{AnalyzePage, BrowserAction};

use super::ToolError;

/// `browser_action`'s name.
pub const BROWSER_ACTION: &str = "browser_action";
/// `analyze_page`'s name.
pub const ANALYZE_PAGE: &str = "analyze_page";
/// Both tools' names: naming one in `x_tools` or `enabled_tools` offers both (a session is
/// opened by one and read by the other).
pub const BROWSER_TOOLS: [&str; 2] = [BROWSER_ACTION, ANALYZE_PAGE];
/// What a server needs to offer them, for saying why they are not offered.
pub const NEEDS: &str = "Chromium (on PATH or at browser.chromium_path) and browser.enabled";
/// What the model's context holds where a screenshot was (seed 001, "Screenshot Results").
pub const IMAGE_PLACEHOLDER: &str = "[image displayed above]";

/// What a browser call's card shows, from its stored result text (`content`): the page's
/// `url` and the `screenshot`'s `url`, in the result's own shape; `None` for other tools and
/// results that name no page.
pub fn page_of(
    tool: Option<&str>,
    content: Option<serde_json::Value>,
) -> Option<serde_json::Value> {
    if !tool.is_some_and(|name| BROWSER_TOOLS.contains(&name)) {
        return None;
    }
    let result: serde_json::Value = serde_json::from_str(content?.as_str()?).ok()?;
    let url = result["url"].as_str()?;
    let mut page = serde_json::json!({"url": url});
    if let Some(shot) = result["screenshot"]["url"].as_str() {
        page["screenshot"] = serde_json::json!({"url": shot});
    }
    Some(page)
}

/// The screenshot a `browser_action` result (as the model reads it) took, if it took one: a
/// `screenshot:` reference the run replaces with the PNG before each model call.
pub fn screenshot_taken(result: &str) -> Option<super::images::ImageRef> {
    let result: serde_json::Value = serde_json::from_str(result).ok()?;
    let id = ScreenshotId::parse(result["screenshot"]["id"].as_str()?)?;
    Some(super::images::ImageRef {
        url: format!("{}{id}", screenshots::REFERENCE_SCHEME),
    })
}

/// A browser session's id: `bs_` and a UUID without hyphens.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct BrowserSessionId(String);

impl BrowserSessionId {
    pub fn generate() -> Self {
        Self(format!("bs_{}", uuid::Uuid::new_v4().simple()))
    }

    /// The id a model passed, if it has the shape of one (whether it exists, and is this
    /// chat's, is for the pool to say).
    pub fn parse(raw: &str) -> Option<Self> {
        let hex = raw.strip_prefix("bs_")?;
        (hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| Self(raw.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for BrowserSessionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why a browser call failed, each with its stable code.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BrowserError {
    #[error("browser sessions are not available on this server: {0}")]
    Unavailable(String),
    #[error("Chromium could not be started: {0}")]
    Launch(String),
    #[error("no browser session {0} in this chat")]
    UnknownSession(String),
    #[error("sessionId is required for {0}: open a session with action \"navigate\" first")]
    NoSession(String),
    #[error("this chat already has {max} browser sessions open, the most it may have")]
    ChatCap { max: usize },
    #[error("the server already has {max} browser sessions open, the most it may have")]
    ServerCap { max: usize },
    #[error("browser session {0} has ended (its Chromium exited)")]
    SessionEnded(String),
    #[error("{0}")]
    Invalid(String),
    #[error("no element matches the selector {0:?}")]
    NoMatch(String),
    #[error("refused: {0}")]
    Refused(String),
    #[error("the action took longer than {0} seconds")]
    Timeout(u64),
    #[error("the page did not load within {secs} seconds; browser session {session} was closed")]
    NavigationTimeout { secs: u64, session: String },
    #[error("the page crashed and browser session {session} was closed: {why}")]
    PageCrashed { session: String, why: String },
    #[error("the screenshot has {size} bytes; at most {limit} are stored")]
    ScreenshotTooLarge { size: usize, limit: usize },
    #[error("the browser failed: {0}")]
    Failed(String),
}

impl BrowserError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::Unavailable(_) => "browser_unavailable",
            Self::Launch(_) => "browser_launch_failed",
            Self::UnknownSession(_) => "unknown_session",
            Self::NoSession(_) => "session_required",
            Self::ChatCap { .. } => "too_many_sessions_in_chat",
            Self::ServerCap { .. } => "too_many_sessions",
            Self::SessionEnded(_) => "session_ended",
            Self::Invalid(_) => super::INVALID_ARGUMENTS,
            Self::NoMatch(_) => "no_match",
            Self::Refused(_) => "refused",
            Self::Timeout(_) => "timeout",
            Self::NavigationTimeout { .. } => "navigation_timeout",
            Self::PageCrashed { .. } => "page_crashed",
            Self::ScreenshotTooLarge { .. } => "screenshot_too_large",
            Self::Failed(_) => "browser_failed",
        }
    }

    fn suggestion(&self) -> &'static str {
        match self {
            Self::Unavailable(_) | Self::Launch(_) => {
                "Tell the user the browser is not available; fetch_url may read the page as text."
            }
            Self::UnknownSession(_) | Self::NoSession(_) | Self::SessionEnded(_) => {
                "Call browser_action with action \"navigate\" and a url, without sessionId, to open a new session."
            }
            Self::ChatCap { .. } | Self::ServerCap { .. } => {
                "Use a session already open (its sessionId), or wait for one to close."
            }
            Self::Invalid(_) => "Fix the arguments as the message says and call the tool again.",
            Self::NoMatch(_) => {
                "Call analyze_page to see the page's elements and their selectors, then try again."
            }
            Self::Refused(_) => "Do not retry this address: it is not reachable from here.",
            Self::Timeout(_) | Self::Failed(_) => "Try again, or try another way.",
            Self::NavigationTimeout { .. } => {
                "The site did not answer. Try again later or another page: call browser_action with action \"navigate\" and a url, without sessionId, to open a new session."
            }
            Self::PageCrashed { .. } => {
                "The page used more memory than allowed or crashed: do not open it again. Call browser_action with action \"navigate\" and a url, without sessionId, to open a new session."
            }
            Self::ScreenshotTooLarge { .. } => {
                "Take a screenshot of the viewport (full_page false) instead."
            }
        }
    }
}

impl From<BrowserError> for ToolError {
    fn from(err: BrowserError) -> Self {
        ToolError::new(err.code(), err.to_string(), err.suggestion())
    }
}

/// A DevTools failure: the session's end when its Chromium is gone, else a failure.
pub(crate) fn cdp_error(
    session: &session::BrowserSession,
    err: chromiumoxide::error::CdpError,
) -> BrowserError {
    if !session.is_alive() {
        return BrowserError::SessionEnded(session.id.to_string());
    }
    BrowserError::Failed(err.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_browser_calls_card_shows_its_page_and_screenshot() {
        let content = serde_json::json!(
            r#"{"url":"http://a.test/","title":"A","screenshot":{"url":"/chat/api/c/screenshots/shot_1"},"text":"long"}"#
        );
        assert_eq!(
            page_of(Some(BROWSER_ACTION), Some(content.clone())),
            Some(serde_json::json!({"url": "http://a.test/",
                "screenshot": {"url": "/chat/api/c/screenshots/shot_1"}}))
        );
        assert_eq!(page_of(Some("fetch_url"), Some(content)), None);
        let error = serde_json::json!(r#"{"error":"refused","code":"refused"}"#);
        assert_eq!(page_of(Some(ANALYZE_PAGE), Some(error)), None);
    }

    #[test]
    fn session_ids_are_parsed_only_in_their_shape() {
        let id = BrowserSessionId::generate();
        assert_eq!(BrowserSessionId::parse(id.as_str()), Some(id));
        for bad in [
            "",
            "bs_",
            "bs_xyz",
            "session-123",
            "bs_0123456789abcdef0123456789abcdeg",
        ] {
            assert!(BrowserSessionId::parse(bad).is_none(), "{bad}");
        }
    }
}
