//! Measuring `save_memory`'s near-duplicate check on labelled pairs of memories
//! (`tests/data/memory-duplicates/pairs.jsonl`: an existing memory, a new one, and whether
//! saving the new one would add nothing): each pair's cosine similarity under an embedder, and
//! for each threshold the precision and recall of "at or above it, and the same fact when read
//! word by word (`same_fact`), counts as a duplicate", beside cosine alone.
//! `colloquy eval-duplicates` prints it; the embedders' default thresholds come from it.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::Deserialize;

use super::EvalError;
use crate::retrieval::embed::{DuplicateCheck, Embedder, cosine};
use crate::retrieval::same_fact::{Evidence, evidence, explain};

/// Precision a threshold must reach to be chosen: a new fact wrongly refused as a duplicate is
/// lost, while a duplicate saved only takes a place.
pub const TARGET_PRECISION: f64 = 0.95;

/// One labelled pair.
#[derive(Debug, Clone, Deserialize)]
pub struct Pair {
    pub id: String,
    pub existing: String,
    pub new: String,
    pub duplicate: bool,
    #[serde(default)]
    pub kind: String,
}

/// Reads `pairs.jsonl`.
pub fn load_pairs(path: &Path) -> Result<Vec<Pair>, EvalError> {
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

/// Precision and recall at one threshold (and synonym similarity).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AtThreshold {
    pub threshold: f32,
    /// How alike reworded words must be (`same_fact`); 0 for cosine alone.
    pub synonyms: f32,
    pub precision: f64,
    pub recall: f64,
}

/// The synonym similarities tried.
const SYNONYMS: [f32; 6] = [0.5, 0.6, 0.7, 0.8, 0.85, 0.9];

/// What a measurement found.
#[derive(Debug, Clone)]
pub struct DuplicateReport {
    pub embedder: String,
    pub pairs: usize,
    pub duplicates: usize,
    /// Every threshold from 0.50 to 0.99 by 0.01, with the word-by-word check at the
    /// embedder's synonym similarity.
    pub sweep: Vec<AtThreshold>,
    /// Every threshold and synonym similarity tried.
    pub grid: Vec<AtThreshold>,
    /// The same, by cosine alone (what the check was before it read words).
    pub cosine_only: Vec<AtThreshold>,
    /// The threshold with the best recall among those whose precision reaches
    /// `TARGET_PRECISION` (the lowest of equals), if any does.
    pub chosen: Option<AtThreshold>,
    /// The embedder's own threshold, measured.
    pub default: AtThreshold,
    /// At the embedder's own threshold: pairs judged wrongly, by kind.
    pub mistakes: BTreeMap<String, usize>,
    /// At the embedder's own threshold: each pair judged wrongly, with its similarity and
    /// what reading it word by word found.
    pub wrong: Vec<String>,
}

/// Precision (1 when nothing is flagged) and recall of `similarity >= threshold` and, unless
/// `synonyms` is `None` (cosine alone), the pair read as the same fact at that similarity.
fn measure(
    scored: &[(f32, Evidence, &Pair)],
    threshold: f32,
    synonyms: Option<f32>,
) -> AtThreshold {
    let duplicates = scored.iter().filter(|(_, _, p)| p.duplicate).count();
    let (mut true_positive, mut flagged) = (0usize, 0usize);
    for (similarity, evidence, pair) in scored {
        if *similarity >= threshold && synonyms.is_none_or(|s| evidence.same(s)) {
            flagged += 1;
            true_positive += usize::from(pair.duplicate);
        }
    }
    AtThreshold {
        threshold,
        synonyms: synonyms.unwrap_or(0.0),
        precision: if flagged == 0 {
            1.0
        } else {
            true_positive as f64 / flagged as f64
        },
        recall: if duplicates == 0 {
            0.0
        } else {
            true_positive as f64 / duplicates as f64
        },
    }
}

