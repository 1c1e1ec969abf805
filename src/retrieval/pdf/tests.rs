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

/// A one-page PDF with a document title and bookmarks "Introduction" > "Method", then
/// "Results"; `looping` makes the last bookmark's `Next` point back to the first.
fn outlined_pdf(looping: bool) -> Vec<u8> {
    use pdf_extract::{Dictionary, Object, Stream, StringFormat};
    let mut doc = Document::with_version("1.5");
    let text = |s: &str| Object::String(s.as_bytes().to_vec(), StringFormat::Literal);
    let name = |s: &str| Object::Name(s.as_bytes().to_vec());
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(Dictionary::from_iter([
        ("Type", name("Font")),
        ("Subtype", name("Type1")),
        ("BaseFont", name("Helvetica")),
    ]));
    let content = b"BT /F1 12 Tf 72 720 Td (Introduction) Tj 0 -20 Td (We measured it.) Tj \
        0 -20 Td (Method) Tj 0 -20 Td (Carefully.) Tj 0 -20 Td (Results) Tj 0 -20 Td (It works.) Tj ET"
        .to_vec();
    let content_id = doc.add_object(Stream::new(Dictionary::new(), content));
    let resources = Dictionary::from_iter([(
        "Font",
        Object::Dictionary(Dictionary::from_iter([("F1", Object::Reference(font_id))])),
    )]);
    let page_id = doc.add_object(Dictionary::from_iter([
        ("Type", name("Page")),
        ("Parent", Object::Reference(pages_id)),
        ("Contents", Object::Reference(content_id)),
        ("Resources", Object::Dictionary(resources)),
        (
            "MediaBox",
            Object::Array(vec![0.into(), 0.into(), 612.into(), 792.into()]),
        ),
    ]));
    doc.objects.insert(
        pages_id,
        Object::Dictionary(Dictionary::from_iter([
            ("Type", name("Pages")),
            ("Kids", Object::Array(vec![Object::Reference(page_id)])),
            ("Count", 1.into()),
        ])),
    );
    let outlines_id = doc.new_object_id();
    let [intro, method, results] = [(); 3].map(|_| doc.new_object_id());
    let item = |title: &str, extra: Vec<(&str, Object)>| {
        let mut dict = Dictionary::from_iter([
            ("Title", text(title)),
            ("Parent", Object::Reference(outlines_id)),
            (
                "Dest",
                Object::Array(vec![Object::Reference(page_id), name("Fit")]),
            ),
        ]);
        for (key, value) in extra {
            dict.set(key, value);
        }
        Object::Dictionary(dict)
    };
    doc.objects.insert(
        intro,
        item(
            "Introduction",
            vec![
                ("First", Object::Reference(method)),
                ("Next", Object::Reference(results)),
            ],
        ),
    );
    doc.objects.insert(method, item("Method", vec![]));
    let results_extra = if looping {
        vec![("Next", Object::Reference(intro))]
    } else {
        vec![]
    };
    doc.objects.insert(results, item("Results", results_extra));
    doc.objects.insert(
        outlines_id,
        Object::Dictionary(Dictionary::from_iter([
            ("Type", name("Outlines")),
            ("First", Object::Reference(intro)),
            ("Last", Object::Reference(results)),
        ])),
    );
    let catalog_id = doc.add_object(Dictionary::from_iter([
        ("Type", name("Catalog")),
        ("Pages", Object::Reference(pages_id)),
        ("Outlines", Object::Reference(outlines_id)),
    ]));
    let info_id = doc.add_object(Dictionary::from_iter([("Title", text("  A  Study "))]));
    doc.trailer.set("Root", Object::Reference(catalog_id));
    doc.trailer.set("Info", Object::Reference(info_id));
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    bytes
}

#[test]
fn a_pdf_gives_its_title_and_bookmarks_in_order_and_a_looping_outline_ends() {
    for looping in [false, true] {
        let pdf = read_pdf(&outlined_pdf(looping), &generous()).unwrap();
        assert!(pdf.text.contains("We measured it."), "{:?}", pdf.text);
        assert_eq!(pdf.title.as_deref(), Some("A Study"));
        assert_eq!(
            pdf.headings,
            [
                (1, "Introduction".to_string()),
                (2, "Method".to_string()),
                (1, "Results".to_string())
            ],
            "looping: {looping}"
        );
    }
}
