//! Several processes on one PostgreSQL: one, two and three `colloquy` processes (on this
//! machine, so they share its cores) over a fresh database each, the requests of every chat
//! sent round-robin to all of them, as a plain reverse proxy would.
//!
//! - chats per second: `BENCH_CLUSTER_CHATS` chats, each made on one process, its first turn
//!   sent to the next (which takes the chat's lease) and its second to the one after (forwarded
//!   to the owner when there are several), 32 chats at a time, against an upstream that
//!   answers at once;
//! - streams: `BENCH_CLUSTER_STREAMS` chats streaming at once from the slow upstream (a piece a
//!   second for `BENCH_STREAM_SECONDS`), each sent to a process other than its owner's when
//!   there are several (so every stream is forwarded): time to first byte p50/p99, errors, the
//!   chats each process owned (the streaming ones and those of the first phase still live),
//!   each one's peak RSS, and the CPU of them all;
//! - hand-over: the last process is SIGKILLed and a chat it owned is asked again through a
//!   survivor every 100 ms: the time from the kill to the first answer (bounded by the lease
//!   time, `cluster.lease_secs`: `BENCH_CLUSTER_LEASE_SECS`, 10 s as by default; 3 s in the
//!   smoke run).
//!
//! PostgreSQL comes from `BENCH_POSTGRES_URL` (or `COLLOQUY_TEST_POSTGRES_URL`, as CI sets for
//! the smoke run); without one the part says so and is skipped.

use std::time::{Duration, Instant};

use sea_orm::{ConnectionTrait, Database};
use serde_json::{Value, json};

use crate::Settings;
use crate::colloquy::{API_KEY, Colloquy, mib};
use crate::load::{in_parallel, ms, percentile};
use crate::streams::one_stream;
use crate::upstream::{PIECE, Pacing, QUICK, Upstream};

struct Row {
    processes: usize,
    chats: usize,
    chat_errors: usize,
    chats_per_sec: f64,
    turns_per_sec: f64,
    forwarded: u64,
    streams: usize,
    stream_errors: usize,
    first_byte: Vec<u64>,
    /// Chat leases each process held while the streams ran.
    owned: Vec<u64>,
    rss_peak: Vec<u64>,
    cpu_cores: f64,
    handover: Option<Duration>,
}

pub async fn run(settings: &Settings) {
    let Some(admin_url) = std::env::var("BENCH_POSTGRES_URL")
        .or_else(|_| std::env::var("COLLOQUY_TEST_POSTGRES_URL"))
        .ok()
    else {
        println!("## Several processes on one PostgreSQL");
        println!();
        println!("skipped: set BENCH_POSTGRES_URL to a PostgreSQL that may create databases");
        println!();
        return;
    };
    let mut rows = Vec::new();
    for processes in settings.cluster_processes.clone() {
        rows.push(one_size(&admin_url, processes, settings).await);
    }
    println!("## Several processes on one PostgreSQL");
    println!();
    println!(
        "Requests round-robin over the processes; each chat owned by one of them. Streams last \
         about {} s; latencies in ms; RSS in MiB per process; CPU in cores busy, all processes \
         together; hand-over: from the SIGKILL of the last process to the first answer for one \
         of its chats through a survivor (lease {} s).",
        settings.stream_seconds, settings.cluster_lease_secs
    );
    println!();
    println!(
        "| processes | chats | errors | chats/s | turns/s | forwarded | streams | errors | \
         first byte p50 | p99 | chats owned per process | RSS peak per process | CPU | \
         hand-over (s) |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|");
    for row in &rows {
        println!(
            "| {} | {} | {} | {:.1} | {:.1} | {} | {} | {} | {} | {} | {} | {} | {:.2} | {} |",
            row.processes,
            row.chats,
            row.chat_errors,
            row.chats_per_sec,
            row.turns_per_sec,
            row.forwarded,
            row.streams,
            row.stream_errors,
            ms(percentile(&row.first_byte, 50.0)),
            ms(percentile(&row.first_byte, 99.0)),
            row.owned
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(" / "),
            row.rss_peak
                .iter()
                .map(|bytes| mib(*bytes))
                .collect::<Vec<_>>()
                .join(" / "),
            row.cpu_cores,
            row.handover
                .map_or_else(|| "–".into(), |d| format!("{:.2}", d.as_secs_f64())),
        );
    }
    println!();
}

