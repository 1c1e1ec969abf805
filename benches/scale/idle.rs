//! Idle chats: what a loaded-but-idle chat and a passivated one cost, and the time to wake one.
//!
//! Per count, the chats are made first on one Colloquy process (each by a stored
//! `/v1/chat/completions` request carrying an earlier exchange, so each holds two turns: four
//! messages), which is then stopped. A second process opens the same data directory, is warmed
//! with a few requests, and its memory is read (`before`). Every chat is then loaded by reading
//! its messages (`GET /chat/api/{chat}/messages` activates its actor) and the memory read again
//! (`loaded`, with `colloquy_active_chats` from `/metrics` confirming the count). The chats are
//! then left alone until they passivate (`agent.chat_idle_secs`) and the gauge reads zero
//! (`passivated`, read after the process's heap trimmer had a round to give freed memory
//! back). Two memory figures: RSS from `/proc`, and the heap in use as jemalloc
//! counts it (`stats.allocated`: `colloquy_heap_in_use_bytes`), which excludes memory the allocator
//! keeps after a free. Then a sample of passivated chats is read once (wake: load from the
//! database and start the actor) and again (already loaded).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::Settings;
use crate::colloquy::{API_KEY, Colloquy, MODEL, mib};
use crate::load::{in_parallel, micros, ms, percentile};
use crate::upstream::{Pacing, Upstream};

/// Chats woken to time it.
const WAKE_SAMPLE: usize = 200;

struct Row {
    count: usize,
    rss: [u64; 3],
    heap: [Option<f64>; 3],
    active_loaded: Option<f64>,
    wake: Vec<u64>,
    warm: Vec<u64>,
}

pub async fn run(settings: &Settings) {
    let mut rows = Vec::new();
    for &count in &settings.idle_counts {
        rows.push(one_count(count, settings.smoke).await);
    }
    println!("## Idle chats");
    println!();
    println!(
        "Each chat holds two turns (four messages). Memory per chat = (memory then − memory \
         before) ÷ chats; RSS in MiB; wake = first read of a passivated chat's messages, warm = \
         the same read again (ms)."
    );
    println!();
    println!(
        "| chats | RSS before | RSS loaded | RSS passivated | per loaded chat (RSS) | \
         per passivated chat (RSS) | per loaded chat (heap) | per passivated chat (heap) | \
         wake p50 | p99 | warm p50 | p99 |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for row in &rows {
        let per_chat = |then: u64| {
            let delta = then as f64 - row.rss[0] as f64;
            format!("{:.2} KiB", delta / row.count as f64 / 1024.0)
        };
        let per_chat_heap = |then: Option<f64>| match (row.heap[0], then) {
            (Some(before), Some(then)) => {
                format!("{:.2} KiB", (then - before) / row.count as f64 / 1024.0)
            }
            _ => "–".into(),
        };
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            row.count,
            mib(row.rss[0]),
            mib(row.rss[1]),
            mib(row.rss[2]),
            per_chat(row.rss[1]),
            per_chat(row.rss[2]),
            per_chat_heap(row.heap[1]),
            per_chat_heap(row.heap[2]),
            ms(percentile(&row.wake, 50.0)),
            ms(percentile(&row.wake, 99.0)),
            ms(percentile(&row.warm, 50.0)),
            ms(percentile(&row.warm, 99.0)),
        );
        if row.active_loaded != Some(row.count as f64) {
            println!(
                "| ↑ loaded chats per `/metrics`: {:?} of {} |",
                row.active_loaded, row.count
            );
        }
    }
    println!();
}