/// Embeds every pair with `embedder`, reads each word by word, and measures each threshold.
/// `own` is the setting whose mistakes are listed (the embedder's, unless a caller names one).
pub async fn evaluate_duplicates(
    pairs: &[Pair],
    embedder: &dyn Embedder,
    own: DuplicateCheck,
) -> Result<DuplicateReport, EvalError> {
    let texts: Vec<String> = pairs
        .iter()
        .flat_map(|pair| [pair.existing.clone(), pair.new.clone()])
        .collect();
    let vectors = embedder.embed(texts).await?;
    let mut scored: Vec<(f32, Evidence, &Pair)> = Vec::with_capacity(pairs.len());
    for (pair, two) in pairs.iter().zip(vectors.chunks(2)) {
        let evidence = evidence(embedder, &pair.existing, &pair.new).await?;
        scored.push((cosine(&two[0], &two[1]), evidence, pair));
    }
    let thresholds = || (50..100).map(|hundredths| hundredths as f32 / 100.0);
    let sweep = thresholds()
        .map(|t| measure(&scored, t, Some(own.synonyms)))
        .collect();
    let cosine_only = thresholds().map(|t| measure(&scored, t, None)).collect();
    let grid: Vec<AtThreshold> = SYNONYMS
        .iter()
        .flat_map(|s| {
            thresholds()
                .map(|t| measure(&scored, t, Some(*s)))
                .collect::<Vec<_>>()
        })
        .collect();
    // The best recall among the settings precise enough (the highest of equal thresholds and
    // synonym similarities: the most cautious).
    let chosen = grid
        .iter()
        .filter(|at| at.precision >= TARGET_PRECISION)
        .max_by(|a, b| {
            a.recall
                .total_cmp(&b.recall)
                .then(a.synonyms.total_cmp(&b.synonyms))
                .then(a.threshold.total_cmp(&b.threshold))
        })
        .copied();
    let mut mistakes = BTreeMap::new();
    let mut wrong = Vec::new();
    for (similarity, evidence, pair) in &scored {
        if (*similarity >= own.threshold && evidence.same(own.synonyms)) != pair.duplicate {
            *mistakes.entry(pair.kind.clone()).or_default() += 1;
            wrong.push(format!(
                "{} {} ({}, {similarity:.3}, {evidence:?}): {:?} / {:?}: {}",
                pair.id,
                if pair.duplicate { "missed" } else { "merged" },
                pair.kind,
                pair.existing,
                pair.new,
                explain(&pair.existing, &pair.new)
            ));
        }
    }
    Ok(DuplicateReport {
        embedder: embedder.id().to_string(),
        pairs: pairs.len(),
        duplicates: pairs.iter().filter(|p| p.duplicate).count(),
        sweep,
        grid,
        cosine_only,
        chosen,
        default: measure(&scored, own.threshold, Some(own.synonyms)),
        mistakes,
        wrong,
    })
}

impl fmt::Display for DuplicateReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "embedder {}: {} pairs, {} duplicates",
            self.embedder, self.pairs, self.duplicates
        )?;
        writeln!(
            f,
            "| threshold | precision | recall | cosine alone: precision | recall |"
        )?;
        writeln!(f, "|---|---|---|---|---|")?;
        for (at, alone) in self.sweep.iter().zip(&self.cosine_only).filter(|(at, _)| {
            let hundredths = (at.threshold * 100.0).round() as u32;
            hundredths.is_multiple_of(5) || Some(**at) == self.chosen
        }) {
            writeln!(
                f,
                "| {:.2} | {:.3} | {:.3} | {:.3} | {:.3} |",
                at.threshold, at.precision, at.recall, alone.precision, alone.recall
            )?;
        }
        writeln!(
            f,
            "best recall with precision >= {TARGET_PRECISION}, by synonym similarity:"
        )?;
        for synonyms in SYNONYMS {
            let best = self
                .grid
                .iter()
                .filter(|at| at.synonyms == synonyms && at.precision >= TARGET_PRECISION)
                .max_by(|a, b| {
                    a.recall
                        .total_cmp(&b.recall)
                        .then(a.threshold.total_cmp(&b.threshold))
                });
            if let Some(at) = best {
                writeln!(
                    f,
                    "  synonyms {synonyms:.2}: threshold {:.2}, precision {:.3}, recall {:.3}",
                    at.threshold, at.precision, at.recall
                )?;
            }
        }
        match self.chosen {
            Some(at) => writeln!(
                f,
                "best: threshold {:.2}, synonyms {:.2} (precision {:.3}, recall {:.3})",
                at.threshold, at.synonyms, at.precision, at.recall
            )?,
            None => writeln!(f, "no threshold reaches precision {TARGET_PRECISION}")?,
        }
        writeln!(
            f,
            "the embedder's own (threshold {:.2}, synonyms {:.2}): precision {:.3}, recall {:.3}; mistakes by kind: {:?}",
            self.default.threshold,
            self.default.synonyms,
            self.default.precision,
            self.default.recall,
            self.mistakes
        )?;
        for line in &self.wrong {
            writeln!(f, "  {line}")?;
        }
        Ok(())
    }
}
