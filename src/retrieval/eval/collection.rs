//! A test collection in BEIR's format, read from its directory: `corpus.jsonl` (`_id`,
//! `title`, `text`), `queries.jsonl` (`_id`, `text`) and `qrels.tsv` (a header, then
//! `query-id`, `corpus-id`, `score`; a score above 0 means relevant, higher more so).

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;

use super::EvalError;

/// One document of a collection.
#[derive(Debug, Clone, Deserialize)]
pub struct CorpusDocument {
    #[serde(rename = "_id")]
    pub id: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub text: String,
}

impl CorpusDocument {
    /// The file a person would upload: the title, then the text (once, when the text already
    /// opens with its title, as Cranfield's does).
    pub fn body(&self) -> String {
        let title = self.title.trim();
        if title.is_empty() || self.text.trim_start().starts_with(title) {
            self.text.clone()
        } else {
            format!("{title}\n\n{}", self.text)
        }
    }
}

impl CorpusDocument {
    /// The file as a Markdown upload: the title as its heading, then the text (without the
    /// title again when the text opens with it, as Cranfield's does). No title: the text.
    pub fn markdown(&self) -> String {
        let title = self.title.split_whitespace().collect::<Vec<_>>().join(" ");
        if title.is_empty() {
            return self.text.clone();
        }
        let text = self.text.trim_start();
        let rest = text.strip_prefix(self.title.trim()).unwrap_or(text);
        format!("# {title}\n\n{}", rest.trim_start())
    }
}

/// One question of a collection.
#[derive(Debug, Clone, Deserialize)]
pub struct Query {
    #[serde(rename = "_id")]
    pub id: String,
    pub text: String,
}

/// Documents, questions and the judgements of which documents answer which question.
#[derive(Debug, Clone, Default)]
pub struct Collection {
    pub documents: Vec<CorpusDocument>,
    /// Only questions with at least one relevant document among `documents`.
    pub queries: Vec<Query>,
    /// Graded relevance by question, then document (scores above 0 only).
    pub judgements: HashMap<String, HashMap<String, u32>>,
}

impl Collection {
    /// Reads the collection in `dir`, keeping at most `max_documents` documents (the first
    /// ones) and `max_queries` of the questions that still have a relevant document.
    pub fn load(
        dir: &Path,
        max_documents: Option<usize>,
        max_queries: Option<usize>,
    ) -> Result<Self, EvalError> {
        let mut documents: Vec<CorpusDocument> = read_lines(&dir.join("corpus.jsonl"))?;
        documents.truncate(max_documents.unwrap_or(usize::MAX));
        let kept: std::collections::HashSet<&str> =
            documents.iter().map(|d| d.id.as_str()).collect();
        let qrels_path = dir.join("qrels.tsv");
        let qrels = std::fs::read_to_string(&qrels_path)
            .map_err(|err| EvalError::read(&qrels_path, err))?;
        let mut judgements: HashMap<String, HashMap<String, u32>> = HashMap::new();
        for (number, line) in qrels.lines().enumerate().skip(1) {
            let fields: Vec<&str> = line.split('\t').collect();
            let [query, document, score] = fields[..] else {
                if line.trim().is_empty() {
                    continue;
                }
                return Err(EvalError::Format(format!(
                    "{} line {}: expected 3 tab-separated fields",
                    qrels_path.display(),
                    number + 1
                )));
            };
            let score: i64 = score.trim().parse().map_err(|_| {
                EvalError::Format(format!(
                    "{} line {}: score {score:?} is not a number",
                    qrels_path.display(),
                    number + 1
                ))
            })?;
            if score > 0 && kept.contains(document) {
                judgements
                    .entry(query.to_string())
                    .or_default()
                    .insert(document.to_string(), score as u32);
            }
        }
        let mut queries: Vec<Query> = read_lines(&dir.join("queries.jsonl"))?;
        queries.retain(|q| judgements.contains_key(&q.id));
        queries.truncate(max_queries.unwrap_or(usize::MAX));
        Ok(Self {
            documents,
            queries,
            judgements,
        })
    }
}

fn read_lines<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Vec<T>, EvalError> {
    let text = std::fs::read_to_string(path).map_err(|err| EvalError::read(path, err))?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(number, line)| {
            serde_json::from_str(line).map_err(|err| {
                EvalError::Format(format!("{} line {}: {err}", path.display(), number + 1))
            })
        })
        .collect()
}
