//! The measures of a ranking against graded judgements, as BEIR (through `pytrec_eval`)
//! computes them: nDCG with linear gains and a log2 discount, and recall at a depth.

use std::collections::HashMap;

/// nDCG@`k` of `ranked` document ids: the discounted gain of the ranking over that of the
/// ideal one (0 when nothing is relevant).
pub fn ndcg_at(ranked: &[String], relevant: &HashMap<String, u32>, k: usize) -> f64 {
    let discount = |rank: usize| 1.0 / ((rank + 2) as f64).log2();
    let dcg: f64 = ranked
        .iter()
        .take(k)
        .enumerate()
        .map(|(rank, id)| f64::from(relevant.get(id).copied().unwrap_or(0)) * discount(rank))
        .sum();
    let mut ideal: Vec<u32> = relevant.values().copied().collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(k)
        .enumerate()
        .map(|(rank, gain)| f64::from(*gain) * discount(rank))
        .sum();
    if idcg > 0.0 { dcg / idcg } else { 0.0 }
}

/// The share of the relevant documents found in the first `k` of `ranked`.
pub fn recall_at(ranked: &[String], relevant: &HashMap<String, u32>, k: usize) -> f64 {
    if relevant.is_empty() {
        return 0.0;
    }
    let found = ranked
        .iter()
        .take(k)
        .filter(|id| relevant.contains_key(*id))
        .count();
    found as f64 / relevant.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|id| id.to_string()).collect()
    }

    #[test]
    fn ndcg_is_one_for_the_ideal_order_and_lower_for_others() {
        let relevant = HashMap::from([("a".to_string(), 3), ("b".to_string(), 1)]);
        assert!((ndcg_at(&ids(&["a", "b", "c"]), &relevant, 10) - 1.0).abs() < 1e-12);
        let swapped = ndcg_at(&ids(&["b", "a", "c"]), &relevant, 10);
        // (1 + 3/log2 3) / (3 + 1/log2 3)
        let expected = (1.0 + 3.0 / 3f64.log2()) / (3.0 + 1.0 / 3f64.log2());
        assert!((swapped - expected).abs() < 1e-12, "{swapped}");
        assert_eq!(ndcg_at(&ids(&["c", "d"]), &relevant, 10), 0.0);
        // Past the cut-off nothing counts.
        assert_eq!(ndcg_at(&ids(&["c", "a"]), &relevant, 1), 0.0);
    }

    #[test]
    fn recall_counts_relevant_documents_within_the_depth() {
        let relevant = HashMap::from([
            ("a".to_string(), 1),
            ("b".to_string(), 2),
            ("c".to_string(), 1),
            ("d".to_string(), 1),
        ]);
        let ranked = ids(&["x", "a", "y", "b"]);
        assert_eq!(recall_at(&ranked, &relevant, 2), 0.25);
        assert_eq!(recall_at(&ranked, &relevant, 10), 0.5);
        assert_eq!(recall_at(&ranked, &HashMap::new(), 10), 0.0);
    }
}
