//! The two tools, built per run for the run's chat: `browser_action {sessionId, action,
//! selector, …}` (seed 001's parameters, with each action's own) and `analyze_page
//! {sessionId}`. A navigate without a `sessionId` (or with one whose session has ended) opens
//! a session; any other id must be one of this chat's open sessions.

use std::sync::Arc;
use std::time::Duration;

use entities::ids::ChatId;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use url::Url;

use super::actions::{Action, Scroll, Wait, perform};
use super::session::BrowserSession;
use super::{ANALYZE_PAGE, BROWSER_ACTION, BrowserError, Browsers};
use crate::llm::wire::ToolDefinition;
use crate::tools::schema::parameters_for;
use crate::tools::{ProgressKind, Tool, ToolFuture, parse_arguments};

/// Longest URL, selector, value or key name a call may pass: ample for real ones.
const MAX_URL_CHARS: usize = 4_096;
const MAX_SELECTOR_CHARS: usize = 1_000;
const MAX_KEY_CHARS: usize = 32;
/// Longest text `type` may enter.
const MAX_TYPE_CHARS: usize = 10_000;

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
enum ActionName {
    Navigate,
    Click,
    Type,
    Press,
    Scroll,
    Select,
    Wait,
    Screenshot,
    Extract,
    Back,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Direction {
    Up,
    Down,
    Top,
    Bottom,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ActionArguments {
    /// The session to act in, from an earlier result. Omit it with "navigate" to open a new
    /// session.
    #[serde(rename = "sessionId", default)]
    #[schemars(length(max = 64))]
    session_id: Option<String>,
    /// What to do: navigate {url}, click {selector}, type {selector, text}, press {key},
    /// scroll {direction or selector}, select {selector, value}, wait {selector or ms},
    /// screenshot {full_page}, extract {selector: optional}, back.
    action: ActionName,
    /// A CSS selector (analyze_page lists usable ones).
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_SELECTOR_CHARS))]
    selector: Option<String>,
    /// The http(s) URL to open (navigate).
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_URL_CHARS))]
    url: Option<String>,
    /// The text to type (type).
    #[serde(default)]
    #[schemars(length(max = MAX_TYPE_CHARS))]
    text: Option<String>,
    /// The key to press, as the DevTools protocol names it: Enter, Tab, Escape, ArrowDown…
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_KEY_CHARS))]
    key: Option<String>,
    /// Where to scroll (scroll, when no selector).
    #[serde(default)]
    direction: Option<Direction>,
    /// The option's value or visible text (select).
    #[serde(default)]
    #[schemars(length(max = MAX_SELECTOR_CHARS))]
    value: Option<String>,
    /// Milliseconds to wait (wait, when no selector).
    #[serde(default)]
    #[schemars(range(min = 1))]
    ms: Option<u64>,
    /// The whole page rather than the viewport (screenshot).
    #[serde(default, alias = "fullPage")]
    full_page: Option<bool>,
}