async fn one_size(admin_url: &str, processes: usize, settings: &Settings) -> Row {
    let admin = Database::connect(admin_url).await.expect("PostgreSQL");
    let name = format!("colloquy_bench_{}", uuid::Uuid::new_v4().simple());
    admin
        .execute_unprepared(&format!("CREATE DATABASE {name}"))
        .await
        .expect("a database of the bench's own");
    let mut url = url::Url::parse(admin_url).expect("a PostgreSQL URL");
    url.set_path(&name);
    let streams = settings.cluster_streams;
    let upstream = Upstream::start(Pacing {
        pieces: settings.stream_seconds.max(1) as usize,
        every: Duration::from_secs(1),
    });
    let vars = [
        ("COLLOQUY_DATABASE__URL", url.to_string()),
        (
            "COLLOQUY_HTTP__MAX_IN_FLIGHT",
            (2 * streams + 200).to_string(),
        ),
        // Room for each process's share of the chats' database work at once.
        ("COLLOQUY_DATABASE__MAX_CONNECTIONS", "10".to_string()),
        (
            "COLLOQUY_CLUSTER__LEASE_SECS",
            settings.cluster_lease_secs.to_string(),
        ),
    ];
    let mut nodes = Vec::new();
    for _ in 0..processes {
        nodes.push(Colloquy::start(upstream.address, &vars).await);
    }
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(settings.stream_seconds + 300))
        .pool_max_idle_per_host(usize::MAX)
        .build()
        .expect("client");

    // Chats per second: made on one process, first turn on the next, second on the one after.
    let chats = settings.cluster_chats;
    let cpu_before: f64 = nodes.iter().map(Colloquy::cpu_seconds).sum();
    let started = Instant::now();
    let outcomes = in_parallel(chats, 32, |i| {
        let (client, nodes) = (&client, &nodes);
        async move {
            let chat = create(client, &nodes[i % processes]).await?;
            for turn in 1..=2 {
                quick_turn(client, &nodes[(i + turn) % processes], &chat).await?;
            }
            Ok::<String, String>(chat)
        }
    })
    .await;
    let wall = started.elapsed().as_secs_f64();
    let chat_errors = outcomes.iter().filter(|o| o.is_err()).count();
    let made: Vec<String> = outcomes.into_iter().filter_map(Result::ok).collect();

    // Streams: each sent to a process that does not own its chat (when there are several).
    let stream_chats = in_parallel(streams, 32, |i| {
        let (client, nodes) = (&client, &nodes);
        async move {
            let chat = create(client, &nodes[i % processes]).await.expect("a chat");
            // Owned by the next process: a first quick turn there takes the lease.
            quick_turn(client, &nodes[(i + 1) % processes], &chat)
                .await
                .expect("a first turn");
            chat
        }
    })
    .await;
    let owned: Vec<u64> = {
        let mut owned = Vec::new();
        for node in &nodes {
            owned.push(leases(&client, node).await);
        }
        owned
    };
    let expected = PIECE.repeat(settings.stream_seconds.max(1) as usize);
    let bytes = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for (i, chat) in stream_chats.iter().enumerate() {
        let url = format!(
            "{}/chat/api/{chat}/messages",
            nodes[(i + 2) % processes].url
        );
        let (client, expected, bytes) = (client.clone(), expected.clone(), bytes.clone());
        tasks.spawn(async move { one_stream(&client, &url, &expected, &bytes).await });
    }
    let mut rss_peak = vec![0; processes];
    let mut first_byte = Vec::new();
    let mut stream_errors = 0;
    let mut sampler = tokio::time::interval(Duration::from_millis(250));
    loop {
        tokio::select! {
            joined = tasks.join_next() => {
                let Some(joined) = joined else { break };
                match joined.expect("a stream task does not panic") {
                    Ok(sample) => first_byte.push(sample.first_byte),
                    Err(_) => stream_errors += 1,
                }
            }
            _ = sampler.tick() => {
                for (peak, node) in rss_peak.iter_mut().zip(&nodes) {
                    *peak = (*peak).max(node.rss_bytes());
                }
            }
        }
    }
    first_byte.sort_unstable();
    let cpu_cores = (nodes.iter().map(Colloquy::cpu_seconds).sum::<f64>() - cpu_before)
        / started.elapsed().as_secs_f64();
    let mut forwarded = 0;
    for node in &nodes {
        forwarded += ready(&client, node).await["cluster"]["forwarded_requests"]
            .as_u64()
            .unwrap_or(0);
    }

    // Hand-over: the last process dies; one of its chats is asked through the first.
    let handover = if processes > 1 {
        let victim_id = ready(&client, &nodes[processes - 1]).await["cluster"]["process"]
            .as_str()
            .map(str::to_string);
        let theirs = owned_by(url.as_ref(), victim_id.as_deref().unwrap_or("")).await;
        nodes.pop(); // SIGKILL
        let killed = Instant::now();
        match theirs {
            Some(chat) => loop {
                if quick_turn(&client, &nodes[0], &chat).await.is_ok() {
                    break Some(killed.elapsed());
                }
                if killed.elapsed() > Duration::from_secs(60) {
                    break None;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            },
            None => None,
        }
    } else {
        None
    };
    drop(nodes);
    admin
        .execute_unprepared(&format!("DROP DATABASE {name} WITH (FORCE)"))
        .await
        .expect("drop the bench's database");
    Row {
        processes,
        chats,
        chat_errors,
        chats_per_sec: made.len() as f64 / wall,
        turns_per_sec: (2 * made.len()) as f64 / wall,
        forwarded,
        streams,
        stream_errors,
        first_byte,
        owned,
        rss_peak,
        cpu_cores,
        handover,
    }
}

