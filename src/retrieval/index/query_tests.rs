//! Unit tests of how a `ChatIndex` reads a query: as words, never as query syntax.

use super::*;
use crate::retrieval::embed::hash::HashEmbedder;
use entities::ids::{ChunkId, DocumentId};

fn chunk(id: &str, text: &str) -> IndexedChunk {
    IndexedChunk {
        chunk_id: ChunkId::from_string(id),
        document_id: DocumentId::from_string(format!("doc-{id}")),
        filename: format!("{id}.txt"),
        text: text.into(),
        headings: Default::default(),
        vector: HashEmbedder::default().embed_text(text),
    }
}

/// A target about quasars and blazars among documents that each share some of its words.
fn astronomy() -> (tempfile::TempDir, ChatIndex) {
    let dir = tempfile::tempdir().unwrap();
    let mut index = ChatIndex::open(dir.path()).unwrap();
    let mut chunks = vec![chunk(
        "target",
        "Variability of the quasar blazar population in radio surveys.",
    )];
    for i in 0..8 {
        chunks.push(chunk(
            &format!("other{i}"),
            &format!("Radio surveys of galaxy clusters and their population, survey {i}."),
        ));
    }
    chunks.push(chunk(
        "office",
        "The office kitchen closes at six. AND so on.",
    ));
    index.add(chunks).unwrap();
    (dir, index)
}

fn words_only(index: &ChatIndex, query: &str) -> Vec<String> {
    let options = SearchOptions {
        legs: Legs::Words,
        ..SearchOptions::default()
    };
    index
        .search_with(query, &[0.0; 384], 5, options)
        .unwrap()
        .0
        .into_iter()
        .map(|hit| hit.chunk_id.as_str().to_string())
        .collect()
}

fn fused(index: &ChatIndex, query: &str) -> Vec<String> {
    let vector = HashEmbedder::default().embed_text(query);
    index
        .search(query, &vector, 5)
        .unwrap()
        .into_iter()
        .map(|hit| hit.chunk_id.as_str().to_string())
        .collect()
}

#[test]
fn hyphenated_words_are_searched_as_their_parts() {
    let (_dir, index) = astronomy();
    assert_eq!(words_only(&index, "quasar blazar")[0], "target");
    // A query parser would make a phrase of it, which an index without positions drops.
    assert_eq!(words_only(&index, "quasar-blazar")[0], "target");
    assert_eq!(
        fused(&index, "quasar-blazar"),
        fused(&index, "quasar blazar")
    );
    assert_eq!(words_only(&index, "quasar.blazar, 1,000")[0], "target");
}

#[test]
fn query_syntax_is_read_as_words() {
    let (_dir, index) = astronomy();
    // `-word` does not exclude the word: the person wants it.
    assert_eq!(words_only(&index, "-kitchen"), ["office"]);
    // `field:` is not a field.
    assert_eq!(words_only(&index, "filename:kitchen"), ["office"]);
    assert_eq!(words_only(&index, "text:blazar")[0], "target");
    // `AND` is a (stop) word, not an operator requiring both sides.
    assert_eq!(words_only(&index, "blazar AND kitchen").len(), 2);
    // Unbalanced quotes and brackets are only punctuation.
    assert_eq!(words_only(&index, "\"quasar (( blazar")[0], "target");
    // Nothing but stop words and punctuation: no word match, and no error.
    assert!(words_only(&index, "AND OR ((").is_empty());
}
