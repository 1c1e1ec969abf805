//! What `browser_action` does on a session's page: `navigate`, `click`, `type`, `press`,
//! `scroll`, `select`, `wait`, `screenshot`, `extract`, `back`. Each is bounded by
//! `browser.action_timeout_secs` (a wait by `browser.max_wait_ms`), reports the page's URL and
//! title after it and what changed, and names a selector that matches nothing. Selectors are
//! passed to the page as JSON strings, never spliced into script text (`page`).

use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::page::CaptureScreenshotFormat;
use chromiumoxide::page::ScreenshotParams;
use entities::ids::ChatId;
use serde_json::{Value, json};
use url::Url;

use super::page::{POLL, cut, evaluate, find, js, matches, settle};
use super::session::BrowserSession;
use super::{BrowserError, Browsers, IMAGE_PLACEHOLDER, cdp_error};
use crate::tools::browser::screenshots::Screenshots;

/// Characters of page text `extract` returns: seed 001's truncation of a tool result.
pub const MAX_EXTRACT_CHARS: usize = 10_000;
/// Refused requests a result lists (the SSRF guard refused them: private addresses).
const MAX_BLOCKED_LISTED: usize = 10;

/// One action, its arguments checked.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Navigate { url: Url },
    Click { selector: String },
    Type { selector: String, text: String },
    Press { key: String },
    Scroll(Scroll),
    Select { selector: String, value: String },
    Wait(Wait),
    Screenshot { full_page: bool },
    Extract { selector: Option<String> },
    Back,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Scroll {
    Up,
    Down,
    Top,
    Bottom,
    To { selector: String },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Wait {
    For { selector: String },
    Pause { ms: u64 },
}

/// The page after an action.
struct Place {
    url: String,
    title: String,
}

async fn place(session: &BrowserSession) -> Result<Place, BrowserError> {
    let page = &session.page;
    let url = page.url().await.map_err(|e| cdp_error(session, e))?;
    let title = page.get_title().await.map_err(|e| cdp_error(session, e))?;
    Ok(Place {
        url: url.unwrap_or_default(),
        title: title.unwrap_or_default(),
    })
}

/// Runs `action` on `session` (one action at a time per session), within its timeout.
pub async fn perform(
    browsers: &Browsers,
    chat: &ChatId,
    session: &BrowserSession,
    action: Action,
) -> Result<Value, BrowserError> {
    let _turn = session.busy.lock().await;
    let limit = Duration::from_secs(browsers.config().action_timeout_secs);
    session
        .within(limit, run(browsers, chat, session, action))
        .await
}

async fn run(
    browsers: &Browsers,
    chat: &ChatId,
    session: &BrowserSession,
    action: Action,
) -> Result<Value, BrowserError> {
    let before = place(session).await?;
    // What was refused before this action is not this action's doing.
    session.refusals.take();
    let mut extra = serde_json::Map::new();
    let mut blocked = Vec::new();
    let done = match action {
        Action::Navigate { url } => {
            browsers
                .gate()
                .check_navigation(&url)
                .map_err(BrowserError::Refused)?;
            let navigated = session.page.goto(url.as_str()).await;
            refused_document(session, &mut blocked).await?;
            navigated.map_err(|e| cdp_error(session, e))?;
            settle(session, false).await;
            format!("opened {url}")
        }
        Action::Click { selector } => {
            let element = find(session, &selector).await?;
            element.click().await.map_err(|e| cdp_error(session, e))?;
            settle(session, true).await;
            refused_document(session, &mut blocked).await?;
            format!("clicked {selector}")
        }
        Action::Type { selector, text } => {
            let element = find(session, &selector).await?;
            element.click().await.map_err(|e| cdp_error(session, e))?;
            element
                .type_str(&text)
                .await
                .map_err(|e| cdp_error(session, e))?;
            format!("typed {} characters into {selector}", text.chars().count())
        }
        Action::Press { key } => {
            let target = match find(session, ":focus").await {
                Ok(element) => element,
                Err(_) => find(session, "body").await?,
            };
            target
                .press_key(&key)
                .await
                .map_err(|e| cdp_error(session, e))?;
            settle(session, true).await;
            refused_document(session, &mut blocked).await?;
            format!("pressed {key}")
        }
        Action::Scroll(scroll) => {
            let (script, said) = match &scroll {
                Scroll::Up => (
                    "window.scrollBy(0, -0.8 * innerHeight)".to_string(),
                    "scrolled up".to_string(),
                ),
                Scroll::Down => (
                    "window.scrollBy(0, 0.8 * innerHeight)".to_string(),
                    "scrolled down".to_string(),
                ),
                Scroll::Top => (
                    "window.scrollTo(0, 0)".to_string(),
                    "scrolled to the top".to_string(),
                ),
                Scroll::Bottom => (
                    "window.scrollTo(0, document.documentElement.scrollHeight)".to_string(),
                    "scrolled to the bottom".to_string(),
                ),
                Scroll::To { selector } => {
                    find(session, selector).await?;
                    (
                        format!(
                            "document.querySelector({}).scrollIntoView({{block: 'center'}})",
                            js(selector)
                        ),
                        format!("scrolled {selector} into view"),
                    )
                }
            };
            evaluate(session, &format!("{script}; null")).await?;
            said
        }
        Action::Select { selector, value } => {
            find(session, &selector).await?;
            let script = format!(
                "(() => {{ const el = document.querySelector({sel}); const want = {value};
                  if (!(el instanceof HTMLSelectElement)) return 'not a select';
                  const option = Array.from(el.options).find(o => o.value === want)
                    || Array.from(el.options).find(o => o.text.trim() === want);
                  if (!option) return 'no option';
                  el.value = option.value;
                  el.dispatchEvent(new Event('input', {{bubbles: true}}));
                  el.dispatchEvent(new Event('change', {{bubbles: true}}));
                  return 'ok'; }})()",
                sel = js(&selector),
                value = js(&value),
            );
            match evaluate(session, &script).await?.as_str() {
                Some("ok") => format!("selected {value:?} in {selector}"),
                Some("not a select") => {
                    return Err(BrowserError::Invalid(format!(
                        "{selector} is not a <select> element"
                    )));
                }
                _ => {
                    return Err(BrowserError::Invalid(format!(
                        "{selector} has no option with the value or text {value:?}"
                    )));
                }
            }
        }
        Action::Wait(Wait::Pause { ms }) => {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            format!("waited {ms} ms")
        }
        Action::Wait(Wait::For { selector }) => {
            let max = Duration::from_millis(browsers.config().max_wait_ms);
            let started = std::time::Instant::now();
            loop {
                if matches(session, &selector).await? {
                    break format!("{selector} is on the page");
                }
                if started.elapsed() >= max {
                    return Err(BrowserError::NoMatch(selector));
                }
                tokio::time::sleep(POLL).await;
            }
        }
        Action::Screenshot { full_page } => {
            let params = ScreenshotParams::builder()
                .format(CaptureScreenshotFormat::Png)
                .full_page(full_page)
                .build();
            let png = session
                .page
                .screenshot(params)
                .await
                .map_err(|e| cdp_error(session, e))?;
            let size = png.len();
            let id = browsers.screenshots().store(chat, png).await?;
            extra.insert(
                "screenshot".into(),
                json!({"id": id, "url": Screenshots::url(chat, &id), "bytes": size,
                       "full_page": full_page}),
            );
            extra.insert("image".into(), json!(IMAGE_PLACEHOLDER));
            "took a screenshot".to_string()
        }
        Action::Extract { selector } => {
            let target = match &selector {
                Some(selector) => {
                    find(session, selector).await?;
                    format!("document.querySelector({})", js(selector))
                }
                None => "document.body".to_string(),
            };
            let text = evaluate(session, &format!("({target} || {{}}).innerText || ''")).await?;
            let text = text.as_str().unwrap_or_default();
            let (cut, truncated) = cut(text, MAX_EXTRACT_CHARS);
            extra.insert("text".into(), json!(cut));
            extra.insert("truncated".into(), json!(truncated));
            format!("read {} characters", cut.chars().count())
        }
        Action::Back => {
            evaluate(session, "history.back(); null").await?;
            settle(session, true).await;
            refused_document(session, &mut blocked).await?;
            "went back".to_string()
        }
    };
    let after = place(session).await?;
    refused_document(session, &mut blocked).await?;
    if !blocked.is_empty() {
        extra.insert("blocked".into(), json!(blocked));
    }
    let changed = describe_change(&before, &after, &done);
    let mut result = json!({
        "sessionId": session.id,
        "url": after.url,
        "title": after.title,
        "result": changed,
    });
    if let Some(map) = result.as_object_mut() {
        map.extend(extra);
    }
    Ok(result)
}

