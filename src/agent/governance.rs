//! Rules that govern the agentic tool loop: call identity and loop detection, truncation of
//! long tool results, replacement of base64 images in results, and the UI's result preview.
//! Everything here is pure (no I/O, no clock), and every walk over JSON is iterative, so a
//! pathologically deep value cannot overflow the stack.

use std::collections::VecDeque;

use serde_json::Value;

/// How many of the most recent calls loop detection remembers. Spec: "loop detection over the
/// last 10 calls": long enough to catch a model cycling through two or three calls, short
/// enough that a legitimate repeat much later in a long run is allowed again.
pub const LOOP_WINDOW: usize = 10;

/// How many times the same call may run within [`LOOP_WINDOW`]. Spec: "the same call allowed at
/// most twice": one identical retry (e.g. after a transient failure) is legitimate, a third is a
/// loop.
pub const MAX_REPEATS: usize = 2;

/// The longest tool result, in characters, handed to the model. Spec: "tool results over
/// 10,000 characters truncated": about 2,500 tokens, room for a useful page excerpt without
/// one result crowding the rest of the conversation out of the context window.
pub const MAX_RESULT_CHARS: usize = 10_000;

/// The shortest string treated as a raw (prefix-less) base64 image. 100 base64 characters are
/// 75 bytes, below any real image file, yet long enough that a short token or identifier which
/// happens to start like an image signature (e.g. "/9j/") is left alone.
pub const MIN_RAW_IMAGE_BASE64_CHARS: usize = 100;

/// The longest preview [`result_preview`] makes (before its "…"): one line of the UI's
/// tool-call card.
pub const PREVIEW_MAX_CHARS: usize = 120;

/// Base64 signatures of the image formats models are sent, with their MIME types: the base64
/// of the PNG, JPEG, GIF and RIFF (WEBP container) magic bytes. RIFF is confirmed as WEBP by
/// [`is_webp`], as RIFF also holds audio and video.
const RAW_IMAGE_SIGNATURES: [(&str, &str); 4] = [
    ("iVBORw0KGgo", "image/png"),
    ("/9j/", "image/jpeg"),
    ("R0lGOD", "image/gif"),
    ("UklGR", "image/webp"),
];

/// Canonical JSON text of a value: object keys sorted recursively (by their UTF-8 bytes), no
/// insignificant whitespace, numbers as written (so `1` and `1.0` stay different). Two argument
/// objects that differ only in key order or spacing give the same text; arrays keep their
/// order. This is `serde_json`'s compact text: its objects are sorted maps (the crate's
/// `preserve_order` feature is off, which the test of sorted keys below holds), and values parsed
/// by it are at most 128 levels deep.
pub fn canonical_json(value: &Value) -> String {
    value.to_string()
}

/// The identity of a tool call for caching and loop detection: name + canonical arguments.
///
/// The text is the canonical JSON of the pair `[name, arguments]`, e.g.
/// `["web_search",{"query":"rust"}]`: readable in logs, and two different calls can never share
/// a key, whatever characters the name holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CallKey(String);

impl CallKey {
    /// The key of a call to `tool_name` with `arguments`.
    pub fn new(tool_name: &str, arguments: &Value) -> Self {
        Self(format!(
            "[{},{}]",
            Value::from(tool_name),
            canonical_json(arguments)
        ))
    }

    /// The key's text (see the type's documentation for its shape).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Remembers the last `window` calls of a run; a call seen `max_repeats` times already in the
/// window is refused.
///
/// A `window` of 0 remembers nothing (every call is allowed unless `max_repeats` is 0); a
/// `max_repeats` of 0 refuses every call.
#[derive(Debug, Clone)]
pub struct LoopDetector {
    /// The most recent calls, oldest first; never longer than `window`.
    recent: VecDeque<CallKey>,
    /// How many calls `recent` holds at most.
    window: usize,
    /// How many times a call may already be in `recent` for it to be refused.
    max_repeats: usize,
}

impl LoopDetector {
    /// A detector over the last `window` calls that allows each call `max_repeats` times.
    pub fn new(window: usize, max_repeats: usize) -> Self {
        Self {
            recent: VecDeque::with_capacity(window),
            window,
            max_repeats,
        }
    }