impl ActionArguments {
    /// The action these arguments ask for, checked.
    fn action(self, max_wait_ms: u64) -> Result<Action, BrowserError> {
        let need = |field: Option<String>, name: &str| {
            field.ok_or_else(|| {
                BrowserError::Invalid(format!("{:?} needs {name}", self.action_label()))
            })
        };
        Ok(match self.action {
            ActionName::Navigate => {
                let raw = need(self.url.clone(), "url")?;
                let url = Url::parse(&raw)
                    .map_err(|err| BrowserError::Invalid(format!("invalid url {raw:?}: {err}")))?;
                Action::Navigate { url }
            }
            ActionName::Click => Action::Click {
                selector: need(self.selector.clone(), "selector")?,
            },
            ActionName::Type => Action::Type {
                selector: need(self.selector.clone(), "selector")?,
                text: need(self.text.clone(), "text")?,
            },
            ActionName::Press => Action::Press {
                key: need(self.key.clone(), "key")?,
            },
            ActionName::Scroll => match (&self.selector, self.direction) {
                (Some(selector), _) => Action::Scroll(Scroll::To {
                    selector: selector.clone(),
                }),
                (None, Some(Direction::Up)) => Action::Scroll(Scroll::Up),
                (None, Some(Direction::Down)) => Action::Scroll(Scroll::Down),
                (None, Some(Direction::Top)) => Action::Scroll(Scroll::Top),
                (None, Some(Direction::Bottom)) => Action::Scroll(Scroll::Bottom),
                (None, None) => {
                    return Err(BrowserError::Invalid(
                        "\"scroll\" needs direction or selector".into(),
                    ));
                }
            },
            ActionName::Select => Action::Select {
                selector: need(self.selector.clone(), "selector")?,
                value: need(self.value.clone(), "value")?,
            },
            ActionName::Wait => match (&self.selector, self.ms) {
                (Some(selector), _) => Action::Wait(Wait::For {
                    selector: selector.clone(),
                }),
                (None, Some(ms)) if ms <= max_wait_ms => Action::Wait(Wait::Pause { ms }),
                (None, Some(ms)) => {
                    return Err(BrowserError::Invalid(format!(
                        "\"wait\" may last at most {max_wait_ms} ms, not {ms}"
                    )));
                }
                (None, None) => {
                    return Err(BrowserError::Invalid(
                        "\"wait\" needs selector or ms".into(),
                    ));
                }
            },
            ActionName::Screenshot => Action::Screenshot {
                full_page: self.full_page.unwrap_or(false),
            },
            ActionName::Extract => Action::Extract {
                selector: self.selector.clone(),
            },
            ActionName::Back => Action::Back,
        })
    }

