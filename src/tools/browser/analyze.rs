//! `analyze_page`: what is on a session's page — its URL, title, main text (the same
//! readability extraction `fetch_url` uses, on the blocking pool with its deadline), headings,
//! links (the first `MAX_LINKS`), forms with their fields, and the interactive elements, each
//! with a CSS selector that matches it alone, for `browser_action`. The page's structure is
//! read by a script in the page, bounded by counts; the text by Colloquy.

use std::time::Duration;

use serde_json::{Value, json};
use url::Url;

use super::actions::MAX_EXTRACT_CHARS;
use super::page::{cut, evaluate};
use super::session::BrowserSession;
use super::{BrowserError, cdp_error};
use crate::retrieval::html::html_to_text;
use crate::retrieval::text::Deadline;

/// Links listed: enough to choose where to go next, short of a site map.
pub const MAX_LINKS: usize = 50;
/// Headings, forms, fields per form and interactive elements listed: a page with more is
/// summarised by its first ones.
const MAX_HEADINGS: usize = 50;
const MAX_FORMS: usize = 20;
const MAX_FIELDS: usize = 50;
const MAX_INTERACTIVE: usize = 100;
/// Time the text extraction may take, as a page fetch's does.
const EXTRACTION_BUDGET: Duration = Duration::from_secs(10);
/// Largest HTML read for the text: a page larger than this is read in part.
const MAX_HTML_BYTES: usize = 5 * 1024 * 1024;

/// The script reading the page's structure. `unique(el)` makes a selector that matches only
/// `el`: its id, a name unique on the page, or a path of `:nth-of-type` steps.
const STRUCTURE: &str = r#"
(() => {
  const limits = __LIMITS__;
  const esc = (s) => CSS.escape(s);
  const only = (sel, el) => { try { const all = document.querySelectorAll(sel); return all.length === 1 && all[0] === el; } catch (e) { return false; } };
  const unique = (el) => {
    if (el.id && only('#' + esc(el.id), el)) return '#' + esc(el.id);
    const tag = el.tagName.toLowerCase();
    const name = el.getAttribute('name');
    if (name) { const s = tag + '[name="' + name.replace(/["\\]/g, '\\$&') + '"]'; if (only(s, el)) return s; }
    const steps = [];
    for (let node = el; node && node.nodeType === 1 && node !== document.documentElement; node = node.parentElement) {
      if (node.id && only('#' + esc(node.id), node)) { steps.unshift('#' + esc(node.id)); break; }
      let step = node.tagName.toLowerCase();
      const parent = node.parentElement;
      if (parent) {
        const same = Array.from(parent.children).filter(c => c.tagName === node.tagName);
        if (same.length > 1) step += ':nth-of-type(' + (same.indexOf(node) + 1) + ')';
      }
      steps.unshift(step);
    }
    return steps.join(' > ');
  };
  const text = (el) => (el.innerText || el.value || el.getAttribute('aria-label') || el.getAttribute('title') || '').trim().replace(/\s+/g, ' ').slice(0, 100);
  const label = (el) => {
    if (el.labels && el.labels.length) return el.labels[0].innerText.trim();
    return el.getAttribute('aria-label') || el.getAttribute('placeholder') || '';
  };
  const visible = (el) => !!(el.offsetWidth || el.offsetHeight || el.getClientRects().length);
  const headings = Array.from(document.querySelectorAll('h1,h2,h3,h4,h5,h6')).slice(0, limits.headings)
    .map(h => ({level: Number(h.tagName[1]), text: text(h)}));
  const forms = Array.from(document.forms).slice(0, limits.forms).map(f => ({
    selector: unique(f),
    action: f.action, method: (f.method || 'get').toLowerCase(),
    fields: Array.from(f.elements).slice(0, limits.fields).map(e => ({
      selector: unique(e), tag: e.tagName.toLowerCase(), type: e.type || '', name: e.name || '',
      label: label(e), required: !!e.required,
      options: e.tagName === 'SELECT' ? Array.from(e.options).slice(0, 50).map(o => ({value: o.value, text: o.text.trim()})) : undefined,
    })),
  }));
  const interactive = Array.from(document.querySelectorAll('a[href],button,input,select,textarea,[role=button],[onclick],[contenteditable=true]'))
    .filter(visible).slice(0, limits.interactive)
    .map(e => ({selector: unique(e), tag: e.tagName.toLowerCase(), type: e.type || '', text: text(e), label: label(e)}));
  return JSON.stringify({headings, forms, interactive});
})()
"#;

/// Analyzes the session's page.
pub async fn analyze(session: &BrowserSession, timeout: Duration) -> Result<Value, BrowserError> {
    let _turn = session.busy.lock().await;
    session.within(timeout, read(session)).await
}

async fn read(session: &BrowserSession) -> Result<Value, BrowserError> {
    let page = &session.page;
    let url = page
        .url()
        .await
        .map_err(|e| cdp_error(session, e))?
        .unwrap_or_default();
    let title = page
        .get_title()
        .await
        .map_err(|e| cdp_error(session, e))?
        .unwrap_or_default();
    let limits = json!({"headings": MAX_HEADINGS, "forms": MAX_FORMS, "fields": MAX_FIELDS,
                        "interactive": MAX_INTERACTIVE});
    let script = STRUCTURE.replace("__LIMITS__", &limits.to_string());
    let structure = evaluate(session, &script).await?;
    let structure: Value = structure
        .as_str()
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or_else(|| json!({}));
    let mut html = page.content().await.map_err(|e| cdp_error(session, e))?;
    if html.len() > MAX_HTML_BYTES {
        let mut at = MAX_HTML_BYTES;
        while !html.is_char_boundary(at) {
            at -= 1;
        }
        html.truncate(at);
    }
    // A page Chromium shows has a URL; one that does not parse has no text worth reading.
    let base = Url::parse(&url)
        .map_err(|err| BrowserError::Failed(format!("the page's URL {url:?}: {err}")))?;
    let extracted = tokio::task::spawn_blocking(move || {
        html_to_text(&html, &base, &Deadline::after(EXTRACTION_BUDGET))
    })
    .await
    .map_err(|err| BrowserError::Failed(err.to_string()))?
    .map_err(|err| BrowserError::Failed(err.to_string()))?;
    let (text, links) = extracted;
    let (text, truncated) = cut(&text, MAX_EXTRACT_CHARS);
    let links: Vec<Value> = links
        .into_iter()
        .take(MAX_LINKS)
        .map(|link| json!({"url": link.url, "text": link.text}))
        .collect();
    Ok(json!({
        "sessionId": session.id,
        "url": url,
        "title": title,
        "text": text,
        "truncated": truncated,
        "headings": structure["headings"],
        "links": links,
        "forms": structure["forms"],
        "interactive": structure["interactive"],
        "result": format!("analyzed {url}"),
    }))
}
