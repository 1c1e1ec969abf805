//! Unit tests of the PDF extractor: a real file's text, hostile files whose objects loop,
//! forms nested past the limit, and damaged or arbitrary bytes (proptest) that give text or an
//! error, never a panic or a hang.

use std::time::Duration;

use super::*;

fn generous() -> Deadline {
    Deadline::after(Duration::from_secs(60))
}

#[test]
fn a_pdf_becomes_its_text() {
    // A one-page PDF (Helvetica text, two lines), as a browser would download it.
    let pdf = include_bytes!("../../../tests/fixtures/fetch/report.pdf");
    let text = pdf_to_text(pdf, &generous()).unwrap();
    assert!(text.contains("Quarterly report"), "{text:?}");
    assert!(text.contains("Revenue grew by 12 percent."), "{text:?}");
    let err = pdf_to_text(b"%PDF-1.4 not really", &generous()).unwrap_err();
    assert!(err.to_string().contains("PDF"), "{err}");
}

#[test]
fn pdfs_whose_objects_loop_are_refused_before_they_are_read() {
    let corpus = |name: &str| {
        std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/hostile")
                .join(name),
        )
        .unwrap()
    };
    for (file, reason) in [
        ("pdf-form-draws-itself.pdf", "draws itself"),
        ("pdf-forms-draw-each-other.pdf", "draws itself"),
        ("pdf-kids-loop.pdf", "page tree loops"),
        ("pdf-parent-loop.pdf", "Parent entries form a loop"),
    ] {
        let err = pdf_to_text(&corpus(file), &generous()).unwrap_err();
        assert_eq!(err.code(), "extraction_failed");
        assert!(err.to_string().contains(reason), "{file}: {err}");
    }
}

#[test]
fn forms_nested_deeper_than_the_limit_are_refused_and_shallow_ones_read() {
    let pdf = |depth: usize| {
        // Page → form 1 → form 2 → … → form `depth`, each with its own resources.
        let mut objects = vec![
            "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
            "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R \
             /Resources << /XObject << /X 5 0 R >> >> >>"
                .to_string(),
            "<< /Length 5 >>\nstream\n/X Do\nendstream".to_string(),
        ];
        for level in 0..depth {
            let number = 5 + level;
            let (content, resources) = if level + 1 < depth {
                (
                    "/X Do",
                    format!("/Resources << /XObject << /X {} 0 R >> >>", number + 1),
                )
            } else {
                ("", String::new())
            };
            objects.push(format!(
                "<< /Type /XObject /Subtype /Form /BBox [0 0 1 1] {resources} /Length {} >>\n\
                 stream\n{content}\nendstream",
                content.len()
            ));
        }
        let mut out = b"%PDF-1.4\n".to_vec();
        let mut offsets = Vec::new();
        for (i, body) in objects.iter().enumerate() {
            offsets.push(out.len());
            out.extend(format!("{} 0 obj\n{body}\nendobj\n", i + 1).as_bytes());
        }
        let xref = out.len();
        out.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
        for offset in offsets {
            out.extend(format!("{offset:010} 00000 n \n").as_bytes());
        }
        out.extend(
            format!(
                "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
                objects.len() + 1
            )
            .as_bytes(),
        );
        out
    };
    let shallow = pdf_to_text(&pdf(4), &generous());
    assert!(shallow.is_ok(), "{shallow:?}");
    let err = pdf_to_text(&pdf(MAX_FORM_DEPTH + 5), &generous()).unwrap_err();
    assert!(err.to_string().contains("nest more than"), "{err}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// A real PDF with bytes overwritten and its end cut: every outcome is text or an
    /// error, never a panic or a hang.
    #[test]
    fn a_damaged_pdf_is_text_or_an_error(
        edits in proptest::collection::vec((0usize..4096, proptest::num::u8::ANY), 0..24),
        keep in 0usize..4096,
    ) {
        let mut pdf = include_bytes!("../../../tests/fixtures/fetch/report.pdf").to_vec();
        for (at, byte) in edits {
            let at = at % pdf.len();
            pdf[at] = byte;
        }
        pdf.truncate(keep.max(16).min(pdf.len()));
        let _ = pdf_to_text(&pdf, &Deadline::after(Duration::from_secs(10)));
    }

    #[test]
    fn arbitrary_bytes_after_a_pdf_header_are_text_or_an_error(
        body in proptest::collection::vec(proptest::num::u8::ANY, 0..2048),
    ) {
        let mut pdf = b"%PDF-1.4\n".to_vec();
        pdf.extend(body);
        let _ = pdf_to_text(&pdf, &Deadline::after(Duration::from_secs(10)));
    }
}
