//! Unit tests of `ChatIndex`: stemming, fusion and relevance, edits, reopening, recreating a
//! corrupt or missing directory, rebuilding.

use super::search::{CANDIDATES_PER_RANKING, SIDE_BY_SIDE_FROM};
use super::*;
use crate::retrieval::embed::cosine;
use crate::retrieval::embed::hash::HashEmbedder;
use entities::ids::{ChunkId, DocumentId};

fn chunk(id: &str, document: &str, text: &str) -> IndexedChunk {
    IndexedChunk {
        chunk_id: ChunkId::from_string(id),
        document_id: DocumentId::from_string(document),
        filename: format!("{document}.txt"),
        text: text.into(),
        headings: Default::default(),
        vector: HashEmbedder::default().embed_text(text),
    }
}

fn search(index: &ChatIndex, query: &str, k: usize) -> Vec<SearchHit> {
    let vector = HashEmbedder::default().embed_text(query);
    index.search(query, &vector, k).unwrap()
}

fn ids(hits: &[SearchHit]) -> Vec<&str> {
    hits.iter().map(|h| h.chunk_id.as_str()).collect()
}

fn sample() -> Vec<IndexedChunk> {
    vec![
        chunk(
            "c1",
            "d1",
            "The cluster runs nightly backups of every shard.",
        ),
        chunk("c2", "d1", "Quarterly revenue grew by twelve percent."),
        chunk(
            "c3",
            "d2",
            "Database sharding uses hash based partitioning.",
        ),
        chunk("c4", "d2", "The office kitchen closes at six."),
    ]
}

#[test]
fn stemming_matches_other_forms_of_a_word() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = ChatIndex::open(dir.path()).unwrap();
    index.add(sample()).unwrap();
    // Words only (a zero vector): "running" is found through "runs".
    let hits = index.search("running", &[0.0; 384], 5).unwrap();
    assert_eq!(ids(&hits), ["c1"]);
    let hits = index.search("backup", &[0.0; 384], 5).unwrap();
    assert_eq!(ids(&hits), ["c1"]);
}

#[test]
fn both_rankings_agreeing_put_a_chunk_first() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = ChatIndex::open(dir.path()).unwrap();
    index.add(sample()).unwrap();
    let hits = search(&index, "how is the database sharding partitioned?", 4);
    assert_eq!(hits[0].chunk_id, "c3");
    assert_eq!(hits[0].document_id, "d2");
    assert_eq!(hits[0].filename, "d2.txt");
    assert_eq!(
        hits[0].text,
        "Database sharding uses hash based partitioning."
    );
    let hits = search(&index, "revenue growth", 2);
    assert_eq!(hits[0].chunk_id, "c2");
    assert_eq!(hits.len(), 2);
    // Punctuation and query syntax never fail a search.
    assert!(!search(&index, "AND (( \"revenue: -", 3).is_empty());
}

#[test]
fn similarity_is_the_clamped_cosine_and_relevance_orders_the_hits() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = ChatIndex::open(dir.path()).unwrap();
    let chunks = sample();
    index.add(chunks.clone()).unwrap();
    let query = "nightly shard backups";
    let vector = HashEmbedder::default().embed_text(query);
    let hits = index.search(query, &vector, 4).unwrap();
    assert_eq!(hits.len(), 4);
    for hit in &hits {
        assert!(
            (0.0..=1.0).contains(&hit.relevance_score),
            "{}",
            hit.relevance_score
        );
        let stored = chunks.iter().find(|c| c.chunk_id == hit.chunk_id).unwrap();
        let expected = cosine(&stored.vector, &vector).clamp(0.0, 1.0);
        assert!(
            (hit.similarity - expected).abs() < 1e-5,
            "{hit:?} vs {expected}"
        );
    }
    // The list is in relevance order, and the word match that leads it scores highest.
    assert_eq!(hits[0].chunk_id, "c1");
    assert!(
        hits.windows(2)
            .all(|pair| pair[0].relevance_score >= pair[1].relevance_score),
        "{hits:?}"
    );
    assert!(hits[0].relevance_score > hits[1].relevance_score + 0.1);
}

#[test]
fn a_removed_document_is_gone_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = ChatIndex::open(dir.path()).unwrap();
    index.add(sample()).unwrap();
    index
        .remove_document(&DocumentId::from_string("d2"))
        .unwrap();
    assert_eq!(index.len(), 2);
    assert_eq!(index.indexed_len(), 2);
    let hits = search(&index, "database sharding kitchen", 10);
    assert!(hits.iter().all(|h| h.document_id == "d1"), "{hits:?}");
    // The remaining rows still line up with their chunks.
    let hits = search(&index, "quarterly revenue", 1);
    assert_eq!(ids(&hits), ["c2"]);
    assert!(hits[0].relevance_score > 0.5);
}

