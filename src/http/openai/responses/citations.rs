//! `url_citation` annotations: where the answer's text links a page the run's web searches or
//! fetches found. A Markdown link `[label](url)` is annotated whole; a bare URL is annotated
//! as itself. A URL the run never found is not annotated, however it is written: a citation
//! says the page was read, not that the model named it. Indices count characters (Unicode
//! scalar values), as Python's `str` does.

use serde_json::{Value, json};

/// A page the run found: a search hit or a fetched page.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    pub url: String,
    pub title: String,
}

impl Source {
    /// The page a search hit (`{url, title}`) or a fetched page (`{url}`) names.
    pub fn of_hit(hit: &Value) -> Option<Self> {
        let url = hit["url"].as_str().filter(|url| !url.is_empty())?;
        Some(Self {
            url: url.to_string(),
            title: hit["title"].as_str().unwrap_or(url).to_string(),
        })
    }
}

/// A span of `text`, in bytes, that cites `source`.
struct Span<'a> {
    start: usize,
    end: usize,
    source: &'a Source,
}

/// The spans of `text` that cite `source`: each occurrence of its URL that ends where the URL
/// does (not a longer URL it is the start of), widened to its Markdown link when it is one.
fn spans_of<'a>(text: &str, source: &'a Source) -> Vec<Span<'a>> {
    let mut spans = Vec::new();
    for (start, _) in text.match_indices(&source.url) {
        let end = start + source.url.len();
        let next = text[end..].chars().next();
        if next.is_some_and(|c| !c.is_whitespace() && !")]>\"'.,;:!?".contains(c)) {
            continue;
        }
        let linked = text[..start].ends_with("](") && next == Some(')');
        let span = if linked {
            let label_end = start - 2;
            match text[..label_end].rfind('[') {
                Some(open) if !text[open..label_end].contains(['\n', ']']) => Span {
                    start: open,
                    end: end + 1,
                    source,
                },
                _ => Span { start, end, source },
            }
        } else {
            Span { start, end, source }
        };
        spans.push(span);
    }
    spans
}

/// The `url_citation` annotations of `text` for the pages in `sources`, in the text's order,
/// none overlapping another.
pub fn url_citations(text: &str, sources: &[Source]) -> Vec<Value> {
    let mut spans: Vec<Span> = sources
        .iter()
        .flat_map(|source| spans_of(text, source))
        .collect();
    // The longest span first where two start together (a URL and a longer one it begins).
    spans.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
    let mut kept: Vec<Span> = Vec::new();
    for span in spans {
        if kept.last().is_none_or(|last| span.start >= last.end) {
            kept.push(span);
        }
    }
    kept.iter()
        .map(|span| {
            json!({
                "type": "url_citation",
                "start_index": text[..span.start].chars().count(),
                "end_index": text[..span.end].chars().count(),
                "url": span.source.url,
                "title": span.source.title,
            })
        })
        .collect()
}

/// A file a code interpreter call wrote, which the answer's text may cite.
#[derive(Debug, Clone, PartialEq)]
pub struct ContainerFile {
    pub container_id: String,
    pub file_id: String,
    /// Its path in the sandbox (`/mnt/data/…`).
    pub path: String,
}

impl ContainerFile {
    fn filename(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }
}

/// The `container_file_citation` annotations of `text` for `files`: each Markdown link to a
/// file's path (`[label](sandbox:/mnt/data/x.png)`) whole, each bare mention of its path as
/// itself; a file the text never mentions is cited at the text's end (an empty span), so a
/// client finds every file the answer produced.
pub fn container_file_citations(text: &str, files: &[ContainerFile]) -> Vec<Value> {
    let mut annotations = Vec::new();
    let chars = |at: usize| text[..at].chars().count();
    for file in files {
        let mut found = false;
        for (start, _) in text.match_indices(&file.path) {
            let end = start + file.path.len();
            let start = if text[..start].ends_with("sandbox:") {
                start - "sandbox:".len()
            } else {
                start
            };
            let (start, end) = match (
                text[..start].strip_suffix("]("),
                text[end..].starts_with(')'),
            ) {
                (Some(before), true) => match before.rfind('[') {
                    Some(open) if !before[open..].contains(['\n', ']']) => (open, end + 1),
                    _ => (start, end),
                },
                _ => (start, end),
            };
            found = true;
            annotations.push(json!({
                "type": "container_file_citation",
                "container_id": file.container_id,
                "file_id": file.file_id,
                "filename": file.filename(),
                "start_index": chars(start),
                "end_index": chars(end),
            }));
        }
        if !found {
            let end = text.chars().count();
            annotations.push(json!({
                "type": "container_file_citation",
                "container_id": file.container_id,
                "file_id": file.file_id,
                "filename": file.filename(),
                "start_index": end,
                "end_index": end,
            }));
        }
    }
    annotations
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(url: &str, title: &str) -> Source {
        Source {
            url: url.into(),
            title: title.into(),
        }
    }

    #[test]
    fn a_markdown_link_is_annotated_whole_and_a_bare_url_as_itself() {
        let sources = [
            source("https://gold.example/price", "Gold price"),
            source("https://fx.example/", "FX"),
        ];
        let text = "Gold is dear — see [today's price](https://gold.example/price). \
                    Rates: https://fx.example/.";
        let annotations = url_citations(text, &sources);
        assert_eq!(annotations.len(), 2, "{annotations:?}");
        let chars: Vec<char> = text.chars().collect();
        let cited = |a: &Value| -> String {
            chars[a["start_index"].as_u64().unwrap() as usize
                ..a["end_index"].as_u64().unwrap() as usize]
                .iter()
                .collect()
        };
        assert_eq!(
            cited(&annotations[0]),
            "[today's price](https://gold.example/price)"
        );
        assert_eq!(annotations[0]["title"], "Gold price");
        assert_eq!(cited(&annotations[1]), "https://fx.example/");
        assert_eq!(annotations[1]["url"], "https://fx.example/");
    }

    #[test]
    fn a_file_link_is_cited_whole_and_an_unmentioned_file_at_the_end() {
        let file = |id: &str, path: &str| ContainerFile {
            container_id: "cntr_1".into(),
            file_id: id.into(),
            path: path.into(),
        };
        let text = "Mean is 2. See [the chart](sandbox:/mnt/data/chart.png).";
        let cited = container_file_citations(
            text,
            &[
                file("cfile_a", "/mnt/data/chart.png"),
                file("cfile_b", "/mnt/data/out.csv"),
            ],
        );
        assert_eq!(cited.len(), 2, "{cited:?}");
        let chars: Vec<char> = text.chars().collect();
        let (start, end) = (
            cited[0]["start_index"].as_u64().unwrap() as usize,
            cited[0]["end_index"].as_u64().unwrap() as usize,
        );
        assert_eq!(
            chars[start..end].iter().collect::<String>(),
            "[the chart](sandbox:/mnt/data/chart.png)"
        );
        assert_eq!(cited[0]["filename"], "chart.png");
        assert_eq!(cited[0]["file_id"], "cfile_a");
        assert_eq!(cited[1]["start_index"], chars.len());
        assert_eq!(cited[1]["end_index"], chars.len());
    }

    #[test]
    fn urls_the_run_never_found_and_longer_urls_are_not_citations() {
        let sources = [source("https://a.example/x", "A")];
        let text = "See https://a.example/xyz and https://b.example/ and [a](https://other/).";
        assert!(url_citations(text, &sources).is_empty());
    }
}
