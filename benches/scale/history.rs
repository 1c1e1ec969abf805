//! History growth: how long Colloquy takes to prepare a request for a chat of 10, 100 and 1,000
//! turns — from the moment the client sends `POST /v1/chat/completions` with `x_chat_id` until
//! the upstream receives the model request — which covers authentication, loading the chat's
//! path, storing the new message, memory and document injection, and fitting the history into
//! the context window (32,768 tokens here, which a 1,000-turn chat of these messages overflows
//! about fivefold, so fitting drops most of it).
//!
//! Each sample is a fresh chat made by one stored request carrying `turns − 1` earlier
//! exchanges (each message about 60 words), so the chat holds `turns` turns, all loaded; once
//! every sample's chat is made, one measured request in each adds a turn. Requests run one at
//! a time. `BENCH_HISTORY_PAUSE=1` waits 5 s before measuring, to attach a profiler.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::Settings;
use crate::colloquy::{API_KEY, Colloquy, MODEL};
use crate::load::{ms, percentile};
use crate::upstream::{Pacing, Upstream};

const CONTEXT_TOKENS: u32 = 32_768;

pub async fn run(settings: &Settings) {
    let upstream = Upstream::start(Pacing {
        pieces: 3,
        every: Duration::ZERO,
    });
    let colloquy = Colloquy::start(
        upstream.address,
        &[("COLLOQUY_LLM__CONTEXT_LENGTH", CONTEXT_TOKENS.to_string())],
    )
    .await;
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(120))
        .build()
        .expect("client");
    println!("## History growth: request preparation");
    println!();
    println!(
        "Time from the client's request to the upstream's receiving it, for a chat of N turns \
         (ms; {} samples each; context window {CONTEXT_TOKENS} tokens).",
        settings.history_samples
    );
    println!();
    println!("| turns | p50 | p99 | max |");
    println!("|---:|---:|---:|---:|");
    for &turns in &settings.history_turns {
        // The chats are all made first, so that no measured request shares the server with
        // the storing of the next chat's thousands of messages.
        let mut chats = Vec::with_capacity(settings.history_samples);
        for sample in 0..settings.history_samples {
            chats.push(make_chat(&colloquy, &client, turns, sample).await);
        }
        if std::env::var_os("BENCH_HISTORY_PAUSE").is_some() {
            // Time to attach a profiler to the measured requests only.
            eprintln!("history: {turns}-turn chats made; measuring in 5 s");
            tokio::time::sleep(Duration::from_secs(5)).await;
        }
        let mut samples = Vec::new();
        for chat in &chats {
            samples.push(measure(&colloquy, &client, &upstream, chat).await);
        }
        samples.sort_unstable();
        println!(
            "| {turns} | {} | {} | {} |",
            ms(percentile(&samples, 50.0)),
            ms(percentile(&samples, 99.0)),
            ms(samples.last().copied()),
        );
    }
    println!();
}

/// About 60 words of varied text.
fn message(turn: usize, role: &str) -> String {
    let words = [
        "the", "report", "covers", "latency", "budgets", "and", "storage", "growth", "for", "each",
        "quarter", "while", "the", "team", "measured", "recovery", "times",
    ];
    let mut text = format!("{role} turn {turn}:");
    for i in 0..60 {
        text.push(' ');
        text.push_str(words[(turn * 7 + i * 3) % words.len()]);
    }
    text
}

/// A chat of `turns` turns; its id.
async fn make_chat(
    colloquy: &Colloquy,
    client: &reqwest::Client,
    turns: usize,
    sample: usize,
) -> String {
    let mut messages: Vec<Value> = Vec::with_capacity(turns * 2);
    for turn in 0..turns.saturating_sub(1) {
        messages.push(json!({"role": "user", "content": message(turn + sample, "user")}));
        messages.push(json!({"role": "assistant", "content": message(turn, "assistant")}));
    }
    messages.push(json!({"role": "user", "content": message(turns, "user")}));
    let response = client
        .post(format!("{}/v1/chat/completions", colloquy.url))
        .bearer_auth(API_KEY)
        .json(&json!({"model": MODEL, "messages": messages}))
        .send()
        .await
        .expect("make a chat");
    assert!(response.status().is_success(), "{}", response.status());
    let answer: Value = response.json().await.expect("the answer as JSON");
    answer["x_chat_id"]
        .as_str()
        .expect("the new chat's id")
        .to_string()
}

/// One more turn in `chat`; µs from the request's start to the upstream's receiving it.
async fn measure(
    colloquy: &Colloquy,
    client: &reqwest::Client,
    upstream: &Upstream,
    chat: &str,
) -> u64 {
    *upstream.seen.last_arrival.lock().expect("not poisoned") = None;
    let request = client
        .post(format!("{}/v1/chat/completions", colloquy.url))
        .bearer_auth(API_KEY)
        .json(&json!({"model": MODEL, "x_chat_id": chat,
                      "messages": [{"role": "user", "content": "And one more thing."}]}));
    let started = Instant::now();
    let response = request.send().await.expect("the measured request");
    assert!(response.status().is_success(), "{}", response.status());
    let _ = response.bytes().await;
    let arrived = upstream
        .seen
        .last_arrival
        .lock()
        .expect("not poisoned")
        .expect("the upstream was called");
    u64::try_from(arrived.saturating_duration_since(started).as_micros()).unwrap_or(u64::MAX)
}