#[test]
fn documents_are_replaced_and_added_in_one_edit() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = ChatIndex::open(dir.path()).unwrap();
    index.add(sample()).unwrap();
    index
        .replace_documents(vec![
            (
                DocumentId::from_string("d2"),
                vec![chunk("c5", "d2", "Sharding moved to range partitioning.")],
            ),
            (
                DocumentId::from_string("d3"),
                vec![chunk("c6", "d3", "The kitchen menu lists soup on Fridays.")],
            ),
        ])
        .unwrap();
    assert_eq!((index.len(), index.indexed_len()), (4, 4));
    // A document with vectors of another dimension is refused alone.
    let mut odd = chunk("c7", "d4", "Odd vectors.");
    odd.vector.truncate(10);
    let rejected = index
        .replace_documents(vec![
            (DocumentId::from_string("d4"), vec![odd]),
            (
                DocumentId::from_string("d5"),
                vec![chunk("c8", "d5", "Fine vectors.")],
            ),
        ])
        .unwrap();
    assert_eq!(rejected.len(), 1);
    assert_eq!(rejected[0].0, "d4");
    assert!(rejected[0].1.contains("10-dimensional"), "{rejected:?}");
    assert_eq!((index.len(), index.indexed_len()), (5, 5));
    let found: Vec<String> = search(&index, "sharding partitioning kitchen", 10)
        .into_iter()
        .map(|h| h.chunk_id.into_string())
        .collect();
    assert!(found.contains(&"c5".to_string()), "{found:?}");
    assert!(found.contains(&"c6".to_string()), "{found:?}");
    assert!(
        !found.iter().any(|id| id == "c3" || id == "c4"),
        "{found:?}"
    );
    // Reopened, the words on disk agree.
    drop(index);
    let index = ChatIndex::open(dir.path()).unwrap();
    assert_eq!(index.indexed_len(), 5);
}

#[test]
fn adding_a_known_chunk_id_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = ChatIndex::open(dir.path()).unwrap();
    index.add(sample()).unwrap();
    index
        .add(vec![chunk("c4", "d2", "The canteen opens at noon.")])
        .unwrap();
    assert_eq!((index.len(), index.indexed_len()), (4, 4));
    assert_eq!(ids(&search(&index, "canteen", 1)), ["c4"]);
    assert!(
        index
            .add(vec![IndexedChunk {
                vector: vec![1.0; 3],
                ..chunk("x", "d", "x")
            }])
            .is_err()
    );
}

#[test]
fn reopening_keeps_the_words_and_vectors_are_loaded_again() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut index = ChatIndex::open(dir.path()).unwrap();
        assert!(index.was_recreated());
        index.add(sample()).unwrap();
    }
    let mut index = ChatIndex::open(dir.path()).unwrap();
    assert!(!index.was_recreated());
    assert_eq!(index.indexed_len(), 4);
    assert!(!index.needs_rebuild(4));
    assert!(index.needs_rebuild(5));
    assert!(index.is_empty());
    // Words alone still search; then the vectors come back from the database.
    assert_eq!(
        ids(&index.search("kitchen", &[0.0; 384], 1).unwrap()),
        ["c4"]
    );
    index.load_vectors(sample());
    assert_eq!(index.len(), 4);
    assert_eq!(search(&index, "kitchen closes", 1)[0].chunk_id, "c4");
}

#[test]
fn a_corrupt_directory_is_recreated_empty() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut index = ChatIndex::open(dir.path()).unwrap();
        index.add(sample()).unwrap();
    }
    fs::write(dir.path().join("meta.json"), b"{ not json at all").unwrap();
    let index = ChatIndex::open(dir.path()).unwrap();
    assert!(index.was_recreated());
    assert_eq!(index.indexed_len(), 0);
    assert!(index.needs_rebuild(4));
    assert!(search(&index, "kitchen", 3).is_empty());
}

#[test]
fn a_missing_directory_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chats").join("42");
    let index = ChatIndex::open(&path).unwrap();
    assert!(index.was_recreated());
    assert!(path.join("meta.json").exists());
    assert!(!index.needs_rebuild(0));
}

#[test]
fn many_small_additions_merge_in_the_background_and_stay_searchable() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = ChatIndex::open(dir.path()).unwrap();
    for i in 0..30 {
        let text = format!("Report number {i} mentions the word zebra{i} once.");
        index
            .add(vec![chunk(&format!("c{i}"), &format!("d{i}"), &text)])
            .unwrap();
        // Each addition is searchable at once, merges or not.
        assert_eq!(
            ids(&index.search(&format!("zebra{i}"), &[0.0; 384], 1).unwrap()),
            [format!("c{i}")]
        );
    }
    index.settle().unwrap();
    assert_eq!((index.len(), index.indexed_len()), (30, 30));
    assert_eq!(ids(&search(&index, "zebra7", 1)), ["c7"]);
    index
        .remove_document(&DocumentId::from_string("d7"))
        .unwrap();
    assert!(
        search(&index, "zebra7", 30)
            .iter()
            .all(|h| h.chunk_id != "c7")
    );
}

