//! `TextWriter`: a DOM laid out as readable text — code, styling and navigation chrome
//! skipped, paragraphs and blocks on lines of their own, lists marked and indented, table cells
//! separated by `|`, `<pre>` verbatim — walked with an explicit stack and the deadline checked
//! every few thousand nodes.

use ego_tree::NodeRef;
use ego_tree::iter::Edge;
use scraper::{ElementRef, Node};

use crate::retrieval::text::{Deadline, ExtractionError};

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
/// Headings remembered per page.
const MAX_HEADINGS: usize = 2_000;
/// DOM nodes written between deadline checks.
const NODES_PER_DEADLINE_CHECK: usize = 4096;
/// Nested lists indent by two spaces a level up to this depth; deeper ones stay there, so a
/// page of 10,000 nested lists does not write 10,000² spaces.
const MAX_LIST_INDENT: usize = 8;

/// What an open element owes when it closes.
struct Open {
    breaks: usize,
    name_kind: Closing,
}

enum Closing {
    /// A heading of this level, its text written from this offset of `out` on.
    Heading(u8, usize),
    Pre,
    List,
    Row,
    Plain,
}

/// Writes a DOM's text: inline whitespace collapsed, block elements on lines of their own,
/// list items marked, table cells separated by `|`, `<pre>` kept verbatim.
#[derive(Default)]
pub(super) struct TextWriter {
    pub(super) out: String,
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
    /// The page's headings (`<h1>`…`<h6>`) in order: level and text.
    pub(super) headings: Vec<(u8, String)>,
}

impl TextWriter {
    /// Walks the tree under `root` in document order with an explicit stack of open
    /// elements; a skipped element's subtree is passed over by counting its depth.
    pub(super) fn write(
        &mut self,
        root: ElementRef<'_>,
        deadline: &Deadline,
    ) -> Result<(), ExtractionError> {
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
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                let level = name.as_bytes()[1] - b'0';
                Closing::Heading(level, self.out.len())
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
            Closing::Heading(level, from) => {
                let text = self.out.get(from..).unwrap_or_default().trim();
                if !text.is_empty() && self.headings.len() < MAX_HEADINGS {
                    self.headings.push((level, text.to_string()));
                }
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
