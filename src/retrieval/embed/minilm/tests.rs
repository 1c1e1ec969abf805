//! Unit tests of the `minilm` embedder, on the tiny test model: unit vectors, determinism,
//! batches, windows, prefixed weights, errors that name the file, the assumed configuration.

use super::encoder::WINDOW_TOKENS;
use super::test_model::{TEST_HIDDEN, write_test_model_files};
use super::*;
use crate::retrieval::embed::normalize;

fn test_model(seed: u64) -> (tempfile::TempDir, MiniLm) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tiny-minilm");
    write_test_model(&dir, seed).unwrap();
    let model = MiniLm::load(&dir).unwrap();
    (tmp, model)
}

fn texts(texts: &[&str]) -> Vec<String> {
    texts.iter().map(|text| text.to_string()).collect()
}

fn length(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

fn max_difference(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

#[test]
fn the_test_model_embeds_texts_as_unit_vectors_of_its_hidden_size() {
    let (_tmp, model) = test_model(1);

    let vectors = model
        .embed_sync(&texts(&["The cat sat on the mat.", "", "Rust is fun!"]))
        .unwrap();

    assert_eq!(vectors.len(), 3);
    for vector in &vectors {
        assert_eq!(vector.len(), TEST_HIDDEN);
        assert!(
            (length(vector) - 1.0).abs() < 1e-5,
            "length {}",
            length(vector)
        );
    }
    assert_eq!(model.id(), "minilm:tiny-minilm");
}

#[test]
fn the_same_text_embeds_identically_and_different_texts_differ() {
    let (_tmp, model) = test_model(2);

    let first = model.embed_sync(&texts(&["a dog chased the cat"])).unwrap();
    let again = model.embed_sync(&texts(&["a dog chased the cat"])).unwrap();
    let other = model
        .embed_sync(&texts(&["tomorrow it rains in paris"]))
        .unwrap();

    assert_eq!(first, again);
    assert!(max_difference(&first[0], &other[0]) > 1e-3);
}

#[test]
fn a_batch_gives_each_text_the_vector_it_gets_alone() {
    let (_tmp, model) = test_model(3);
    let batch = texts(&[
        "short",
        "a somewhat longer sentence about dogs and cats",
        "x",
    ]);

    let together = model.embed_sync(&batch).unwrap();

    for (text, vector) in batch.iter().zip(&together) {
        let alone = model.embed_sync(std::slice::from_ref(text)).unwrap();
        assert!(max_difference(&alone[0], vector) < 1e-5, "{text}");
    }
}

#[test]
fn a_long_text_is_the_mean_of_its_windows_weighted_by_their_tokens() {
    let (_tmp, model) = test_model(4);
    // Three full windows and a short leftover, which must weigh only what it holds.
    let text = "the quick brown fox jumps over the lazy dog. ".repeat(60);
    let encoder = &model.encoder;

    let windows = encoder.windows(&text).unwrap();
    let vector = model
        .embed_sync(std::slice::from_ref(&text))
        .unwrap()
        .remove(0);

    assert!(windows.len() >= 3, "{} windows", windows.len());
    for window in &windows {
        assert!(window.len() <= WINDOW_TOKENS);
        assert_eq!(window.first(), Some(&encoder.cls));
        assert_eq!(window.last(), Some(&encoder.sep));
    }
    let mut expected = vec![0.0f32; TEST_HIDDEN];
    for window in &windows {
        let pooled = encoder
            .pool(std::slice::from_ref(window))
            .unwrap()
            .remove(0);
        let weight = window.len() as f32;
        expected
            .iter_mut()
            .zip(&pooled)
            .for_each(|(e, x)| *e += weight * x);
    }
    normalize(&mut expected);
    assert!(max_difference(&vector, &expected) < 1e-5);
    assert!(windows.last().unwrap().len() < windows[0].len());
}

#[test]
fn weights_under_a_bert_prefix_load_as_the_same_model() {
    let tmp = tempfile::tempdir().unwrap();
    let (plain, prefixed) = (tmp.path().join("plain"), tmp.path().join("prefixed"));
    write_test_model_files(&plain, 5, "").unwrap();
    write_test_model_files(&prefixed, 5, "bert.").unwrap();
    let input = texts(&["hello world"]);

    let plain = MiniLm::load(&plain).unwrap().embed_sync(&input).unwrap();
    let prefixed = MiniLm::load(&prefixed).unwrap().embed_sync(&input).unwrap();

    assert_eq!(plain, prefixed);
}

#[test]
fn the_test_model_depends_only_on_its_seed() {
    let tmp = tempfile::tempdir().unwrap();
    let read = |name: &str, seed: u64| {
        let dir = tmp.path().join(name);
        write_test_model(&dir, seed).unwrap();
        std::fs::read(dir.join(MODEL_FILE)).unwrap()
    };

    assert_eq!(read("a", 7), read("b", 7));
    assert_ne!(read("c", 7), read("d", 8));
}

#[test]
fn a_missing_directory_or_file_is_named_in_the_error() {
    let tmp = tempfile::tempdir().unwrap();
    let absent = tmp.path().join("absent");
    let error = MiniLm::load(&absent).err().unwrap().to_string();
    assert!(error.contains("absent"), "{error}");

    let dir = tmp.path().join("model");
    write_test_model(&dir, 9).unwrap();
    std::fs::remove_file(dir.join(TOKENIZER_FILE)).unwrap();
    let error = MiniLm::load(&dir).err().unwrap().to_string();
    assert!(error.contains(TOKENIZER_FILE), "{error}");
}

#[test]
fn a_corrupt_model_file_is_named_in_the_error() {
    let tmp = tempfile::tempdir().unwrap();
    write_test_model(tmp.path(), 10).unwrap();
    std::fs::write(tmp.path().join(MODEL_FILE), b"not safetensors").unwrap();

    let error = format!("{:#}", MiniLm::load(tmp.path()).err().unwrap());

    assert!(error.contains(MODEL_FILE), "{error}");
}

#[test]
fn without_config_json_the_minilm_configuration_is_assumed() {
    let tmp = tempfile::tempdir().unwrap();

    let config = read_config(tmp.path()).unwrap();

    assert_eq!(config.vocab_size, 30522);
    assert_eq!(config.hidden_size, 384);
    assert_eq!(config.num_hidden_layers, 6);
    assert_eq!(config.num_attention_heads, 12);
    assert_eq!(config.intermediate_size, 1536);
    assert_eq!(config.max_position_embeddings, 512);
}

#[test]
fn looks_like_model_needs_both_files() {
    let tmp = tempfile::tempdir().unwrap();
    assert!(!looks_like_model(tmp.path()));
    assert!(!looks_like_model(&tmp.path().join("absent")));

    write_test_model(tmp.path(), 11).unwrap();
    assert!(looks_like_model(tmp.path()));

    std::fs::remove_file(tmp.path().join(MODEL_FILE)).unwrap();
    assert!(!looks_like_model(tmp.path()));
}

#[tokio::test]
async fn embed_runs_on_the_blocking_pool_and_matches_embed_sync() {
    let (_tmp, model) = test_model(12);
    let input = texts(&["one text", "another text"]);

    let vectors = model.embed(input.clone()).await.unwrap();

    assert_eq!(vectors, model.embed_sync(&input).unwrap());
}
