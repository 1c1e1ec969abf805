//! The readable text and links of an HTML page. Pages come from anywhere, so nothing here
//! recurses on their structure: the parser is fed in slices with the deadline checked between
//! them (html5ever's tree builder is quadratic on deep nesting), and the DOM is walked with an
//! explicit stack. A page of any depth gives its text or an `extraction_failed` error.
//!
//! Here: `Link`, `html_to_text` and the sliced parsing. Beside it: `links` (a page's links,
//! absolute and deduplicated, with their anchor text) and `text_writer` (`TextWriter`, the
//! iterative walk that lays a DOM out as text).

mod links;
mod text_writer;

#[cfg(test)]
mod tests;

use html5ever::tendril::{StrTendril, TendrilSink};
use scraper::{Html, HtmlTreeSink};
use url::Url;

use super::text::{Deadline, ExtractionError, tidy_lines};
use links::links;
use text_writer::TextWriter;

/// A link found on a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub url: String,
    /// Its anchor text, whitespace collapsed; may be empty.
    pub text: String,
}

/// Bytes of HTML handed to the parser between deadline checks. html5ever's tree builder scans
/// the open elements at most start tags (about 100 ns a step here), so a slice of `<div>`s
/// costs ~100 tags × depth: 1 s at depth 100,000, which the deadline stops short of reaching.
const PARSE_SLICE_BYTES: usize = 512;

/// The readable text of an HTML document and the links it holds (navigation included:
/// those are what site exploration wants). Fails only when `deadline` passes.
pub fn html_to_text(
    html: &str,
    page: &Url,
    deadline: &Deadline,
) -> Result<(String, Vec<Link>), ExtractionError> {
    let page = read_page(html, page, deadline)?;
    Ok((page.text, page.links))
}

/// What `read_page` found in a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub text: String,
    pub links: Vec<Link>,
    /// Its `<title>`, whitespace collapsed, when it has one.
    pub title: Option<String>,
    /// Its `<h1>`…`<h6>` in order: level and text (as written in `text`).
    pub headings: Vec<(u8, String)>,
}

/// `html_to_text`, with the page's title and headings.
pub fn read_page(html: &str, page: &Url, deadline: &Deadline) -> Result<Page, ExtractionError> {
    let document = parse(html, deadline)?;
    let mut writer = TextWriter::default();
    writer.write(document.root_element(), deadline)?;
    deadline.check()?;
    let title = scraper::Selector::parse("head > title, title")
        .ok()
        .and_then(|selector| document.select(&selector).next())
        .map(|title| title.text().collect::<Vec<_>>().join(" "))
        .map(|title| title.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|title| !title.is_empty());
    Ok(Page {
        text: tidy_lines(&writer.out),
        links: links(&document, page),
        title,
        headings: writer.headings,
    })
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
