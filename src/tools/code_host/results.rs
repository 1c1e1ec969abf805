//! How fetched code is shown to the model: decoded and clipped file content, directory
//! listings, browse results with failures in place, language shares and trees.

use base64::Engine;
use serde_json::{Map, Value, json};

use super::MAX_TREE_ENTRIES;
use crate::tools::ToolError;

/// Characters shared by the full files of one search, like web_search's auto-fetch budget.
const SEARCH_CONTENT_BUDGET_CHARS: usize = 12_000;
/// Characters shared by the files of one browse call, like fetch_url's budget.
const BROWSE_CONTENT_BUDGET_CHARS: usize = 24_000;
/// README characters a review keeps: the overview, leaving room for the rest of the review.
const README_MAX_CHARS: usize = 6_000;

/// Base64 as GitHub sends it: wrapped with newlines every 60 characters.
pub fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact)
        .ok()
}

/// The first `max_chars` characters of `text`, and whether anything was cut.
pub fn clip(text: &str, max_chars: usize) -> (String, bool) {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => (text[..cut].to_string(), true),
        None => (text.to_string(), false),
    }
}

/// A fetched file's body as the model sees it: `content` (cut to `max_chars`, with
/// `truncated`), or a note for binary files.
pub fn content_fields(bytes: &[u8], max_chars: usize) -> Map<String, Value> {
    let mut fields = Map::new();
    match std::str::from_utf8(bytes) {
        Ok(text) if !text.contains('\0') => {
            let (content, truncated) = clip(text, max_chars);
            fields.insert("content".into(), json!(content));
            if truncated {
                fields.insert("truncated".into(), json!(true));
            }
        }
        _ => {
            fields.insert("content".into(), Value::Null);
            fields.insert(
                "note".into(),
                json!(format!("binary file of {} bytes", bytes.len())),
            );
        }
    }
    fields
}

/// Gives the top search results their files, in order and sharing the search budget:
/// `content` (see [`content_fields`]), or `content_error` when the file could not be fetched.
pub fn attach_contents(results: &mut [Value], fetched: Vec<Result<Vec<u8>, ToolError>>) {
    let per_file = SEARCH_CONTENT_BUDGET_CHARS / fetched.len().max(1);
    for (result, file) in results.iter_mut().zip(fetched) {
        let Value::Object(fields) = result else {
            continue;
        };
        match file {
            Ok(bytes) => fields.extend(content_fields(&bytes, per_file)),
            Err(err) => {
                fields.insert("content_error".into(), json!(err.message));
            }
        }
    }
}

/// A browsed path: a file's bytes, a directory's entries (`name`, `path`, `type`, `size`), or
/// something else (a submodule, a symlink) with a note.
pub enum Browsed {
    File {
        path: String,
        url: Option<String>,
        bytes: Vec<u8>,
    },
    Dir {
        path: String,
        entries: Vec<Value>,
        truncated: bool,
    },
    Other {
        path: String,
        kind: String,
        note: String,
    },
}

/// The `results` of a browse: one object per path, files sharing the content budget and
/// failures shown in place. When every path failed, the first failure is the call's error.
pub fn browse_results(
    outcomes: Vec<(String, Result<Browsed, ToolError>)>,
) -> Result<Value, ToolError> {
    if let Some((_, Err(first))) = outcomes.first()
        && outcomes.iter().all(|(_, outcome)| outcome.is_err())
    {
        return Err(first.clone());
    }
    let files = outcomes
        .iter()
        .filter(|(_, o)| matches!(o, Ok(Browsed::File { .. })))
        .count();
    let per_file = BROWSE_CONTENT_BUDGET_CHARS / files.max(1);
    let results = outcomes
        .into_iter()
        .map(|(requested, outcome)| match outcome {
            Ok(Browsed::File { path, url, bytes }) => {
                let mut entry = Map::new();
                entry.insert("path".into(), json!(path));
                entry.insert("type".into(), json!("file"));
                entry.insert("size".into(), json!(bytes.len()));
                if let Some(url) = url {
                    entry.insert("url".into(), json!(url));
                }
                entry.extend(content_fields(&bytes, per_file));
                Value::Object(entry)
            }
            Ok(Browsed::Dir {
                path,
                entries,
                truncated,
            }) => {
                json!({"path": path, "type": "dir", "entries": entries, "truncated": truncated})
            }
            Ok(Browsed::Other { path, kind, note }) => {
                json!({"path": path, "type": kind, "note": note})
            }
            Err(err) => json!({"path": requested, "error": err.message, "code": err.code}),
        });
    Ok(Value::Array(results.collect()))
}