#[test]
fn rebuild_replaces_everything() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = ChatIndex::open(dir.path()).unwrap();
    index.add(sample()).unwrap();
    index
        .rebuild(vec![chunk("n1", "d9", "Fresh content about telescopes.")])
        .unwrap();
    assert_eq!((index.len(), index.indexed_len()), (1, 1));
    assert!(
        search(&index, "kitchen", 3)
            .iter()
            .all(|h| h.chunk_id == "n1")
    );
    assert_eq!(ids(&search(&index, "telescope", 3)), ["n1"]);
}

#[test]
fn vector_only_matches_are_found_with_their_text() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = ChatIndex::open(dir.path()).unwrap();
    index.add(sample()).unwrap();
    // Misspelt words match no stem, but share trigrams with the right ones.
    let hits = search(&index, "databse shardng", 1);
    assert_eq!(ids(&hits), ["c3"]);
    assert_eq!(
        hits[0].text,
        "Database sharding uses hash based partitioning."
    );
    assert!(search(&index, "anything", 0).is_empty());
}

#[test]
fn a_chunk_the_vectors_find_is_fused_with_its_own_bm25_however_low_the_words_rank_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = ChatIndex::open(dir.path()).unwrap();
    let mut e0 = vec![0.0; 384];
    e0[0] = 1.0;
    // Three commits, so the candidates lie in different segments; enough chunks that the
    // rankings run side by side (`SIDE_BY_SIDE_FROM`).
    for batch in 0..3 {
        let mut chunks: Vec<IndexedChunk> = (0..700)
            .map(|i| {
                chunk(
                    &format!("w{batch}-{i}"),
                    "d",
                    &format!("alpha alpha alpha beta{i}"),
                )
            })
            .collect();
        // One mention of the word in a long text: far below the others by BM25.
        let filler = ["gamma"; 80].join(" ");
        let mut weak = chunk(&format!("x{batch}"), "d", &format!("alpha {filler}"));
        weak.vector.clone_from(&e0);
        // No query word at all.
        let mut unrelated = chunk(&format!("y{batch}"), "d", "delta epsilon");
        unrelated.vector.clone_from(&e0);
        chunks.extend([weak, unrelated]);
        index.add(chunks).unwrap();
    }
    let deep = index
        .search_with(
            "alpha",
            &[0.0; 384],
            3000,
            SearchOptions::legs(Legs::Words, 0.0),
        )
        .unwrap()
        .0;
    let weak_rank = deep.iter().position(|h| h.chunk_id == "x1").unwrap();
    assert!(weak_rank >= CANDIDATES_PER_RANKING, "ranked {weak_rank}");
    assert!(index.vectors.len() >= SIDE_BY_SIDE_FROM);
    let bm25_of = |id: &str| deep.iter().find(|h| h.chunk_id == id).unwrap().bm25;

    let (hits, _) = index
        .search_with("alpha", &e0, 6, SearchOptions::fused(0.5))
        .unwrap();
    for batch in 0..3 {
        let weak = hits
            .iter()
            .find(|h| h.chunk_id == format!("x{batch}").as_str());
        let weak = weak.unwrap_or_else(|| panic!("x{batch} not in {:?}", ids(&hits)));
        assert!(weak.bm25 > 0.0);
        assert!((weak.bm25 - bm25_of(weak.chunk_id.as_str())).abs() < 1e-5);
        assert_eq!(weak.text, format!("alpha {}", ["gamma"; 80].join(" ")));
        let unrelated = hits
            .iter()
            .find(|h| h.chunk_id == format!("y{batch}").as_str());
        assert_eq!(unrelated.map(|h| h.bm25), Some(0.0));
    }
    // Word and vector matches together: the weak chunks outrank the ones with no word.
    let first_unrelated = hits
        .iter()
        .position(|h| h.chunk_id.as_str().starts_with('y'));
    let last_weak = hits
        .iter()
        .rposition(|h| h.chunk_id.as_str().starts_with('x'));
    assert!(last_weak < first_unrelated, "{:?}", ids(&hits));
}

fn words(index: &ChatIndex, query: &str) -> Vec<SearchHit> {
    index
        .search_with(query, &[0.0; 384], 5, SearchOptions::legs(Legs::Words, 0.0))
        .unwrap()
        .0
}

