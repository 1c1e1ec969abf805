//! `file_search` latency over HTTP, on one chat holding many chunks.
//!
//! Starts a fake OpenAI upstream (it answers a user message with a `file_search` call whose
//! query is that message, and a tool result with a short text) and Colloquy in-process in
//! front of it (SQLite in a temporary directory, the default hash embedder), uploads
//! `BENCH_FILES` generated text files of about `BENCH_CHUNKS_PER_FILE` chunks each into one
//! chat through the documents API, waits for them to be processed, then sends
//! `BENCH_SEARCHES` streamed `POST /v1/responses` requests one after another, each with
//! `x_chat_id`, so each runs one `file_search` call. For each call it reads the server's own
//! stage times from `response.file_search_call.completed`'s `x_timings_ms` (query
//! embedding, lock wait, BM25, vectors, fusion, chunk texts, artifact ids, total), and the
//! time between `.searching` and `.completed` as the client saw them, and prints p50, p99
//! and max of each.
//!
//! Run with `cargo bench --bench file_search_http` (defaults: 1,000 files × 6 chunks = 6,000
//! chunks, 500 searches). `cargo test` runs it as well (the target has `test = true`), without
//! the `--bench` flag `cargo bench` passes, and then its defaults are a smoke run (3 files of
//! 1 chunk, 5 searches): CI checks it works, and nothing here asserts a time.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use actix_web::{App, HttpResponse, HttpServer, web};
use bytes::Bytes;
use colloquy::config::Config;
use colloquy::startup::Application;
use secrecy::SecretString;
use serde_json::{Value, json};

const API_KEY: &str = "bench-key";
const MODEL: &str = "fake-model";
/// Searches sent before measuring, so the index is open and caches are warm.
const WARM_UP: usize = 20;
/// About the characters of a 1,024-token chunk of English-like text.
const CHARS_PER_CHUNK: usize = 4_500;
/// Uploads in flight at once.
const CONCURRENT_UPLOADS: usize = 8;

/// Words drawn often, then a long tail of made-up ones, as documents have.
const COMMON: &str = "the of and to in is that for it as with was on be by this are from or at \
    system data server request user model report team process network storage cluster database \
    latency release budget customer quarter revenue policy contract schedule design review \
    running measured failure recovery backup shard replica index query memory disk throughput";
const SYLLABLES: &str = "ka lo min ter sa vo rin del pra quo ze tan bel cor nu phi gra dex mo lith";

struct Settings {
    files: usize,
    chunks_per_file: usize,
    searches: usize,
}

impl Settings {
    fn from_env() -> Self {
        fn var(name: &str, default: usize) -> usize {
            std::env::var(name).map_or(default, |text| {
                text.parse()
                    .unwrap_or_else(|_| panic!("{name} must be a number, not {text:?}"))
            })
        }
        // `cargo bench` passes `--bench`; `cargo test` does not.
        let full = std::env::args().any(|arg| arg == "--bench");
        let (files, chunks, searches) = if full { (1_000, 6, 500) } else { (3, 1, 5) };
        Self {
            files: var("BENCH_FILES", files).max(1),
            chunks_per_file: var("BENCH_CHUNKS_PER_FILE", chunks).max(1),
            searches: var("BENCH_SEARCHES", searches).max(1),
        }
    }
}

/// A small linear congruential generator: deterministic and dependency-free.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) as usize % n
    }
}

/// Made-up words: everyday ones half the time, else one of 20,000 rarer ones.
struct Words {
    common: Vec<&'static str>,
    syllables: Vec<&'static str>,
}

impl Words {
    fn new() -> Self {
        Self {
            common: COMMON.split_whitespace().collect(),
            syllables: SYLLABLES.split_whitespace().collect(),
        }
    }

    fn word(&self, rng: &mut Lcg, out: &mut String) {
        if rng.below(2) == 0 {
            out.push_str(self.common[rng.below(self.common.len())]);
        } else {
            // A Zipf-like tail: low numbers are drawn more often.
            let bound = 1 + rng.below(20_000);
            let rank = rng.below(bound);
            let n = self.syllables.len();
            out.push_str(self.syllables[rank % n]);
            out.push_str(self.syllables[(rank / n) % n]);
            out.push_str(self.syllables[(rank / n / n) % n]);
        }
    }

    fn text(&self, rng: &mut Lcg, chars: usize) -> String {
        let mut out = String::with_capacity(chars + 16);
        while out.len() < chars {
            self.word(rng, &mut out);
            out.push(if rng.below(12) == 0 { '.' } else { ' ' });
            if out.ends_with('.') {
                out.push(' ');
            }
        }
        out
    }
}