/// Languages by share, largest first, each `{"name", "percent"}` to one decimal place.
pub fn language_shares(amounts: &Map<String, Value>) -> Vec<Value> {
    let total: f64 = amounts.values().filter_map(Value::as_f64).sum();
    let mut shares: Vec<(&String, f64)> = amounts
        .iter()
        .filter_map(|(name, amount)| Some((name, amount.as_f64()?)))
        .collect();
    shares.sort_by(|a, b| b.1.total_cmp(&a.1));
    shares
        .into_iter()
        .map(|(name, amount)| {
            let percent = if total > 0.0 {
                (amount * 1000.0 / total).round() / 10.0
            } else {
                0.0
            };
            json!({"name": name, "percent": percent})
        })
        .collect()
}

/// The parts of a review besides the repository's metadata. A part that failed is noted in
/// `warnings` rather than failing the whole review.
#[derive(Default)]
pub struct ReviewParts {
    /// Bytes or percentages per language, as the host reports them.
    pub languages: Option<Map<String, Value>>,
    /// The README's path and text.
    pub readme: Option<(String, String)>,
    /// See [`tree_json`].
    pub tree: Option<Value>,
    pub recent_commits: Option<Vec<Value>>,
    warnings: Vec<String>,
}

impl ReviewParts {
    /// The part if it arrived. If it failed, `None` and a warning — without the warning when it
    /// was simply not found and `absence_is_normal` (a repository without a README).
    pub fn keep<T>(
        &mut self,
        what: &str,
        part: Result<T, ToolError>,
        absence_is_normal: bool,
    ) -> Option<T> {
        match part {
            Ok(part) => Some(part),
            Err(err) if absence_is_normal && err.code == "not_found" => None,
            Err(err) => {
                self.warnings.push(format!("{what}: {}", err.message));
                None
            }
        }
    }

    /// The review: `summary` (an object of metadata fields) with the mode and these parts.
    pub fn into_review(self, summary: Value) -> Value {
        let mut review = summary;
        review["mode"] = json!("review");
        review["languages"] = json!(self.languages.as_ref().map(language_shares));
        review["readme"] = json!(self.readme.map(|(path, text)| {
            let (content, truncated) = clip(&text, README_MAX_CHARS);
            json!({"path": path, "content": content, "truncated": truncated})
        }));
        review["tree"] = json!(self.tree);
        review["recent_commits"] = json!(self.recent_commits);
        if !self.warnings.is_empty() {
            review["warnings"] = json!(self.warnings);
        }
        review
    }
}

/// A repository tree as the model sees it: paths, directories ending in `/`.
pub fn tree_json(entries: impl Iterator<Item = (String, bool)>, host_truncated: bool) -> Value {
    let mut paths: Vec<String> = Vec::new();
    let mut truncated = host_truncated;
    for (path, is_dir) in entries {
        if paths.len() == MAX_TREE_ENTRIES {
            truncated = true;
            break;
        }
        paths.push(if is_dir { format!("{path}/") } else { path });
    }
    json!({"entries": paths, "truncated": truncated})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_is_clipped_and_binary_files_are_named_not_shown() {
        assert_eq!(decode_base64("aGVs\nbG8=\n").unwrap(), b"hello");
        let fields = content_fields("héllo".as_bytes(), 2);
        assert_eq!(fields["content"], "hé");
        assert_eq!(fields["truncated"], true);
        let fields = content_fields(&[0, 159, 146, 150], 100);
        assert_eq!(fields["content"], Value::Null);
        assert_eq!(fields["note"], "binary file of 4 bytes");
    }

    #[test]
    fn language_shares_are_percentages_largest_first() {
        let amounts = json!({"Shell": 250, "Rust": 750})
            .as_object()
            .unwrap()
            .clone();
        assert_eq!(
            language_shares(&amounts),
            vec![
                json!({"name": "Rust", "percent": 75.0}),
                json!({"name": "Shell", "percent": 25.0})
            ]
        );
    }
}
