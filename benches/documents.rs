//! The document workspace under load: ingestion throughput (extract → chunk → embed with the hash
//! embedder → index) over ~50 MB of generated prose, as two chats filled to the workspace's limits
//! (docs/spec.md#workspace-limits: 50 files of 500,000 characters). The first chat takes one file
//! after another on one thread, each its own commit, which gives every stage's cost; the second is
//! ingested the way the workspace does it (files prepared two at a time, indexed in groups through
//! `OpenIndex`), which is the throughput an upload burst sees. Then hybrid search latency on the
//! first chat, and the cost of reopening it.
//!
//! Run with `cargo bench --bench documents`. The text is deterministic, so runs compare.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use colloquy::documents::OpenIndex;
use colloquy::retrieval::chunk::Chunker;
use colloquy::retrieval::embed::hash::HashEmbedder;
use colloquy::retrieval::extract::{DocKind, extract};
use colloquy::retrieval::index::{ChatIndex, IndexedChunk};
use colloquy::tools::fetch::extract::Deadline;
use entities::ids::{ChunkId, DocumentId};

/// Files per chat and characters per file: the workspace's limits (docs/spec.md#workspace-limits).
const FILES_PER_CHAT: usize = 50;
const CHARS_PER_FILE: usize = 500_000;
/// Two full chats: about 50 MB of text in all.
const CHATS: usize = 2;
const QUERIES: usize = 1_000;
const WARM_UP_QUERIES: usize = 50;
const TOP_K: usize = 5;
/// Files prepared at once: the default `documents.processing_concurrency`.
const PROCESSING_CONCURRENCY: usize = 2;

/// Everyday words, drawn often (stop words, common nouns, a few inflections).
const COMMON: &str = "the of and to in is that for it as with was on be by this are from or at an \
    which have not but all can their has more when will one each other about into than system \
    data server request user model report team process network storage cluster database latency \
    release budget customer quarter revenue policy contract schedule design review service \
    running runs measured measuring failure failures recovery backup backups shard sharding \
    replica replicas index indexes query queries memory disk throughput deadline meeting office \
    invoice";
/// Syllables for a long tail of rarer made-up words, as real documents have.
const SYLLABLES: &str = "ka lo min ter sa vo rin del pra quo ze tan bel cor nu phi gra dex mo lith \
    ar ven sol tri";

/// A small linear congruential generator: deterministic and dependency-free.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        self.next() as usize % n
    }
}

struct Vocabulary {
    common: Vec<&'static str>,
    rare: Vec<String>,
}

impl Vocabulary {
    fn new() -> Self {
        let mut rng = Lcg(99);
        let syllables: Vec<&str> = SYLLABLES.split_whitespace().collect();
        let rare = (0..5_000)
            .map(|_| {
                let count = 2 + rng.below(3);
                (0..count)
                    .map(|_| syllables[rng.below(syllables.len())])
                    .collect()
            })
            .collect();
        Self {
            common: COMMON.split_whitespace().collect(),
            rare,
        }
    }

    /// Two words in three are common; rare words follow a rough Zipf curve.
    fn word<'a>(&'a self, rng: &mut Lcg) -> &'a str {
        if rng.below(3) < 2 {
            self.common[rng.below(self.common.len())]
        } else {
            let u = (rng.next() % 1_000_000) as f64 / 1_000_000.0;
            &self.rare[(u * u * u * self.rare.len() as f64) as usize]
        }
    }
}

/// Paragraphs of sentences, cut at exactly `chars` characters.
fn file_text(vocabulary: &Vocabulary, rng: &mut Lcg, chars: usize) -> String {
    let mut text = String::with_capacity(chars + 200);
    while text.len() < chars {
        for _ in 0..3 + rng.below(5) {
            let words = 6 + rng.below(16);
            for w in 0..words {
                let word = vocabulary.word(rng);
                if w == 0 {
                    let mut letters = word.chars();
                    if let Some(first) = letters.next() {
                        text.extend(first.to_uppercase());
                        text.push_str(letters.as_str());
                    }
                } else {
                    text.push(' ');
                    text.push_str(word);
                    if rng.below(12) == 0 {
                        text.push(',');
                    } else if rng.below(40) == 0 {
                        text.push_str(&format!(" {}", rng.below(10_000)));
                    }
                }
            }
            text.push_str(if rng.below(10) == 0 { "? " } else { ". " });
        }
        text.push_str("\n\n");
    }
    text.truncate(chars);
    text
}

fn query_text(vocabulary: &Vocabulary, rng: &mut Lcg) -> String {
    let words: Vec<&str> = (0..2 + rng.below(6))
        .map(|_| vocabulary.word(rng))
        .collect();
    match rng.below(4) {
        0 => format!("what does the report say about {}?", words.join(" ")),
        1 => format!("\"{}\" AND ({})", words[0], words[1..].join(" OR ")),
        _ => words.join(" "),
    }
}