#[test]
fn an_exact_match_outranks_a_match_by_stem_alone() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = ChatIndex::open(dir.path()).unwrap();
    index
        .add(vec![
            chunk("stem", "d1", "The runner keeps running every morning."),
            chunk("exact", "d2", "The service runs every morning."),
        ])
        .unwrap();
    // Both hold a form of "run"; only one holds "runs" as written.
    let hits = words(&index, "runs");
    assert_eq!(ids(&hits), ["exact", "stem"]);
    assert!(hits[0].bm25 > hits[1].bm25 * 1.2, "{hits:?}");
}

#[test]
fn stemming_can_be_turned_off() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = ChatIndex::open_with(dir.path(), Stemming::parse("none").unwrap()).unwrap();
    index.add(sample()).unwrap();
    assert!(words(&index, "running").is_empty());
    assert_eq!(ids(&words(&index, "runs")), ["c1"]);
    // "the" is a word like any other without a language.
    assert_eq!(ids(&words(&index, "the office")), ["c4", "c1"]);
    drop(index);
    // Reopened in English, the index is from another schema: recreated, to be rebuilt.
    let index = ChatIndex::open(dir.path()).unwrap();
    assert!(index.was_recreated());
    assert_eq!(index.indexed_len(), 0);
}

#[test]
fn headings_add_to_the_text_and_come_back_as_a_path() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = ChatIndex::open(dir.path()).unwrap();
    let mut under_heading = chunk(
        "install",
        "guide",
        "Installation takes a minute: download the archive and unpack it.",
    );
    under_heading.headings = crate::retrieval::outline::ChunkHeadings {
        path: vec!["Guide".into(), "Installation".into()],
        within: vec!["Upgrading".into()],
    };
    index
        .add(vec![
            chunk(
                "mention",
                "notes",
                "Installation takes a minute: ask the facilities team first.",
            ),
            under_heading,
            chunk("other", "misc", "The archive is unpacked nightly."),
        ])
        .unwrap();
    // Both texts say "installation" once; the one under an Installation heading ranks first.
    let hits = words(&index, "installation");
    assert_eq!(ids(&hits), ["install", "mention"]);
    assert!(hits[0].bm25 > hits[1].bm25 * 1.2, "{hits:?}");
    assert_eq!(
        hits[0].heading_path.as_deref(),
        Some("Guide › Installation")
    );
    assert_eq!(hits[1].heading_path, None);
    // A heading inside the chunk is searchable too, but not part of its path.
    assert_eq!(ids(&words(&index, "upgrade")), ["install"]);
    // Without the headings field's weight, only the texts' lengths tell them apart.
    let lead = hits[0].bm25 / hits[1].bm25;
    let (flat, _) = index
        .search_with(
            "installation",
            &[0.0; 384],
            5,
            SearchOptions {
                headings_boost: 0.0,
                ..SearchOptions::legs(Legs::Words, 0.0)
            },
        )
        .unwrap();
    let flat_lead = flat[0].bm25.max(flat[1].bm25) / flat[0].bm25.min(flat[1].bm25);
    assert!(
        flat_lead < 1.1 && lead > flat_lead * 1.15,
        "{flat:?} {hits:?}"
    );
}

#[test]
fn an_index_from_before_stems_had_a_field_is_searched_as_it_is_until_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    write_legacy_index(dir.path(), &sample()).unwrap();
    let mut index = ChatIndex::open(dir.path()).unwrap();
    assert!(index.is_outdated());
    assert!(!index.was_recreated());
    assert_eq!(index.indexed_len(), 4);
    index.load_vectors(sample());
    // Its stems still find other forms, and documents can still be added.
    assert_eq!(ids(&words(&index, "running")), ["c1"]);
    index
        .add(vec![chunk("c5", "d3", "Backups are verified weekly.")])
        .unwrap();
    assert_eq!(ids(&words(&index, "verify")), ["c5"]);
    let hits = search(&index, "nightly backups", 2);
    assert_eq!(hits[0].chunk_id.as_str(), "c1");
    // Shared statistics work across an old index and a new one.
    let other_dir = tempfile::tempdir().unwrap();
    let mut other = ChatIndex::open(other_dir.path()).unwrap();
    other
        .add(vec![chunk("n1", "d9", "Shard backups run at night.")])
        .unwrap();
    let mut shared = index.word_statistics("backups").unwrap();
    shared.add(&other.word_statistics("backups").unwrap());
    let (found, _) = other
        .search_shared(
            "backups",
            &[0.0; 384],
            3,
            SearchOptions::legs(Legs::Words, 0.0),
            &shared,
        )
        .unwrap();
    assert_eq!(ids(&found), ["n1"]);
    assert!(found[0].bm25 > 0.0);
}
