//! A page's links: `a[href]` resolved against the page (or its `<base>`), http and https only,
//! fragments dropped, each URL once with the first non-empty anchor text (or its `aria-label`
//! or `title`), cut to a bounded length.

use std::collections::HashMap;

use scraper::{ElementRef, Html, Selector};
use url::Url;

use super::Link;

/// Longest anchor text kept for a link; menus sometimes wrap whole cards in one `<a>`.
const MAX_LINK_TEXT_CHARS: usize = 200;

pub(super) fn links(document: &Html, page: &Url) -> Vec<Link> {
    // Constant selectors, which parse.
    let (Ok(base_selector), Ok(anchor_selector)) =
        (Selector::parse("base[href]"), Selector::parse("a[href]"))
    else {
        return Vec::new();
    };
    let base = document
        .select(&base_selector)
        .next()
        .and_then(|base| base.attr("href"))
        .and_then(|href| page.join(href).ok())
        .unwrap_or_else(|| page.clone());
    let mut page_without_fragment = page.clone();
    page_without_fragment.set_fragment(None);

    let mut found: Vec<Link> = Vec::new();
    let mut positions: HashMap<String, usize> = HashMap::new();
    for anchor in document.select(&anchor_selector) {
        let Some(mut url) = anchor
            .attr("href")
            .and_then(|href| base.join(href.trim()).ok())
        else {
            continue;
        };
        url.set_fragment(None);
        if !matches!(url.scheme(), "http" | "https") || url == page_without_fragment {
            continue;
        }
        let text = anchor_text(anchor);
        match positions.get(url.as_str()) {
            Some(&i) if found[i].text.is_empty() => found[i].text = text,
            Some(_) => {}
            None => {
                positions.insert(url.to_string(), found.len());
                found.push(Link {
                    url: url.into(),
                    text,
                });
            }
        }
    }
    found
}

fn anchor_text(anchor: ElementRef<'_>) -> String {
    let text = collapse_whitespace(&anchor.text().collect::<String>());
    let text = if text.is_empty() {
        ["aria-label", "title"]
            .iter()
            .find_map(|attr| anchor.attr(attr))
            .map(collapse_whitespace)
            .unwrap_or_default()
    } else {
        text
    };
    text.chars().take(MAX_LINK_TEXT_CHARS).collect()
}

fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