#[derive(Default)]
struct Stages {
    extract: Duration,
    chunk: Duration,
    embed: Duration,
    index: Duration,
}

/// One file through extract → chunk → embed, ready for the index.
fn prepare(
    chat: usize,
    f: usize,
    file: &str,
    chunker: &Chunker,
    embedder: &HashEmbedder,
    stages: &mut Stages,
) -> Vec<IndexedChunk> {
    let started = Instant::now();
    let deadline = Deadline::after(std::time::Duration::from_secs(60));
    let extraction = extract(file.as_bytes(), DocKind::Text, CHARS_PER_FILE, &deadline).unwrap();
    let text = extraction.text.unwrap_or_default();
    stages.extract += started.elapsed();

    let started = Instant::now();
    let chunks = chunker.chunk(&text);
    stages.chunk += started.elapsed();

    let started = Instant::now();
    let vectors: Vec<Vec<f32>> = chunks
        .iter()
        .map(|c| embedder.embed_text(&c.text))
        .collect();
    stages.embed += started.elapsed();

    let document_id = DocumentId::from_string(format!("doc-{chat}-{f}"));
    chunks
        .into_iter()
        .zip(vectors)
        .map(|(chunk, vector)| IndexedChunk {
            chunk_id: ChunkId::from_string(format!("{document_id}-{}", chunk.index)),
            document_id: document_id.clone(),
            filename: format!("file-{f}.txt"),
            text: chunk.text,
            headings: Default::default(),
            vector,
        })
        .collect()
}

/// Each file through every stage in turn, on one thread: per-stage times.
fn ingest_sequentially(index: &mut ChatIndex, chat: usize, files: &[String]) -> Stages {
    let (chunker, embedder) = (Chunker::default(), HashEmbedder::default());
    let mut stages = Stages::default();
    for (f, file) in files.iter().enumerate() {
        let chunks = prepare(chat, f, file, &chunker, &embedder, &mut stages);
        let started = Instant::now();
        index.add(chunks).unwrap();
        stages.index += started.elapsed();
    }
    // Count the merges still running in the background.
    let started = Instant::now();
    index.settle().unwrap();
    stages.index += started.elapsed();
    stages
}

/// As the workspace ingests an upload burst: `PROCESSING_CONCURRENCY` files prepared at once
/// on the blocking pool, each then handed to the chat's `OpenIndex`, which indexes whatever
/// is waiting in one commit. (The workspace also stores chunks in the database; not here.)
fn ingest_like_the_workspace(index: ChatIndex, chat: usize, files: &[String]) -> ChatIndex {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let open = Arc::new(OpenIndex::new(index));
    let permits = Arc::new(tokio::sync::Semaphore::new(PROCESSING_CONCURRENCY));
    let chunker = Arc::new(Chunker::default());
    runtime.block_on(async {
        let mut tasks = tokio::task::JoinSet::new();
        for (f, file) in files.iter().enumerate() {
            let (open, permits, chunker, file) =
                (open.clone(), permits.clone(), chunker.clone(), file.clone());
            tasks.spawn(async move {
                let permit = permits.acquire_owned().await.unwrap();
                let chunks = tokio::task::spawn_blocking(move || {
                    prepare(
                        chat,
                        f,
                        &file,
                        &chunker,
                        &HashEmbedder::default(),
                        &mut Stages::default(),
                    )
                })
                .await
                .unwrap();
                drop(permit);
                open.replace_document(DocumentId::from_string(format!("doc-{chat}-{f}")), chunks)
                    .await
                    .unwrap();
            });
        }
        while let Some(done) = tasks.join_next().await {
            done.unwrap();
        }
        open.settle().await.unwrap();
    });
    open.into_inner().expect("every task is done")
}

/// Segments in an index directory (one `.store` file each).
fn segment_count(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|entry| {
            let name = entry.as_ref().unwrap().file_name();
            name.to_string_lossy().ends_with(".store")
        })
        .count()
}

fn mb_per_s(bytes: usize, time: Duration) -> f64 {
    bytes as f64 / 1e6 / time.as_secs_f64()
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let rank = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1].as_secs_f64() * 1e3
}

