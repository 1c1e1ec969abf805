//! Concurrent SSE streams: `count` chats each send one message through the chat API at once
//! (`POST /chat/api/{chat}/messages`, whose answer is an SSE stream), and the slow upstream
//! streams each answer for `BENCH_STREAM_SECONDS`, so that every stream is open at the same
//! time. Per count, on a fresh Colloquy: time to the first byte and to the first content
//! (p50/p99, from the moment the request was handed to the client), the answer bytes per second
//! over the whole run, errors (anything but a 200 whose stream carries the whole answer and
//! `[DONE]`), the most streams open at once as the upstream counted them, and Colloquy's RSS
//! before and at its peak, its CPU (cores busy over the run) and its peak open files.
//!
//! The client speaks HTTP/1.1 (one connection per stream) while this process's open-file limit
//! holds two sockets per stream (the client's and the upstream's); past that it speaks HTTP/2
//! with prior knowledge (h2c), streams multiplexed over a few connections, as a fronting proxy
//! does (Caddy's `versions h2c`, Envoy). Colloquy's side is the same either way: one
//! upstream connection per stream.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::Settings;
use crate::colloquy::{API_KEY, Colloquy, mib, open_file_limit};
use crate::load::{SseScan, micros, ms, percentile};
use crate::upstream::{PIECE, Pacing, Upstream};

/// h2c connections the streams are spread over.
const H2C_CONNECTIONS: usize = 8;
/// Distinct error descriptions kept per row.
const MAX_ERROR_KINDS: usize = 5;

#[derive(Clone, Copy, PartialEq)]
enum Transport {
    Http1,
    H2c,
}

pub struct Sample {
    pub first_byte: u64,
    pub first_content: u64,
}

#[derive(Default)]
struct Row {
    count: usize,
    transport: &'static str,
    first_byte: Vec<u64>,
    first_content: Vec<u64>,
    errors: usize,
    error_kinds: BTreeMap<String, usize>,
    bytes_per_sec: f64,
    most_open: usize,
    rss_before: u64,
    rss_peak: u64,
    cpu_cores: f64,
    /// The share of the machine's CPU its hypervisor gave to others over the run, in percent.
    steal: String,
    files_peak: usize,
    wall: Duration,
}

pub async fn run(settings: &Settings) {
    let mut rows = Vec::new();
    for &count in &settings.stream_counts {
        rows.push(one_count(count, settings.stream_seconds).await);
    }
    println!("## Concurrent SSE streams through the chat API");
    println!();
    println!(
        "Each stream lasts about {} s (a piece a second); latencies in ms from the request's \
         start; RSS in MiB; CPU in cores busy over the run; steal: the share of the machine's \
         CPU its hypervisor gave to others meanwhile, in percent.",
        settings.stream_seconds
    );
    println!();
    println!(
        "| streams | client | errors | most open at once | first byte p50 | p99 | \
         first content p50 | p99 | answer bytes/s | RSS before | RSS peak | CPU | steal (%) | \
         open files peak | wall (s) |"
    );
    println!("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for row in &rows {
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {:.0} | {} | {} | {:.2} | {} | {} | {:.1} |",
            row.count,
            row.transport,
            row.errors,
            row.most_open,
            ms(percentile(&row.first_byte, 50.0)),
            ms(percentile(&row.first_byte, 99.0)),
            ms(percentile(&row.first_content, 50.0)),
            ms(percentile(&row.first_content, 99.0)),
            row.bytes_per_sec,
            mib(row.rss_before),
            mib(row.rss_peak),
            row.cpu_cores,
            row.steal,
            row.files_peak,
            row.wall.as_secs_f64(),
        );
    }
    println!();
    for row in rows.iter().filter(|row| row.errors > 0) {
        println!("Errors at {} streams:", row.count);
        for (kind, seen) in &row.error_kinds {
            println!("- {seen} × {kind}");
        }
        println!();
    }
}

