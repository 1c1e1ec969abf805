//! Metrics (docs/spec.md#tool-metrics), exported at `GET /metrics` in Prometheus' text
//! format: per tool, calls by outcome, failures by error code, latency, result size and the
//! tokens its results cost the model; beside them, HTTP requests and runs. One `Metrics` per
//! application (so concurrent test apps count apart), shared by `Arc`; the `Launcher` holds it.
//! `tool_round` records each call (and logs one structured line for it), `http::count_request`
//! each request by its route pattern, the launcher each run started, the loop each run ended.

use std::time::Duration;

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts, Registry,
    TextEncoder,
};

/// The registry and every metric Colloquy records.
pub struct Metrics {
    registry: Registry,
    http_requests: IntCounterVec,
    runs_started: IntCounterVec,
    runs_finished: IntCounterVec,
    tool_calls: IntCounterVec,
    tool_failures: IntCounterVec,
    tool_duration: HistogramVec,
    tool_result_bytes: HistogramVec,
    tool_result_tokens: IntCounterVec,
    active_chats: IntGauge,
    heap_in_use: IntGauge,
    db_statements: IntCounter,
    sandboxes: IntGauge,
    sandbox_limits: IntCounterVec,
}

/// How one tool call ended, for `Metrics::tool_call`.
pub struct ToolCallOutcome<'a> {
    pub tool: &'a str,
    /// `None` for a success; the error's stable code otherwise.
    pub error_code: Option<&'a str>,
    pub duration: Duration,
    /// The result as fed back to the model.
    pub result_bytes: usize,
    pub result_tokens: u64,
}

impl Metrics {
    pub fn new() -> Self {
        let registry = Registry::new();
        let counter = |name: &str, help: &str, labels: &[&str]| {
            let metric = IntCounterVec::new(Opts::new(name, help), labels)
                .unwrap_or_else(|err| unreachable!("metric {name}: {err}"));
            registry
                .register(Box::new(metric.clone()))
                .unwrap_or_else(|err| unreachable!("metric {name}: {err}"));
            metric
        };
        let histogram = |name: &str, help: &str, buckets: Vec<f64>| {
            let metric =
                HistogramVec::new(HistogramOpts::new(name, help).buckets(buckets), &["tool"])
                    .unwrap_or_else(|err| unreachable!("metric {name}: {err}"));
            registry
                .register(Box::new(metric.clone()))
                .unwrap_or_else(|err| unreachable!("metric {name}: {err}"));
            metric
        };
        let gauge = |name: &str, help: &str| {
            let metric = IntGauge::new(name, help)
                .unwrap_or_else(|err| unreachable!("metric {name}: {err}"));
            registry
                .register(Box::new(metric.clone()))
                .unwrap_or_else(|err| unreachable!("metric {name}: {err}"));
            metric
        };
        let db_statements = IntCounter::new(
            "colloquy_db_statements_total",
            "SQL statements run on the database (migrations, requests, background jobs).",
        )
        .unwrap_or_else(|err| unreachable!("metric colloquy_db_statements_total: {err}"));
        registry
            .register(Box::new(db_statements.clone()))
            .unwrap_or_else(|err| unreachable!("metric colloquy_db_statements_total: {err}"));
        Self {
            db_statements,
            sandboxes: gauge(
                "colloquy_code_interpreter_sandboxes",
                "Code interpreter sandboxes running in this process.",
            ),
            sandbox_limits: counter(
                "colloquy_code_interpreter_limits_total",
                "Code interpreter calls that reached a limit, by limit (time, memory, \
                 file_size, container_size, processes, open_files, output, ended).",
                &["limit"],
            ),
            active_chats: gauge(
                "colloquy_active_chats",
                "Chats loaded in memory now (an actor each; idle ones passivate).",
            ),
            heap_in_use: gauge(
                "colloquy_heap_in_use_bytes",
                "Heap bytes allocated and not freed, as the allocator (jemalloc) counts them \
                 (RSS also holds what it keeps after frees).",
            ),
            http_requests: counter(
                "colloquy_http_requests_total",
                "HTTP requests answered, by method, route and status.",
                &["method", "route", "status"],
            ),
            runs_started: counter(
                "colloquy_runs_started_total",
                "Runs started, by kind (run or deep_think).",
                &["kind"],
            ),
            runs_finished: counter(
                "colloquy_runs_finished_total",
                "Runs finished, by stop reason.",
                &["stop_reason"],
            ),
            tool_calls: counter(
                "colloquy_tool_calls_total",
                "Tool calls, by tool and outcome (success or failure).",
                &["tool", "outcome"],
            ),
            tool_failures: counter(
                "colloquy_tool_failures_total",
                "Failed tool calls, by tool and error code.",
                &["tool", "code"],
            ),
            tool_duration: histogram(
                "colloquy_tool_duration_seconds",
                "How long tool calls took.",
                vec![
                    0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 15.0, 30.0,
                ],
            ),
            tool_result_bytes: histogram(
                "colloquy_tool_result_bytes",
                "Size of tool results as fed back to the model.",
                vec![100.0, 1_000.0, 5_000.0, 10_000.0, 50_000.0, 100_000.0],
            ),
            tool_result_tokens: counter(
                "colloquy_tool_result_tokens_total",
                "Tokens (cl100k_base) of tool results fed back to the model, by tool.",
                &["tool"],
            ),
            registry,
        }
    }

