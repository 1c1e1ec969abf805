//! Search inside chats: BM25 latency over one user's message index holding 100,000 messages.
//!
//! Builds the index the way the indexer does (`MessageIndex`, the default English analyzers:
//! exact words and stems), in commits of `COMMIT_EVERY` messages as a catch-up makes them,
//! from generated messages (a few dozen everyday words and a long tail of made-up ones, spread
//! over `CHATS` chats), then runs each query of `QUERIES` `SEARCHES` times after a warm-up and
//! prints p50, p99 and max of each, with snippets made for every hit (20 per search), as the
//! API does. The database check a search then makes (its hits' ids, by primary key) is not
//! measured here: it is one indexed query of at most 30 ids, whatever the index's size.
//! Target: p99 under 50 ms.
//!
//! Then it measures what the indexer's batches cost while turns keep coming: `TURN_BATCHES`
//! batches of `TURN_BATCH` messages of new chats (a busy server's half second: the question
//! and answer of each of 500 turns), each added the way the indexer adds a turn's messages
//! (its id deleted first, so a message reported twice is indexed once) and committed, on the
//! index built above. It prints each batch's wall time and the CPU time of the whole process
//! (tantivy's threads included), p50 and max: the CPU is what a batch takes from the turns.
//!
//! Run with `cargo bench --bench chat_search`. `cargo test` runs it as well (the target has
//! `test = true`), without the `--bench` flag `cargo bench` passes, and then it is a smoke run
//! (1,000 messages, 5 searches per query): CI checks it works; nothing here asserts a time.

use std::time::{Duration, Instant};

use chrono::Utc;
use colloquy::chat::search::MessageIndex;
use colloquy::chat::search::index::IndexedMessage;
use colloquy::retrieval::Stemming;
use entities::ids::{ChatId, MessageId};
use entities::messages::MessageRole;

/// The messages of the full run, and of the smoke run.
const MESSAGES: usize = 100_000;
const SMOKE_MESSAGES: usize = 1_000;
/// Chats the messages are spread over.
const CHATS: usize = 500;
/// Messages per commit: a catch-up's batch.
const COMMIT_EVERY: usize = 10_000;
/// Batches of turns' messages measured, and the messages of one.
const TURN_BATCHES: usize = 40;
const SMOKE_TURN_BATCHES: usize = 3;
const TURN_BATCH: usize = 1_000;
/// Searches per query measured, and before measuring.
const SEARCHES: usize = 300;
const SMOKE_SEARCHES: usize = 5;
const WARM_UP: usize = 20;
/// Results per search: the API's default.
const RESULTS: usize = 20;
/// Words per message, at least and at most (a question, or an answer of a few sentences).
const MIN_WORDS: usize = 8;
const MAX_WORDS: usize = 120;

/// Everyday words, drawn often.
const COMMON: &str = "the of and to in is that for it as with was on be by this are from or at \
    an which have not but all can their has more when will one each other about into than \
    system data server request user model report team process network storage cluster database \
    latency release budget customer quarter revenue policy contract schedule design review \
    service running runs measured failure recovery backup shard replica index query memory disk \
    deadline meeting office invoice garden recipe travel ferry harbour lighthouse keeper";
/// Syllables for a long tail of rarer made-up words.
const SYLLABLES: &str = "ka lo min ter sa vo rin del pra quo ze tan bel cor nu phi gra dex mo \
    lith ar ven sol tri";

/// The queries measured: a common word, two words, a stemmed form, a rare made-up word, a
/// phrase-like question, and a word no message has.
const QUERIES: &[&str] = &[
    "database",
    "harbour lighthouse",
    "measuring failures",
    "kaloter",
    "what did we decide about the budget review deadline",
    "xylophonic",
];

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

fn message_text(rng: &mut Lcg, common: &[&str], syllables: &[&str]) -> String {
    let words = MIN_WORDS + rng.below(MAX_WORDS - MIN_WORDS);
    let mut text = String::new();
    for _ in 0..words {
        if !text.is_empty() {
            text.push(' ');
        }
        if rng.below(10) < 8 {
            text.push_str(common[rng.below(common.len())]);
        } else {
            for _ in 0..2 + rng.below(2) {
                text.push_str(syllables[rng.below(syllables.len())]);
            }
        }
    }
    text.push('.');
    text
}