    /// Records the call and says whether it may run. A refused call is still recorded (so the
    /// window moves on). Returns Ok(()) or Err(times_seen_before), counted within the window.
    pub fn check(&mut self, key: &CallKey) -> Result<(), usize> {
        let seen = self.recent.iter().filter(|k| *k == key).count();
        if self.window > 0 {
            if self.recent.len() == self.window {
                self.recent.pop_front();
            }
            self.recent.push_back(key.clone());
        }
        if seen >= self.max_repeats {
            Err(seen)
        } else {
            Ok(())
        }
    }
}

impl Default for LoopDetector {
    /// The spec's detector: [`LOOP_WINDOW`] calls, each allowed [`MAX_REPEATS`] times.
    fn default() -> Self {
        Self::new(LOOP_WINDOW, MAX_REPEATS)
    }
}

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

/// Truncates a tool result (already serialised for the model) to its first `max_chars`
/// characters (Unicode scalar values, never splitting a char), appending the marker
/// `"\n[truncated: {total} characters, showing the first {max_chars}]"`. Returns
/// (text, was_truncated).
///
/// The marker is added after the kept `max_chars` characters, so a truncated text is longer
/// than `max_chars` by the marker's length (about 60 characters); `max_chars` counts the
/// result's own content, which the marker's wording then states exactly. A text of at most
/// `max_chars` characters is returned unchanged.
pub fn truncate_result(text: &str, max_chars: usize) -> (String, bool) {
    let Some(cut) = char_boundary_after(text, max_chars) else {
        return (text.to_owned(), false);
    };
    let total = max_chars + text[cut..].chars().count();
    let mut out = String::with_capacity(cut + 64);
    out.push_str(&text[..cut]);
    out.push_str(&format!(
        "\n[truncated: {total} characters, showing the first {max_chars}]"
    ));
    (out, true)
}

/// A short human preview of a tool result for the UI's `resultPreview`.
///
/// - An object with an array field `results`, `pages`, `memories` or `items` (checked in that
///   order) → "Found N results" / "Fetched N pages" / "Recalled N memories" / "Found N items"
///   (singular noun when N is 1).
/// - Otherwise, an object whose `result` is a number or string → "Result: {result}".
/// - Otherwise, an object with a non-null `error` → "Error: {error}" (a string as is, anything
///   else as compact JSON).
/// - Otherwise the value's compact JSON.
///
/// Line breaks and tabs become spaces, and text longer than [`PREVIEW_MAX_CHARS`] is cut to
/// that many characters followed by "…".
pub fn result_preview(value: &Value) -> String {
    /// The counted array fields: (field, verb, singular noun, plural noun).
    const COUNTED: [(&str, &str, &str, &str); 4] = [
        ("results", "Found", "result", "results"),
        ("pages", "Fetched", "page", "pages"),
        ("memories", "Recalled", "memory", "memories"),
        ("items", "Found", "item", "items"),
    ];
    if let Value::Object(map) = value {
        for (field, verb, singular, plural) in COUNTED {
            if let Some(Value::Array(items)) = map.get(field) {
                let n = items.len();
                let noun = if n == 1 { singular } else { plural };
                return format!("{verb} {n} {noun}");
            }
        }
        match map.get("result") {
            Some(Value::Number(n)) => return preview_line("Result: ", &n.to_string()),
            Some(Value::String(s)) => return preview_line("Result: ", s),
            _ => {}
        }
        match map.get("error") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => return preview_line("Error: ", s),
            Some(other) => {
                let (json, _) = write_compact(other, PREVIEW_MAX_CHARS + 1);
                return preview_line("Error: ", &json);
            }
        }
    }
    let (json, _) = write_compact(value, PREVIEW_MAX_CHARS + 1);
    preview_line("", &json)
}

/// `prefix` + `text` on one line, cut to [`PREVIEW_MAX_CHARS`] characters with "…" when longer.
fn preview_line(prefix: &str, text: &str) -> String {
    let mut line = String::with_capacity(prefix.len() + text.len().min(4 * PREVIEW_MAX_CHARS));
    for (count, c) in prefix.chars().chain(text.chars()).enumerate() {
        if count == PREVIEW_MAX_CHARS {
            line.push('…');
            return line;
        }
        line.push(if matches!(c, '\n' | '\r' | '\t') {
            ' '
        } else {
            c
        });
    }
    line
}

/// The byte index where `text`'s character number `n` (0-based) starts, or `None` when `text`
/// has at most `n` characters (nothing to cut).
fn char_boundary_after(text: &str, n: usize) -> Option<usize> {
    if text.len() <= n {
        // At most `len` bytes means at most `len` characters.
        return None;
    }
    text.char_indices().nth(n).map(|(index, _)| index)
}

