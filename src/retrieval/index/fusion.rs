//! Fusing the two rankings of a search into one score per chunk, in [0, 1]: a weighted mean
//! of the chunk's BM25 score divided by the best BM25 score of the search, and its cosine
//! similarity with the query (clamped to [0, 1]) divided by the best cosine of the search
//! (`SEARCH_SCALE`). Both legs then span [0, 1] whatever the embedder's scale: MiniLM's
//! cosines between a question and a passage sit between 0.2 and 0.7, so taken as they are
//! they moved a fused score less than the vector weight says. The vector leg's weight comes
//! from the embedder: a hashing embedder only sees shared word pieces, which BM25 already
//! counts better, so it gets a small say; a semantic model an equal one.
//!
//! Chosen by measuring (`colloquy eval-retrieval`, nDCG@10 on Cranfield and on the man-page
//! collection, hash and MiniLM embedders; README has the table) against the cosine as it is
//! (`fuse`), both legs scaled from their lowest candidate to their best (`Scale::MinMax`) and
//! reciprocal rank fusion (`fuse_ranks`): the cosine divided by its best was as good as or
//! better than the cosine as it is on all four, min-max within 0.004 of it either way (ahead on
//! two, behind on two: no reason to make a search's scores depend on its weakest candidate),
//! reciprocal rank worst on three. Nothing here is fitted to
//! a collection: the weights are the embedders' own, and the scaling has no parameter.
//!
//! Hits of several indexes (a knowledge base's and a chat's documents) are ranked as one
//! search by `fuse_across`: each index scored its BM25 with the statistics of them all
//! (`statistics`), so the best BM25 among all their hits is the one normalisation.
//!
//! Why not reciprocal rank fusion: it gives the vector leg's 10th-best chunk as much as the
//! word leg's 10th-best whatever their scores, so a weak leg drags a strong one down, and its
//! fused score says nothing a client can read.

use super::SearchHit;

/// A chunk found by either ranking, with what each said of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Candidate {
    pub(super) key: u64,
    /// Its BM25 score, 0 when the word ranking did not find it.
    pub(super) bm25: f32,
    /// Its cosine similarity with the query, `None` without vectors.
    pub(super) cosine: Option<f32>,
}

/// A candidate and its fused score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Fused {
    pub(super) key: u64,
    pub(super) score: f32,
    /// What the candidate brought: its BM25 score.
    pub(super) bm25: f32,
}

/// How searches scale the legs before they are weighed.
pub(super) const SEARCH_SCALE: Scale = Scale::Relative;

/// The candidates' fused scores with the cosine as it is (`Scale::Absolute`, how searches
/// fused before `SEARCH_SCALE` was measured better), best first (ties by key, so the order is
/// stable). `vector_weight` in [0, 1] is the cosine's share; a search with no vectors at all
/// ranks by words alone, and one with no word match by cosine alone.
pub(super) fn fuse(candidates: &[Candidate], vector_weight: f32) -> Vec<Fused> {
    fuse_scaled(candidates, vector_weight, Scale::Absolute)
}

/// How a leg's scores are brought to [0, 1] before they are weighed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scale {
    /// BM25 divided by the search's best; the cosine as it is (clamped to [0, 1]).
    Absolute,
    /// Both divided by the search's best.
    Relative,
    /// Both from the candidates' lowest (0) to their best (1).
    MinMax,
}

/// The candidates' fused scores, best first, the legs' scores brought to [0, 1] by `scale`
/// (searches use `SEARCH_SCALE`).
pub(super) fn fuse_scaled(
    candidates: &[Candidate],
    vector_weight: f32,
    scale: Scale,
) -> Vec<Fused> {
    let best_bm25 = candidates.iter().map(|c| c.bm25).fold(0.0f32, f32::max);
    let least_bm25 = candidates
        .iter()
        .map(|c| c.bm25)
        .filter(|b| *b > 0.0)
        .fold(f32::INFINITY, f32::min);
    let cosines = || {
        candidates
            .iter()
            .filter_map(|c| c.cosine)
            .map(|c| c.clamp(0.0, 1.0))
    };
    let best_cosine = cosines().fold(0.0f32, f32::max);
    let least_cosine = cosines().fold(f32::INFINITY, f32::min);
    let has_vectors = candidates.iter().any(|c| c.cosine.is_some());
    let vector_weight = match (best_bm25 > 0.0, has_vectors) {
        (true, true) => vector_weight.clamp(0.0, 1.0),
        (true, false) => 0.0,
        (false, _) => 1.0,
    };
    let mut fused: Vec<Fused> = candidates
        .iter()
        .map(|c| {
            let mut words = if best_bm25 > 0.0 {
                c.bm25 / best_bm25
            } else {
                0.0
            };
            let mut cosine = c.cosine.unwrap_or(0.0).clamp(0.0, 1.0);
            match scale {
                Scale::Absolute => {}
                Scale::Relative if best_cosine > 0.0 => cosine /= best_cosine,
                Scale::Relative => {}
                Scale::MinMax => {
                    if c.bm25 > 0.0 && best_bm25 > least_bm25 {
                        words = (c.bm25 - least_bm25) / (best_bm25 - least_bm25);
                    }
                    if best_cosine > least_cosine {
                        cosine = (cosine - least_cosine) / (best_cosine - least_cosine);
                    }
                }
            }
            Fused {
                key: c.key,
                score: ((1.0 - vector_weight) * words + vector_weight * cosine).clamp(0.0, 1.0),
                bm25: c.bm25,
            }
        })
        .collect();
    fused.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
    fused
}

