//! Base64 images out of tool results: `data:image/...;base64,` URIs anywhere in a string, and
//! strings that are raw base64 of a PNG, JPEG, GIF or WEBP file, replaced by a placeholder.

use serde_json::Value;

/// The shortest string treated as a raw (prefix-less) base64 image. 100 base64 characters are
/// 75 bytes, below any real image file, yet long enough that a short token or identifier which
/// happens to start like an image signature (e.g. "/9j/") is left alone.
pub const MIN_RAW_IMAGE_BASE64_CHARS: usize = 100;

/// Base64 signatures of the image formats models are sent, with their MIME types: the base64
/// of the PNG, JPEG, GIF and RIFF (WEBP container) magic bytes. RIFF is confirmed as WEBP by
/// [`is_webp`], as RIFF also holds audio and video.
const RAW_IMAGE_SIGNATURES: [(&str, &str); 4] = [
    ("iVBORw0KGgo", "image/png"),
    ("/9j/", "image/jpeg"),
    ("R0lGOD", "image/gif"),
    ("UklGR", "image/webp"),
];

/// Replaces base64 image payloads anywhere in a JSON value with the placeholder
/// `"[image omitted: {mime or 'image'}, {n} bytes of base64]"`, where `n` is the length of the
/// base64 text. Returns the number of replacements.
///
/// - A `data:image/...;base64,...` URI is replaced wherever it appears in a string: as the
///   whole string, or embedded in longer text (e.g. markdown `![x](data:image/png;base64,...)`),
///   the text around it being kept. Its payload runs over the standard and URL-safe base64
///   alphabets; a URI with an empty payload is left alone.
/// - A string that is raw base64 of an image is replaced whole: at least
///   [`MIN_RAW_IMAGE_BASE64_CHARS`] long, only base64 characters (`=` only as trailing padding),
///   starting with the base64 signature of PNG, JPEG, GIF or WEBP (a RIFF file that is not
///   WEBP, e.g. WAV audio, is left alone).
///
/// Object keys are never changed. The walk is iterative, so depth is unbounded.
pub fn strip_base64_images(value: &mut Value) -> usize {
    let mut replaced = 0;
    let mut pending: Vec<&mut Value> = vec![value];
    while let Some(current) = pending.pop() {
        match current {
            Value::Array(items) => pending.extend(items.iter_mut()),
            Value::Object(map) => pending.extend(map.values_mut()),
            Value::String(text) => {
                if let Some(mime) = raw_image_mime(text) {
                    *text = image_placeholder(mime, text.len());
                    replaced += 1;
                } else if let Some((stripped, count)) = replace_data_uris(text) {
                    *text = stripped;
                    replaced += count;
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
    replaced
}

/// The placeholder that stands in for an image's base64.
fn image_placeholder(mime: &str, base64_len: usize) -> String {
    format!("[image omitted: {mime}, {base64_len} bytes of base64]")
}

/// The image MIME type if the whole of `text` is raw base64 of a PNG, JPEG, GIF or WEBP file.
fn raw_image_mime(text: &str) -> Option<&'static str> {
    if text.len() < MIN_RAW_IMAGE_BASE64_CHARS {
        return None;
    }
    let (_, mime) = RAW_IMAGE_SIGNATURES
        .iter()
        .find(|(signature, _)| text.starts_with(signature))?;
    if *mime == "image/webp" && !is_webp(text) {
        return None;
    }
    let body = text.trim_end_matches('=');
    let padding = text.len() - body.len();
    let all_base64 = body
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/');
    (padding <= 2 && all_base64).then_some(*mime)
}

/// Whether base64 starting with the RIFF signature holds a WEBP file: bytes 8..12 are "WEBP",
/// which in base64 puts 'X' at index 11 (the low bits of 'W') and "RUJQ" ("EBP") at 12..16.
fn is_webp(text: &str) -> bool {
    text.as_bytes().get(11) == Some(&b'X') && text.get(12..16) == Some("RUJQ")
}

/// `text` with every `data:image/...;base64,...` URI replaced by its placeholder, and how many
/// were replaced; `None` when there were none.
fn replace_data_uris(text: &str) -> Option<(String, usize)> {
    /// Where every data URI starts (matched ignoring ASCII case, as URI schemes are).
    const SCHEME: &[u8] = b"data:";
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut copied = 0; // bytes of `text` already handled
    let mut replaced = 0;
    let mut i = 0;
    while i + SCHEME.len() <= bytes.len() {
        if !bytes[i..i + SCHEME.len()].eq_ignore_ascii_case(SCHEME) {
            i += 1;
            continue;
        }
        match parse_image_data_uri(bytes, i + SCHEME.len()) {
            Some(uri) => {
                // `i` and `uri.end` sit next to ASCII bytes, so both are char boundaries.
                out.push_str(&text[copied..i]);
                out.push_str(&image_placeholder(&uri.mime, uri.payload_len));
                copied = uri.end;
                replaced += 1;
                i = uri.end;
            }
            None => i += SCHEME.len(),
        }
    }
    if replaced == 0 {
        return None;
    }
    out.push_str(&text[copied..]);
    Some((out, replaced))
}

/// An image data URI found by [`parse_image_data_uri`].
struct ImageDataUri {
    /// The MIME type, lowercased ("image" when the URI names no subtype).
    mime: String,
    /// Length of the base64 payload.
    payload_len: usize,
    /// Byte index just past the payload.
    end: usize,
}

/// Parses the rest of a data URI whose "data:" ends at `start`: an `image` MIME type, optional
/// parameters, `;base64` as the last parameter, a comma, and a non-empty base64 payload.
fn parse_image_data_uri(bytes: &[u8], start: usize) -> Option<ImageDataUri> {
    let take_while = |from: usize, keep: fn(u8) -> bool| {
        from + bytes[from..].iter().take_while(|b| keep(**b)).count()
    };
    let mime_end = take_while(start, |b| {
        b.is_ascii_alphanumeric() || matches!(b, b'/' | b'+' | b'-' | b'.' | b'_')
    });
    let mime = &bytes[start..mime_end];
    let is_image = mime.len() >= 5
        && mime[..5].eq_ignore_ascii_case(b"image")
        && (mime.len() == 5 || (mime[5] == b'/' && mime.len() > 6));
    if !is_image {
        return None;
    }
    let mut i = mime_end;
    let mut is_base64 = false;
    while bytes.get(i) == Some(&b';') {
        let param_end = take_while(i + 1, |b| {
            b.is_ascii_alphanumeric() || matches!(b, b'=' | b'-' | b'.' | b'_' | b'+' | b'%')
        });
        is_base64 = bytes[i + 1..param_end].eq_ignore_ascii_case(b"base64");
        i = param_end;
    }
    if !is_base64 || bytes.get(i) != Some(&b',') {
        return None;
    }
    let payload_start = i + 1;
    let end = take_while(payload_start, |b| {
        b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'-' | b'_')
    });
    if end == payload_start {
        return None;
    }
    Some(ImageDataUri {
        // The MIME bytes are ASCII by construction.
        mime: String::from_utf8_lossy(mime).to_ascii_lowercase(),
        payload_len: end - payload_start,
        end,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::{CallKey, PREVIEW_MAX_CHARS, canonical_json, result_preview};
    use super::*;

    /// Fake base64 of an image: the format's signature padded with valid base64 characters.
    fn fake_base64(signature: &str, len: usize) -> String {
        let mut text = signature.to_owned();
        while text.len() < len {
            text.push('A');
        }
        text
    }

    /// Drops a value without recursion: serde_json's own drop recurses once per level.
    fn drop_iteratively(value: Value) {
        let mut pending = vec![value];
        while let Some(current) = pending.pop() {
            match current {
                Value::Array(items) => pending.extend(items),
                Value::Object(map) => pending.extend(map.into_iter().map(|(_, v)| v)),
                _ => {}
            }
        }
    }

    #[test]
    fn a_data_uri_string_is_replaced_by_a_placeholder() {
        let payload = fake_base64("iVBORw0KGgo", 40);
        let mut value = json!({"image": format!("data:image/png;base64,{payload}")});
        assert_eq!(strip_base64_images(&mut value), 1);
        assert_eq!(
            value,
            json!({"image": "[image omitted: image/png, 40 bytes of base64]"})
        );
    }

    #[test]
    fn data_uri_parameters_and_case_are_accepted() {
        let mut value = json!("DATA:Image/JPEG;name=photo.jpg;BASE64,/9j/4AAQ==");
        assert_eq!(strip_base64_images(&mut value), 1);
        assert_eq!(
            value,
            json!("[image omitted: image/jpeg, 10 bytes of base64]")
        );
        let mut no_subtype = json!("data:image;base64,AAAA");
        assert_eq!(strip_base64_images(&mut no_subtype), 1);
        assert_eq!(
            no_subtype,
            json!("[image omitted: image, 4 bytes of base64]")
        );
    }

    #[test]
    fn raw_png_base64_is_replaced() {
        let mut value = json!({"type": "image", "data": fake_base64("iVBORw0KGgo", 200)});
        assert_eq!(strip_base64_images(&mut value), 1);
        assert_eq!(
            value,
            json!({"type": "image", "data": "[image omitted: image/png, 200 bytes of base64]"})
        );
    }

    #[test]
    fn raw_jpeg_gif_and_webp_base64_are_replaced_with_their_types() {
        let mut value = json!([
            fake_base64("/9j/4AAQSkZJRg", 120),
            format!("{}==", fake_base64("R0lGODlh", 150)),
            fake_base64("UklGRgAAAABXRUJQVlA4IA", 100),
        ]);
        assert_eq!(strip_base64_images(&mut value), 3);
        assert_eq!(
            value,
            json!([
                "[image omitted: image/jpeg, 120 bytes of base64]",
                "[image omitted: image/gif, 152 bytes of base64]",
                "[image omitted: image/webp, 100 bytes of base64]",
            ])
        );
    }

    #[test]
    fn an_embedded_markdown_data_uri_is_replaced_and_the_text_kept() {
        let payload = fake_base64("iVBORw0KGgo", 64);
        let mut value = json!(format!(
            "Here: ![chart](data:image/png;base64,{payload}) and ![b](data:image/gif;base64,R0lGODlhAQ==) done é"
        ));
        assert_eq!(strip_base64_images(&mut value), 2);
        assert_eq!(
            value,
            json!(
                "Here: ![chart]([image omitted: image/png, 64 bytes of base64]) and ![b]([image omitted: image/gif, 12 bytes of base64]) done é"
            )
        );
    }

    #[test]
    fn ordinary_text_and_short_strings_are_untouched() {
        let original = json!({
            "text": "An ordinary sentence about data: images, base64 and PNG files.",
            "short_png": "iVBORw0KGgoAAAANSUhEUg",
            "prose_with_signature": format!("/9j/ is how JPEG base64 starts {}", "x ".repeat(60)),
            "padding_in_the_middle": format!("{}=={}", fake_base64("iVBORw0KGgo", 100), "AAAA"),
            "riff_audio": fake_base64("UklGRhI0VnhXQVZFZm10IA", 200),
            "long_plain_base64": fake_base64("QUJD", 300),
            "uri_without_payload": "Use data:image/png;base64, followed by the bytes.",
            "not_base64_uri": "data:image/png,rawbytes",
            "not_an_image_uri": "data:text/plain;base64,SGVsbG8=",
            "numbers": [1, 2.5, true, null],
        });
        let mut value = original.clone();
        assert_eq!(strip_base64_images(&mut value), 0);
        assert_eq!(value, original);
    }

    #[test]
    fn nested_arrays_and_objects_are_handled_and_keys_kept() {
        let png = fake_base64("iVBORw0KGgo", 100);
        let data_uri = format!("data:image/png;base64,{png}");
        let mut value = json!({
            "content": [
                {"type": "text", "text": "caption"},
                {"type": "image", "source": {"data": png.clone(), "alt": [data_uri.clone()]}},
            ],
            png.clone(): "the key is not a value",
            "deeper": [[[[{"x": data_uri}]]]],
        });
        assert_eq!(strip_base64_images(&mut value), 3);
        let placeholder = "[image omitted: image/png, 100 bytes of base64]";
        assert_eq!(
            value,
            json!({
                "content": [
                    {"type": "text", "text": "caption"},
                    {"type": "image", "source": {"data": placeholder, "alt": [placeholder]}},
                ],
                png: "the key is not a value",
                "deeper": [[[[{"x": placeholder}]]]],
            })
        );
    }

    #[test]
    fn a_ten_thousand_level_nested_value_does_not_overflow_the_stack() {
        /// The depth the brief asks for: far past serde_json's own parser limit of 128.
        const DEPTH: usize = 10_000;
        let mut value = json!("data:image/png;base64,iVBORw0KGgo=");
        for level in 0..DEPTH {
            value = if level % 2 == 0 {
                Value::Array(vec![value])
            } else {
                // Not `json!`: it would copy `value` by serialising it, recursively.
                let mut map = serde_json::Map::new();
                map.insert("k".to_owned(), value);
                Value::Object(map)
            };
        }
        assert_eq!(strip_base64_images(&mut value), 1);

        // The other walks over JSON are iterative too.
        let text = canonical_json(&value);
        assert!(text.contains("[image omitted: image/png, 12 bytes of base64]"));
        assert_eq!(text.matches('[').count(), DEPTH / 2 + 1);
        let _ = CallKey::new("deep", &value);
        let preview = result_preview(&value);
        assert!(preview.ends_with('…'));
        assert_eq!(preview.chars().count(), PREVIEW_MAX_CHARS + 1);

        // Find the innermost string without recursion.
        let mut innermost = &value;
        loop {
            innermost = match innermost {
                Value::Array(items) => &items[0],
                Value::Object(map) => &map["k"],
                _ => break,
            };
        }
        assert_eq!(
            innermost,
            &json!("[image omitted: image/png, 12 bytes of base64]")
        );
        drop_iteratively(value);
    }
}
