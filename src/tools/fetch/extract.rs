//! Turning a fetched body into readable text: what kind it is (its content type, or a sniff),
//! then HTML and PDF through retrieval's extractors (`retrieval::html`, `retrieval::pdf`), text
//! types as they are. Pure functions of bytes, each bounded by a `Deadline`; the network is
//! `super::Fetcher`'s.

use url::Url;

pub use crate::retrieval::text::{Deadline, decode};
use crate::retrieval::{html, pdf};

use super::{FetchError, Link};

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

/// Extracts the text and links of a body of the given kind, fetched from `base`.
pub fn extract(
    kind: ContentKind,
    body: &[u8],
    charset: Option<&str>,
    base: &Url,
    deadline: &Deadline,
) -> Result<(String, Vec<Link>), FetchError> {
    match kind {
        ContentKind::Html => Ok(html::html_to_text(&decode(body, charset), base, deadline)?),
        ContentKind::Pdf => Ok((pdf::pdf_to_text(body, deadline)?, Vec::new())),
        ContentKind::Text => Ok((decode(body, charset).trim().to_string(), Vec::new())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

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

    /// Every file of the hostile corpus, through every extractor, on a worker-sized stack:
    /// each gives text or an error within its budget.
    #[test]
    fn the_hostile_corpus_gives_text_or_an_error_within_the_budget() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|e| e != "py"))
            .collect();
        files.sort();
        assert!(files.len() >= 25, "corpus missing: {files:?}");
        let budget = Duration::from_secs(2);
        for path in files {
            for kind in [ContentKind::Html, ContentKind::Pdf, ContentKind::Text] {
                let body = std::fs::read(&path).unwrap();
                let started = Instant::now();
                let outcome = std::thread::Builder::new()
                    .stack_size(2 * 1024 * 1024)
                    .spawn(move || {
                        let base = Url::parse("https://example.com/").unwrap();
                        extract(kind, &body, None, &base, &Deadline::after(budget))
                            .map(|(text, _)| text.len())
                    })
                    .unwrap()
                    .join()
                    .unwrap_or_else(|_| panic!("{path:?} as {kind:?} panicked"));
                if let Err(err) = &outcome {
                    assert_eq!(
                        err.code(),
                        "extraction_failed",
                        "{path:?} as {kind:?}: {err}"
                    );
                }
                // Checked between slices of work, so a little past the budget at most.
                assert!(
                    started.elapsed() < budget + Duration::from_secs(20),
                    "{path:?} as {kind:?} took {:?}",
                    started.elapsed()
                );
            }
        }
    }
}