fn main() {
    let settings = Settings::from_env();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let servers = std::thread::Builder::new()
        .name("bench-servers".into())
        .spawn(move || actix_web::rt::System::new().block_on(serve(ready_tx, stop_rx)))
        .expect("spawn the server thread");
    let colloquy = ready_rx.recv().expect("the servers start");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("client runtime");
    runtime.block_on(run(&settings, colloquy));
    let _ = stop_tx.send(());
    servers.join().expect("the server thread ends cleanly");
}

async fn serve(
    ready: std::sync::mpsc::Sender<SocketAddr>,
    stop: tokio::sync::oneshot::Receiver<()>,
) {
    let upstream = HttpServer::new(|| {
        App::new().route("/v1/chat/completions", web::post().to(upstream_completions))
    })
    .workers(1)
    .bind("127.0.0.1:0")
    .expect("bind the fake upstream");
    let upstream_address = upstream.addrs()[0];
    let upstream = upstream.run();
    let upstream_handle = upstream.handle();
    actix_web::rt::spawn(upstream);

    let data_dir = tempfile::tempdir().expect("temporary data directory");
    let mut config = Config {
        bind: "127.0.0.1:0".into(),
        data_dir: data_dir.path().to_path_buf(),
        workers: Some(2),
        shutdown_timeout_secs: 1,
        ..Config::default()
    };
    config.llm.base_url = format!("http://{upstream_address}/v1");
    config.llm.model = MODEL.into();
    config.auth.bootstrap_api_key = Some(SecretString::from(API_KEY));
    config.log.filter = "error".into();
    config.documents.max_files_per_chat = usize::MAX / 2;
    // Many calls a minute: no rate limit in the way.
    config.tools.rate_limit_per_minute = u32::MAX / 2;
    colloquy::telemetry::init(&config.log);
    let app = Application::build(config).await.expect("Colloquy starts");
    let address = app.address();
    let handle = app.handle();
    actix_web::rt::spawn(app.run_until_stopped());
    ready
        .send(address)
        .expect("the bench waits for the servers");
    let _ = stop.await;
    handle.stop(false).await;
    upstream_handle.stop(false).await;
    drop(data_dir);
}

