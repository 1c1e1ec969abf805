//! What kind of file an upload is, and its content type: magic numbers first (a PDF is a PDF, an
//! executable, image or archive is binary whatever its name), then, for text bytes, the extension
//! (the supported types, docs/spec.md#file-types; code files), HTML markers, and whole code file
//! names.

use super::DocKind;

/// How much of a file's start `sniff` is given: enough for every magic number and for the
/// text check to be fair.
pub const SNIFF_BYTES: usize = 8192;
/// How far into a file its HTML markers are looked for.
const HTML_SNIFF_BYTES: usize = 1024;

/// The text extensions the workspace supports (docs/spec.md#file-types) and their close
/// relatives, with their content types.
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
/// classed by the extension (docs/spec.md#file-types); text with no extension at all (`README`)
/// is `Text`, text with an unknown extension is `Binary` (stored, not searchable, as the spec
/// says of other extensions).
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
