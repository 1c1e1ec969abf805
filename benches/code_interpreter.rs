//! The code interpreter's sandbox (issue 46): the time to a first result in a new container (a
//! sandbox started, then one call) and in a warm one (a call in a running sandbox), with and
//! without pandas imported, and how many containers a GiB of memory holds (the proportional set
//! size of every process of a sandbox: bubblewrap, its init, the interpreter).
//!
//! Run with `cargo bench --bench code_interpreter` on a host with bubblewrap and Python
//! (Debian's `bubblewrap`, `python3-numpy`, `python3-pandas`, `python3-matplotlib`).

use std::time::{Duration, Instant};

use colloquy::config::CodeInterpreterConfig;
use colloquy::tools::code_interpreter::sandbox::{Limits, Sandbox, Spec, find_program};
use serde_json::json;

const COLD_RUNS: usize = 10;
const WARM_RUNS: usize = 200;
const HELD: usize = 8;

fn spec() -> Spec {
    let config = CodeInterpreterConfig::default();
    Spec {
        bwrap: find_program(&config.bwrap_path).expect("bubblewrap is installed"),
        python: find_program(&config.python_path).expect("Python is installed"),
        limits: Limits {
            memory_mb: config.memory_mb,
            max_processes: config.max_processes,
            max_open_files: config.max_open_files,
            container_mb: config.container_mb,
            tmp_mb: 64,
        },
    }
}

/// A uid of its own per sandbox when root, as the server does.
fn uid(n: usize) -> Option<u32> {
    // SAFETY: geteuid has no preconditions.
    (unsafe { libc::geteuid() } == 0).then(|| CodeInterpreterConfig::default().first_uid + n as u32)
}

async fn call(sandbox: &mut Sandbox, code: &str) {
    let answer = sandbox
        .request(
            &json!({"op": "exec", "code": code, "max_output": 1000}),
            Duration::from_secs(30),
            1 << 24,
        )
        .await
        .expect("the call answers");
    assert!(answer["error"].is_null(), "{answer}");
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn report(what: &str, mut times: Vec<Duration>) {
    times.sort();
    println!(
        "{what:<48} p50 {:>8.1} ms   p99 {:>8.1} ms   (n = {})",
        percentile(&times, 0.5).as_secs_f64() * 1000.0,
        percentile(&times, 0.99).as_secs_f64() * 1000.0,
        times.len()
    );
}

/// The proportional set size, in KiB, of `pid` and every process below it.
fn pss_kib(pid: u32) -> u64 {
    let mut total = 0;
    let mut queue = vec![pid];
    while let Some(pid) = queue.pop() {
        if let Ok(rollup) = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")) {
            total += rollup
                .lines()
                .find(|l| l.starts_with("Pss:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0);
        }
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for task in tasks.flatten() {
                if let Ok(children) = std::fs::read_to_string(task.path().join("children")) {
                    queue.extend(
                        children
                            .split_whitespace()
                            .filter_map(|c| c.parse::<u32>().ok()),
                    );
                }
            }
        }
    }
    total
}

async fn held(spec: &Spec, code: &str) -> f64 {
    let mut sandboxes = Vec::new();
    for n in 0..HELD {
        let mut sandbox = Sandbox::start(spec, uid(n), Duration::from_secs(20))
            .await
            .expect("a sandbox starts");
        call(&mut sandbox, code).await;
        sandboxes.push(sandbox);
    }
    let total: u64 = sandboxes
        .iter()
        .map(|s| pss_kib(s.pid().expect("running")))
        .sum();
    for sandbox in &mut sandboxes {
        sandbox.kill().await;
    }
    total as f64 / HELD as f64 / 1024.0
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let spec = spec();
    for (label, code) in [
        ("print", "print(1)"),
        ("import pandas, numpy", "import pandas, numpy\nprint(1)"),
    ] {
        let mut cold = Vec::new();
        for n in 0..COLD_RUNS {
            let started = Instant::now();
            let mut sandbox = Sandbox::start(&spec, uid(n), Duration::from_secs(20))
                .await
                .expect("a sandbox starts");
            call(&mut sandbox, code).await;
            cold.push(started.elapsed());
            sandbox.kill().await;
        }
        report(&format!("first result, new container ({label})"), cold);
    }
    let mut sandbox = Sandbox::start(&spec, uid(0), Duration::from_secs(20))
        .await
        .expect("a sandbox starts");
    call(
        &mut sandbox,
        "import pandas as pd\ndf = pd.DataFrame({'a': range(100)})",
    )
    .await;
    for (label, code) in [
        ("print", "x = 1 + 1\nprint(x)"),
        ("pandas mean", "print(df['a'].mean())"),
    ] {
        let mut warm = Vec::new();
        for _ in 0..WARM_RUNS {
            let started = Instant::now();
            call(&mut sandbox, code).await;
            warm.push(started.elapsed());
        }
        report(&format!("first result, warm container ({label})"), warm);
    }
    sandbox.kill().await;
    for (label, code) in [
        ("idle interpreter", "print(1)"),
        (
            "pandas and numpy imported",
            "import pandas, numpy\nprint(1)",
        ),
    ] {
        let mib = held(&spec, code).await;
        println!(
            "memory per container ({label:<26}) {mib:>7.1} MiB PSS   -> {:>6.0} containers per GiB",
            1024.0 / mib
        );
    }
}