/// Reciprocal rank fusion (Cormack et al., 2009), kept to be measured against `fuse`: each
/// candidate scores 1 / (k + rank) in each ranking that has it (words by BM25, vectors by
/// cosine), the sum scaled so a candidate first in both scores 1. `eval` reports both; `fuse`
/// is what searches use (see the module's comment and README's measurements).
pub(super) fn fuse_ranks(candidates: &[Candidate], k: f32) -> Vec<Fused> {
    let mut by_words: Vec<&Candidate> = candidates.iter().filter(|c| c.bm25 > 0.0).collect();
    by_words.sort_by(|a, b| b.bm25.total_cmp(&a.bm25).then(a.key.cmp(&b.key)));
    let mut by_vectors: Vec<&Candidate> =
        candidates.iter().filter(|c| c.cosine.is_some()).collect();
    by_vectors.sort_by(|a, b| {
        b.cosine
            .unwrap_or(0.0)
            .total_cmp(&a.cosine.unwrap_or(0.0))
            .then(a.key.cmp(&b.key))
    });
    let legs = f32::from(u8::from(!by_words.is_empty()) + u8::from(!by_vectors.is_empty()));
    let mut scores: std::collections::HashMap<u64, f32> = std::collections::HashMap::new();
    for ranking in [&by_words, &by_vectors] {
        for (rank, candidate) in ranking.iter().enumerate() {
            *scores.entry(candidate.key).or_default() += 1.0 / (k + rank as f32 + 1.0);
        }
    }
    let best = legs / (k + 1.0);
    let mut fused: Vec<Fused> = candidates
        .iter()
        .map(|c| Fused {
            key: c.key,
            score: scores.get(&c.key).map_or(0.0, |s| s / best),
            bm25: c.bm25,
        })
        .collect();
    fused.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
    fused
}

