//! The sources a Deep Think run has really seen: URLs its tools fetched, or returned as search
//! results. Only these may be cited in its report.

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Most sources one sub-task keeps.
const MAX_SOURCES: usize = 100;

/// One URL a tool returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    pub url: String,
    #[serde(default)]
    pub title: String,
    /// Its page was read (by fetch_url, or web_search's auto-fetch), not only listed.
    #[serde(default)]
    pub fetched: bool,
}

/// The sources of one sub-task (or discovery), collected as its tool results arrive.
#[derive(Debug, Clone, Default)]
pub struct Sources(Arc<Mutex<Vec<Source>>>);

impl Sources {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Source>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Adds the URLs of a successful tool result: a fetched page (`url` with `content`),
    /// fetch_url's `pages` and web_search's `fetched_pages` (read), and `results` (listed:
    /// search hits, code search matches).
    pub fn collect(&self, result: &Value) {
        let mut found = Vec::new();
        if let (Some(url), Some(_)) = (result["url"].as_str(), result.get("content")) {
            found.push((url, "", true));
        }
        for field in ["pages", "fetched_pages"] {
            for page in result[field].as_array().into_iter().flatten() {
                if page["error"] == Value::Bool(true) {
                    continue;
                }
                if let Some(url) = page["url"].as_str() {
                    found.push((url, page["title"].as_str().unwrap_or(""), true));
                }
            }
        }
        for hit in result["results"].as_array().into_iter().flatten() {
            let url = ["url", "html_url", "web_url"]
                .iter()
                .find_map(|key| hit[*key].as_str());
            let title = ["title", "path", "name"]
                .iter()
                .find_map(|key| hit[*key].as_str())
                .unwrap_or("");
            if let Some(url) = url {
                found.push((url, title, false));
            }
        }
        let mut sources = self.lock();
        for (url, title, fetched) in found {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                continue;
            }
            if let Some(known) = sources.iter_mut().find(|s| s.url == url) {
                known.fetched |= fetched;
                if known.title.is_empty() {
                    known.title = title.to_string();
                }
            } else if sources.len() < MAX_SOURCES {
                sources.push(Source {
                    url: url.to_string(),
                    title: title.to_string(),
                    fetched,
                });
            }
        }
    }

    /// Adds the page of a call whose result is its text (fetch_url's single-page mode): the
    /// `url` its `arguments` name, read.
    pub fn collect_text_result(&self, arguments: &Value) {
        if let Some(url) = arguments["url"].as_str() {
            self.collect(&serde_json::json!({"url": url.trim(), "content": ""}));
        }
    }

    pub fn snapshot(&self) -> Vec<Source> {
        self.lock().clone()
    }
}

/// `lists` merged in order, each URL once (read if any list read it).
pub fn merge<'a>(lists: impl IntoIterator<Item = &'a [Source]>) -> Vec<Source> {
    let mut merged: Vec<Source> = Vec::new();
    for source in lists.into_iter().flatten() {
        match merged.iter_mut().find(|s| s.url == source.url) {
            Some(known) => {
                known.fetched |= source.fetched;
                if known.title.is_empty() {
                    known.title = source.title.clone();
                }
            }
            None => merged.push(source.clone()),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_page_read_as_text_is_a_source_by_the_url_its_call_named() {
        let sources = Sources::default();
        sources.collect_text_result(&json!({"url": " https://a.example/page "}));
        sources.collect_text_result(&json!({"query": "not a page"}));
        assert_eq!(
            sources.snapshot(),
            [Source {
                url: "https://a.example/page".into(),
                title: String::new(),
                fetched: true,
            }]
        );
    }
}
