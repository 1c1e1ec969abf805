//! Unit tests of extraction: sniffing by bytes, extension and HTML markers, sanitised and
//! shortened filenames, decoding with a byte order mark, the character limit, binaries and
//! blank files, HTML and PDF text.

use super::*;

fn generous() -> Deadline {
    Deadline::after(std::time::Duration::from_secs(60))
}

const PNG: &[u8] = &[
    0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D,
];
const ELF: &[u8] = &[0x7F, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0];
const ZIP: &[u8] = &[b'P', b'K', 3, 4, 20, 0, 0, 0, 8, 0, 0x21, 0x8c];

#[test]
fn the_bytes_decide_before_the_name() {
    assert_eq!(sniff(b"%PDF-1.7\n...", "notes.txt").0, DocKind::Pdf);
    assert_eq!(
        sniff(b"%PDF-1.4", "scan.bin"),
        (DocKind::Pdf, "application/pdf")
    );
    assert_eq!(sniff(PNG, "notes.txt"), (DocKind::Binary, "image/png"));
    assert_eq!(sniff(ELF, "readme.txt").0, DocKind::Binary);
    assert_eq!(sniff(ZIP, "main.rs").0, DocKind::Binary);
    assert_eq!(sniff(&[0xff, 0x00, 0x12], "data.csv").0, DocKind::Binary);
}

#[test]
fn text_is_classed_by_its_extension() {
    assert_eq!(
        sniff(b"# Title", "notes.md"),
        (DocKind::Text, "text/markdown")
    );
    assert_eq!(sniff(b"a,b\n1,2", "t.CSV"), (DocKind::Text, "text/csv"));
    assert_eq!(sniff(b"{}", "x.json"), (DocKind::Text, "application/json"));
    assert_eq!(sniff(b"hello", "x.txt"), (DocKind::Text, "text/plain"));
    assert_eq!(
        sniff(b"import os", "a.py"),
        (DocKind::Code, "text/x-python")
    );
    assert_eq!(
        sniff(b"fn main() {}", "main.rs"),
        (DocKind::Code, "text/x-rust")
    );
    assert_eq!(sniff(b"all:\n\tcc", "Makefile").0, DocKind::Code);
    assert_eq!(
        sniff(b"<p>hi</p>", "page.htm"),
        (DocKind::Html, "text/html")
    );
    assert_eq!(
        sniff(b"Just words", "README"),
        (DocKind::Text, "text/plain")
    );
    assert_eq!(sniff(b"MZ is a text", "x.txt").0, DocKind::Text);
    assert_eq!(sniff(b"just text", "archive.xyz").0, DocKind::Binary);
    // Nothing but text bytes of a UTF-8 character cut off by the end of the head.
    assert_eq!(
        sniff(&"caf\u{e9}".as_bytes()[..4], "a.txt").0,
        DocKind::Text
    );
}

#[test]
fn html_markers_class_an_unnamed_page() {
    let page = b"  <!DOCTYPE html><html><body>x</body></html>";
    assert_eq!(sniff(page, "download"), (DocKind::Html, "text/html"));
    assert_eq!(sniff(page, "page.bin").0, DocKind::Html);
    // A text file that quotes HTML stays text.
    assert_eq!(sniff(page, "snippet.txt").0, DocKind::Text);
}

#[test]
fn filenames_lose_directories_controls_and_leading_dots() {
    assert_eq!(sanitize_filename("../../etc/passwd"), "passwd");
    assert_eq!(sanitize_filename("C:\\Users\\me\\report.pdf"), "report.pdf");
    assert_eq!(sanitize_filename("  .hidden.txt  "), "hidden.txt");
    assert_eq!(sanitize_filename("a\u{0}b\nc.md"), "abc.md");
    assert_eq!(sanitize_filename(".."), FALLBACK_FILENAME);
    assert_eq!(sanitize_filename("dir/"), FALLBACK_FILENAME);
    assert_eq!(sanitize_filename(""), FALLBACK_FILENAME);
    assert_eq!(sanitize_filename("notes..txt"), "notes.txt");
    assert_eq!(sanitize_filename("résumé 2024.pdf"), "résumé 2024.pdf");
}

#[test]
fn long_filenames_keep_their_extension_and_whole_characters() {
    let long = format!("{}.pdf", "é".repeat(300));
    let name = sanitize_filename(&long);
    assert!(name.len() <= MAX_FILENAME_BYTES, "{}", name.len());
    assert!(name.ends_with("é.pdf"));
    let no_extension = "x".repeat(400);
    assert_eq!(sanitize_filename(&no_extension).len(), MAX_FILENAME_BYTES);
}

