//! Fusing the two rankings of a search into one score per chunk, in [0, 1]: a weighted mean
//! of the chunk's BM25 score divided by the best BM25 score of the search, and its cosine
//! similarity with the query (clamped to [0, 1]). The vector leg's weight comes from the
//! embedder: a hashing embedder only sees shared word pieces, which BM25 already counts
//! better, so it gets a small say; a semantic model an equal one.
//!
//! Why not reciprocal rank fusion: it gives the vector leg's 10th-best chunk as much as the
//! word leg's 10th-best whatever their scores, so a weak leg drags a strong one down, and its
//! fused score says nothing a client can read.

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
}

/// The candidates' fused scores, best first (ties by key, so the order is stable).
/// `vector_weight` in [0, 1] is the cosine's share; a search with no vectors at all ranks by
/// words alone, and one with no word match by cosine alone.
pub(super) fn fuse(candidates: &[Candidate], vector_weight: f32) -> Vec<Fused> {
    let best_bm25 = candidates.iter().map(|c| c.bm25).fold(0.0f32, f32::max);
    let has_vectors = candidates.iter().any(|c| c.cosine.is_some());
    let vector_weight = match (best_bm25 > 0.0, has_vectors) {
        (true, true) => vector_weight.clamp(0.0, 1.0),
        (true, false) => 0.0,
        (false, _) => 1.0,
    };
    let mut fused: Vec<Fused> = candidates
        .iter()
        .map(|c| {
            let words = if best_bm25 > 0.0 {
                c.bm25 / best_bm25
            } else {
                0.0
            };
            let cosine = c.cosine.unwrap_or(0.0).clamp(0.0, 1.0);
            Fused {
                key: c.key,
                score: ((1.0 - vector_weight) * words + vector_weight * cosine).clamp(0.0, 1.0),
            }
        })
        .collect();
    fused.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
    fused
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
    fn negative_cosines_count_as_zero() {
        let fused = fuse(&[candidate(1, 0.0, -0.5)], 0.5);
        assert_eq!(fused[0].score, 0.0);
    }
}
