//! From uploaded bytes to searchable text: what kind of file it is (its bytes first, then
//! its name), a filename safe to store and show, and the text of PDFs, HTML, text and code.
//! Pure functions of bytes; storing the upload and indexing the text are other modules' work.
//! The HTML and PDF extractors are shared with the fetch tool (`tools::fetch::extract` uses
//! them), not copies.
//!
//! Here: `DocKind` and `extract` (the text of a file of a given kind). Beside it: `sniff` (what
//! kind of file it is, from its bytes, then its name) and `filename` (`sanitize_filename`).

mod filename;
mod sniff;

#[cfg(test)]
mod tests;

use url::Url;

use super::html::read_page;
use super::outline::Outline;
use super::pdf::read_pdf;
use super::text::{Deadline, decode};

pub use filename::{FALLBACK_FILENAME, MAX_FILENAME_BYTES, sanitize_filename};
pub use sniff::{SNIFF_BYTES, sniff};

/// Bytes of an HTML file that are parsed; the rest is left out (and the text marked
/// truncated). A DOM costs several times its source in memory, and 32 MiB of markup holds far
/// more than the `max_text_chars` that are kept.
const MAX_HTML_BYTES: usize = 32 * 1024 * 1024;

/// How a file's content is turned into text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocKind {
    Pdf,
    Html,
    Text,
    Code,
    /// Stored with its metadata; its content is not searchable.
    Binary,
}

impl DocKind {
    /// Whether files of this kind have text to index.
    pub fn is_searchable(self) -> bool {
        !matches!(self, Self::Binary)
    }
}

/// The text of a file, ready for chunking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extraction {
    /// `None` when the file has no searchable text (binary, or nothing but whitespace).
    pub text: Option<String>,
    /// Whether text beyond `max_chars` was cut off.
    pub truncated: bool,
    /// Characters in `text` (after truncation; 0 when there is none).
    pub char_count: usize,
    /// Characters the text had before it was cut, when all of it was read: `None` when only a
    /// prefix of the file was (a text file past `max_chars` is decoded only that far, an HTML
    /// file only up to `MAX_HTML_BYTES`).
    pub original_chars: Option<usize>,
    /// Its title and headings, where they start in `text`: Markdown headings of a text file,
    /// an HTML page's `<title>` and `<h1>`…`<h6>`, a PDF's title and bookmarks.
    pub outline: Outline,
}

#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    #[error("the PDF could not be read: {0}")]
    Pdf(String),
    #[error("the HTML could not be read: {0}")]
    Html(String),
}

/// Extracts the text of a file of the given kind, keeping at most `max_chars` characters.
/// PDFs through `pdf-extract`, HTML as its visible text, text and code decoded as UTF-8
/// (a UTF-8 or UTF-16 byte order mark is honoured; invalid bytes become U+FFFD).
/// Hostile structure (deep nesting, object loops) gives an error, never a crash; so does
/// taking longer than `deadline`.
pub fn extract(
    bytes: &[u8],
    kind: DocKind,
    max_chars: usize,
    deadline: &Deadline,
) -> Result<Extraction, ExtractError> {
    let mut cut_short = false;
    // Whether the whole file was read (its text's length is then known exactly).
    let mut whole = true;
    // The outline an extractor found (HTML, PDF); Markdown's is read once the text is final.
    let mut found: Option<Outline> = None;
    let text = match kind {
        DocKind::Binary => None,
        DocKind::Pdf => {
            let pdf = read_pdf(bytes, deadline).map_err(|err| {
                ExtractError::Pdf(
                    err.to_string()
                        .trim_start_matches("could not read the PDF: ")
                        .to_string(),
                )
            })?;
            found = Some(Outline::locate(
                &pdf.text,
                pdf.title.as_deref(),
                &pdf.headings,
            ));
            Some(pdf.text)
        }
        DocKind::Html => {
            cut_short = bytes.len() > MAX_HTML_BYTES;
            let (text, outline) = html_text(&bytes[..bytes.len().min(MAX_HTML_BYTES)], deadline)?;
            found = Some(outline);
            Some(text)
        }
        DocKind::Text | DocKind::Code => {
            // A character takes at most 4 bytes in UTF-8 and UTF-16, so this prefix holds more
            // than `max_chars` characters whenever the file does: huge files are not decoded
            // whole only to be cut.
            let limit = max_chars.saturating_mul(4).saturating_add(8);
            whole = bytes.len() <= limit;
            Some(decode(&bytes[..bytes.len().min(limit)], None))
        }
    };
    let Some(mut text) = text.filter(|t| !t.trim().is_empty()) else {
        return Ok(Extraction {
            text: None,
            truncated: false,
            char_count: 0,
            original_chars: Some(0),
            outline: Outline::default(),
        });
    };
    let whole = whole && !cut_short;
    let (truncated, char_count, original_chars) = match text.char_indices().nth(max_chars) {
        Some((cut, _)) => {
            let original = whole.then(|| text.chars().count());
            text.truncate(cut);
            (true, max_chars, original)
        }
        None => {
            let count = text.chars().count();
            (cut_short, count, whole.then_some(count))
        }
    };
    let outline = match (found, kind) {
        (Some(mut outline), _) => {
            // Headings past a cut are not in the text.
            outline.headings.retain(|h| h.offset < text.len());
            outline
        }
        (None, DocKind::Text) => Outline::markdown(&text),
        (None, _) => Outline::default(),
    };
    Ok(Extraction {
        text: Some(text),
        truncated,
        char_count,
        original_chars,
        outline,
    })
}

/// The visible text of an HTML file (a byte order mark, else UTF-8) and its outline.
fn html_text(bytes: &[u8], deadline: &Deadline) -> Result<(String, Outline), ExtractError> {
    // Links are resolved against it and then ignored.
    let base =
        Url::parse("http://localhost/").map_err(|err| ExtractError::Html(err.to_string()))?;
    let page = read_page(&decode(bytes, None), &base, deadline)
        .map_err(|err| ExtractError::Html(err.to_string()))?;
    let outline = Outline::locate(&page.text, page.title.as_deref(), &page.headings);
    Ok((page.text, outline))
}