#[test]
fn text_is_decoded_with_its_byte_order_mark() {
    let utf8 = extract(b"\xEF\xBB\xBFhello", DocKind::Text, 100, &generous()).unwrap();
    assert_eq!(utf8.text.as_deref(), Some("hello"));
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain("hé".encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    let decoded = extract(&utf16, DocKind::Code, 100, &generous()).unwrap();
    assert_eq!(decoded.text.as_deref(), Some("hé"));
    assert_eq!(decoded.char_count, 2);
    let lossy = extract(b"ok \xff", DocKind::Text, 100, &generous()).unwrap();
    assert_eq!(lossy.text.as_deref(), Some("ok \u{fffd}"));
}

#[test]
fn text_beyond_the_limit_is_cut_on_a_character() {
    let text = "é".repeat(10);
    let cut = extract(text.as_bytes(), DocKind::Text, 4, &generous()).unwrap();
    assert_eq!(cut.text.as_deref(), Some("éééé"));
    assert!(cut.truncated);
    assert_eq!(cut.char_count, 4);
    let whole = extract(text.as_bytes(), DocKind::Text, 10, &generous()).unwrap();
    assert!(!whole.truncated);
    assert_eq!(whole.char_count, 10);
}

#[test]
fn binaries_and_blank_files_have_no_text() {
    let binary = extract(PNG, DocKind::Binary, 100, &generous()).unwrap();
    assert_eq!(binary.text, None);
    assert_eq!(
        extract(b" \n\t", DocKind::Text, 100, &generous())
            .unwrap()
            .text,
        None
    );
}

#[test]
fn html_becomes_its_visible_text() {
    let page = b"<html><head><script>var x = 1;</script></head>\
                 <body><h1>Title</h1><p>First paragraph.</p></body></html>";
    let text = extract(page, DocKind::Html, 1000, &generous())
        .unwrap()
        .text
        .unwrap();
    assert!(text.contains("Title"), "{text:?}");
    assert!(text.contains("First paragraph."), "{text:?}");
    assert!(!text.contains("var x"), "{text:?}");
}

#[test]
fn a_pdf_becomes_its_text_and_a_broken_one_an_error() {
    let pdf = include_bytes!("../../../tests/fixtures/fetch/report.pdf");
    let text = extract(pdf, DocKind::Pdf, 10_000, &generous())
        .unwrap()
        .text
        .unwrap();
    assert!(text.contains("Quarterly report"), "{text:?}");
    let err = extract(b"%PDF-1.4 not really", DocKind::Pdf, 100, &generous()).unwrap_err();
    assert!(
        err.to_string().starts_with("the PDF could not be read: "),
        "{err}"
    );
}

#[test]
fn markdown_and_html_give_their_outline_where_the_text_has_it() {
    let markdown = "# Handbook\n\nWelcome.\n\n## Leave\n\nTake it.\n";
    let extraction = extract(markdown.as_bytes(), DocKind::Text, 1_000, &generous()).unwrap();
    let text = extraction.text.unwrap();
    assert_eq!(extraction.outline.title.as_deref(), Some("Handbook"));
    let leave = &extraction.outline.headings[1];
    assert_eq!((leave.level, leave.text.as_str()), (2, "Leave"));
    assert!(text[leave.offset..].starts_with("## Leave"));

    let html = "<html><head><title>Staff  handbook</title></head><body>\
        <h1>Handbook</h1><p>Welcome.</p><h2>Leave <em>policy</em></h2><p>Take it.</p></body></html>";
    let extraction = extract(html.as_bytes(), DocKind::Html, 1_000, &generous()).unwrap();
    let text = extraction.text.unwrap();
    let outline = extraction.outline;
    assert_eq!(outline.title.as_deref(), Some("Staff handbook"));
    let found: Vec<(u8, &str)> = outline
        .headings
        .iter()
        .map(|h| (h.level, h.text.as_str()))
        .collect();
    assert_eq!(found, [(1, "Handbook"), (2, "Leave policy")]);
    assert!(text[outline.headings[1].offset..].starts_with("Leave policy"));
    let chunk = outline.for_chunk(text.find("Take it").unwrap(), text.len());
    assert_eq!(chunk.path, ["Staff handbook", "Handbook", "Leave policy"]);

    // Code has no outline; a cut text keeps only the headings it still holds.
    let code = extract(b"# not a heading\nx = 1\n", DocKind::Code, 100, &generous()).unwrap();
    assert!(code.outline.is_empty());
    let cut = extract(markdown.as_bytes(), DocKind::Text, 12, &generous()).unwrap();
    assert_eq!(cut.outline.headings.len(), 1);
}
