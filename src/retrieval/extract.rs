//! From uploaded bytes to searchable text: what kind of file it is (its bytes first, then
//! its name), a filename safe to store and show, and the text of PDFs, HTML, text and code.
//! Pure functions of bytes; storing the upload and indexing the text are other modules' work.
//! The HTML and PDF extractors are the fetch tool's (`tools::fetch::extract`), not copies.

use url::Url;

use super::html::html_to_text;
use super::pdf::pdf_to_text;
use super::text::{Deadline, decode};

/// Longest stored filename in bytes: what common file systems allow for one path component.
pub const MAX_FILENAME_BYTES: usize = 255;
/// The name given to an upload whose filename sanitises to nothing.
pub const FALLBACK_FILENAME: &str = "upload";
/// Longest extension kept whole when a long filename is shortened; longer "extensions" are
/// just part of the name.
const MAX_KEPT_EXTENSION_BYTES: usize = 16;
/// Bytes of an HTML file that are parsed; the rest is left out (and the text marked
/// truncated). A DOM costs several times its source in memory, and 32 MiB of markup holds far
/// more than the `max_text_chars` that are kept.
const MAX_HTML_BYTES: usize = 32 * 1024 * 1024;
/// How much of a file's start `sniff` is given: enough for every magic number and for the
/// text check to be fair.
pub const SNIFF_BYTES: usize = 8192;
/// How far into a file its HTML markers are looked for.
const HTML_SNIFF_BYTES: usize = 1024;

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

/// The text extensions of seed 002 (and their close relatives), with their content types.
const TEXT_EXTENSIONS: &[(&str, &str)] = &[
    ("txt", "text/plain"),
    ("text", "text/plain"),
    ("log", "text/plain"),
    ("md", "text/markdown"),
    ("markdown", "text/markdown"),
    ("rst", "text/x-rst"),
    ("csv", "text/csv"),
    ("tsv", "text/tab-separated-values"),
    ("json", "application/json"),
    ("jsonl", "application/jsonl"),
    ("ndjson", "application/x-ndjson"),
    ("xml", "application/xml"),
];

/// Source and configuration files, searched as they are.
const CODE_EXTENSIONS: &[(&str, &str)] = &[
    ("rs", "text/x-rust"),
    ("py", "text/x-python"),
    ("pyi", "text/x-python"),
    ("ipynb", "application/x-ipynb+json"),
    ("js", "text/javascript"),
    ("mjs", "text/javascript"),
    ("cjs", "text/javascript"),
    ("jsx", "text/javascript"),
    ("ts", "text/x-typescript"),
    ("tsx", "text/x-typescript"),
    ("mts", "text/x-typescript"),
    ("go", "text/x-go"),
    ("swift", "text/x-swift"),
    ("java", "text/x-java"),
    ("kt", "text/x-kotlin"),
    ("kts", "text/x-kotlin"),
    ("scala", "text/x-scala"),
    ("groovy", "text/x-groovy"),
    ("gradle", "text/x-groovy"),
    ("c", "text/x-c"),
    ("h", "text/x-c"),
    ("cc", "text/x-c++"),
    ("cpp", "text/x-c++"),
    ("cxx", "text/x-c++"),
    ("hh", "text/x-c++"),
    ("hpp", "text/x-c++"),
    ("hxx", "text/x-c++"),
    ("m", "text/x-objectivec"),
    ("mm", "text/x-objectivec"),
    ("cs", "text/x-csharp"),
    ("fs", "text/x-fsharp"),
    ("fsx", "text/x-fsharp"),
    ("vb", "text/x-vb"),
    ("rb", "text/x-ruby"),
    ("php", "text/x-php"),
    ("pl", "text/x-perl"),
    ("pm", "text/x-perl"),
    ("lua", "text/x-lua"),
    ("r", "text/x-r"),
    ("jl", "text/x-julia"),
    ("dart", "text/x-dart"),
    ("ex", "text/x-elixir"),
    ("exs", "text/x-elixir"),
    ("erl", "text/x-erlang"),
    ("hrl", "text/x-erlang"),
    ("hs", "text/x-haskell"),
    ("ml", "text/x-ocaml"),
    ("mli", "text/x-ocaml"),
    ("clj", "text/x-clojure"),
    ("cljs", "text/x-clojure"),
    ("elm", "text/x-elm"),
    ("zig", "text/x-zig"),
    ("nim", "text/x-nim"),
    ("v", "text/x-verilog"),
    ("sv", "text/x-systemverilog"),
    ("vhd", "text/x-vhdl"),
    ("sol", "text/x-solidity"),
    ("asm", "text/x-asm"),
    ("s", "text/x-asm"),
    ("sh", "text/x-shellscript"),
    ("bash", "text/x-shellscript"),
    ("zsh", "text/x-shellscript"),
    ("fish", "text/x-shellscript"),
    ("ps1", "text/x-powershell"),
    ("bat", "text/x-bat"),
    ("cmd", "text/x-bat"),
    ("sql", "text/x-sql"),
    ("css", "text/css"),
    ("scss", "text/x-scss"),
    ("sass", "text/x-sass"),
    ("less", "text/x-less"),
    ("vue", "text/x-vue"),
    ("svelte", "text/x-svelte"),
    ("graphql", "application/graphql"),
    ("proto", "text/x-protobuf"),
    ("tf", "text/x-terraform"),
    ("hcl", "text/x-hcl"),
    ("nix", "text/x-nix"),
    ("cmake", "text/x-cmake"),
    ("mk", "text/x-makefile"),
    ("tex", "text/x-tex"),
    ("toml", "application/toml"),
    ("yaml", "application/yaml"),
    ("yml", "application/yaml"),
    ("ini", "text/plain"),
    ("cfg", "text/plain"),
    ("conf", "text/plain"),
    ("env", "text/plain"),
    ("properties", "text/plain"),
    ("gitignore", "text/plain"),
    ("dockerignore", "text/plain"),
    ("editorconfig", "text/plain"),
    ("diff", "text/x-diff"),
    ("patch", "text/x-diff"),
];

