//! The evaluation on a slice of Cranfield (`tests/data/cranfield-slice`): 200 documents and
//! 20 questions through the real chunker, the hash embedder and a `ChatIndex`.

use std::path::PathBuf;

use super::*;
use crate::retrieval::embed::hash::HashEmbedder;

fn slice() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/cranfield-slice")
}

#[test]
fn the_slice_loads_with_every_query_judged() {
    let collection = Collection::load(&slice(), None, None).unwrap();
    assert_eq!(collection.documents.len(), 200);
    assert_eq!(collection.queries.len(), 20);
    assert!(
        collection
            .queries
            .iter()
            .all(|q| !collection.judgements[&q.id].is_empty())
    );
    // Slicing keeps only the judgements of documents that are left.
    let small = Collection::load(&slice(), Some(10), Some(3)).unwrap();
    assert_eq!(small.documents.len(), 10);
    assert!(small.queries.len() <= 3);
    let kept: HashSet<&str> = small.documents.iter().map(|d| d.id.as_str()).collect();
    assert!(
        small
            .judgements
            .values()
            .flat_map(|judged| judged.keys())
            .all(|id| kept.contains(id.as_str()))
    );
}

#[tokio::test]
async fn the_slice_is_ranked_sensibly_by_each_leg_and_fused() {
    let collection = Collection::load(&slice(), None, None).unwrap();
    let tmp = tempfile::tempdir().unwrap();

    let report = evaluate(
        &collection,
        &HashEmbedder::default(),
        &tmp.path().join("index"),
        None,
    )
    .await
    .unwrap();

    println!("{report}");
    assert_eq!(report.documents, 200);
    assert_eq!(report.queries, 20);
    // Cranfield's abstracts are short: one chunk each (two are empty).
    assert!((198..=200).contains(&report.chunks), "{}", report.chunks);
    for scores in [report.words, report.vectors, report.fused] {
        assert!(scores.recall_at_100 >= scores.recall_at_10);
        assert!(scores.recall_at_100 <= 1.0);
    }
    // Floors well above chance (a random ranking of 200 documents scores near 0.03).
    assert!(report.words.ndcg_at_10 > 0.3, "{report}");
    assert!(report.vectors.ndcg_at_10 > 0.15, "{report}");
    assert!(report.fused.ndcg_at_10 > 0.3, "{report}");
    // Fusing with the hash embedder must not make the words' ranking worse.
    assert!(
        report.fused.ndcg_at_10 >= report.words.ndcg_at_10 - 1e-9,
        "{report}"
    );
    assert!(report.fused.recall_at_100 >= report.words.recall_at_100 - 1e-9);
}

#[tokio::test]
async fn the_hash_embedders_duplicate_check_is_precise_on_the_committed_pairs() {
    use crate::retrieval::embed::Embedder;
    use crate::retrieval::eval::duplicates::{TARGET_PRECISION, evaluate_duplicates, load_pairs};
    let pairs = load_pairs(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/memory-duplicates/pairs.jsonl"),
    )
    .unwrap();
    assert!(pairs.len() >= 200, "{}", pairs.len());
    let embedder = HashEmbedder::default();
    let report = evaluate_duplicates(&pairs, &embedder, embedder.duplicate_check())
        .await
        .unwrap();
    println!("{report}");
    assert!(report.default.precision >= TARGET_PRECISION, "{report}");
    assert!(report.default.recall > 0.3, "{report}");
    // Cosine alone cannot be both precise and useful: the word-by-word reading is what holds.
    let alone = report
        .cosine_only
        .iter()
        .find(|at| (at.threshold - report.default.threshold).abs() < 1e-6)
        .unwrap();
    assert!(alone.precision < 0.6, "{report}");
}
