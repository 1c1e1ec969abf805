//! The readable text of a PDF through `pdf-extract`, made safe for files from anywhere.
//! `pdf-extract` recurses into form XObjects (`Do`) and up `Parent` chains, and lopdf's page
//! walk multiplies at every shared `Kids` entry, so a file whose objects loop would overflow
//! the stack or run forever: the object graph is checked first, iteratively. Its panics become
//! errors, it runs on a thread with a roomy stack, and the deadline is checked as text comes.
//!
//! Here: the limits, `pdf_to_text` and reading a file. Beside it: `structure` (the iterative
//! checks of the object graph: `Parent` chains, the page tree, form XObjects), `outline` (the
//! title and bookmarks, walked iteratively) and `output` (`TimedOutput`, the text output that
//! checks the deadline).

mod outline;
mod output;
mod structure;

#[cfg(test)]
mod tests;

use std::panic::{AssertUnwindSafe, catch_unwind};

use pdf_extract::{Document, PlainTextOutput};

use super::text::{Deadline, ExtractionError, tidy_lines};
use output::TimedOutput;
use structure::check_structure;

/// Longest `Parent` chain, and deepest page tree, accepted. Real files have a handful of
/// levels; lopdf itself stops descending at 256.
const MAX_TREE_DEPTH: usize = 64;
/// Deepest nesting of form XObjects drawn inside each other that is accepted. Each level is a
/// recursive call inside `pdf-extract`.
const MAX_FORM_DEPTH: usize = 32;
/// Stack for the thread that runs `pdf-extract`: its recursion is bounded by the checks above,
/// with frames far larger than a worker thread's 2 MiB allows at those depths.
const EXTRACTION_STACK_BYTES: usize = 64 * 1024 * 1024;

/// The readable text of a PDF, one line per text line, blank lines between blocks.
pub fn pdf_to_text(body: &[u8], deadline: &Deadline) -> Result<String, ExtractionError> {
    read_pdf(body, deadline).map(|pdf| pdf.text)
}

/// What `read_pdf` found in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pdf {
    pub text: String,
    /// The document information's `Title`, when it has one.
    pub title: Option<String>,
    /// Its outline (bookmarks) in order: level (1 at the top) and title.
    pub headings: Vec<(u8, String)>,
}

/// `pdf_to_text`, with the file's title and outline.
pub fn read_pdf(body: &[u8], deadline: &Deadline) -> Result<Pdf, ExtractionError> {
    let outcome = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("pdf-extract".into())
            .stack_size(EXTRACTION_STACK_BYTES)
            .spawn_scoped(scope, || {
                catch_unwind(AssertUnwindSafe(|| read(body, deadline)))
            })
            .map(|thread| thread.join())
    });
    match outcome {
        Ok(Ok(Ok(result))) => result,
        Ok(_) => Err(unreadable("the PDF reader failed on this file")),
        Err(err) => Err(unreadable(&format!("no thread to read it on: {err}"))),
    }
}

fn unreadable(reason: &str) -> ExtractionError {
    ExtractionError(format!("could not read the PDF: {reason}"))
}

fn read(body: &[u8], deadline: &Deadline) -> Result<Pdf, ExtractionError> {
    let mut doc = Document::load_mem(body).map_err(|err| unreadable(&err.to_string()))?;
    if doc.is_encrypted() {
        // Files "encrypted" with an empty user password open in every reader; others cannot
        // be read without the password we do not have.
        doc.decrypt("")
            .map_err(|_| unreadable("it is encrypted with a password"))?;
    }
    deadline.check()?;
    check_structure(&doc).map_err(|reason| unreadable(&reason))?;
    deadline.check()?;
    let title = outline::title(&doc);
    let headings = outline::headings(&doc);
    let mut text = String::new();
    {
        let mut output = TimedOutput {
            inner: PlainTextOutput::new(&mut text),
            deadline,
        };
        if let Err(err) = pdf_extract::output_doc(&doc, &mut output) {
            deadline.check()?;
            return Err(unreadable(&err.to_string()));
        }
    }
    Ok(Pdf {
        text: tidy_lines(&text),
        title,
        headings,
    })
}
