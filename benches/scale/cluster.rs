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
//!   streams each process served (its owner's, from the database's leases), each one's peak
//!   RSS, and the CPU of them all;
//! - hand-over: the last process is SIGKILLed and up to 20 chats it owned are each asked again
//!   through a survivor every 100 ms: the time from the kill to each one's first answer, the
//!   first and the last (bounded by the lease time, `cluster.lease_secs`:
//!   `BENCH_CLUSTER_LEASE_SECS`, 10 s as by default; 3 s in the smoke run).
//!
//! - index rebuild: before the kill, a vector store with a file of `BENCH_CLUSTER_CHUNKS` chunks
//!   (1,000) is made through the last process; after it, the store is searched through the
//!   first, which takes the chat and rebuilds its index from the database in its own data
//!   directory: the first search's time less the next one's, and that per 1,000 chunks.
//!
//! Each process has a data directory of its own. With `BENCH_S3_URL` (an S3-compatible
//! endpoint, e.g. `moto_server -p 9000`), files go to its bucket `colloquy-bench`, made here:
//! the processes then share nothing but PostgreSQL and the store.
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
    /// Streams each process served (it owned their chats).
    served: Vec<u64>,
    rss_peak: Vec<u64>,
    cpu_cores: f64,
    /// From the kill to each of the dead process's chats answering again, sorted.
    handover: Vec<Duration>,
    /// A taken vector store's first search less its second, and its chunks.
    rebuild: Option<(Duration, usize)>,
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
         together; hand-over: from the SIGKILL of the last process to the first answer for each \
         of (up to 20 of) its chats through a survivor, the first and the last (lease {} s).",
        settings.stream_seconds, settings.cluster_lease_secs
    );
    println!();
    println!(
        "| processes | chats | errors | chats/s | turns/s | forwarded | streams | errors | \
         first byte p50 | p99 | streams per process | RSS peak per process | CPU | \
         hand-over (s) | index rebuild (ms; per 1,000 chunks) |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---|---|");
    for row in &rows {
        println!(
            "| {} | {} | {} | {:.1} | {:.1} | {} | {} | {} | {} | {} | {} | {} | {:.2} | {} | {} |",
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
            row.served
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
            match (row.handover.first(), row.handover.last()) {
                (Some(first), Some(last)) => format!(
                    "{:.2}–{:.2} ({} chats)",
                    first.as_secs_f64(),
                    last.as_secs_f64(),
                    row.handover.len()
                ),
                _ => "–".into(),
            },
            match row.rebuild {
                Some((took, chunks)) if chunks > 0 => format!(
                    "{} ({chunks} chunks; {:.0})",
                    took.as_millis(),
                    took.as_secs_f64() * 1000.0 * 1000.0 / chunks as f64
                ),
                _ => "–".into(),
            },
        );
    }
    println!();
    if let Some(s3) = &settings.s3_url {
        println!("Files in the S3-compatible store at {s3} (bucket `{BUCKET}`).");
    } else {
        println!("Files in each process's own data directory (no BENCH_S3_URL).");
    }
    println!();
}