/// The `n`th generated message, in `chat_id`: questions and answers in turn.
fn message(n: usize, chat_id: ChatId, text: String) -> IndexedMessage {
    IndexedMessage {
        id: MessageId::generate(),
        chat_id,
        role: if n.is_multiple_of(2) {
            MessageRole::User
        } else {
            MessageRole::Assistant
        },
        text,
        created_at: Utc::now(),
    }
}

/// The CPU time this process has used, all its threads together.
fn process_cpu() -> Duration {
    // SAFETY: `getrusage` fills the struct it is given.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1_000.0
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test` does not.
    let full = std::env::args().any(|arg| arg == "--bench");
    let (messages, searches) = if full {
        (MESSAGES, SEARCHES)
    } else {
        (SMOKE_MESSAGES, SMOKE_SEARCHES)
    };
    let common: Vec<&str> = COMMON.split_whitespace().collect();
    let syllables: Vec<&str> = SYLLABLES.split_whitespace().collect();
    let chats: Vec<ChatId> = (0..CHATS).map(|_| ChatId::generate()).collect();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (index, _) =
        MessageIndex::open_or_create(dir.path(), Stemming::default()).expect("the index");

    let mut rng = Lcg(50);
    let started = Instant::now();
    let mut written = 0;
    while written < messages {
        let mut writer = index.writer().expect("a writer");
        let batch = COMMIT_EVERY.min(messages - written);
        for n in 0..batch {
            let text = message_text(&mut rng, &common, &syllables);
            let message = message(n, chats[(written + n) % CHATS].clone(), text);
            index.add(&writer, &message).expect("added");
        }
        writer.commit().expect("committed");
        writer.wait_merging_threads().expect("merged");
        written += batch;
    }
    index.reload().expect("reloaded");
    let indexing = started.elapsed();
    println!(
        "chat_search: indexed {} messages over {CHATS} chats in {:.1} s ({:.0} messages/s)",
        index.len(),
        indexing.as_secs_f64(),
        messages as f64 / indexing.as_secs_f64()
    );

    println!("chat_search: {searches} searches per query, {RESULTS} results with snippets each");
    let mut all = Vec::new();
    for query in QUERIES {
        for _ in 0..WARM_UP.min(searches) {
            index.search(query, RESULTS).expect("a search");
        }
        let mut times = Vec::with_capacity(searches);
        let mut hits = 0;
        for _ in 0..searches {
            let started = Instant::now();
            hits = index.search(query, RESULTS).expect("a search").len();
            times.push(started.elapsed());
        }
        times.sort();
        all.extend_from_slice(&times);
        println!(
            "  {query:<55} hits {hits:>2}  p50 {:>6.2} ms  p99 {:>6.2} ms  max {:>6.2} ms",
            ms(percentile(&times, 0.50)),
            ms(percentile(&times, 0.99)),
            ms(*times.last().expect("some searches")),
        );
    }
    all.sort();
    println!(
        "chat_search: all queries  p50 {:.2} ms  p99 {:.2} ms  (target: p99 under 50 ms)",
        ms(percentile(&all, 0.50)),
        ms(percentile(&all, 0.99)),
    );

    let batches = if full {
        TURN_BATCHES
    } else {
        SMOKE_TURN_BATCHES
    };
    let before = index.len();
    let (mut walls, mut cpus) = (Vec::new(), Vec::new());
    for _ in 0..batches {
        let messages: Vec<IndexedMessage> = (0..TURN_BATCH)
            .map(|n| {
                let text = message_text(&mut rng, &common, &syllables);
                message(n, ChatId::generate(), text)
            })
            .collect();
        let (started, cpu) = (Instant::now(), process_cpu());
        let mut writer = index.writer().expect("a writer");
        for message in &messages {
            index.remove_message(&writer, &message.id);
            index.add(&writer, message).expect("added");
        }
        writer.commit().expect("committed");
        writer.wait_merging_threads().expect("merged");
        index.reload().expect("reloaded");
        walls.push(started.elapsed());
        cpus.push(process_cpu() - cpu);
    }
    assert_eq!(index.len(), before + (batches * TURN_BATCH) as u64);
    walls.sort();
    cpus.sort();
    println!(
        "chat_search: {batches} batches of {TURN_BATCH} turns' messages: wall p50 {:.1} ms max \
         {:.1} ms, CPU p50 {:.1} ms max {:.1} ms, total CPU {:.0} ms",
        ms(percentile(&walls, 0.50)),
        ms(*walls.last().expect("some batches")),
        ms(percentile(&cpus, 0.50)),
        ms(*cpus.last().expect("some batches")),
        ms(cpus.iter().sum()),
    );
}
