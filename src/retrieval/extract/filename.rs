//! A filename safe to store and show: no directories, control characters or leading dots, at
//! most `MAX_FILENAME_BYTES` bytes (shortened before a short extension, on a character
//! boundary), `FALLBACK_FILENAME` when nothing is left.

/// Longest stored filename in bytes: what common file systems allow for one path component.
pub const MAX_FILENAME_BYTES: usize = 255;
/// The name given to an upload whose filename sanitises to nothing.
pub const FALLBACK_FILENAME: &str = "upload";
/// Longest extension kept whole when a long filename is shortened; longer "extensions" are
/// just part of the name.
const MAX_KEPT_EXTENSION_BYTES: usize = 16;

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
