//! What every action asks of a session's page: scripts evaluated for their JSON value, text
//! passed to them as string literals (never spliced in), an element found by selector (naming
//! the selector when none matches), and waiting for the page to settle after an action that
//! may navigate.

use std::time::Duration;

use serde_json::Value;

use super::session::BrowserSession;
use super::{BrowserError, cdp_error};

/// How often a `wait {selector}` and the settling after an action look again.
pub(super) const POLL: Duration = Duration::from_millis(100);
/// How long an action that may start a navigation (a click, a key) is given to start one
/// before the page is taken as settled.
const SETTLE_START: Duration = Duration::from_millis(300);

/// Waits until the page has loaded: after an action that may navigate (`may_navigate`), it is
/// first given a moment to start. Bounded by the action's own timeout.
pub(super) async fn settle(session: &BrowserSession, may_navigate: bool) {
    if may_navigate {
        tokio::time::sleep(SETTLE_START).await;
    }
    loop {
        match evaluate(session, "document.readyState").await {
            Ok(state) if state == "complete" => return,
            Err(BrowserError::SessionEnded(_)) => return,
            _ => tokio::time::sleep(POLL).await,
        }
    }
}

/// The first element `selector` matches: `NoMatch` when none, `Invalid` when it is not a
/// selector.
pub(super) async fn find(
    session: &BrowserSession,
    selector: &str,
) -> Result<chromiumoxide::Element, BrowserError> {
    if !matches(session, selector).await? {
        return Err(BrowserError::NoMatch(selector.to_string()));
    }
    session
        .page
        .find_element(selector)
        .await
        .map_err(|err| match session.is_alive() {
            true => BrowserError::NoMatch(format!("{selector} ({err})")),
            false => BrowserError::SessionEnded(session.id.to_string()),
        })
}

/// Whether `selector` matches an element now.
pub(super) async fn matches(
    session: &BrowserSession,
    selector: &str,
) -> Result<bool, BrowserError> {
    let script = format!(
        "(() => {{ try {{ return document.querySelector({}) ? 'yes' : 'no'; }}
                   catch (e) {{ return 'invalid'; }} }})()",
        js(selector)
    );
    match evaluate(session, &script).await?.as_str() {
        Some("yes") => Ok(true),
        Some("invalid") => Err(BrowserError::Invalid(format!(
            "{selector:?} is not a valid CSS selector"
        ))),
        _ => Ok(false),
    }
}

/// Evaluates `script` in the page; its JSON value.
pub(super) async fn evaluate(
    session: &BrowserSession,
    script: &str,
) -> Result<Value, BrowserError> {
    let evaluated = session
        .page
        .evaluate(script)
        .await
        .map_err(|e| cdp_error(session, e))?;
    Ok(evaluated.value().cloned().unwrap_or(Value::Null))
}

/// `text` as a JavaScript string literal.
pub(super) fn js(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into())
}

/// `text` cut to `max` characters; whether it was cut.
pub(super) fn cut(text: &str, max: usize) -> (String, bool) {
    match text.char_indices().nth(max) {
        Some((at, _)) => (text[..at].to_string(), true),
        None => (text.to_string(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_cut_on_characters_and_says_so() {
        assert_eq!(cut("héllo", 2), ("hé".to_string(), true));
        assert_eq!(cut("hé", 2), ("hé".to_string(), false));
    }

    #[test]
    fn selectors_reach_the_page_as_string_literals() {
        assert_eq!(js("a\"); alert(1); (\""), r#""a\"); alert(1); (\"""#);
    }
}