    fn action_label(&self) -> String {
        format!("{:?}", self.action).to_lowercase()
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AnalyzeArguments {
    /// The session whose page to analyze, from a browser_action result.
    #[serde(rename = "sessionId")]
    #[schemars(length(min = 1, max = 64))]
    session_id: String,
}

/// `browser_action` in one chat.
pub struct BrowserAction {
    browsers: Browsers,
    chat: ChatId,
}

impl BrowserAction {
    pub fn new(browsers: Browsers, chat: ChatId) -> Self {
        Self { browsers, chat }
    }

    pub fn describe() -> ToolDefinition {
        ToolDefinition::function(
            BROWSER_ACTION,
            "Execute actions in a browser session (a real headless browser that runs the page's \
             JavaScript). Start with action \"navigate\" and a url, without sessionId: the \
             result has the new session's sessionId, to pass to every later call. Every action \
             returns the page's url and title after it and what changed. \"screenshot\" shows \
             the page to the user; \"extract\" returns its visible text (at most 10,000 \
             characters); analyze_page lists the page's forms, fields and elements with \
             selectors to use here.",
            parameters_for::<ActionArguments>(),
        )
    }
}

/// The session a call acts in: its own, opened for a navigate without one (or whose session
/// ended).
async fn session_for(
    browsers: &Browsers,
    chat: &ChatId,
    id: Option<&str>,
    navigate: bool,
) -> Result<Arc<BrowserSession>, BrowserError> {
    match (id, navigate) {
        (None, true) => browsers.open(chat).await,
        (None, false) => Err(BrowserError::NoSession("this action".into())),
        (Some(id), navigate) => match browsers.get(chat, id).await {
            Err(BrowserError::SessionEnded(_) | BrowserError::PageCrashed { .. }) if navigate => {
                browsers.open(chat).await
            }
            Err(BrowserError::UnknownSession(_)) if navigate && browsers.ended(chat, id) => {
                browsers.open(chat).await
            }
            other => other,
        },
    }
}

/// How long a failed call waits to see whether its Chromium died under it (the connection's
/// end is noticed a moment after a command fails).
const DEATH_NOTICE: Duration = Duration::from_millis(500);

/// A call's outcome, with a failure that was Chromium dying told as the session's end, one
/// that was its page crashing as the crash, and a navigation that timed out as such; each
/// closes the session, freeing its place under the caps at once (a page that never answers
/// would otherwise hold it until the idle timeout).
async fn finish(
    browsers: &Browsers,
    session: &BrowserSession,
    done: Result<Value, BrowserError>,
    navigate: bool,
) -> Result<Value, BrowserError> {
    let done = match done {
        Err(err @ (BrowserError::Failed(_) | BrowserError::Timeout(_))) => {
            tokio::time::sleep(DEATH_NOTICE).await;
            match (session.crashed(), session.is_alive(), err) {
                (Some(why), _, _) => Err(session.crash_error(why)),
                (None, false, _) => Err(BrowserError::SessionEnded(session.id.to_string())),
                (None, true, BrowserError::Timeout(secs)) if navigate => {
                    Err(BrowserError::NavigationTimeout {
                        secs,
                        session: session.id.to_string(),
                    })
                }
                (None, true, err) => Err(err),
            }
        }
        other => other,
    };
    if let Err(
        BrowserError::SessionEnded(_)
        | BrowserError::PageCrashed { .. }
        | BrowserError::NavigationTimeout { .. },
    ) = &done
    {
        browsers.close(&session.id).await;
    }
    done
}

impl Tool for BrowserAction {
    fn name(&self) -> &str {
        BROWSER_ACTION
    }

    fn definition(&self) -> ToolDefinition {
        Self::describe()
    }

    fn progress(&self) -> Option<ProgressKind> {
        None
    }

    fn call_message(&self, arguments: &Value) -> String {
        let action = arguments["action"].as_str().unwrap_or("act");
        match arguments["url"].as_str().or(arguments["selector"].as_str()) {
            Some(target) => format!("Browser: {action} {target}"),
            None => format!("Browser: {action}"),
        }
    }

    fn run(&self, arguments: Value) -> ToolFuture {
        let (browsers, chat) = (self.browsers.clone(), self.chat.clone());
        Box::pin(async move {
            let arguments: ActionArguments = parse_arguments(arguments)?;
            let id = arguments.session_id.clone();
            let navigate = arguments.action == ActionName::Navigate;
            let action = arguments.action(browsers.config().max_wait_ms)?;
            let session = session_for(&browsers, &chat, id.as_deref(), navigate).await?;
            let done = perform(&browsers, &chat, &session, action).await;
            Ok(finish(&browsers, &session, done, navigate).await?)
        })
    }

    fn images(&self, result: &str) -> Vec<crate::tools::images::ImageRef> {
        super::screenshot_taken(result).into_iter().collect()
    }
}

/// `analyze_page` in one chat.
pub struct AnalyzePage {
    browsers: Browsers,
    chat: ChatId,
}

impl AnalyzePage {
    pub fn new(browsers: Browsers, chat: ChatId) -> Self {
        Self { browsers, chat }
    }

    pub fn describe() -> ToolDefinition {
        ToolDefinition::function(
            ANALYZE_PAGE,
            "Analyze the current browser page content: its url, title, main text, headings, \
             links (the first 50), forms with their fields, and the interactive elements, each \
             with a CSS selector to pass to browser_action.",
            parameters_for::<AnalyzeArguments>(),
        )
    }
}

impl Tool for AnalyzePage {
    fn name(&self) -> &str {
        ANALYZE_PAGE
    }

    fn definition(&self) -> ToolDefinition {
        Self::describe()
    }

    fn progress(&self) -> Option<ProgressKind> {
        None
    }

    fn call_message(&self, _: &Value) -> String {
        "Browser: analyzing the page".into()
    }

    fn run(&self, arguments: Value) -> ToolFuture {
        let (browsers, chat) = (self.browsers.clone(), self.chat.clone());
        Box::pin(async move {
            let arguments: AnalyzeArguments = parse_arguments(arguments)?;
            let session = browsers.get(&chat, &arguments.session_id).await?;
            let timeout = Duration::from_secs(browsers.config().action_timeout_secs);
            let done = super::analyze::analyze(&session, timeout).await;
            Ok(finish(&browsers, &session, done, false).await?)
        })
    }
}
