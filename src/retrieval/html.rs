//! The readable text and links of an HTML page. Pages come from anywhere, so nothing here
//! recurses on their structure: the parser is fed in slices with the deadline checked between
//! them (html5ever's tree builder is quadratic on deep nesting), and the DOM is walked with an
//! explicit stack. A page of any depth gives its text or an `extraction_failed` error.

use std::collections::HashMap;

use ego_tree::NodeRef;
use ego_tree::iter::Edge;
use html5ever::tendril::{StrTendril, TendrilSink};
use scraper::{ElementRef, Html, HtmlTreeSink, Node, Selector};
use url::Url;

use super::text::{Deadline, ExtractionError, tidy_lines};

/// A link found on a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub url: String,
    /// Its anchor text, whitespace collapsed; may be empty.
    pub text: String,
}

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
/// Bytes of HTML handed to the parser between deadline checks. html5ever's tree builder scans
/// the open elements at most start tags (about 100 ns a step here), so a slice of `<div>`s
/// costs ~100 tags × depth: 1 s at depth 100,000, which the deadline stops short of reaching.
const PARSE_SLICE_BYTES: usize = 512;
/// DOM nodes written between deadline checks.
const NODES_PER_DEADLINE_CHECK: usize = 4096;
/// Nested lists indent by two spaces a level up to this depth; deeper ones stay there, so a
/// page of 10,000 nested lists does not write 10,000² spaces.
const MAX_LIST_INDENT: usize = 8;

/// The readable text of an HTML document and the links it holds (navigation included:
/// those are what site exploration wants). Fails only when `deadline` passes.
pub fn html_to_text(
    html: &str,
    page: &Url,
    deadline: &Deadline,
) -> Result<(String, Vec<Link>), ExtractionError> {
    let document = parse(html, deadline)?;
    let mut writer = TextWriter::default();
    writer.write(document.root_element(), deadline)?;
    deadline.check()?;
    Ok((tidy_lines(&writer.out), links(&document, page)))
}

/// Parses a document, giving up between slices once `deadline` has passed.
fn parse(html: &str, deadline: &Deadline) -> Result<Html, ExtractionError> {
    let mut parser = html5ever::driver::parse_document(
        HtmlTreeSink::new(Html::new_document()),
        Default::default(),
    );
    let mut rest = html;
    while !rest.is_empty() {
        deadline.check()?;
        let mut cut = rest.len().min(PARSE_SLICE_BYTES);
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        let (slice, tail) = rest.split_at(cut);
        parser.process(StrTendril::from_slice(slice));
        rest = tail;
    }
    deadline.check()?;
    Ok(parser.finish())
}