fn main() {
    let vocabulary = Vocabulary::new();
    let mut rng = Lcg(2024);
    let generated = Instant::now();
    let chats: Vec<Vec<String>> = (0..CHATS)
        .map(|_| {
            (0..FILES_PER_CHAT)
                .map(|_| file_text(&vocabulary, &mut rng, CHARS_PER_FILE))
                .collect()
        })
        .collect();
    let bytes: usize = chats.iter().flatten().map(String::len).sum();
    println!(
        "generated {} files, {:.1} MB of text in {:.1} s",
        CHATS * FILES_PER_CHAT,
        bytes as f64 / 1e6,
        generated.elapsed().as_secs_f64()
    );

    let embedder = HashEmbedder::default();
    // Load the tokenizer before the clock starts: it happens once per process.
    Chunker::default().chunk("warm up");
    let dir = tempfile::tempdir().unwrap();
    let chat_dir = |chat: usize| dir.path().join(format!("chat-{chat}"));
    let chat_bytes: Vec<usize> = chats
        .iter()
        .map(|files| files.iter().map(String::len).sum())
        .collect();

    let mut first = ChatIndex::open(&chat_dir(0)).unwrap();
    let started = Instant::now();
    let stages = ingest_sequentially(&mut first, 0, &chats[0]);
    let sequential = started.elapsed();

    let second = ChatIndex::open(&chat_dir(1)).unwrap();
    let started = Instant::now();
    let second = ingest_like_the_workspace(second, 1, &chats[1]);
    let pipelined = started.elapsed();

    println!();
    println!(
        "ingestion, one file after another on one thread, a commit each ({} files, {:.1} MB, {} chunks of 1024 tokens, {} segments)",
        FILES_PER_CHAT,
        chat_bytes[0] as f64 / 1e6,
        first.len(),
        segment_count(&chat_dir(0))
    );
    println!("  {:<10} {:>9} {:>10}", "stage", "seconds", "MB/s");
    for (name, time) in [
        ("extract", stages.extract),
        ("chunk", stages.chunk),
        ("embed", stages.embed),
        ("index", stages.index),
        ("total", sequential),
    ] {
        println!(
            "  {name:<10} {:>9.2} {:>10.1}",
            time.as_secs_f64(),
            mb_per_s(chat_bytes[0], time)
        );
    }
    println!();
    println!(
        "ingestion as the workspace does it ({} files, {:.1} MB, {} chunks; {PROCESSING_CONCURRENCY} files prepared at once, indexed in groups, {} segments)",
        FILES_PER_CHAT,
        chat_bytes[1] as f64 / 1e6,
        second.len(),
        segment_count(&chat_dir(1))
    );
    println!(
        "  {:<10} {:>9.2} {:>10.1}",
        "total",
        pipelined.as_secs_f64(),
        mb_per_s(chat_bytes[1], pipelined)
    );
    let indexes = [first, second];

    let index = &indexes[0];
    let queries: Vec<String> = (0..WARM_UP_QUERIES + QUERIES)
        .map(|_| query_text(&vocabulary, &mut rng))
        .collect();
    let mut latencies = Vec::with_capacity(QUERIES);
    let mut empty = 0;
    for (i, query) in queries.iter().enumerate() {
        let started = Instant::now();
        let vector = embedder.embed_text(query);
        let hits = index.search(query, &vector, TOP_K).unwrap();
        let elapsed = started.elapsed();
        if i >= WARM_UP_QUERIES {
            latencies.push(elapsed);
            empty += usize::from(hits.is_empty());
        }
    }
    latencies.sort();

    println!();
    println!(
        "search (one chat: {} files, {} chunks; embed + hybrid top {TOP_K}; {QUERIES} queries)",
        FILES_PER_CHAT,
        index.len()
    );
    println!("  {:<10} {:>9}", "", "ms");
    for (name, p) in [("p50", 0.50), ("p95", 0.95), ("p99", 0.99), ("max", 1.0)] {
        println!("  {name:<10} {:>9.3}", percentile(&latencies, p));
    }
    if empty > 0 {
        println!("  ({empty} queries found nothing)");
    }

    // Re-opening a chat: the words are on disk, the vectors come back from the database.
    drop(indexes);
    let reopened = Instant::now();
    let mut index = ChatIndex::open(&dir.path().join("chat-0")).unwrap();
    let opened = reopened.elapsed();
    let stored: Vec<IndexedChunk> = (0..index.indexed_len())
        .map(|i| IndexedChunk {
            chunk_id: ChunkId::from_string(format!("c{i}")),
            document_id: DocumentId::from_string(format!("d{}", i / 120)),
            filename: String::new(),
            text: String::new(),
            headings: Default::default(),
            vector: embedder.embed_text(&queries[i % queries.len()]),
        })
        .collect();
    let loading = Instant::now();
    index.load_vectors(stored);
    println!();
    println!(
        "reopen: {:.1} ms to open, {:.1} ms to load {} vectors",
        opened.as_secs_f64() * 1e3,
        loading.elapsed().as_secs_f64() * 1e3,
        index.len()
    );
}
