//! `TimedOutput`: `pdf-extract`'s plain-text output with the deadline checked at every page,
//! character and path, so a slow file stops when its budget runs out.

use pdf_extract::{ColorSpace, MediaBox, OutputDev, OutputError, Path, PlainTextOutput, Transform};

use crate::retrieval::text::Deadline;

/// `PlainTextOutput` with the deadline checked at every page and character.
pub(super) struct TimedOutput<'a, W: pdf_extract::ConvertToFmt> {
    pub(super) inner: PlainTextOutput<W>,
    pub(super) deadline: &'a Deadline,
}

impl<W: pdf_extract::ConvertToFmt> TimedOutput<'_, W> {
    fn check(&self) -> Result<(), OutputError> {
        self.deadline
            .check()
            .map_err(|err| OutputError::IoError(std::io::Error::other(err.to_string())))
    }
}

impl<W: pdf_extract::ConvertToFmt> OutputDev for TimedOutput<'_, W> {
    fn begin_page(
        &mut self,
        page_num: u32,
        media_box: &MediaBox,
        art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        self.check()?;
        self.inner.begin_page(page_num, media_box, art_box)
    }
    fn end_page(&mut self) -> Result<(), OutputError> {
        self.inner.end_page()
    }
    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        spacing: f64,
        font_size: f64,
        char: &str,
    ) -> Result<(), OutputError> {
        self.check()?;
        self.inner
            .output_character(trm, width, spacing, font_size, char)
    }
    fn begin_word(&mut self) -> Result<(), OutputError> {
        self.inner.begin_word()
    }
    fn end_word(&mut self) -> Result<(), OutputError> {
        self.inner.end_word()
    }
    fn end_line(&mut self) -> Result<(), OutputError> {
        self.inner.end_line()
    }
    fn stroke(
        &mut self,
        ctm: &Transform,
        colorspace: &ColorSpace,
        color: &[f64],
        path: &Path,
    ) -> Result<(), OutputError> {
        self.check()?;
        self.inner.stroke(ctm, colorspace, color, path)
    }
    fn fill(
        &mut self,
        ctm: &Transform,
        colorspace: &ColorSpace,
        color: &[f64],
        path: &Path,
    ) -> Result<(), OutputError> {
        self.check()?;
        self.inner.fill(ctm, colorspace, color, path)
    }
}
