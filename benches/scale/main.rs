//! How far one Colloquy process goes, and how its costs grow.
//!
//! Colloquy runs as its own process (the `colloquy` binary of this build, SQLite in a
//! temporary directory), so that its resident memory and CPU time are read apart from the
//! client's, from `/proc/<pid>`. A fake OpenAI upstream (actix-web) and the load run in this
//! process. Three parts, each printing a Markdown table:
//!
//! - `streams`: 1,000 / 5,000 / 10,000 chats each streaming one answer at once from a slow
//!   upstream (a piece every second for `BENCH_STREAM_SECONDS`), through the chat API: time to
//!   the first byte and to the first content, bytes/s, errors, the most streams open at once,
//!   Colloquy's peak RSS, its CPU and its open files (see `streams.rs`);
//! - `idle`: memory per loaded-but-idle chat and per passivated chat, at 10,000 and 100,000
//!   chats (RSS delta divided by the count), and the time to wake one (see `idle.rs`);
//! - `history`: request preparation time — from the client's request to the upstream's
//!   receiving it, context fitting included — for a chat of 10, 100 and 1,000 turns (see
//!   `history.rs`);
//! - `cluster`: one, two and three processes on one PostgreSQL (`BENCH_POSTGRES_URL`): chats
//!   and turns per second, concurrent streams per process, and the time a survivor takes to
//!   answer for a killed process's chat (see `cluster.rs`).
//!
//! Run with `cargo bench --bench scale`; `BENCH_PARTS=streams,idle` picks parts. `cargo test`
//! runs it too (the target has `test = true`), without the `--bench` flag `cargo bench`
//! passes, and then every size is a smoke size (tens of chats): CI checks that it works, and
//! nothing here asserts a time.

mod cluster;
mod colloquy;
mod history;
#[path = "../common/host.rs"]
mod host;
mod idle;
mod load;
mod streams;
mod upstream;

use std::time::Duration;

/// Settings from the environment, with the full sizes under `cargo bench` and smoke sizes
/// under `cargo test`.
pub struct Settings {
    pub smoke: bool,
    pub parts: Vec<String>,
    pub stream_counts: Vec<usize>,
    pub stream_seconds: u64,
    pub idle_counts: Vec<usize>,
    pub history_turns: Vec<usize>,
    pub history_samples: usize,
    pub cluster_processes: Vec<usize>,
    pub cluster_chats: usize,
    pub cluster_streams: usize,
    pub cluster_lease_secs: u64,
    pub cluster_chunks: usize,
    /// An S3-compatible endpoint (`BENCH_S3_URL`): the processes then keep their files there,
    /// each with its own data directory.
    pub s3_url: Option<String>,
}

impl Settings {
    fn from_env() -> Self {
        // `cargo bench` passes `--bench`; `cargo test` does not.
        let smoke = !std::env::args().any(|arg| arg == "--bench");
        let list = |name: &str, full: &str, small: &str| -> Vec<usize> {
            let text = std::env::var(name)
                .unwrap_or_else(|_| if smoke { small } else { full }.to_string());
            text.split(',')
                .map(|item| {
                    item.trim()
                        .replace('_', "")
                        .parse()
                        .unwrap_or_else(|_| panic!("{name} must list numbers, not {text:?}"))
                })
                .collect()
        };
        let number = |name: &str, full: u64, small: u64| -> u64 {
            std::env::var(name).map_or(if smoke { small } else { full }, |text| {
                text.parse()
                    .unwrap_or_else(|_| panic!("{name} must be a number, not {text:?}"))
            })
        };
        let parts = std::env::var("BENCH_PARTS")
            .unwrap_or_else(|_| "streams,idle,history,cluster".into())
            .split(',')
            .map(|part| part.trim().to_string())
            .collect();
        Self {
            smoke,
            parts,
            stream_counts: list("BENCH_STREAMS", "1000,5000,10000", "20"),
            stream_seconds: number("BENCH_STREAM_SECONDS", 20, 2),
            idle_counts: list("BENCH_IDLE_CHATS", "10000,100000", "30"),
            history_turns: list("BENCH_HISTORY_TURNS", "10,100,1000", "10,30"),
            history_samples: number("BENCH_HISTORY_SAMPLES", 50, 3) as usize,
            cluster_processes: list("BENCH_CLUSTER_PROCESSES", "1,2,3", "1,2,3"),
            cluster_chats: number("BENCH_CLUSTER_CHATS", 600, 12) as usize,
            cluster_streams: number("BENCH_CLUSTER_STREAMS", 1500, 6) as usize,
            cluster_lease_secs: number("BENCH_CLUSTER_LEASE_SECS", 10, 3),
            cluster_chunks: number("BENCH_CLUSTER_CHUNKS", 1000, 40) as usize,
            s3_url: std::env::var("BENCH_S3_URL").ok(),
        }
    }

    fn runs(&self, part: &str) -> bool {
        self.parts.iter().any(|named| named == part)
    }
}

fn main() {
    // The client and the fake upstream hold a file per stream here too: their table of open
    // files grows now, while this is the one thread, not in the middle of a measurement.
    ::colloquy::os_limits::reserve_file_table();
    let settings = Settings::from_env();
    if settings.smoke {
        host::check();
    }
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    println!("# How far one Colloquy process goes");
    println!();
    println!(
        "cores: {cores}; open-file limit of this process: {}; {}",
        colloquy::open_file_limit().map_or_else(|| "unknown".into(), |limit| limit.to_string()),
        if settings.smoke {
            "smoke sizes (run with `cargo bench --bench scale` for the real ones)"
        } else {
            "full sizes"
        }
    );
    println!();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("client runtime");
    if settings.runs("streams") {
        runtime.block_on(streams::run(&settings));
    }
    if settings.runs("idle") {
        runtime.block_on(idle::run(&settings));
    }
    if settings.runs("history") {
        runtime.block_on(history::run(&settings));
    }
    if settings.runs("cluster") {
        runtime.block_on(cluster::run(&settings));
    }
    // Tasks still reading a stream that failed are dropped with the runtime.
    runtime.shutdown_timeout(Duration::from_secs(1));
}
