//! A PDF's title (its document information's `Title`) and outline (the bookmarks: `Outlines`,
//! then each item's `First` child and `Next` sibling), walked with an explicit stack and a
//! set of visited items, so an outline whose links loop or run deep ends like any other.

use std::collections::HashSet;

use pdf_extract::{Dictionary, Document, Object, ObjectId};

/// Outline items read per file.
const MAX_ITEMS: usize = 2_000;
/// Deepest outline level kept; deeper items count as this level.
const MAX_LEVEL: usize = 6;

/// The document information's title.
pub(super) fn title(doc: &Document) -> Option<String> {
    let info = doc.trailer.get(b"Info").ok()?;
    let info = resolve(doc, info)?;
    let title = text_string(doc, info.get(b"Title").ok()?)?;
    let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
    (!title.is_empty()).then_some(title)
}

/// The outline's items in reading order: level (1 at the top) and title.
pub(super) fn headings(doc: &Document) -> Vec<(u8, String)> {
    let mut found = Vec::new();
    let Some(first) = doc
        .catalog()
        .ok()
        .and_then(|catalog| catalog.get(b"Outlines").ok())
        .and_then(|outlines| resolve(doc, outlines))
        .and_then(|outlines| outlines.get(b"First").ok())
        .and_then(|first| first.as_reference().ok())
    else {
        return found;
    };
    let mut visited: HashSet<ObjectId> = HashSet::new();
    // Items still to read, each with its level: a child comes before its next sibling.
    let mut pending: Vec<(ObjectId, usize)> = vec![(first, 1)];
    while let Some((id, level)) = pending.pop() {
        if found.len() >= MAX_ITEMS || !visited.insert(id) {
            continue;
        }
        let Some(item) = doc.objects.get(&id).and_then(dictionary_of) else {
            continue;
        };
        if let Some(title) = item.get(b"Title").ok().and_then(|t| text_string(doc, t)) {
            let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
            if !title.is_empty() {
                found.push((level.min(MAX_LEVEL) as u8, title));
            }
        }
        if let Ok(next) = item.get(b"Next").and_then(Object::as_reference) {
            pending.push((next, level));
        }
        if let Ok(child) = item.get(b"First").and_then(Object::as_reference) {
            pending.push((child, level + 1));
        }
    }
    found
}

fn dictionary_of(object: &Object) -> Option<&Dictionary> {
    match object {
        Object::Dictionary(dict) => Some(dict),
        Object::Stream(stream) => Some(&stream.dict),
        _ => None,
    }
}

fn resolve<'a>(doc: &'a Document, object: &'a Object) -> Option<&'a Dictionary> {
    match object {
        Object::Reference(id) => doc.objects.get(id).and_then(dictionary_of),
        other => dictionary_of(other),
    }
}

/// A PDF text string: UTF-16 with its byte order mark, else PDFDocEncoding (read as Latin-1,
/// which it matches for letters).
fn text_string(doc: &Document, object: &Object) -> Option<String> {
    let object = match object {
        Object::Reference(id) => doc.objects.get(id)?,
        other => other,
    };
    let Object::String(bytes, _) = object else {
        return None;
    };
    let utf16 = |big_endian: bool| {
        let units: Vec<u16> = bytes[2..]
            .chunks_exact(2)
            .map(|pair| {
                if big_endian {
                    u16::from_be_bytes([pair[0], pair[1]])
                } else {
                    u16::from_le_bytes([pair[0], pair[1]])
                }
            })
            .collect();
        String::from_utf16_lossy(&units)
    };
    Some(match bytes.as_slice() {
        [0xFE, 0xFF, ..] => utf16(true),
        [0xFF, 0xFE, ..] => utf16(false),
        [0xEF, 0xBB, 0xBF, rest @ ..] => String::from_utf8_lossy(rest).into_owned(),
        other => other.iter().map(|&b| char::from(b)).collect(),
    })
}