/// The hits of several indexes, each tagged with where it came from, as one ranking, best
/// first: fused again from their BM25 scores (which must share one scale: `search_shared`)
/// and cosines with `vector_weight`, each `relevance_score` replaced by its place in the whole.
pub fn fuse_across<T>(hits: Vec<(T, SearchHit)>, vector_weight: f32) -> Vec<(T, SearchHit)> {
    let candidates: Vec<Candidate> = hits
        .iter()
        .enumerate()
        .map(|(at, (_, hit))| Candidate {
            key: at as u64,
            bm25: hit.bm25,
            cosine: hit.cosine,
        })
        .collect();
    let mut slots: Vec<Option<(T, SearchHit)>> = hits.into_iter().map(Some).collect();
    fuse_scaled(&candidates, vector_weight, SEARCH_SCALE)
        .into_iter()
        .filter_map(|fused| {
            let (from, mut hit) = slots.get_mut(fused.key as usize)?.take()?;
            hit.relevance_score = fused.score;
            Some((from, hit))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(key: u64, bm25: f32, cosine: f32) -> Candidate {
        Candidate {
            key,
            bm25,
            cosine: Some(cosine),
        }
    }

    #[test]
    fn scores_are_a_weighted_mean_in_zero_to_one_best_first() {
        let fused = fuse(
            &[
                candidate(1, 2.0, 0.9),
                candidate(2, 8.0, 0.1),
                candidate(3, 0.0, 0.5),
            ],
            0.5,
        );
        let scores: Vec<(u64, f32)> = fused.iter().map(|f| (f.key, f.score)).collect();
        // 2: 0.5 * 1 + 0.5 * 0.1; 1: 0.5 * 0.25 + 0.5 * 0.9; 3: 0.5 * 0.5
        assert_eq!(scores.iter().map(|s| s.0).collect::<Vec<_>>(), [1, 2, 3]);
        assert!((scores[0].1 - 0.575).abs() < 1e-6);
        assert!((scores[1].1 - 0.55).abs() < 1e-6);
        assert!((scores[2].1 - 0.25).abs() < 1e-6);
    }

    #[test]
    fn a_small_vector_weight_lets_words_lead() {
        let candidates = [candidate(1, 10.0, 0.2), candidate(2, 6.0, 0.6)];
        assert_eq!(fuse(&candidates, 0.2)[0].key, 1);
        assert_eq!(fuse(&candidates, 0.8)[0].key, 2);
    }

    #[test]
    fn one_silent_leg_leaves_the_other_in_charge() {
        // No word matched: cosine alone, not scaled down by the words' weight.
        let fused = fuse(&[candidate(1, 0.0, 0.4), candidate(2, 0.0, 0.7)], 0.2);
        assert_eq!(fused[0].key, 2);
        assert!((fused[0].score - 0.7).abs() < 1e-6);
        // No vectors: words alone, the best at 1.
        let words_only = [
            Candidate {
                key: 1,
                bm25: 3.0,
                cosine: None,
            },
            Candidate {
                key: 2,
                bm25: 6.0,
                cosine: None,
            },
        ];
        let fused = fuse(&words_only, 0.5);
        assert_eq!((fused[0].key, fused[0].score), (2, 1.0));
        assert_eq!((fused[1].key, fused[1].score), (1, 0.5));
    }

    #[test]
    fn reciprocal_ranks_ignore_how_far_apart_the_scores_are() {
        // 1 leads the words by far and is last by cosine; 2 is second in both.
        let candidates = [
            candidate(1, 100.0, 0.1),
            candidate(2, 2.0, 0.5),
            candidate(3, 1.0, 0.9),
        ];
        let fused = fuse_ranks(&candidates, 60.0);
        let order: Vec<u64> = fused.iter().map(|f| f.key).collect();
        // 1: 1/61 + 1/63 = 3: 1/63 + 1/61 > 2: 1/62 + 1/62, ties by key: 1's lead in words
        // counts no more than 3's in cosine.
        assert_eq!(order, [1, 3, 2]);
        assert!((fused[0].score - fused[1].score).abs() < 1e-6);
        assert!(fused[1].score - fused[2].score < 1e-3);
        let alone = fuse_ranks(&[candidate(7, 3.0, 0.9)], 60.0);
        assert!((alone[0].score - 1.0).abs() < 1e-6);
    }

    #[test]
    fn negative_cosines_count_as_zero() {
        let fused = fuse(&[candidate(1, 0.0, -0.5)], 0.5);
        assert_eq!(fused[0].score, 0.0);
    }
}

#[cfg(test)]
mod across_tests {
    use super::*;
    use entities::ids::{ChunkId, DocumentId};

    fn hit(name: &str, local_score: f32, bm25: f32, cosine: f32) -> SearchHit {
        SearchHit {
            chunk_id: ChunkId::from_string(name),
            document_id: DocumentId::from_string(name),
            filename: format!("{name}.txt"),
            text: name.into(),
            heading_path: None,
            relevance_score: local_score,
            similarity: cosine,
            bm25,
            cosine: Some(cosine),
        }
    }

    #[test]
    fn hits_of_several_indexes_are_ranked_by_one_normalisation() {
        // Each index's best was 1.0 in its own search; on the shared scale the weak index's
        // best matches the words far less than the strong one's.
        let hits = vec![
            ("weak", hit("weak-best", 1.0, 2.0, 0.3)),
            ("strong", hit("strong-best", 1.0, 8.0, 0.3)),
            ("strong", hit("strong-second", 0.6, 4.0, 0.3)),
        ];
        let ranked = fuse_across(hits, 0.2);
        let order: Vec<&str> = ranked.iter().map(|(_, h)| h.text.as_str()).collect();
        assert_eq!(order, ["strong-best", "strong-second", "weak-best"]);
        assert_eq!(ranked[0].0, "strong");
        // 0.8 * 8/8 + 0.2 * 0.3/0.3, and the weak one 0.8 * 2/8 + 0.2 * 0.3/0.3: the cosine
        // is divided by the best of the search as BM25 is.
        assert!((ranked[0].1.relevance_score - 1.0).abs() < 1e-6);
        assert!((ranked[2].1.relevance_score - 0.4).abs() < 1e-6);
    }

    #[test]
    fn no_hits_rank_as_nothing() {
        assert!(fuse_across(Vec::<((), SearchHit)>::new(), 0.5).is_empty());
    }
}
