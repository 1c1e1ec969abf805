//! Database values as JSON, the same whichever database gave them: numbers as numbers (a
//! float that JSON cannot hold, and a decimal too precise for a double, as text), text cut at
//! `MAX_VALUE_CHARS`, bytes as `\x`-prefixed hex (PostgreSQL's own spelling), dates and times
//! as ISO 8601 text. Each conversion says whether it cut the value. PostgreSQL's `NUMERIC` is
//! read from its binary form here (no decimal crate is needed for printing one).

use serde_json::{Number, Value};

use super::table::MAX_VALUE_CHARS;

/// A converted value, and whether it was cut to fit.
pub type Cell = (Value, bool);

/// Text, cut after `MAX_VALUE_CHARS` characters with a note of how many more there were.
pub fn text(text: &str) -> Cell {
    match text.char_indices().nth(MAX_VALUE_CHARS) {
        None => (Value::String(text.to_string()), false),
        Some((end, _)) => text_start(&text[..end], MAX_VALUE_CHARS + text[end..].chars().count()),
    }
}

/// Text of `total` characters of which `start` (at most `MAX_VALUE_CHARS`) is all that was
/// read (PostgreSQL cut the rest in the server), noted as `text` notes it.
pub fn text_start(start: &str, total: usize) -> Cell {
    match total.checked_sub(MAX_VALUE_CHARS).filter(|&more| more > 0) {
        None => (Value::String(start.to_string()), false),
        Some(more) => (
            Value::String(format!("{start}… [{more} more characters]")),
            true,
        ),
    }
}

/// Bytes as `\x0123…` hex, cut after `MAX_VALUE_CHARS / 2` bytes.
pub fn bytes(bytes: &[u8]) -> Cell {
    let kept = bytes.len().min(MAX_VALUE_CHARS / 2);
    bytes_start(&bytes[..kept], bytes.len())
}

/// Bytes of which `start` (at most `MAX_VALUE_CHARS / 2`) is all that was read, out of
/// `total`, noted as `bytes` notes it.
pub fn bytes_start(start: &[u8], total: usize) -> Cell {
    let kept = start.len().min(MAX_VALUE_CHARS / 2);
    let mut hex = String::with_capacity(2 + kept * 2);
    hex.push_str("\\x");
    for byte in &start[..kept] {
        hex.push_str(&format!("{byte:02x}"));
    }
    let cut = kept < total;
    if cut {
        hex.push_str(&format!("… [{} more bytes]", total - kept));
    }
    (Value::String(hex), cut)
}

/// A float: a JSON number, or `"NaN"`, `"Infinity"`, `"-Infinity"` as text.
pub fn float(value: f64) -> Cell {
    let json = match Number::from_f64(value) {
        Some(number) => Value::Number(number),
        None if value.is_nan() => Value::String("NaN".into()),
        None if value > 0.0 => Value::String("Infinity".into()),
        None => Value::String("-Infinity".into()),
    };
    (json, false)
}

/// Digits a double holds exactly: a decimal with more is given as text, so nothing is rounded.
const EXACT_DIGITS: usize = 15;

/// A decimal written out (`-12.50`): a JSON number when a double holds it exactly, else text.
pub fn decimal(written: &str) -> Cell {
    let digits = written
        .chars()
        .filter(char::is_ascii_digit)
        .skip_while(|&c| c == '0')
        .count();
    if digits <= EXACT_DIGITS
        && let Ok(parsed) = written.parse::<f64>()
        && let Some(number) = Number::from_f64(parsed)
    {
        return (Value::Number(number), false);
    }
    text(written)
}

/// A PostgreSQL `NUMERIC` in its binary form (digit count, weight, sign, display scale, then
/// base-10000 digits, all big-endian 16-bit), written out in decimal; `None` if malformed.
pub fn pg_numeric(raw: &[u8]) -> Option<String> {
    let word = |at: usize| Some(u16::from_be_bytes([*raw.get(at)?, *raw.get(at + 1)?]));
    let count = usize::from(word(0)?);
    let weight = i32::from(word(2)? as i16);
    let sign = word(4)?;
    let scale = usize::from(word(6)?);
    if raw.len() != 8 + 2 * count {
        return None;
    }
    let negative = match sign {
        0x0000 => false,
        0x4000 => true,
        0xC000 => return Some("NaN".into()),
        0xD000 => return Some("Infinity".into()),
        0xF000 => return Some("-Infinity".into()),
        _ => return None,
    };
    let digits: Vec<u16> = (0..count).map(|i| word(8 + 2 * i)).collect::<Option<_>>()?;
    if digits.iter().any(|&d| d > 9_999) {
        return None;
    }
    // The base-10000 digit worth 10000^power.
    let digit = |power: i32| -> u16 {
        usize::try_from(weight - power)
            .ok()
            .and_then(|index| digits.get(index).copied())
            .unwrap_or(0)
    };
    let mut written = String::new();
    for power in (0..=weight.max(0)).rev() {
        let d = digit(power);
        if written.is_empty() {
            if d != 0 {
                written.push_str(&d.to_string());
            }
        } else {
            written.push_str(&format!("{d:04}"));
        }
    }
    if written.is_empty() {
        written.push('0');
    }
    if scale > 0 {
        let mut fraction = String::new();
        for power in 1..=scale.div_ceil(4) {
            // The scale is at most 16383, so the power fits.
            fraction.push_str(&format!("{:04}", digit(-(power as i32))));
        }
        fraction.truncate(scale);
        written.push('.');
        written.push_str(&fraction);
    }
    if negative {
        written.insert(0, '-');
    }
    Some(written)
}

/// The note a value of a type this module cannot read carries instead of its value.
pub fn unreadable(type_name: &str) -> Cell {
    (
        Value::String(format!(
            "[{type_name} value: cast it to text in the query to read it]"
        )),
        false,
    )
}
