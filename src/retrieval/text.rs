//! What every text extractor shares: the `Deadline` that bounds its work, the one error it can
//! end with, decoding by charset, and tidying the lines it wrote.

use std::time::{Duration, Instant};

/// Why text could not be extracted: the content was unreadable, or took longer than its
/// budget. The message says which, in words a reader (or a model) can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ExtractionError(pub String);

impl ExtractionError {
    /// Its stable snake_case code, the same wherever it surfaces (a fetch, an upload).
    pub fn code(&self) -> &'static str {
        "extraction_failed"
    }
}

/// When an extraction gives up. Extractors check it between slices of work, so a hostile
/// body costs at most about its budget, then becomes an `extraction_failed` error.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    at: Instant,
    budget: Duration,
}

impl Deadline {
    /// A deadline `budget` from now.
    pub fn after(budget: Duration) -> Self {
        Self {
            at: Instant::now() + budget,
            budget,
        }
    }

    /// An error once the deadline has passed.
    pub fn check(&self) -> Result<(), ExtractionError> {
        if Instant::now() >= self.at {
            return Err(ExtractionError(format!(
                "reading the content took longer than its budget of {:.1} s",
                self.budget.as_secs_f32()
            )));
        }
        Ok(())
    }
}

/// Decodes a text body by its declared charset (UTF-8 when none or unknown; a BOM wins).
pub fn decode(body: &[u8], charset: Option<&str>) -> String {
    let encoding = charset
        .and_then(|label| encoding_rs::Encoding::for_label(label.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    encoding.decode(body).0.into_owned()
}

/// Trims every line, drops runs of more than one blank line, trims the whole.
pub(crate) fn tidy_lines(text: &str) -> String {
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
