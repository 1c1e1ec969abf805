//! Small pieces the parts share: bounded parallel requests, percentiles, SSE scanning.

use std::future::Future;
use std::time::Instant;

use futures_util::StreamExt;
use serde_json::Value;

/// Runs `make(i)` for every `i` below `count`, at most `concurrency` at a time; the results in
/// order.
pub async fn in_parallel<T, F, Fut>(count: usize, concurrency: usize, make: F) -> Vec<T>
where
    F: FnMut(usize) -> Fut,
    Fut: Future<Output = T>,
{
    futures_util::stream::iter(0..count)
        .map(make)
        .buffered(concurrency.max(1))
        .collect()
        .await
}

/// The `p`-th percentile (0–100) of sorted values, nearest rank.
pub fn percentile(sorted: &[u64], p: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// Microseconds as milliseconds with three decimals, or a dash.
pub fn ms(micros: Option<u64>) -> String {
    micros.map_or_else(|| "–".into(), |us| format!("{:.3}", us as f64 / 1_000.0))
}

pub fn micros(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// Scans a growing SSE body for complete events, remembering where it stopped.
#[derive(Default)]
pub struct SseScan {
    received: Vec<u8>,
    scanned: usize,
    pub content: String,
    pub done: bool,
}

impl SseScan {
    /// Adds bytes; whether an event with non-empty content arrived in them.
    pub fn push(&mut self, bytes: &[u8]) -> bool {
        self.received.extend_from_slice(bytes);
        let mut got_content = false;
        while let Some(end) = find(&self.received[self.scanned..], b"\n\n") {
            let event = String::from_utf8_lossy(&self.received[self.scanned..self.scanned + end])
                .into_owned();
            self.scanned += end + 2;
            for data in event.lines().filter_map(|line| line.strip_prefix("data:")) {
                let data = data.trim_start();
                if data == "[DONE]" {
                    self.done = true;
                    continue;
                }
                let Ok(value) = serde_json::from_str::<Value>(data) else {
                    continue;
                };
                if let Some(piece) = value["choices"][0]["delta"]["content"].as_str()
                    && !piece.is_empty()
                {
                    self.content.push_str(piece);
                    got_content = true;
                }
            }
        }
        // Keep memory flat over long streams: drop what was scanned.
        if self.scanned > 64 * 1024 {
            self.received.drain(..self.scanned);
            self.scanned = 0;
        }
        got_content
    }

    pub fn tail(&self) -> String {
        let text = String::from_utf8_lossy(&self.received);
        let start = text.len().saturating_sub(200);
        let start = (start..text.len())
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(text.len());
        text[start..].to_string()
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}