/// What the action did and how the page changed, in a sentence.
fn describe_change(before: &Place, after: &Place, done: &str) -> String {
    if before.url != after.url {
        format!("{done}; the page is now {} ({:?})", after.url, after.title)
    } else if before.title != after.title {
        format!("{done}; the page's title is now {:?}", after.title)
    } else {
        format!("{done}; the page stayed at {}", after.url)
    }
}

/// The requests refused while the action ran: a refused page (a navigation or a redirect of
/// the main frame) is the action's error; others (a frame, an image, a script) are added to
/// `blocked`, at most `MAX_BLOCKED_LISTED`.
async fn refused_document(
    session: &BrowserSession,
    blocked: &mut Vec<String>,
) -> Result<(), BrowserError> {
    let refused = session.refusals.take();
    if refused.is_empty() {
        return Ok(());
    }
    let main = session.page.mainframe().await.ok().flatten();
    let is_main = |frame: &str| main.as_ref().is_none_or(|m| m.inner() == frame);
    for r in refused {
        if r.document && is_main(&r.frame) {
            return Err(BrowserError::Refused(format!(
                "{} ({})",
                r.url,
                r.reason.trim_start_matches("refused: ")
            )));
        }
        if blocked.len() < MAX_BLOCKED_LISTED && !blocked.contains(&r.url) {
            blocked.push(r.url);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_change_names_the_new_page() {
        let at = |url: &str, title: &str| Place {
            url: url.into(),
            title: title.into(),
        };
        assert_eq!(
            describe_change(
                &at("http://a/", "A"),
                &at("http://a/done", "Done"),
                "clicked #go"
            ),
            "clicked #go; the page is now http://a/done (\"Done\")"
        );
        assert_eq!(
            describe_change(
                &at("http://a/", "A"),
                &at("http://a/", "A"),
                "scrolled down"
            ),
            "scrolled down; the page stayed at http://a/"
        );
    }
}
