//! The report: the synthesis prompt (the findings notes and one numbered list of the sources
//! the run really saw), the check of what the model wrote against that list — a citation of a
//! number not on it, or a link to a URL the run never saw, is removed —, the Sources list
//! appended from the list itself, the artifact's name, a findings-list artifact, and the
//! report written without the model when it cannot be asked.

use std::fmt::Write as _;

use super::subtask::{Finding, TaskStatus};
use crate::agent::sources::Source;

/// The synthesis' instructions.
pub const INSTRUCTIONS: &str = "You write research reports. From the research notes below, \
    write a comprehensive, well-structured report in Markdown that answers the question. Start \
    with a level-1 heading with the report's title. Cite sources inline as [n], using only the \
    numbers of the numbered source list; never invent a source or a URL. Do not write a \
    sources or references list: it is appended for you.";

/// Longest note text given to the synthesis per sub-task, in characters.
const MAX_NOTE_CHARS: usize = 6_000;

/// The synthesis request's user message.
pub fn brief(question: &str, title: &str, findings: &[Finding], sources: &[Source]) -> String {
    let mut text = format!("Question: {question}\nReport title: {title}\n\nResearch notes:\n");
    for finding in findings {
        let _ = write!(text, "\n## Sub-task {}: {}\n", finding.id, finding.query);
        match finding.status {
            TaskStatus::Failed => {
                let _ = writeln!(
                    text,
                    "(This sub-task failed: {}.)",
                    finding.error.as_deref().unwrap_or("unknown error")
                );
            }
            TaskStatus::Completed | TaskStatus::BudgetExhausted => {
                let _ = writeln!(
                    text,
                    "{}",
                    super::plan::shorten(&finding.note, MAX_NOTE_CHARS)
                );
                // The URLs this sub-task's tools really returned, by their numbers below.
                let numbers: Vec<String> = finding
                    .sources
                    .iter()
                    .filter_map(|s| sources.iter().position(|known| known.url == s.url))
                    .map(|at| format!("[{}]", at + 1))
                    .collect();
                if !numbers.is_empty() {
                    let _ = writeln!(text, "Sources of this sub-task: {}", numbers.join(" "));
                }
            }
        }
    }
    text.push_str("\nNumbered sources (cite only these, as [n]):\n");
    if sources.is_empty() {
        text.push_str("(none: the research found no sources; cite nothing)\n");
    }
    for (number, source) in sources.iter().enumerate() {
        let _ = writeln!(text, "[{}] {} — {}", number + 1, label(source), source.url);
    }
    text
}

fn label(source: &Source) -> &str {
    if source.title.trim().is_empty() {
        &source.url
    } else {
        source.title.trim()
    }
}

/// What was kept of a report.
#[derive(Debug, PartialEq)]
pub struct Checked {
    /// The report with its invalid citations removed and the Sources list appended.
    pub report: String,
    /// The Sources list that was appended (also sent as the stream's last text).
    pub sources_section: String,
    /// Citations and links removed.
    pub removed: usize,
}

/// Checks `text` against `sources`: a model-written sources section is dropped (the list is
/// appended from `sources`), `[n]` citations outside the list and links or bare URLs the run
/// never saw are removed.
pub fn check(text: &str, sources: &[Source]) -> Checked {
    let body = without_sources_section(text);
    let mut removed = 0;
    let mut cited: Vec<usize> = Vec::new();
    let body = rewrite_citations(&body, sources.len(), &mut cited, &mut removed);
    let body = rewrite_links(&body, sources, &mut removed);
    cited.sort_unstable();
    cited.dedup();
    let mut section = String::new();
    if !sources.is_empty() {
        let listed: Vec<usize> = if cited.is_empty() {
            (1..=sources.len()).collect()
        } else {
            cited
        };
        section.push_str("\n\n## Sources\n\n");
        for number in listed {
            let source = &sources[number - 1];
            let _ = writeln!(
                section,
                "{number}. [{}]({})",
                label(source).replace(['[', ']'], ""),
                source.url
            );
        }
    }
    let mut report = body.trim_end().to_string();
    report.push_str(&section);
    Checked {
        report,
        sources_section: section,
        removed,
    }
}