fn links(document: &Html, page: &Url) -> Vec<Link> {
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

/// What an open element owes when it closes.
struct Open {
    breaks: usize,
    name_kind: Closing,
}

enum Closing {
    Pre,
    List,
    Row,
    Plain,
}

/// Writes a DOM's text: inline whitespace collapsed, block elements on lines of their own,
/// list items marked, table cells separated by `|`, `<pre>` kept verbatim.
#[derive(Default)]
struct TextWriter {
    out: String,
    /// Line breaks owed before the next text (1: new line, 2: blank line).
    pending_breaks: usize,
    pending_space: bool,
    /// Cell separators owed before the next text of a table row; a line break owed at the
    /// same time wins (a nested table ended the line).
    pending_separators: usize,
    pre_depth: usize,
    /// Open lists: `None` for `<ul>`, the next number for `<ol>`.
    lists: Vec<Option<usize>>,
    /// Open table rows: whether the next cell is the row's first.
    rows: Vec<bool>,
}

impl TextWriter {
    /// Walks the tree under `root` in document order with an explicit stack of open
    /// elements; a skipped element's subtree is passed over by counting its depth.
    fn write(&mut self, root: ElementRef<'_>, deadline: &Deadline) -> Result<(), ExtractionError> {
        let mut open: Vec<Open> = Vec::new();
        let mut skipped_depth = 0usize;
        for (visited, edge) in root.traverse().enumerate() {
            if visited % NODES_PER_DEADLINE_CHECK == 0 {
                deadline.check()?;
            }
            match edge {
                Edge::Open(node) => {
                    let is_element = node.value().is_element();
                    if skipped_depth > 0 {
                        skipped_depth += usize::from(is_element);
                    } else if let Node::Text(text) = node.value() {
                        if !parent_is(node, "tr") {
                            self.text(text);
                        }
                    } else if let Some(element) = ElementRef::wrap(node) {
                        match self.open(element) {
                            Some(entry) => open.push(entry),
                            None => skipped_depth = 1,
                        }
                    }
                }
                Edge::Close(node) => {
                    if !node.value().is_element() {
                        continue;
                    }
                    if skipped_depth > 0 {
                        skipped_depth -= 1;
                    } else if let Some(entry) = open.pop() {
                        self.close(entry);
                    }
                }
            }
        }
        Ok(())
    }

    /// Starts an element; `None` when its subtree is not page text.
    fn open(&mut self, element: ElementRef<'_>) -> Option<Open> {
        let value = element.value();
        let name = value.name();
        if SKIPPED.contains(&name)
            || value.attr("hidden").is_some()
            || value.attr("aria-hidden") == Some("true")
        {
            return None;
        }
        if parent_is(*element, "tr") {
            // A row holds cells; anything else in it is not laid out as text.
            if !matches!(name, "td" | "th") {
                return None;
            }
            if let Some(first) = self.rows.last_mut() {
                if !*first {
                    self.pending_separators += 1;
                }
                *first = false;
            }
            return Some(Open {
                breaks: 0,
                name_kind: Closing::Plain,
            });
        }
        let breaks = if PARAGRAPHS.contains(&name) {
            2
        } else if BLOCKS.contains(&name) {
            1
        } else {
            0
        };
        self.request_breaks(breaks);
        let name_kind = match name {
            "br" => {
                self.request_breaks(1);
                Closing::Plain
            }
            "pre" => {
                self.pre_depth += 1;
                Closing::Pre
            }
            "ul" => {
                self.lists.push(None);
                Closing::List
            }
            "ol" => {
                self.lists.push(Some(1));
                Closing::List
            }
            "li" => {
                self.list_marker();
                Closing::Plain
            }
            "tr" => {
                self.rows.push(true);
                Closing::Row
            }
            _ => Closing::Plain,
        };
        Some(Open { breaks, name_kind })
    }

    fn close(&mut self, entry: Open) {
        match entry.name_kind {
            Closing::Pre => self.pre_depth -= 1,
            Closing::List => {
                self.lists.pop();
            }
            Closing::Row => {
                self.rows.pop();
            }
            Closing::Plain => {}
        }
        self.request_breaks(entry.breaks);
    }

    fn list_marker(&mut self) {
        let depth = self.lists.len().saturating_sub(1).min(MAX_LIST_INDENT);
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
        } else if self.pending_separators > 0 {
            for _ in 0..self.pending_separators {
                self.out.push_str(" | ");
            }
        } else if self.pending_space && !self.out.ends_with([' ', '\n']) {
            self.out.push(' ');
        }
        self.pending_breaks = 0;
        self.pending_separators = 0;
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

/// Whether `node`'s parent is an element named `name`.
fn parent_is(node: NodeRef<'_, Node>, name: &str) -> bool {
    node.parent()
        .and_then(|parent| parent.value().as_element().map(|e| e.name() == name))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn page() -> Url {
        Url::parse("https://docs.example.com/guide/start.html").unwrap()
    }

    fn generous() -> Deadline {
        Deadline::after(Duration::from_secs(60))
    }

    fn text_of(html: &str) -> String {
        html_to_text(html, &page(), &generous()).unwrap().0
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
        let text = text_of(html);
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
    fn nested_lists_and_tables_keep_their_layout() {
        let html = "<ul><li>a<ul><li>b<ol><li>c</li></ol></li></ul></li></ul>\
                    <table><tr><td>x<table><tr><td>in1</td><td>in2</td></tr></table></td>\
                    <td>y</td></tr></table>";
        assert_eq!(
            text_of(html),
            "- a\n\n  - b\n\n    1. c\n\nx\n\nin1 | in2\n\ny"
        );
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
        let (_, links) = html_to_text(html, &page(), &generous()).unwrap();
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

    /// Runs `f` on a thread with a small stack, as a worker thread has: recursion on the
    /// page's depth would overflow it and abort the test binary.
    fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(f)
            .unwrap()
            .join()
            .unwrap()
    }

    #[test]
    fn pages_nested_thousands_deep_give_their_text_on_a_small_stack() {
        for (open, close) in [
            ("<span>", "</span>"),
            ("<div>", "</div>"),
            ("<table><tr><td>", "</td></tr></table>"),
            ("<ul><li>", "</li></ul>"),
            ("<blockquote>", "</blockquote>"),
        ] {
            // 4,000 spans overflowed a 2 MiB worker stack when the walk recursed; this
            // stack is an eighth of that.
            let depth = 5_000;
            let html = format!(
                "<html><body>{}deep text{}</body></html>",
                open.repeat(depth),
                close.repeat(depth)
            );
            let text = on_small_stack(move || text_of(&html));
            assert!(text.contains("deep text"), "{open}: {:?}", &text[..100]);
            assert!(text.len() < 40 * depth, "{open}: {} bytes", text.len());
        }
    }

    #[test]
    fn a_page_that_takes_longer_than_its_budget_is_an_extraction_error() {
        // html5ever spends O(depth) per start tag here: far beyond a 50 ms budget.
        let html = "<div>".repeat(100_000);
        let started = std::time::Instant::now();
        let err =
            html_to_text(&html, &page(), &Deadline::after(Duration::from_millis(50))).unwrap_err();
        assert_eq!(err.code(), "extraction_failed");
        assert!(err.to_string().contains("budget"), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "gave up after {:?}",
            started.elapsed()
        );
    }

    /// Pieces of tag soup: every element kind the writer treats specially, unbalanced.
    fn soup_piece() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            Just("<div>".to_string()),
            Just("</div>".to_string()),
            Just("<span>".to_string()),
            Just("<p>".to_string()),
            Just("<table>".to_string()),
            Just("<tr>".to_string()),
            Just("<td>".to_string()),
            Just("</tr>".to_string()),
            Just("<ul><li>".to_string()),
            Just("<ol>".to_string()),
            Just("</li>".to_string()),
            Just("<pre>".to_string()),
            Just("<script>".to_string()),
            Just("</script>".to_string()),
            Just("<nav hidden>".to_string()),
            Just("<a href=\"/x\">".to_string()),
            Just("</a>".to_string()),
            Just("<br>".to_string()),
            Just("<b><i>".to_string()),
            Just("&amp;&#x0;&bogus;".to_string()),
            "[ -~]{0,12}",
            "\\PC{0,6}",
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

        #[test]
        fn any_tag_soup_gives_text_without_panicking(
            pieces in proptest::collection::vec(soup_piece(), 0..400),
        ) {
            let html = pieces.concat();
            let result = on_small_stack(move || html_to_text(&html, &page(), &generous()));
            proptest::prop_assert!(result.is_ok());
        }

        #[test]
        fn any_nesting_depth_gives_text_on_a_small_stack(
            piece in soup_piece(),
            depth in 1usize..6_000,
        ) {
            let html = format!("{}marker", piece.repeat(depth));
            let (text, _) = on_small_stack(move || html_to_text(&html, &page(), &generous()))
                .unwrap();
            proptest::prop_assert!(text.len() <= 64 * (depth + 10));
        }

        #[test]
        fn arbitrary_bytes_decoded_as_html_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..4096)) {
            let html = String::from_utf8_lossy(&bytes).into_owned();
            proptest::prop_assert!(html_to_text(&html, &page(), &generous()).is_ok());
        }
    }
}
