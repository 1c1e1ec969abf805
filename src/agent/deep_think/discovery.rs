//! Target-focused mode: when the question names a site or URL, that site is read first
//! (fetch_url with link discovery, following a few same-site links), and the plan is built on
//! what was found.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::agent::sources::{Source, Sources};
use crate::run::events::RunEvent;
use crate::run::log::RunLog;
use crate::tools::SharedTool;

/// Top-level domains a bare name must end with to be read as a site ("example.com"), so that
/// "node.js" or "e.g." are not.
const SITE_TLDS: [&str; 24] = [
    "com", "org", "net", "io", "dev", "edu", "gov", "ai", "app", "co", "uk", "de", "fr", "eu",
    "info", "ca", "au", "nl", "ch", "se", "jp", "in", "us", "me",
];

/// Longest excerpt of a discovered page given to the planner, in characters.
const EXCERPT_CHARS: usize = 600;

/// What discovery found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Discovery {
    pub target: String,
    pub pages_fetched: usize,
    /// One line per page: its URL and the start of its text.
    pub site_map: String,
    pub sources: Vec<Source>,
    /// Page excerpts for the planner and the sub-tasks.
    pub context: String,
}

/// The URL the question names, if any: an explicit `http(s)://` URL, or a bare domain.
pub fn target(question: &str) -> Option<String> {
    for word in question.split_whitespace() {
        let word = word.trim_matches(|c: char| "()[]<>\"'“”‘’,;!?".contains(c));
        let word = word.trim_end_matches('.');
        if (word.starts_with("https://") || word.starts_with("http://"))
            && url::Url::parse(word).is_ok_and(|u| u.host_str().is_some())
        {
            return Some(word.to_string());
        }
        let host = word.split('/').next().unwrap_or_default();
        let labels: Vec<&str> = host.split('.').collect();
        let tld = labels
            .last()
            .copied()
            .unwrap_or_default()
            .to_ascii_lowercase();
        let well_formed = labels.len() >= 2
            && labels.iter().all(|label| {
                !label.is_empty() && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            });
        if well_formed && SITE_TLDS.contains(&tld.as_str()) {
            return Some(format!("https://{word}"));
        }
    }
    None
}

/// Reads `target` with fetch_url's link discovery (following up to `follow` same-site links),
/// reporting it as a research call. `None` if the run has no fetch_url.
pub async fn discover(
    log: &RunLog,
    tools: &[SharedTool],
    target: &str,
    follow: usize,
) -> Option<Discovery> {
    let fetch = tools.iter().find(|tool| tool.name() == "fetch_url")?;
    let arguments = json!({"urls": [target], "discover_links": true, "max_follow": follow});
    let call_id = "call_discovery".to_string();
    log.push(RunEvent::ToolCall {
        id: call_id.clone(),
        name: "fetch_url".into(),
        message: Some(fetch.call_message(&arguments)),
        arguments: arguments.clone(),
        progress: fetch.progress(),
    });
    let result = fetch.run_call(&call_id, arguments).await;
    let (value, success, error) = match result {
        Ok(value) => (value, true, None),
        Err(err) => (err.to_result(), false, Some(err.message.clone())),
    };
    log.push(RunEvent::ToolResult {
        tool_call_id: call_id,
        name: "fetch_url".into(),
        success,
        result: value.clone(),
        preview: crate::agent::governance::result_preview(&value),
        error,
        research: true,
    });
    let sources = Sources::default();
    if success {
        sources.collect(&value);
    }
    Some(summarize(target, &value, sources.snapshot()))
}

fn summarize(target: &str, value: &Value, sources: Vec<Source>) -> Discovery {
    let mut site_map = String::new();
    let mut context = format!("What was found on {target}:\n");
    let pages: Vec<&Value> = value["pages"]
        .as_array()
        .map(|pages| pages.iter().filter(|p| p["error"] != json!(true)).collect())
        .unwrap_or_default();
    for page in &pages {
        let url = page["url"].as_str().unwrap_or_default();
        let text = page["content"].as_str().unwrap_or_default();
        let first_line = text.lines().map(str::trim).find(|l| !l.is_empty());
        let _ = writeln!(
            site_map,
            "{url}{}",
            first_line.map_or(String::new(), |l| format!(
                " — {}",
                super::plan::shorten(l, 80)
            ))
        );
        let _ = write!(
            context,
            "\n[{url}]\n{}\n",
            super::plan::shorten(text.trim(), EXCERPT_CHARS)
        );
        for link in page["discovered_links"]
            .as_array()
            .into_iter()
            .flatten()
            .take(20)
        {
            if let Some(link_url) = link["url"].as_str() {
                let _ = writeln!(site_map, "  link: {link_url}");
            }
        }
    }
    Discovery {
        target: target.to_string(),
        pages_fetched: pages.len(),
        site_map: site_map.trim_end().to_string(),
        sources,
        context,
    }
}