/// `text` without a trailing "Sources" / "References" section the model wrote anyway.
fn without_sources_section(text: &str) -> String {
    let mut kept = Vec::new();
    for line in text.lines() {
        let heading = line.trim_start_matches('#').trim().trim_end_matches(':');
        let is_heading = line.starts_with('#') || line.trim_end().ends_with(':');
        if is_heading
            && ["sources", "references", "bibliography", "works cited"]
                .contains(&heading.to_ascii_lowercase().as_str())
        {
            break;
        }
        kept.push(line);
    }
    kept.join("\n")
}

/// Keeps `[n]` and `[n, m]` citations whose numbers are on the list (recording them in
/// `cited`), drops the others.
fn rewrite_citations(
    text: &str,
    count: usize,
    cited: &mut Vec<usize>,
    removed: &mut usize,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find(']') else {
            out.push_str(&rest[open..]);
            return out;
        };
        let inside = &after[..close];
        let followed_by_link = after[close + 1..].starts_with('(');
        let numbers: Option<Vec<usize>> = (!inside.trim().is_empty() && !followed_by_link)
            .then(|| {
                inside
                    .split(',')
                    .map(|part| part.trim().parse::<usize>().ok())
                    .collect()
            })
            .flatten();
        match numbers {
            Some(numbers) => {
                let valid: Vec<usize> = numbers
                    .iter()
                    .copied()
                    .filter(|n| (1..=count).contains(n))
                    .collect();
                *removed += numbers.len() - valid.len();
                if !valid.is_empty() {
                    let list: Vec<String> = valid.iter().map(usize::to_string).collect();
                    let _ = write!(out, "[{}]", list.join(", "));
                    cited.extend(valid);
                } else if out.ends_with(' ') {
                    out.pop();
                }
            }
            None => out.push_str(&rest[open..open + close + 2]),
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

/// Markdown links and bare URLs to pages the run never saw become plain text.
fn rewrite_links(text: &str, sources: &[Source], removed: &mut usize) -> String {
    let known = |url: &str| {
        let url = url.trim_end_matches(['.', ',', ';', ')']);
        sources
            .iter()
            .any(|s| s.url == url || s.url.trim_end_matches('/') == url.trim_end_matches('/'))
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let link = rest.find("](");
        let bare = ["https://", "http://"]
            .iter()
            .filter_map(|scheme| rest.find(scheme))
            .min();
        match (link, bare) {
            (Some(at), bare) if bare.is_none_or(|b| at < b) => {
                let Some(label_start) = rest[..at].rfind('[') else {
                    out.push_str(&rest[..at + 2]);
                    rest = &rest[at + 2..];
                    continue;
                };
                let after = &rest[at + 2..];
                let Some(end) = after.find(')') else {
                    out.push_str(rest);
                    return out;
                };
                let url = after[..end].trim();
                let label = &rest[label_start + 1..at];
                out.push_str(&rest[..label_start]);
                if known(url) {
                    let _ = write!(out, "[{label}]({url})");
                } else {
                    *removed += 1;
                    out.push_str(label);
                }
                rest = &after[end + 1..];
            }
            (_, Some(at)) => {
                let end = rest[at..]
                    .find(|c: char| c.is_whitespace() || c == '<' || c == '>' || c == '"')
                    .map_or(rest.len(), |e| at + e);
                let url = &rest[at..end];
                out.push_str(&rest[..at]);
                if known(url) {
                    out.push_str(url);
                } else {
                    *removed += 1;
                    let trailing = url.len() - url.trim_end_matches(['.', ',', ';', ')']).len();
                    out.push_str(&url[url.len() - trailing..]);
                }
                rest = &rest[end..];
            }
            (_, None) => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

/// The report artifact's name, from the time the run finished.
pub fn artifact_name(now: chrono::DateTime<chrono::Utc>) -> String {
    format!("deep-think-{}.md", now.format("%Y%m%d-%H%M%S"))
}

/// A findings list (the bullet points of each sub-task's note, under its query), when the
/// notes hold at least `min` bullet points; `None` otherwise.
pub fn findings_list(title: &str, findings: &[Finding], min: usize) -> Option<String> {
    let mut text = format!("# {title}: findings\n");
    let mut count = 0;
    for finding in findings {
        let bullets: Vec<&str> = finding
            .note
            .lines()
            .map(str::trim)
            .filter(|line| line.starts_with("- ") || line.starts_with("* "))
            .collect();
        if bullets.is_empty() {
            continue;
        }
        let _ = write!(text, "\n## {}\n\n", finding.query);
        for bullet in &bullets {
            let _ = writeln!(text, "- {}", bullet[2..].trim());
        }
        count += bullets.len();
    }
    (count >= min).then_some(text)
}

/// `- Attribute: value` lines of a note, as (attribute, value) pairs.
fn attributes(note: &str) -> Vec<(String, String)> {
    note.lines()
        .map(str::trim)
        .filter_map(|line| line.strip_prefix("- ").or_else(|| line.strip_prefix("* ")))
        .filter_map(|item| {
            let (key, value) = item.split_once(':')?;
            let key = key.trim().trim_matches('*').trim();
            let value = value.trim();
            let label = !key.is_empty()
                && key.chars().count() <= 40
                && key.split_whitespace().count() <= 5
                && !key.contains(['(', '/']);
            (label && !value.is_empty()).then(|| (key.to_string(), value.to_string()))
        })
        .collect()
}

/// A comparison table, when at least two sub-tasks' notes give values for the same two or more
/// attributes (`- Price: 10 dollars` in each): one row per sub-task, one column per attribute
/// they share; `None` otherwise.
pub fn comparison_table(title: &str, findings: &[Finding]) -> Option<String> {
    let rows: Vec<(&Finding, Vec<(String, String)>)> = findings
        .iter()
        .filter(|f| f.status != TaskStatus::Failed)
        .map(|f| (f, attributes(&f.note)))
        .filter(|(_, pairs)| !pairs.is_empty())
        .collect();
    if rows.len() < 2 {
        return None;
    }
    let key = |k: &str| k.to_lowercase();
    let mut columns: Vec<String> = Vec::new();
    for (name, _) in &rows[0].1 {
        let shared = rows
            .iter()
            .filter(|(_, pairs)| pairs.iter().any(|(k, _)| key(k) == key(name)))
            .count();
        if shared >= 2 && !columns.iter().any(|c| key(c) == key(name)) {
            columns.push(name.clone());
        }
    }
    if columns.len() < 2 {
        return None;
    }
    let cell = |text: &str| text.replace('|', "\\|").replace('\n', " ");
    let mut table = format!(
        "# {title}: comparison\n\n| | {} |\n|---|",
        columns.join(" | ")
    );
    table.push_str(&"---|".repeat(columns.len()));
    table.push('\n');
    for (finding, pairs) in &rows {
        let _ = write!(table, "| {} |", cell(&finding.query));
        for column in &columns {
            let value = pairs
                .iter()
                .find(|(k, _)| key(k) == key(column))
                .map_or("—", |(_, v)| v.as_str());
            let _ = write!(table, " {} |", cell(value));
        }
        table.push('\n');
    }
    Some(table)
}

/// The report written from the notes alone, when the model cannot write it (every sub-task
/// failed, the synthesis failed, or time ran out): nothing found is lost.
pub fn without_model(title: &str, why: &str, findings: &[Finding]) -> String {
    let mut text = format!("# {title}\n\n{why}\n");
    for finding in findings {
        let _ = write!(text, "\n## {}\n\n", finding.query);
        match finding.status {
            TaskStatus::Failed => {
                let _ = writeln!(
                    text,
                    "This sub-task failed: {}.",
                    finding.error.as_deref().unwrap_or("unknown error")
                );
            }
            TaskStatus::Completed | TaskStatus::BudgetExhausted => {
                let _ = writeln!(text, "{}", finding.note);
            }
        }
    }
    text
}