/// Source files known by their whole name rather than an extension.
const CODE_FILENAMES: &[(&str, &str)] = &[
    ("makefile", "text/x-makefile"),
    ("gnumakefile", "text/x-makefile"),
    ("dockerfile", "text/x-dockerfile"),
    ("containerfile", "text/x-dockerfile"),
    ("justfile", "text/plain"),
    ("rakefile", "text/x-ruby"),
    ("gemfile", "text/x-ruby"),
    ("procfile", "text/plain"),
    ("vagrantfile", "text/x-ruby"),
];

const HTML_EXTENSIONS: &[&str] = &["html", "htm", "xhtml"];

/// Decides a file's kind and content type from its first bytes (`head`; the whole file or
/// a prefix of some kilobytes) and its name. The bytes win: a PDF is a PDF whatever its name,
/// and an executable, image or archive is `Binary` even when named `.txt`. Text bytes are then
/// classed by the extension (seed 002's table); text with no extension at all (`README`) is
/// `Text`, text with an unknown extension is `Binary`, as the seed says.
pub fn sniff(head: &[u8], filename: &str) -> (DocKind, &'static str) {
    if head.starts_with(b"%PDF-") {
        return (DocKind::Pdf, "application/pdf");
    }
    let recognised = infer::get(head);
    if let Some(found) = recognised
        && found.mime_type() == "application/pdf"
    {
        return (DocKind::Pdf, "application/pdf");
    }
    // A few magic numbers are short enough to begin ordinary text ("MZ", "BM"); real binary
    // files are never clean text, so the text check decides.
    if !looks_like_text(head) {
        let mime = recognised.map_or("application/octet-stream", |found| found.mime_type());
        return (DocKind::Binary, mime);
    }

    let name = filename.rsplit(['/', '\\']).next().unwrap_or(filename);
    let lower = name.to_ascii_lowercase();
    let extension = extension_of(&lower);
    if let Some(ext) = extension {
        if HTML_EXTENSIONS.contains(&ext) {
            return (DocKind::Html, "text/html");
        }
        if let Some((_, mime)) = TEXT_EXTENSIONS.iter().find(|(e, _)| *e == ext) {
            return (DocKind::Text, mime);
        }
        if let Some((_, mime)) = CODE_EXTENSIONS.iter().find(|(e, _)| *e == ext) {
            return (DocKind::Code, mime);
        }
    }
    if has_html_markers(head) {
        return (DocKind::Html, "text/html");
    }
    if let Some((_, mime)) = CODE_FILENAMES.iter().find(|(n, _)| *n == lower) {
        return (DocKind::Code, mime);
    }
    match extension {
        None => (DocKind::Text, "text/plain"),
        Some(_) => (DocKind::Binary, "application/octet-stream"),
    }
}

/// The extension of a lower-cased file name, without its dot (`None` for `README` or `.env`
/// style names whose only dot leads).
fn extension_of(name: &str) -> Option<&str> {
    match name.rfind('.') {
        Some(0) if name.len() > 1 => Some(&name[1..]),
        Some(dot) if dot + 1 < name.len() => Some(&name[dot + 1..]),
        _ => None,
    }
}