async fn create(client: &reqwest::Client, node: &Colloquy) -> Result<String, String> {
    let chat: Value = client
        .post(format!("{}/chat/api/chats", node.url))
        .bearer_auth(API_KEY)
        .json(&json!({}))
        .send()
        .await
        .map_err(|err| err.to_string())?
        .error_for_status()
        .map_err(|err| err.to_string())?
        .json()
        .await
        .map_err(|err| err.to_string())?;
    chat["id"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| "no chat id".into())
}

/// One turn the upstream answers at once, read to its end.
async fn quick_turn(client: &reqwest::Client, node: &Colloquy, chat: &str) -> Result<(), String> {
    let response = client
        .post(format!("{}/chat/api/{chat}/messages", node.url))
        .bearer_auth(API_KEY)
        .json(&json!({ "content": QUICK }))
        .send()
        .await
        .map_err(|err| err.to_string())?;
    if response.status() != reqwest::StatusCode::OK {
        return Err(format!("HTTP {}", response.status()));
    }
    let body = response.text().await.map_err(|err| err.to_string())?;
    if body.contains("[DONE]") {
        Ok(())
    } else {
        Err("incomplete stream".into())
    }
}

async fn ready(client: &reqwest::Client, node: &Colloquy) -> Value {
    client
        .get(format!("{}/health/ready", node.url))
        .send()
        .await
        .expect("readiness")
        .json()
        .await
        .expect("readiness as JSON")
}

async fn leases(client: &reqwest::Client, node: &Colloquy) -> u64 {
    ready(client, node).await["cluster"]["chat_leases"]
        .as_u64()
        .unwrap_or(0)
}

/// A chat whose live lease `owner` holds.
async fn owned_by(url: &str, owner: &str) -> Option<String> {
    let db = Database::connect(url).await.ok()?;
    let row = db
        .query_one_raw(sea_orm::Statement::from_sql_and_values(
            sea_orm::DbBackend::Postgres,
            "SELECT key FROM leases WHERE owner = $1 AND key LIKE 'chat:%' AND expires_at > now() LIMIT 1",
            [owner.into()],
        ))
        .await
        .ok()??;
    let key: String = row.try_get("", "key").ok()?;
    key.strip_prefix("chat:").map(str::to_string)
}