/// A `file_search` call for the last user message, or a short answer after a tool result.
async fn upstream_completions(body: Bytes) -> HttpResponse {
    let request: Value = serde_json::from_slice(&body).unwrap_or_default();
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.last().cloned().unwrap_or_default();
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1,
               "model": MODEL, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let events = if last["role"] == "tool" {
        vec![
            chunk(
                json!({"role": "assistant", "content": "Found it."}),
                Value::Null,
            ),
            chunk(json!({}), json!("stop")),
        ]
    } else {
        let query = last["content"].as_str().unwrap_or("query").to_string();
        let id = format!("call{}", messages.len());
        let arguments = json!({"query": query}).to_string();
        vec![
            chunk(
                json!({"role": "assistant", "tool_calls": [{"index": 0, "id": id, "type": "function",
                       "function": {"name": "file_search", "arguments": arguments}}]}),
                Value::Null,
            ),
            chunk(json!({}), json!("tool_calls")),
        ]
    };
    let mut body = String::new();
    for event in events {
        body.push_str(&format!("data: {event}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .body(body)
}

async fn run(settings: &Settings, colloquy: SocketAddr) {
    let base = format!("http://{colloquy}");
    let http = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("HTTP client");
    let chat: Value = http
        .post(format!("{base}/chat/api/chats"))
        .bearer_auth(API_KEY)
        .json(&json!({"title": "bench"}))
        .send()
        .await
        .expect("create a chat")
        .json()
        .await
        .expect("chat JSON");
    let chat = chat["id"].as_str().expect("a chat id").to_string();

    let started = Instant::now();
    let words = Words::new();
    let files: Vec<(String, String)> = (0..settings.files)
        .map(|i| {
            let mut rng = Lcg(i as u64 + 1);
            let text = words.text(&mut rng, settings.chunks_per_file * CHARS_PER_CHUNK);
            (format!("file-{i:05}.txt"), text)
        })
        .collect();
    // Counted as the workspace will cut them.
    let chunker = colloquy::retrieval::chunk::Chunker::default();
    let chunks: usize = files
        .iter()
        .map(|(_, text)| chunker.chunk(text).len())
        .sum();
    use futures_util::StreamExt;
    futures_util::stream::iter(files)
        .map(|(name, text)| {
            let http = http.clone();
            let url = format!("{base}/chat/api/{chat}/documents");
            async move {
                let form = reqwest::multipart::Form::new().part(
                    "file",
                    reqwest::multipart::Part::bytes(text.into_bytes()).file_name(name),
                );
                let response = http
                    .post(url)
                    .bearer_auth(API_KEY)
                    .multipart(form)
                    .send()
                    .await
                    .expect("upload");
                assert!(
                    response.status().is_success(),
                    "upload: {}",
                    response.status()
                );
            }
        })
        .buffer_unordered(CONCURRENT_UPLOADS)
        .collect::<Vec<()>>()
        .await;
    let documents = loop {
        let list: Value = http
            .get(format!("{base}/chat/api/{chat}/documents"))
            .bearer_auth(API_KEY)
            .send()
            .await
            .expect("list documents")
            .json()
            .await
            .expect("documents JSON");
        let documents = list["documents"].as_array().cloned().unwrap_or_default();
        if documents
            .iter()
            .all(|d| d["status"] != "processing" && d["status"] != "uploading")
        {
            break documents;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let processed = documents
        .iter()
        .filter(|d| d["status"] == "processed")
        .count();
    println!(
        "{processed} files processed of {} ({chunks} chunks) in {:.1} s",
        settings.files,
        started.elapsed().as_secs_f64()
    );

    let mut rng = Lcg(0x5eed);
    let mut stages: Vec<(String, Vec<f64>)> = Vec::new();
    let mut client_ms = Vec::new();
    let mut request_ms = Vec::new();
    for i in 0..WARM_UP + settings.searches {
        let mut query = String::new();
        for _ in 0..(2 + rng.below(5)) {
            words.word(&mut rng, &mut query);
            query.push(' ');
        }
        let sent = Instant::now();
        let (timings, between) = one_search(&http, &base, &chat, query.trim()).await;
        if i < WARM_UP {
            continue;
        }
        request_ms.push(sent.elapsed().as_secs_f64() * 1e3);
        client_ms.push(between);
        for (name, value) in timings.as_object().into_iter().flatten() {
            let value = value.as_f64().unwrap_or_default();
            match stages.iter_mut().find(|(known, _)| known == name) {
                Some((_, values)) => values.push(value),
                None => stages.push((name.clone(), vec![value])),
            }
        }
    }
    println!(
        "\n{} file_search calls over HTTP (after {WARM_UP} warm-up calls), milliseconds:",
        settings.searches
    );
    println!("| stage | p50 | p99 | max |");
    println!("|---|---|---|---|");
    for (name, values) in &mut stages {
        print_row(name, values);
    }
    print_row("searching → completed (client)", &mut client_ms);
    print_row("whole request (client)", &mut request_ms);
}

/// Sends one streamed request that runs one `file_search` call; returns the completed
/// event's `x_timings_ms` and the milliseconds between `.searching` and `.completed` as
/// read from the stream.
async fn one_search(http: &reqwest::Client, base: &str, chat: &str, query: &str) -> (Value, f64) {
    let mut response = http
        .post(format!("{base}/v1/responses"))
        .bearer_auth(API_KEY)
        .json(&json!({"input": query, "x_chat_id": chat, "stream": true,
                      "tools": [{"type": "file_search"}]}))
        .send()
        .await
        .expect("a response");
    assert!(response.status().is_success(), "{}", response.status());
    let mut buffer = String::new();
    let mut searching = None;
    let mut between = 0.0;
    let mut timings = Value::Null;
    while let Some(bytes) = response.chunk().await.expect("the stream") {
        let now = Instant::now();
        buffer.push_str(&String::from_utf8_lossy(&bytes));
        while let Some(end) = buffer.find("\n\n") {
            let frame: String = buffer.drain(..end + 2).collect();
            let Some(data) = frame.lines().find_map(|l| l.strip_prefix("data: ")) else {
                continue;
            };
            let Ok(event) = serde_json::from_str::<Value>(data) else {
                continue;
            };
            match event["type"].as_str() {
                Some("response.file_search_call.searching") => searching = Some(now),
                Some("response.file_search_call.completed") => {
                    between =
                        searching.map_or(0.0, |at| now.duration_since(at).as_secs_f64() * 1e3);
                    timings = event["x_timings_ms"].clone();
                }
                _ => {}
            }
        }
    }
    assert!(
        timings.is_object(),
        "no file_search_call.completed with x_timings_ms"
    );
    (timings, between)
}

fn print_row(name: &str, values: &mut [f64]) {
    values.sort_by(f64::total_cmp);
    let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
    println!(
        "| {name} | {:.3} | {:.3} | {:.3} |",
        at(0.5),
        at(0.99),
        values[values.len() - 1]
    );
}
