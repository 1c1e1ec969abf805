//! Turning a fetched body into readable text: HTML (without scripts, styles and page chrome,
//! with block structure kept as line breaks) and its links, PDF through `pdf-extract`, text
//! types as they are. Pure functions of bytes; the network is `super::Fetcher`'s.

use std::collections::HashMap;

use scraper::{ElementRef, Html, Node, Selector};
use url::Url;

use super::{FetchError, Link};

/// Elements whose content is never page text: code, styling, and navigation chrome.
const SKIPPED: &[&str] = &[
    "script", "style", "noscript", "template", "head", "nav", "header", "footer", "aside", "svg",
    "iframe", "object", "canvas", "select", "button",
];
/// Elements set off by a blank line.
const PARAGRAPHS: &[&str] = &[
    "p",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "blockquote",
    "ul",
    "ol",
    "dl",
    "table",
    "figure",
    "hr",
];
/// Elements that start on a line of their own.
const BLOCKS: &[&str] = &[
    "div",
    "section",
    "article",
    "main",
    "li",
    "tr",
    "dt",
    "dd",
    "figcaption",
    "form",
    "fieldset",
    "address",
    "details",
    "summary",
    "caption",
    "thead",
    "tbody",
    "tfoot",
    "body",
];
/// Longest anchor text kept for a link; menus sometimes wrap whole cards in one `<a>`.
const MAX_LINK_TEXT_CHARS: usize = 200;

/// How a body is turned into text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentKind {
    Html,
    Pdf,
    Text,
}

impl ContentKind {
    /// The kind a media type (`text/html`, without parameters) names; an error for types
    /// that are not text (images, archives, ...).
    pub fn from_media_type(media_type: &str) -> Result<Self, FetchError> {
        let kind = match media_type {
            "text/html" | "application/xhtml+xml" => Self::Html,
            "application/pdf" | "application/x-pdf" => Self::Pdf,
            "application/json"
            | "application/xml"
            | "application/javascript"
            | "application/x-ndjson" => Self::Text,
            t if t.starts_with("text/") || t.ends_with("+json") || t.ends_with("+xml") => {
                Self::Text
            }
            other => return Err(FetchError::UnsupportedContentType(other.to_string())),
        };
        Ok(kind)
    }

    /// Guesses the kind of a body served without a content type.
    pub fn sniff(body: &[u8]) -> Result<Self, FetchError> {
        if body.starts_with(b"%PDF-") {
            return Ok(Self::Pdf);
        }
        let Ok(text) = std::str::from_utf8(body) else {
            return Err(FetchError::UnsupportedContentType(
                "(none, and the body is not text)".into(),
            ));
        };
        let start: String = text.trim_start().chars().take(16).collect();
        let start = start.to_ascii_lowercase();
        if start.starts_with("<!doctype html") || start.starts_with("<html") {
            Ok(Self::Html)
        } else {
            Ok(Self::Text)
        }
    }
}

/// Splits a `Content-Type` header into its lower-case media type and charset.
pub fn parse_content_type(header: &str) -> (String, Option<String>) {
    let mut parts = header.split(';');
    let media_type = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    let charset = parts.find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches('"').to_string())
    });
    (media_type, charset)
}

