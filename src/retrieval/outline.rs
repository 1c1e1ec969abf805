//! A document's outline — its title and headings, each with where it starts in the extracted
//! text — and what each chunk is under: the heading path in effect where the chunk starts and
//! the headings inside it. The index gives these words a field of their own (`headings`,
//! boosted), and search results show the path.
//!
//! Markdown headings are read from the text itself (`markdown`); HTML and PDF extractors name
//! their headings in order and `locate` finds each in the text they wrote.

use serde::{Deserialize, Serialize};

/// Headings kept per document; past this, a document is outlined no further.
const MAX_HEADINGS: usize = 2_000;
/// Characters of a heading or title kept.
const MAX_HEADING_CHARS: usize = 200;
/// Levels of a heading path kept (the title, then h1 to h6, say).
const MAX_PATH_DEPTH: usize = 7;
/// Headings inside one chunk kept for its headings field.
const MAX_WITHIN: usize = 24;
/// What a heading path is shown joined with.
pub const PATH_SEPARATOR: &str = " › ";

/// A heading of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    /// 1 is the top level.
    pub level: u8,
    pub text: String,
    /// Where it starts in the extracted text, in bytes.
    pub offset: usize,
}

/// A document's title and headings, in the order of the text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outline {
    pub title: Option<String>,
    pub headings: Vec<Heading>,
}

/// What a chunk is under.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkHeadings {
    /// The document's title, then the headings in effect where the chunk starts, outermost
    /// first (the first heading inside it when it starts before any).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path: Vec<String>,
    /// The other headings that start inside the chunk.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub within: Vec<String>,
}

impl ChunkHeadings {
    pub fn is_empty(&self) -> bool {
        self.path.is_empty() && self.within.is_empty()
    }

    /// The words the headings field indexes: every heading the chunk is under or holds.
    pub fn indexed_text(&self) -> String {
        let mut text = String::new();
        for heading in self.path.iter().chain(&self.within) {
            text.push_str(heading);
            text.push('\n');
        }
        text
    }

    /// The path as shown in results ("Guide › Install › Linux"); `None` when there is none.
    pub fn display(&self) -> Option<String> {
        (!self.path.is_empty()).then(|| self.path.join(PATH_SEPARATOR))
    }

    /// As stored with the chunk in the database; `None` when empty.
    pub fn to_json(&self) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        serde_json::to_string(self).ok()
    }

    /// Read back from `to_json`; anything unreadable is no headings.
    pub fn from_json(stored: Option<&str>) -> Self {
        stored
            .and_then(|json| serde_json::from_str(json).ok())
            .unwrap_or_default()
    }
}

/// A heading's text: whitespace collapsed, cut to `MAX_HEADING_CHARS`.
fn clean(text: &str) -> String {
    let mut out = String::new();
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    match out.char_indices().nth(MAX_HEADING_CHARS) {
        Some((cut, _)) => out[..cut].to_string(),
        None => out,
    }
}

impl Outline {
    /// The outline of a Markdown text: ATX headings (`# Title` … `###### Note`, outside fenced
    /// code) and setext ones (a line underlined with `===` or `---`). The title is the first
    /// level-1 heading, when one comes before any other.
    pub fn markdown(text: &str) -> Self {
        let mut headings = Vec::new();
        let mut fence: Option<&str> = None;
        let mut previous: Option<(usize, &str)> = None;
        let mut offset = 0;
        for line in text.split_inclusive('\n') {
            let start = offset;
            offset += line.len();
            if headings.len() >= MAX_HEADINGS {
                break;
            }
            let trimmed = line.trim_end();
            let body = trimmed.trim_start();
            let indent = trimmed.len() - body.len();
            if let Some(open) = fence {
                if body.starts_with(open) && indent < 4 {
                    fence = None;
                }
                previous = None;
                continue;
            }
            if indent < 4 && (body.starts_with("```") || body.starts_with("~~~")) {
                fence = Some(&body[..3]);
                previous = None;
                continue;
            }
            if let Some(heading) = atx_heading(body).filter(|_| indent < 4) {
                headings.push(Heading {
                    level: heading.0,
                    text: clean(heading.1),
                    offset: start + indent,
                });
                previous = None;
                continue;
            }
            if let Some((previous_start, previous_line)) = previous
                && indent < 4
                && !body.is_empty()
                && (body.bytes().all(|b| b == b'=') || body.bytes().all(|b| b == b'-'))
                && body.len() >= 2
            {
                let level = if body.starts_with('=') { 1 } else { 2 };
                headings.push(Heading {
                    level,
                    text: clean(previous_line),
                    offset: previous_start,
                });
                previous = None;
                continue;
            }
            let plain =
                !body.is_empty() && indent < 4 && !body.starts_with(['-', '*', '+', '>', '|', '<']);
            previous = plain.then_some((start + indent, body));
        }
        headings.retain(|heading| !heading.text.is_empty());
        let title = headings
            .first()
            .filter(|heading| heading.level == 1)
            .map(|heading| heading.text.clone());
        Self { title, headings }
    }