async fn one_count(count: usize, smoke: bool) -> Row {
    let upstream = Upstream::start(Pacing {
        pieces: 3,
        every: Duration::ZERO,
    });
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(120))
        .build()
        .expect("client");
    let data = tempfile::tempdir().expect("a data directory both processes share");
    let data_var = ("COLLOQUY_DATA_DIR", data.path().display().to_string());
    let chats = {
        let maker = Colloquy::start(upstream.address, std::slice::from_ref(&data_var)).await;
        make_chats(&maker, &client, count).await
    };

    // Long enough to load every chat before the first passivates; short enough to wait out.
    let idle_secs = if smoke { 3 } else { 10 + count as u64 / 1_000 };
    let colloquy = Colloquy::start(
        upstream.address,
        &[
            data_var,
            ("COLLOQUY_AGENT__CHAT_IDLE_SECS", idle_secs.to_string()),
        ],
    )
    .await;
    let url = |chat: &str| format!("{}/chat/api/{chat}/messages", colloquy.url);
    // Warm: connections, caches, the allocator's first arenas; then let those chats sleep.
    for chat in chats.iter().take(20) {
        read(&client, url(chat)).await;
    }
    wait_until_passivated(&colloquy, &client, idle_secs).await;
    let before = (colloquy.settled_rss().await, heap(&colloquy, &client).await);

    in_parallel(chats.len(), 32, |i| read(&client, url(&chats[i]))).await;
    let loaded = (colloquy.settled_rss().await, heap(&colloquy, &client).await);
    let active_loaded = colloquy.gauge(&client, "colloquy_active_chats").await;

    wait_until_passivated(&colloquy, &client, idle_secs).await;
    // The heap the chats freed is given back on the trimmer's next round.
    if !smoke {
        tokio::time::sleep(colloquy::allocator::FREE_HEAP_CHECK + Duration::from_secs(2)).await;
    }
    let passivated = (colloquy.settled_rss().await, heap(&colloquy, &client).await);

    let (mut wake, mut warm) = (Vec::new(), Vec::new());
    for chat in chats.iter().rev().take(WAKE_SAMPLE) {
        wake.push(read(&client, url(chat)).await);
        warm.push(read(&client, url(chat)).await);
    }
    wake.sort_unstable();
    warm.sort_unstable();
    Row {
        count,
        rss: [before.0, loaded.0, passivated.0],
        heap: [before.1, loaded.1, passivated.1],
        active_loaded,
        wake,
        warm,
    }
}

/// Makes `count` chats of two turns each; their ids.
async fn make_chats(colloquy: &Colloquy, client: &reqwest::Client, count: usize) -> Vec<String> {
    let url = format!("{}/v1/chat/completions", colloquy.url);
    in_parallel(count, 32, |i| {
        let request = client.post(&url).bearer_auth(API_KEY).json(&json!({
            "model": MODEL,
            "messages": [
                {"role": "user", "content": format!("What is chat {i} about?")},
                {"role": "assistant", "content": "It is one of many idle chats."},
                {"role": "user", "content": "Then say so again."},
            ],
        }));
        async move {
            let response = request.send().await.expect("make a chat");
            assert!(response.status().is_success(), "{}", response.status());
            let answer: Value = response.json().await.expect("the answer as JSON");
            answer["x_chat_id"]
                .as_str()
                .expect("the new chat's id")
                .to_string()
        }
    })
    .await
}

/// Reads a chat's messages; how long it took, in µs.
async fn read(client: &reqwest::Client, url: String) -> u64 {
    let started = Instant::now();
    let response = client
        .get(&url)
        .bearer_auth(API_KEY)
        .send()
        .await
        .expect("read a chat");
    assert!(response.status().is_success(), "{}", response.status());
    let _ = response.bytes().await.expect("the messages");
    micros(started)
}

async fn heap(colloquy: &Colloquy, client: &reqwest::Client) -> Option<f64> {
    colloquy.gauge(client, "colloquy_heap_in_use_bytes").await
}

/// Waits until no chat is loaded (the idle check runs every few seconds after `idle_secs`).
async fn wait_until_passivated(colloquy: &Colloquy, client: &reqwest::Client, idle_secs: u64) {
    let deadline = Instant::now() + Duration::from_secs(idle_secs * 3 + 60);
    tokio::time::sleep(Duration::from_secs(idle_secs)).await;
    while colloquy.gauge(client, "colloquy_active_chats").await != Some(0.0) {
        assert!(Instant::now() < deadline, "the chats did not passivate");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