const BUCKET: &str = "colloquy-bench";

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
    let mut vars = vec![
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
    if let Some(s3) = &settings.s3_url {
        let _ = reqwest::Client::new()
            .put(format!("{s3}/{BUCKET}"))
            .send()
            .await;
        vars.extend([
            ("COLLOQUY_STORAGE__URL", format!("s3://{BUCKET}/{name}")),
            ("COLLOQUY_STORAGE__ENDPOINT", s3.clone()),
            ("COLLOQUY_STORAGE__ACCESS_KEY_ID", "bench".into()),
            ("COLLOQUY_STORAGE__SECRET_ACCESS_KEY", "bench".into()),
        ]);
    }
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
    let mut ids = Vec::new();
    for node in &nodes {
        ids.push(process_id(&client, node).await);
    }
    let owners = owners(url.as_ref(), &stream_chats).await;
    let served: Vec<u64> = ids
        .iter()
        .map(|id| owners.iter().filter(|owner| *owner == id).count() as u64)
        .collect();
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

    // Hand-over: the last process dies; its chats are asked again through the first.
    let mut handover = Vec::new();
    let mut rebuild = None;
    if processes > 1 {
        let store = vector_store(&client, &nodes[processes - 1], settings.cluster_chunks).await;
        let theirs = owned_by(url.as_ref(), &ids[processes - 1], 20).await;
        nodes.pop(); // SIGKILL
        let killed = Instant::now();
        let answered = in_parallel(theirs.len(), theirs.len().max(1), |i| {
            let (client, node, chat) = (&client, &nodes[0], &theirs[i]);
            async move {
                loop {
                    if quick_turn(client, node, chat).await.is_ok() {
                        return Ok::<Duration, String>(killed.elapsed());
                    }
                    if killed.elapsed() > Duration::from_secs(60) {
                        return Err(format!("{chat} never answered again"));
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        })
        .await;
        handover = answered.into_iter().filter_map(Result::ok).collect();
        handover.sort_unstable();
        if let Some((store, files)) = store {
            let took = rebuild_time(&client, &nodes[0], &store, killed).await;
            let mut chunks = 0;
            for file in &files {
                chunks += chunks_of(url.as_ref(), file).await;
            }
            rebuild = took.map(|took| (took, chunks));
        }
    }
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
        served,
        rss_peak,
        cpu_cores,
        handover,
        rebuild,
    }
}

/// A vector store made through `node` with files of about `chunks` chunks in all (100 to a
/// file, under a document's text limit), processed: its id and its files' ids.
async fn vector_store(
    client: &reqwest::Client,
    node: &Colloquy,
    chunks: usize,
) -> Option<(String, Vec<String>)> {
    let store = post_json(
        client,
        format!("{}/v1/vector_stores", node.url),
        json!({"name": "survey"}),
    )
    .await?;
    let store_id = store["id"].as_str()?.to_string();
    let mut files = Vec::new();
    for part in 0..chunks.div_ceil(100) {
        let in_this = (chunks - part * 100).min(100);
        // About one chunk (1,024 tokens, less the overlap) per 25 lines.
        let text: String = (0..in_this * 25)
            .map(|i| {
                format!(
                    "Line {i} of part {part} of the survey notes on topic {} records sample {} \
                     at depth {} metres near station {} with readings {} and {}.\n",
                    i % 97,
                    i * 7,
                    i % 300,
                    i % 41,
                    i * 13,
                    i % 11
                )
            })
            .collect();
        let form = reqwest::multipart::Form::new()
            .text("purpose", "assistants")
            .part(
                "file",
                reqwest::multipart::Part::bytes(text.into_bytes())
                    .file_name(format!("survey-{part}.txt")),
            );
        let file: Value = client
            .post(format!("{}/v1/files", node.url))
            .bearer_auth(API_KEY)
            .multipart(form)
            .send()
            .await
            .ok()?
            .json()
            .await
            .ok()?;
        let file_id = file["id"].as_str()?.to_string();
        post_json(
            client,
            format!("{}/v1/vector_stores/{store_id}/files", node.url),
            json!({"file_id": file_id}),
        )
        .await?;
        files.push(file_id);
    }
    let deadline = Instant::now() + Duration::from_secs(600);
    while Instant::now() < deadline {
        let listed: Value = client
            .get(format!(
                "{}/v1/vector_stores/{store_id}/files?limit=100",
                node.url
            ))
            .bearer_auth(API_KEY)
            .send()
            .await
            .ok()?
            .json()
            .await
            .ok()?;
        let data = listed["data"].as_array()?;
        if data.len() == files.len() && data.iter().all(|f| f["status"] == "completed") {
            return Some((store_id, files));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    None
}

/// A JSON `body` posted to `url` with the bench's key; the JSON answer.
async fn post_json(client: &reqwest::Client, url: String, body: Value) -> Option<Value> {
    client
        .post(url)
        .bearer_auth(API_KEY)
        .json(&body)
        .send()
        .await
        .ok()?
        .json()
        .await
        .ok()
}

/// The store searched through `node` once it answers after the kill: the first answer's time
/// less the second's (the index rebuilt from the database when the chat was taken).
async fn rebuild_time(
    client: &reqwest::Client,
    node: &Colloquy,
    store: &str,
    killed: Instant,
) -> Option<Duration> {
    let search = || async {
        let started = Instant::now();
        let response = client
            .post(format!("{}/v1/vector_stores/{store}/search", node.url))
            .bearer_auth(API_KEY)
            .json(&json!({"query": "survey notes station"}))
            .send()
            .await
            .ok()?;
        let ok = response.status().is_success();
        response.bytes().await.ok()?;
        ok.then(|| started.elapsed())
    };
    let first = loop {
        if let Some(took) = search().await {
            break took;
        }
        if killed.elapsed() > Duration::from_secs(120) {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let second = search().await?;
    Some(first.saturating_sub(second))
}

/// How many chunks the document made from `file` has.
async fn chunks_of(url: &str, file: &str) -> usize {
    let Ok(db) = Database::connect(url).await else {
        return 0;
    };
    let row = db
        .query_one_raw(sea_orm::Statement::from_sql_and_values(
            sea_orm::DbBackend::Postgres,
            "SELECT COUNT(*) AS n FROM document_chunks c JOIN documents d              ON d.id = c.document_id WHERE d.file_id = $1 AND d.deleted_at IS NULL",
            [file.into()],
        ))
        .await
        .ok()
        .flatten();
    row.and_then(|row| row.try_get::<i64>("", "n").ok())
        .map_or(0, |n| n as usize)
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

async fn process_id(client: &reqwest::Client, node: &Colloquy) -> String {
    ready(client, node).await["cluster"]["process"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The owner of each chat's live lease (`""` for none), from the database.
async fn owners(url: &str, chats: &[String]) -> Vec<String> {
    let db = Database::connect(url).await.expect("PostgreSQL");
    let mut owners = Vec::new();
    for chat in chats {
        let row = db
            .query_one_raw(sea_orm::Statement::from_sql_and_values(
                sea_orm::DbBackend::Postgres,
                "SELECT owner FROM leases WHERE key = $1 AND expires_at > now()",
                [format!("chat:{chat}").into()],
            ))
            .await
            .expect("a lease query");
        owners.push(
            row.and_then(|row| row.try_get::<String>("", "owner").ok())
                .unwrap_or_default(),
        );
    }
    owners
}

/// Up to `most` chats whose live lease `owner` holds.
async fn owned_by(url: &str, owner: &str, most: usize) -> Vec<String> {
    let Ok(db) = Database::connect(url).await else {
        return Vec::new();
    };
    let rows = db
        .query_all_raw(sea_orm::Statement::from_sql_and_values(
            sea_orm::DbBackend::Postgres,
            "SELECT key FROM leases WHERE owner = $1 AND key LIKE 'chat:%' \
             AND expires_at > now() LIMIT $2",
            [owner.into(), (most as i64).into()],
        ))
        .await
        .unwrap_or_default();
    rows.iter()
        .filter_map(|row| row.try_get::<String>("", "key").ok())
        .filter_map(|key| key.strip_prefix("chat:").map(str::to_string))
        .collect()
}