    /// An outline from headings an extractor named in order (level, text), each found in
    /// `text` after the one before (a heading not found is left out), and a title (the first
    /// level-1 heading when none is given).
    pub fn locate(text: &str, title: Option<&str>, named: &[(u8, String)]) -> Self {
        let mut headings = Vec::new();
        let mut from = 0;
        for (level, heading) in named.iter().take(MAX_HEADINGS) {
            let heading = clean(heading);
            if heading.is_empty() {
                continue;
            }
            let Some(at) = text[from..].find(&heading) else {
                continue;
            };
            let offset = from + at;
            from = offset + heading.len();
            headings.push(Heading {
                level: (*level).max(1),
                text: heading,
                offset,
            });
        }
        let title = title.map(clean).filter(|t| !t.is_empty()).or_else(|| {
            headings
                .first()
                .filter(|heading| heading.level == 1)
                .map(|heading| heading.text.clone())
        });
        Self { title, headings }
    }

    pub fn is_empty(&self) -> bool {
        self.title.is_none() && self.headings.is_empty()
    }

    /// What the text from `start` to `end` (bytes) is under.
    pub fn for_chunk(&self, start: usize, end: usize) -> ChunkHeadings {
        let mut stack: Vec<&Heading> = Vec::new();
        let mut within = Vec::new();
        for heading in &self.headings {
            if heading.offset <= start {
                while stack.last().is_some_and(|open| open.level >= heading.level) {
                    stack.pop();
                }
                stack.push(heading);
            } else if heading.offset < end {
                within.push(heading);
            } else {
                break;
            }
        }
        if stack.is_empty() && !within.is_empty() {
            // A chunk that starts before its first heading is known by that heading.
            stack.push(within.remove(0));
        }
        let mut path: Vec<String> = Vec::new();
        if let Some(title) = &self.title {
            path.push(title.clone());
        }
        for heading in stack {
            if path.last() != Some(&heading.text) {
                path.push(heading.text.clone());
            }
        }
        path.truncate(MAX_PATH_DEPTH);
        let within = within
            .into_iter()
            .map(|heading| heading.text.clone())
            .filter(|text| !path.contains(text))
            .take(MAX_WITHIN)
            .collect();
        ChunkHeadings { path, within }
    }
}

/// An ATX heading's level and text: one to six `#`, then a space (or nothing), closing `#`s
/// dropped.
fn atx_heading(line: &str) -> Option<(u8, &str)> {
    let hashes = line.bytes().take_while(|&b| b == b'#').count();
    if hashes == 0 || hashes > 6 {
        return None;
    }
    let rest = &line[hashes..];
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    let text = rest.trim();
    let unclosed = text.trim_end_matches('#');
    // "## Done ##" closes; "# C#" does not: a closing sequence follows a space.
    let text = if unclosed.is_empty() {
        ""
    } else if unclosed.ends_with([' ', '\t']) {
        unclosed.trim_end()
    } else {
        text
    };
    Some((hashes as u8, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GUIDE: &str = "# Guide\n\nIntro text.\n\n## Install\n\nSteps.\n\n### Linux\n\n\
        ```\n# not a heading\n```\n\napt install.\n\nUsage\n-----\n\nRun it. # C#\n";

    #[test]
    fn markdown_headings_skip_code_and_read_setext() {
        let outline = Outline::markdown(GUIDE);
        assert_eq!(outline.title.as_deref(), Some("Guide"));
        let found: Vec<(u8, &str)> = outline
            .headings
            .iter()
            .map(|h| (h.level, h.text.as_str()))
            .collect();
        assert_eq!(
            found,
            [(1, "Guide"), (2, "Install"), (3, "Linux"), (2, "Usage")]
        );
        for heading in &outline.headings {
            let line = GUIDE[heading.offset..].lines().next().unwrap();
            assert!(line.contains(heading.text.as_str()), "{line:?}");
        }
        assert_eq!(atx_heading("# C#"), Some((1, "C#")));
        assert_eq!(atx_heading("## Done ##"), Some((2, "Done")));
        assert_eq!(atx_heading("#hashtag"), None);
    }

    #[test]
    fn a_chunk_is_under_the_path_where_it_starts_and_holds_the_headings_inside() {
        let outline = Outline::markdown(GUIDE);
        let linux = GUIDE.find("apt install").unwrap();
        let headings = outline.for_chunk(linux, GUIDE.len());
        assert_eq!(headings.path, ["Guide", "Install", "Linux"]);
        assert_eq!(headings.within, ["Usage"]);
        assert_eq!(
            headings.display().as_deref(),
            Some("Guide › Install › Linux")
        );
        // Before any heading: known by the first one inside.
        let whole = outline.for_chunk(0, GUIDE.len());
        assert_eq!(whole.path, ["Guide"]);
        assert_eq!(whole.within, ["Install", "Linux", "Usage"]);
        let stored = headings.to_json();
        assert_eq!(ChunkHeadings::from_json(stored.as_deref()), headings);
        assert_eq!(
            ChunkHeadings::from_json(Some("not json")),
            ChunkHeadings::default()
        );
    }

    #[test]
    fn located_headings_are_found_in_order_and_missing_ones_left_out() {
        let text = "Report\n\nSummary\n\nWe did it.\n\nMethods\n\nSummary of methods.";
        let named = [
            (1, "Report".to_string()),
            (2, "Summary".to_string()),
            (2, "Nowhere".to_string()),
            (2, "Methods".to_string()),
        ];
        let outline = Outline::locate(text, Some("  The   Report "), &named);
        assert_eq!(outline.title.as_deref(), Some("The Report"));
        let offsets: Vec<usize> = outline.headings.iter().map(|h| h.offset).collect();
        assert_eq!(offsets, [0, 8, text.find("Methods").unwrap()]);
        let methods = outline.for_chunk(text.find("Summary of").unwrap(), text.len());
        assert_eq!(methods.path, ["The Report", "Report", "Methods"]);
    }
}