/// Decodes a text body by its declared charset (UTF-8 when none or unknown; a BOM wins).
pub fn decode(body: &[u8], charset: Option<&str>) -> String {
    let encoding = charset
        .and_then(|label| encoding_rs::Encoding::for_label(label.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    encoding.decode(body).0.into_owned()
}

/// Extracts the text and links of a body of the given kind, fetched from `base`.
pub fn extract(
    kind: ContentKind,
    body: &[u8],
    charset: Option<&str>,
    base: &Url,
) -> Result<(String, Vec<Link>), FetchError> {
    match kind {
        ContentKind::Html => Ok(html_to_text(&decode(body, charset), base)),
        ContentKind::Pdf => Ok((pdf_to_text(body)?, Vec::new())),
        ContentKind::Text => Ok((decode(body, charset).trim().to_string(), Vec::new())),
    }
}

/// The readable text of a PDF, one line per text line, blank lines between blocks.
pub fn pdf_to_text(body: &[u8]) -> Result<String, FetchError> {
    let text = pdf_extract::extract_text_from_mem(body)
        .map_err(|err| FetchError::Extraction(format!("could not read the PDF: {err}")))?;
    Ok(tidy_lines(&text))
}

/// The readable text of an HTML document and the links it holds (navigation included:
/// those are what site exploration wants).
pub fn html_to_text(html: &str, page: &Url) -> (String, Vec<Link>) {
    let document = Html::parse_document(html);
    let mut writer = TextWriter::default();
    writer.element(document.root_element());
    (tidy_lines(&writer.out), links(&document, page))
}

fn links(document: &Html, page: &Url) -> Vec<Link> {
    // unwrap: constant selectors that parse.
    let base_selector = Selector::parse("base[href]").unwrap();
    let anchor_selector = Selector::parse("a[href]").unwrap();
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

/// Trims every line, drops runs of more than one blank line, trims the whole.
fn tidy_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_run = 0;
    for line in text.lines().map(str::trim_end) {
        if line.trim().is_empty() {
            blank_run += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank_run > 0 { "\n\n" } else { "\n" });
        }
        blank_run = 0;
        out.push_str(line);
    }
    out
}

/// Writes a DOM's text: inline whitespace collapsed, block elements on lines of their own,
/// list items marked, table cells separated by `|`, `<pre>` kept verbatim.
#[derive(Default)]
struct TextWriter {
    out: String,
    /// Line breaks owed before the next text (1: new line, 2: blank line).
    pending_breaks: usize,
    pending_space: bool,
    pre_depth: usize,
    /// Open lists: `None` for `<ul>`, the next number for `<ol>`.
    lists: Vec<Option<usize>>,
}

impl TextWriter {
    fn element(&mut self, element: ElementRef<'_>) {
        let value = element.value();
        let name = value.name();
        if SKIPPED.contains(&name)
            || value.attr("hidden").is_some()
            || value.attr("aria-hidden") == Some("true")
        {
            return;
        }
        let breaks = if PARAGRAPHS.contains(&name) {
            2
        } else if BLOCKS.contains(&name) {
            1
        } else {
            0
        };
        self.request_breaks(breaks);
        match name {
            "br" => self.request_breaks(1),
            "pre" => self.pre_depth += 1,
            "ul" => self.lists.push(None),
            "ol" => self.lists.push(Some(1)),
            "li" => self.list_marker(),
            _ => {}
        }
        if name == "tr" {
            self.table_row(element);
        } else {
            self.children(element);
        }
        match name {
            "pre" => self.pre_depth -= 1,
            "ul" | "ol" => {
                self.lists.pop();
            }
            _ => {}
        }
        self.request_breaks(breaks);
    }

    fn children(&mut self, element: ElementRef<'_>) {
        for child in element.children() {
            match child.value() {
                Node::Text(text) => self.text(text),
                Node::Element(_) => {
                    if let Some(child) = ElementRef::wrap(child) {
                        self.element(child);
                    }
                }
                _ => {}
            }
        }
    }

    fn table_row(&mut self, row: ElementRef<'_>) {
        let mut first = true;
        for cell in row.child_elements() {
            if !matches!(cell.value().name(), "td" | "th") {
                continue;
            }
            if !first {
                self.pending_space = false;
                self.out.push_str(" | ");
            }
            first = false;
            self.children(cell);
        }
    }

    fn list_marker(&mut self) {
        let depth = self.lists.len().saturating_sub(1);
        let marker = match self.lists.last_mut() {
            Some(Some(number)) => {
                *number += 1;
                format!("{}. ", *number - 1)
            }
            _ => "- ".to_string(),
        };
        self.start_text();
        self.out.push_str(&"  ".repeat(depth));
        self.out.push_str(&marker);
    }

    fn request_breaks(&mut self, breaks: usize) {
        self.pending_breaks = self.pending_breaks.max(breaks);
    }

    /// Pays owed line breaks (or a space) before text is written.
    fn start_text(&mut self) {
        if self.out.is_empty() {
            self.pending_breaks = 0;
        } else if self.pending_breaks > 0 {
            let have = self.out.len() - self.out.trim_end_matches('\n').len();
            for _ in have..self.pending_breaks {
                self.out.push('\n');
            }
        } else if self.pending_space && !self.out.ends_with([' ', '\n']) {
            self.out.push(' ');
        }
        self.pending_breaks = 0;
        self.pending_space = false;
    }

    fn text(&mut self, text: &str) {
        if self.pre_depth > 0 {
            self.start_text();
            self.out.push_str(text);
            return;
        }
        let starts_with_space = text.starts_with(char::is_whitespace);
        let mut words = text.split_whitespace().peekable();
        if words.peek().is_none() {
            self.pending_space |= !text.is_empty();
            return;
        }
        self.pending_space |= starts_with_space;
        self.start_text();
        for (i, word) in words.enumerate() {
            if i > 0 {
                self.out.push(' ');
            }
            self.out.push_str(word);
        }
        self.pending_space = text.ends_with(char::is_whitespace);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> Url {
        Url::parse("https://docs.example.com/guide/start.html").unwrap()
    }

    #[test]
    fn html_keeps_readable_structure_and_drops_code_and_chrome() {
        let html = r#"<!doctype html><html><head><title>T</title>
            <style>body { color: red }</style><script>var secret = 1;</script></head>
            <body>
              <header><a href="/">Home</a> Site header</header>
              <nav><ul><li><a href="/guide/a">Menu A</a></li></ul></nav>
              <main>
                <h1>Getting   Started</h1>
                <p>Install the <b>SDK</b> with <code>npm install</code>.<br>Then run it.</p>
                <noscript>Enable JavaScript</noscript>
                <ul><li>First</li><li>Second <em>item</em></li></ul>
                <ol><li>One</li><li>Two</li></ol>
                <table><tr><th>Name</th><th>Value</th></tr><tr><td>a</td><td>1</td></tr></table>
                <pre>line 1
  indented</pre>
                <div hidden>invisible</div>
              </main>
              <aside>Related posts</aside>
              <footer>Copyright</footer>
            </body></html>"#;
        let (text, _) = html_to_text(html, &page());
        assert_eq!(
            text,
            "Getting Started\n\n\
             Install the SDK with npm install.\nThen run it.\n\n\
             - First\n- Second item\n\n\
             1. One\n2. Two\n\n\
             Name | Value\na | 1\n\n\
             line 1\n  indented"
        );
        for hidden in [
            "secret",
            "color",
            "Site header",
            "Menu A",
            "Enable",
            "invisible",
            "Related",
            "Copyright",
        ] {
            assert!(!text.contains(hidden), "{hidden} leaked into {text:?}");
        }
    }

    #[test]
    fn links_are_absolute_deduplicated_http_urls_with_their_text() {
        let html = r##"<html><body>
            <nav><a href="/guide/auth">Authentication</a></nav>
            <a href="advanced.html#retries">Advanced   Usage</a>
            <a href="https://docs.example.com/guide/auth"><img alt="">x</a>
            <a href="advanced.html">again</a>
            <a href="mailto:a@example.com">Mail</a>
            <a href="javascript:void(0)">Nothing</a>
            <a href="#top">Top</a>
            <a href="//other.example.org/p" title="Other"></a>
            </body></html>"##;
        let (_, links) = html_to_text(html, &page());
        let pairs: Vec<(&str, &str)> = links
            .iter()
            .map(|l| (l.url.as_str(), l.text.as_str()))
            .collect();
        assert_eq!(
            pairs,
            vec![
                ("https://docs.example.com/guide/auth", "Authentication"),
                (
                    "https://docs.example.com/guide/advanced.html",
                    "Advanced Usage"
                ),
                ("https://other.example.org/p", "Other"),
            ]
        );
    }

    #[test]
    fn content_types_map_to_extractors_and_images_are_refused() {
        assert_eq!(
            parse_content_type("Text/HTML; charset=\"ISO-8859-1\""),
            ("text/html".into(), Some("ISO-8859-1".into()))
        );
        assert_eq!(
            ContentKind::from_media_type("text/html"),
            Ok(ContentKind::Html)
        );
        assert_eq!(
            ContentKind::from_media_type("application/pdf"),
            Ok(ContentKind::Pdf)
        );
        for text in [
            "text/plain",
            "text/markdown",
            "application/json",
            "application/ld+json",
            "application/rss+xml",
        ] {
            assert_eq!(
                ContentKind::from_media_type(text),
                Ok(ContentKind::Text),
                "{text}"
            );
        }
        let err = ContentKind::from_media_type("image/png").unwrap_err();
        assert_eq!(err.to_string(), "unsupported content type image/png");
        assert_eq!(ContentKind::sniff(b"%PDF-1.4 ..."), Ok(ContentKind::Pdf));
        assert_eq!(
            ContentKind::sniff(b"  <!DOCTYPE html><p>x"),
            Ok(ContentKind::Html)
        );
        assert_eq!(ContentKind::sniff(b"plain"), Ok(ContentKind::Text));
        assert!(ContentKind::sniff(&[0x89, b'P', b'N', b'G', 0xff, 0xfe]).is_err());
        assert_eq!(decode(b"caf\xe9", Some("iso-8859-1")), "café");
    }

    #[test]
    fn a_pdf_becomes_its_text() {
        // A one-page PDF (Helvetica text, two lines), as a browser would download it.
        let pdf = include_bytes!("../../../tests/fixtures/fetch/report.pdf");
        let text = pdf_to_text(pdf).unwrap();
        assert!(text.contains("Quarterly report"), "{text:?}");
        assert!(text.contains("Revenue grew by 12 percent."), "{text:?}");
        let err = pdf_to_text(b"%PDF-1.4 not really").unwrap_err();
        assert!(err.to_string().contains("PDF"), "{err}");
    }
}