/// Whether bytes read as text: a UTF-16 byte order mark, or UTF-8 without NUL bytes (a
/// character cut off by the end of `head` is forgiven).
fn looks_like_text(head: &[u8]) -> bool {
    if head.starts_with(&[0xFF, 0xFE]) || head.starts_with(&[0xFE, 0xFF]) {
        return true;
    }
    if head.contains(&0) {
        return false;
    }
    match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(err) => err.error_len().is_none(),
    }
}

/// Whether text starts like an HTML document (a doctype or an `<html>`, `<head>` or `<body>`
/// tag near the start).
fn has_html_markers(head: &[u8]) -> bool {
    let start = &head[..head.len().min(HTML_SNIFF_BYTES)];
    let start = String::from_utf8_lossy(start).to_ascii_lowercase();
    let trimmed = start.trim_start_matches('\u{feff}').trim_start();
    trimmed.starts_with("<!doctype html")
        || trimmed.starts_with("<html")
        || start.contains("<html>")
        || start.contains("<html ")
        || start.contains("<head>")
        || start.contains("<body")
}

/// A filename safe to store and show: no directories (`/` or `\`), no control characters, no
/// leading dots or `..`, trimmed, at most `MAX_FILENAME_BYTES` bytes (shortened before its
/// extension, on a character boundary); `"upload"` when nothing is left.
pub fn sanitize_filename(raw: &str) -> String {
    let base = raw.rsplit(['/', '\\']).next().unwrap_or(raw);
    let mut name: String = base.chars().filter(|c| !c.is_control()).collect();
    while name.contains("..") {
        name = name.replace("..", ".");
    }
    let name = name
        .trim()
        .trim_start_matches('.')
        .trim_start()
        .trim_end_matches(|c: char| c == '.' || c.is_whitespace());
    let name = shorten(name, MAX_FILENAME_BYTES);
    if name.is_empty() {
        FALLBACK_FILENAME.to_string()
    } else {
        name
    }
}

/// Cuts a name to `max_bytes`, keeping a short extension whole.
fn shorten(name: &str, max_bytes: usize) -> String {
    if name.len() <= max_bytes {
        return name.to_string();
    }
    let (stem, extension) = match name.rfind('.') {
        Some(dot) if dot > 0 && name.len() - dot <= MAX_KEPT_EXTENSION_BYTES + 1 => {
            name.split_at(dot)
        }
        _ => (name, ""),
    };
    let keep = floor_char_boundary(stem, max_bytes - extension.len());
    let stem = stem[..keep].trim_end();
    format!("{stem}{extension}")
}

/// The largest character boundary of `s` at or before `index`.
fn floor_char_boundary(s: &str, index: usize) -> usize {
    if index >= s.len() {
        return s.len();
    }
    (0..=index)
        .rev()
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(0)
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
    let text = match kind {
        DocKind::Binary => None,
        DocKind::Pdf => Some(pdf_to_text(bytes, deadline).map_err(|err| {
            ExtractError::Pdf(
                err.to_string()
                    .trim_start_matches("could not read the PDF: ")
                    .to_string(),
            )
        })?),
        DocKind::Html => {
            cut_short = bytes.len() > MAX_HTML_BYTES;
            Some(html_text(
                &bytes[..bytes.len().min(MAX_HTML_BYTES)],
                deadline,
            )?)
        }
        DocKind::Text | DocKind::Code => {
            // A character takes at most 4 bytes in UTF-8 and UTF-16, so this prefix holds more
            // than `max_chars` characters whenever the file does: huge files are not decoded
            // whole only to be cut.
            let limit = max_chars.saturating_mul(4).saturating_add(8);
            Some(decode(&bytes[..bytes.len().min(limit)], None))
        }
    };
    let Some(mut text) = text.filter(|t| !t.trim().is_empty()) else {
        return Ok(Extraction {
            text: None,
            truncated: false,
            char_count: 0,
        });
    };
    let (truncated, char_count) = match text.char_indices().nth(max_chars) {
        Some((cut, _)) => {
            text.truncate(cut);
            (true, max_chars)
        }
        None => (cut_short, text.chars().count()),
    };
    Ok(Extraction {
        text: Some(text),
        truncated,
        char_count,
    })
}

/// The visible text of an HTML file (a byte order mark, else UTF-8).
fn html_text(bytes: &[u8], deadline: &Deadline) -> Result<String, ExtractError> {
    // Links are resolved against it and then ignored.
    let base =
        Url::parse("http://localhost/").map_err(|err| ExtractError::Html(err.to_string()))?;
    html_to_text(&decode(bytes, None), &base, deadline)
        .map(|(text, _)| text)
        .map_err(|err| ExtractError::Html(err.to_string()))
}

#[cfg(test)]
mod tests {
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
        let pdf = include_bytes!("../../tests/fixtures/fetch/report.pdf");
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
}