async fn one_count(count: usize, stream_seconds: u64) -> Row {
    let upstream = Upstream::start(Pacing {
        pieces: stream_seconds.max(1) as usize,
        every: Duration::from_secs(1),
    });
    // Room for every stream plus the chat creation and the metrics reads.
    let colloquy = Colloquy::start(
        upstream.address,
        &[("COLLOQUY_HTTP__MAX_IN_FLIGHT", (count + 100).to_string())],
    )
    .await;
    let setup = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client");
    let chats = colloquy.create_chats(&setup, count, 64).await;
    let transport = match open_file_limit() {
        Some(limit) if (count as u64) * 2 + 512 > limit => Transport::H2c,
        _ => Transport::Http1,
    };
    let clients: Vec<reqwest::Client> = (0..H2C_CONNECTIONS)
        .map(|_| {
            let builder = reqwest::Client::builder()
                .no_proxy()
                .timeout(Duration::from_secs(stream_seconds + 300))
                .pool_max_idle_per_host(usize::MAX);
            match transport {
                Transport::H2c => builder.http2_prior_knowledge(),
                Transport::Http1 => builder.http1_only(),
            }
            .build()
            .expect("client")
        })
        .collect();

    let rss_before = colloquy.settled_rss().await;
    let cpu_before = colloquy.cpu_seconds();
    let host_before = crate::host::HostTicks::now();
    let expected = PIECE.repeat(stream_seconds.max(1) as usize);
    let bytes = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for (i, chat) in chats.iter().enumerate() {
        let client = clients[i % clients.len()].clone();
        let url = format!("{}/chat/api/{chat}/messages", colloquy.url);
        let (expected, bytes) = (expected.clone(), Arc::clone(&bytes));
        tasks.spawn(async move { one_stream(&client, &url, &expected, &bytes).await });
    }
    let mut row = Row {
        count,
        transport: match transport {
            Transport::Http1 => "HTTP/1.1",
            Transport::H2c => "h2c",
        },
        rss_before,
        ..Row::default()
    };
    let mut sampler = tokio::time::interval(Duration::from_millis(250));
    loop {
        tokio::select! {
            joined = tasks.join_next() => {
                let Some(joined) = joined else { break };
                match joined.expect("a stream task does not panic") {
                    Ok(sample) => {
                        row.first_byte.push(sample.first_byte);
                        row.first_content.push(sample.first_content);
                    }
                    Err(kind) => {
                        row.errors += 1;
                        if row.error_kinds.len() < MAX_ERROR_KINDS
                            || row.error_kinds.contains_key(&kind)
                        {
                            *row.error_kinds.entry(kind).or_default() += 1;
                        }
                    }
                }
            }
            _ = sampler.tick() => {
                row.rss_peak = row.rss_peak.max(colloquy.rss_bytes());
                row.files_peak = row.files_peak.max(colloquy.open_files());
            }
        }
    }
    row.wall = started.elapsed();
    row.cpu_cores = (colloquy.cpu_seconds() - cpu_before) / row.wall.as_secs_f64();
    row.steal = crate::host::steal_since(host_before);
    row.bytes_per_sec = bytes.load(Ordering::Relaxed) as f64 / row.wall.as_secs_f64();
    row.most_open = upstream.seen.most_open_streams.load(Ordering::Relaxed);
    row.first_byte.sort_unstable();
    row.first_content.sort_unstable();
    row
}

/// One message's stream, read to its end: its first byte's and first content's times, or what
/// went wrong.
pub async fn one_stream(
    client: &reqwest::Client,
    url: &str,
    expected: &str,
    bytes: &AtomicU64,
) -> Result<Sample, String> {
    let started = Instant::now();
    let mut response = client
        .post(url)
        .bearer_auth(API_KEY)
        .json(&json!({"content": "hello"}))
        .send()
        .await
        .map_err(|err| format!("send: {err}"))?;
    let status = response.status();
    if status != reqwest::StatusCode::OK {
        let text = response.text().await.unwrap_or_default();
        return Err(format!(
            "HTTP {status}: {}",
            text.chars().take(160).collect::<String>()
        ));
    }
    let mut scan = SseScan::default();
    let (mut first_byte, mut first_content) = (None, None);
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|err| format!("stream: {err}"))?
    {
        let at = micros(started);
        first_byte.get_or_insert(at);
        bytes.fetch_add(chunk.len() as u64, Ordering::Relaxed);
        if scan.push(&chunk) {
            first_content.get_or_insert(at);
        }
    }
    match (first_byte, first_content) {
        (Some(first_byte), Some(first_content)) if scan.done && scan.content == expected => {
            Ok(Sample {
                first_byte,
                first_content,
            })
        }
        _ => Err(format!("incomplete stream, ending {:?}", scan.tail())),
    }
}