/// One step of [`write_compact`]'s iterative walk.
enum Step<'a> {
    /// Write this value (pushing its children as further steps).
    Value(&'a Value),
    /// Write an object key.
    Key(&'a str),
    /// Write punctuation.
    Raw(&'static str),
}

/// Compact JSON of `value` for a preview: stops once more than `max_chars` characters are
/// written and cuts there; the flag says whether it did. Iterative and bounded, so a huge or
/// deep value costs no more than its preview.
fn write_compact(value: &Value, max_chars: usize) -> (String, bool) {
    // More than 4 bytes per allowed character guarantees more than `max_chars` characters.
    let byte_budget = max_chars.saturating_mul(4);
    let mut out = String::new();
    let mut steps = vec![Step::Value(value)];
    while let Some(step) = steps.pop() {
        if out.len() > byte_budget {
            break;
        }
        match step {
            Step::Raw(text) => out.push_str(text),
            Step::Key(key) => push_json_string(&mut out, key),
            Step::Value(Value::Null) => out.push_str("null"),
            Step::Value(Value::Bool(b)) => out.push_str(if *b { "true" } else { "false" }),
            Step::Value(Value::Number(n)) => out.push_str(&n.to_string()),
            Step::Value(Value::String(s)) => push_json_string(&mut out, s),
            Step::Value(Value::Array(items)) => {
                out.push('[');
                steps.push(Step::Raw("]"));
                for (i, item) in items.iter().enumerate().rev() {
                    steps.push(Step::Value(item));
                    if i > 0 {
                        steps.push(Step::Raw(","));
                    }
                }
            }
            Step::Value(Value::Object(map)) => {
                out.push('{');
                steps.push(Step::Raw("}"));
                let entries: Vec<(&String, &Value)> = map.iter().collect();
                for (i, (key, item)) in entries.into_iter().enumerate().rev() {
                    steps.push(Step::Value(item));
                    steps.push(Step::Raw(":"));
                    steps.push(Step::Key(key));
                    if i > 0 {
                        steps.push(Step::Raw(","));
                    }
                }
            }
        }
    }
    match char_boundary_after(&out, max_chars) {
        Some(cut) => {
            out.truncate(cut);
            (out, true)
        }
        None => (out, false),
    }
}

/// Appends `text` as a JSON string literal, escaped by `serde_json`.
fn push_json_string(out: &mut String, text: &str) {
    out.push_str(&Value::from(text).to_string());
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

    use super::*;

    fn parse(text: &str) -> Value {
        serde_json::from_str(text).expect("test JSON parses")
    }

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

    // canonical_json and CallKey

    #[test]
    fn canonical_json_sorts_keys_recursively_and_ignores_whitespace() {
        let a = parse(r#"{"b": 1, "a": {"y": [1, {"q": 2, "p": 3}], "x": null}}"#);
        let b = parse(r#"{"a":{"x":null,"y":[1,{"p":3,"q":2}]},"b":1}"#);
        assert_eq!(canonical_json(&a), canonical_json(&b));
        assert_eq!(
            canonical_json(&a),
            r#"{"a":{"x":null,"y":[1,{"p":3,"q":2}]},"b":1}"#
        );
    }

    #[test]
    fn canonical_json_keeps_array_order() {
        assert_ne!(
            canonical_json(&json!([1, 2, 3])),
            canonical_json(&json!([3, 2, 1]))
        );
        assert_eq!(canonical_json(&json!(["b", "a"])), r#"["b","a"]"#);
    }

    #[test]
    fn canonical_json_writes_scalars_and_escapes_like_serde_json() {
        let value = json!({
            "a": "quote \" backslash \\ newline \n tab \t bell \u{07} del \u{7f} é 😀 /",
            "b": [true, false, null, -1, 1.5, 1e300, 18446744073709551615u64],
            "c": {},
            "d": [],
            "e": ""
        });
        // Keys are given in sorted order, so serde_json's own output is canonical too.
        let expected = serde_json::to_string(&value).expect("serialises");
        assert_eq!(canonical_json(&value), expected);
    }

    #[test]
    fn call_keys_ignore_argument_key_order_and_spacing() {
        let a = CallKey::new(
            "web_search",
            &parse(r#"{"query": "rust", "opts": {"n": 5, "lang": "en"}}"#),
        );
        let b = CallKey::new(
            "web_search",
            &parse(r#"{"opts":{"lang":"en","n":5},"query":"rust"}"#),
        );
        assert_eq!(a, b);
        assert_eq!(
            a.as_str(),
            r#"["web_search",{"opts":{"lang":"en","n":5},"query":"rust"}]"#
        );
    }

    #[test]
    fn call_keys_differ_by_name_argument_values_and_array_order() {
        let args = json!({"q": [1, 2]});
        let key = CallKey::new("search", &args);
        assert_ne!(key, CallKey::new("fetch", &args));
        assert_ne!(key, CallKey::new("search", &json!({"q": [2, 1]})));
        assert_ne!(key, CallKey::new("search", &json!({"q": [1, 2, 3]})));
        assert_ne!(key, CallKey::new("search", &json!({"q": "[1,2]"})));
    }

    // LoopDetector

    #[test]
    fn the_same_call_is_allowed_twice_and_the_third_is_refused() {
        let mut detector = LoopDetector::new(10, 2);
        let key = CallKey::new("search", &json!({"q": "rust"}));
        assert_eq!(detector.check(&key), Ok(()));
        assert_eq!(detector.check(&key), Ok(()));
        assert_eq!(detector.check(&key), Err(2));
        assert_eq!(detector.check(&key), Err(3));
    }

    #[test]
    fn the_same_call_with_reordered_arguments_counts_as_a_repeat() {
        let mut detector = LoopDetector::default();
        for _ in 0..MAX_REPEATS {
            assert_eq!(
                detector.check(&CallKey::new("s", &json!({"a": 1, "b": 2}))),
                Ok(())
            );
        }
        let reordered = CallKey::new("s", &parse(r#"{ "b": 2, "a": 1 }"#));
        assert_eq!(detector.check(&reordered), Err(MAX_REPEATS));
    }

    #[test]
    fn calls_with_different_arguments_are_different_calls() {
        let mut detector = LoopDetector::new(10, 2);
        for i in 0..10 {
            let key = CallKey::new("search", &json!({"q": i}));
            assert_eq!(detector.check(&key), Ok(()));
            assert_eq!(detector.check(&key), Ok(()));
        }
    }

    #[test]
    fn a_call_that_fell_out_of_the_window_is_allowed_again() {
        let mut detector = LoopDetector::new(10, 2);
        let repeated = CallKey::new("search", &json!({"q": "rust"}));
        assert_eq!(detector.check(&repeated), Ok(()));
        assert_eq!(detector.check(&repeated), Ok(()));
        // Eight other calls: both earlier calls are still among the last ten.
        for i in 0..8 {
            assert_eq!(detector.check(&CallKey::new("fetch", &json!(i))), Ok(()));
        }
        // Refused, and recorded: the window is now repeated, fetch 0..8, repeated.
        assert_eq!(detector.check(&repeated), Err(2));
        // One more call pushes the oldest `repeated` out, leaving one in the window.
        assert_eq!(detector.check(&CallKey::new("fetch", &json!(8))), Ok(()));
        assert_eq!(detector.check(&repeated), Ok(()));
        assert_eq!(detector.check(&repeated), Err(2));
    }

    #[test]
    fn a_call_outside_a_window_of_ten_is_forgotten_entirely() {
        let mut detector = LoopDetector::default();
        let repeated = CallKey::new("search", &json!({}));
        assert_eq!(detector.check(&repeated), Ok(()));
        assert_eq!(detector.check(&repeated), Ok(()));
        for i in 0..LOOP_WINDOW {
            assert_eq!(detector.check(&CallKey::new("other", &json!(i))), Ok(()));
        }
        assert_eq!(detector.check(&repeated), Ok(()));
        assert_eq!(detector.check(&repeated), Ok(()));
        assert_eq!(detector.check(&repeated), Err(2));
    }

    #[test]
    fn degenerate_limits_behave_as_documented() {
        let key = CallKey::new("t", &json!(null));
        let mut no_memory = LoopDetector::new(0, 1);
        for _ in 0..5 {
            assert_eq!(no_memory.check(&key), Ok(()));
        }
        let mut refuse_all = LoopDetector::new(10, 0);
        assert_eq!(refuse_all.check(&key), Err(0));
    }

    // strip_base64_images

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

    // truncate_result

    #[test]
    fn short_text_is_returned_untouched() {
        assert_eq!(truncate_result("hello", 10), ("hello".to_owned(), false));
        assert_eq!(truncate_result("", 0), (String::new(), false));
        // Exactly at the limit, counted in characters, not bytes.
        let exact = "é".repeat(10);
        assert_eq!(truncate_result(&exact, 10), (exact.clone(), false));
    }

    #[test]
    fn long_text_is_cut_at_a_char_boundary_and_the_marker_states_the_total() {
        let text = format!("{}{}", "é😀".repeat(6), "abc");
        // 15 characters; keep 7: "é😀é😀é😀é".
        let (out, truncated) = truncate_result(&text, 7);
        assert!(truncated);
        assert_eq!(
            out,
            "é😀é😀é😀é\n[truncated: 15 characters, showing the first 7]"
        );
    }

    #[test]
    fn a_truncated_result_is_longer_than_the_limit_by_exactly_the_marker() {
        let text = "x".repeat(MAX_RESULT_CHARS + 5_000);
        let (out, truncated) = truncate_result(&text, MAX_RESULT_CHARS);
        assert!(truncated);
        let marker = "\n[truncated: 15000 characters, showing the first 10000]";
        assert!(out.ends_with(marker));
        assert_eq!(
            out.chars().count(),
            MAX_RESULT_CHARS + marker.chars().count()
        );
        assert_eq!(&out[..MAX_RESULT_CHARS], &text[..MAX_RESULT_CHARS]);
    }

    #[test]
    fn a_zero_limit_keeps_only_the_marker() {
        let (out, truncated) = truncate_result("abc", 0);
        assert!(truncated);
        assert_eq!(out, "\n[truncated: 3 characters, showing the first 0]");
    }

    // result_preview

    #[test]
    fn counted_arrays_are_previewed_as_counts() {
        assert_eq!(
            result_preview(&json!({"results": [1, 2, 3, 4, 5]})),
            "Found 5 results"
        );
        assert_eq!(result_preview(&json!({"results": [1]})), "Found 1 result");
        assert_eq!(
            result_preview(&json!({"pages": [{}, {}]})),
            "Fetched 2 pages"
        );
        assert_eq!(result_preview(&json!({"pages": [{}]})), "Fetched 1 page");
        assert_eq!(
            result_preview(&json!({"memories": []})),
            "Recalled 0 memories"
        );
        assert_eq!(
            result_preview(&json!({"memories": ["m"]})),
            "Recalled 1 memory"
        );
        assert_eq!(result_preview(&json!({"items": [1, 2]})), "Found 2 items");
        assert_eq!(
            result_preview(&json!({"items": [1], "results": [1, 2], "result": 3})),
            "Found 2 results"
        );
    }

    #[test]
    fn a_non_array_counted_field_is_not_counted() {
        assert_eq!(
            result_preview(&json!({"results": "none", "result": 1})),
            "Result: 1"
        );
    }

    #[test]
    fn results_and_errors_are_previewed_as_text() {
        assert_eq!(result_preview(&json!({"result": 42})), "Result: 42");
        assert_eq!(result_preview(&json!({"result": 2.5})), "Result: 2.5");
        assert_eq!(
            result_preview(&json!({"expression": "6*7", "result": "42"})),
            "Result: 42"
        );
        assert_eq!(
            result_preview(&json!({"error": "division by zero"})),
            "Error: division by zero"
        );
        assert_eq!(
            result_preview(&json!({"error": {"code": 404}})),
            r#"Error: {"code":404}"#
        );
        assert_eq!(
            result_preview(&json!({"result": "line one\nline two"})),
            "Result: line one line two"
        );
    }

    #[test]
    fn a_null_error_or_non_scalar_result_falls_back_to_json() {
        assert_eq!(
            result_preview(&json!({"error": null, "ok": true})),
            r#"{"error":null,"ok":true}"#
        );
        assert_eq!(
            result_preview(&json!({"result": [1, 2]})),
            r#"{"result":[1,2]}"#
        );
    }

    #[test]
    fn other_values_are_previewed_as_compact_json_cut_at_120_characters() {
        assert_eq!(
            result_preview(&json!({"a": 1, "b": [true]})),
            r#"{"a":1,"b":[true]}"#
        );
        assert_eq!(result_preview(&json!("plain")), r#""plain""#);
        assert_eq!(result_preview(&json!(null)), "null");

        let long = json!({"text": "é".repeat(500)});
        let preview = result_preview(&long);
        assert!(preview.ends_with('…'));
        assert_eq!(preview.chars().count(), PREVIEW_MAX_CHARS + 1);
        assert!(preview.starts_with(r#"{"text":"éé"#));

        // Exactly 120 characters is not cut.
        let exact = json!("x".repeat(PREVIEW_MAX_CHARS - 2));
        assert_eq!(result_preview(&exact).chars().count(), PREVIEW_MAX_CHARS);
        assert!(!result_preview(&exact).ends_with('…'));
    }

    #[test]
    fn long_results_and_errors_are_cut_at_120_characters() {
        let preview = result_preview(&json!({"error": "e".repeat(300)}));
        assert!(preview.starts_with("Error: eee"));
        assert!(preview.ends_with('…'));
        assert_eq!(preview.chars().count(), PREVIEW_MAX_CHARS + 1);
    }
}