    /// The counter `db::count_statements` adds to.
    pub fn db_statements_counter(&self) -> IntCounter {
        self.db_statements.clone()
    }

    /// SQL statements run so far.
    pub fn db_statements(&self) -> u64 {
        self.db_statements.get()
    }

    pub fn http_request(&self, method: &str, route: &str, status: u16) {
        self.http_requests
            .with_label_values(&[method, route, &status.to_string()])
            .inc();
    }

    pub fn run_started(&self, kind: &str) {
        self.runs_started.with_label_values(&[kind]).inc();
    }

    pub fn run_finished(&self, stop_reason: &str) {
        self.runs_finished.with_label_values(&[stop_reason]).inc();
    }

    pub fn tool_call(&self, call: &ToolCallOutcome<'_>) {
        let outcome = if call.error_code.is_some() {
            "failure"
        } else {
            "success"
        };
        self.tool_calls
            .with_label_values(&[call.tool, outcome])
            .inc();
        if let Some(code) = call.error_code {
            self.tool_failures
                .with_label_values(&[call.tool, code])
                .inc();
        }
        self.tool_duration
            .with_label_values(&[call.tool])
            .observe(call.duration.as_secs_f64());
        self.tool_result_bytes
            .with_label_values(&[call.tool])
            .observe(call.result_bytes as f64);
        self.tool_result_tokens
            .with_label_values(&[call.tool])
            .inc_by(call.result_tokens);
    }

    /// A code interpreter sandbox started.
    pub fn sandbox_started(&self) {
        self.sandboxes.inc();
    }

    /// A code interpreter sandbox stopped.
    pub fn sandbox_stopped(&self) {
        self.sandboxes.dec();
    }

    /// A code interpreter call reached `limit`.
    pub fn sandbox_limit(&self, limit: &str) {
        self.sandbox_limits.with_label_values(&[limit]).inc();
    }

    /// Everything, in Prometheus' text format; `active_chats` is read at the scrape.
    pub fn render(
        &self,
        active_chats: usize,
        cluster: Option<crate::cluster::ClusterStats>,
    ) -> String {
        self.active_chats
            .set(i64::try_from(active_chats).unwrap_or(i64::MAX));
        if let Some(bytes) = crate::allocator::heap_in_use() {
            self.heap_in_use
                .set(i64::try_from(bytes).unwrap_or(i64::MAX));
        }
        let mut out = Vec::new();
        if let Err(err) = TextEncoder::new().encode(&self.registry.gather(), &mut out) {
            tracing::error!(%err, "could not encode the metrics");
        }
        let mut text = String::from_utf8_lossy(&out).into_owned();
        if let Some(stats) = cluster {
            text.push_str(&cluster_lines(&stats));
        }
        text
    }
}

/// The cluster's figures, counted by `Cluster` itself, in the same text format.
fn cluster_lines(stats: &crate::cluster::ClusterStats) -> String {
    let lines = [
        (
            "colloquy_cluster_chat_leases",
            "gauge",
            "Chats this process owns through a lease.",
            stats.chat_leases,
        ),
        (
            "colloquy_cluster_job_leases",
            "gauge",
            "Once-per-cluster jobs this process holds.",
            stats.job_leases,
        ),
        (
            "colloquy_cluster_forwarded_requests_total",
            "counter",
            "Requests this process forwarded to the process owning their chat.",
            stats.forwarded,
        ),
        (
            "colloquy_cluster_failovers_total",
            "counter",
            "Chats this process took over from a process that stopped renewing them.",
            stats.failovers,
        ),
    ];
    lines
        .iter()
        .map(|(name, kind, help, value)| {
            format!("# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}\n")
        })
        .collect()
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}
