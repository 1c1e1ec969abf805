//! Three real `colloquy serve` processes on one PostgreSQL (`COLLOQUY_TEST_POSTGRES_URL`,
//! skipped with a note when unset; CI sets it), each chat owned by one of them through its
//! lease: 200 chats whose requests go round-robin to all three are answered by their owner
//! (streamed and not); one process SIGKILLed mid-stream has its chats answered by the others
//! once its leases expire, its streaming run interrupted with its draft kept and its paused
//! question answered through another process; no acknowledged message is lost, and the
//! database's record of every change of owner shows no chat owned twice. A chat whose owner
//! died with documents half done has them finished by the next owner (asked for or not); one
//! its live owner let lapse is no failover.

use std::collections::{BTreeMap, BTreeSet};
use std::net::TcpListener;
use std::process::Command;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use sea_orm::{ConnectionTrait, Database, DatabaseConnection, DbBackend, Statement};
use serde_json::{Value, json};

use crate::client::{Call, Client};
use crate::fake_upstream::{FakeUpstream, Reply};
use crate::helpers::ADMIN_KEY;
use crate::postgres::OwnDatabase;
use crate::sse::{content, drain_frames};
use crate::subprocess::{Background, start_within};

/// The typed client for `base`, with the admin's key.
fn as_admin<'a>(http: &'a reqwest::Client, base: &'a str) -> Client<'a> {
    Client::with_key(http, base, ADMIN_KEY)
}

const BINARY: &str = env!("CARGO_BIN_EXE_colloquy");
const PROCESS_LIMIT: Duration = Duration::from_secs(300);
/// The lease time these processes run with (the default is 10 s).
const LEASE_SECS: u64 = 3;
const CHATS: usize = 200;
const SERVED_BY: &str = "x-colloquy-process";

struct Node {
    process: Option<Background>,
    base: String,
    id: String,
}

async fn start_node(dir: &std::path::Path, database: &str, upstream: &str) -> Node {
    start_node_with(dir, database, upstream, &[]).await
}

/// `start_node` with more settings (environment variables).
async fn start_node_with(
    dir: &std::path::Path,
    database: &str,
    upstream: &str,
    settings: &[(&str, &str)],
) -> Node {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut command = Command::new(BINARY);
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("COLLOQUY_DATA_DIR", dir)
        .env("COLLOQUY_BIND", format!("127.0.0.1:{port}"))
        .env("COLLOQUY_LOG__FILTER", "warn")
        .env("COLLOQUY_DATABASE__URL", database)
        .env("COLLOQUY_LLM__BASE_URL", upstream)
        .env("COLLOQUY_AUTH__BOOTSTRAP_API_KEY", ADMIN_KEY)
        .env("COLLOQUY_CLUSTER__LEASE_SECS", LEASE_SECS.to_string())
        // Reached by the others by name, as a deployment would advertise it.
        .env(
            "COLLOQUY_CLUSTER__ADVERTISE_URL",
            format!("http://localhost:{port}"),
        )
        .envs(settings.iter().copied())
        .arg("serve");
    let process = start_within(command, "colloquy serve", PROCESS_LIMIT);
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        if let Ok(ready) = http.get(format!("{base}/health/ready")).send().await
            && ready.status().is_success()
        {
            let body: Value = ready.json().await.unwrap();
            let id = body["cluster"]["process"]
                .as_str()
                .expect("a clustered process says its id")
                .to_string();
            return Node {
                process: Some(process),
                base,
                id,
            };
        }
        assert!(
            Instant::now() < deadline,
            "colloquy serve did not become ready"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Sends `node`'s process the signal `name` (`-STOP`, `-CONT`).
fn signal(node: &Node, name: &str) {
    let pid = node.process.as_ref().unwrap().pid().to_string();
    let status = Command::new("kill")
        .args([name, &pid])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill {name}");
}

/// The live owner of a chat's lease, from the database.
async fn owner_of(db: &DatabaseConnection, chat: &str) -> Option<String> {
    db.query_one_raw(Statement::from_sql_and_values(
        DbBackend::Postgres,
        "SELECT owner FROM leases WHERE key = $1 AND expires_at > now()",
        [format!("chat:{chat}").into()],
    ))
    .await
    .unwrap()
    .map(|row| row.try_get::<String>("", "owner").unwrap())
}

/// Sends a message and reads its whole stream: the process that served it and the answer.
async fn send(http: &reqwest::Client, node: &Node, chat: &str, text: &str) -> (String, String) {
    let response = as_admin(http, &node.base)
        .chat_api()
        .send_message(chat)
        .json(&json!({"content": text}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.status(),
        200,
        "{text}: {:?}",
        response.text().await
    );
    let served = response.headers()[SERVED_BY].to_str().unwrap().to_string();
    let mut body = response.text().await.unwrap();
    let frames = drain_frames(&mut body);
    let answer = content(&frames);
    assert!(
        frames.iter().any(|f| f.json()["type"] == "run.finished"),
        "{text}: the stream ends with its run"
    );
    (served, answer)
}

/// Sends `request` until a survivor has taken the chat over (until then: 503 with
/// `Retry-After`), at most `within_secs` after the kill; the first success.
async fn once_taken_over(
    killed: Instant,
    within_secs: u64,
    request: impl Fn() -> reqwest::RequestBuilder,
) -> reqwest::Response {
    loop {
        let response = request().send().await.unwrap();
        if response.status().is_success() {
            return response;
        }
        assert_eq!(response.status(), 503, "refused only while the lease lasts");
        assert!(response.headers().contains_key("retry-after"));
        assert!(
            killed.elapsed() < Duration::from_secs(within_secs),
            "no survivor took the chat over in time"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn query_strings(
    db: &DatabaseConnection,
    sql: &str,
    values: Vec<sea_orm::Value>,
) -> Vec<Vec<Option<String>>> {
    db.query_all_raw(Statement::from_sql_and_values(
        DbBackend::Postgres,
        sql,
        values,
    ))
    .await
    .unwrap()
    .iter()
    .map(|row| {
        (0..)
            .map_while(|i| row.try_get_by_index::<Option<String>>(i).ok())
            .collect()
    })
    .collect()
}

#[actix_web::test]
async fn three_processes_share_chats_by_lease_and_survive_one_killed_mid_stream() {
    let Some(database) = OwnDatabase::create("colloquy_cluster").await else {
        return;
    };
    let url = database.url.clone();

    let upstream = FakeUpstream::start().await;
    upstream.script((0..4 * CHATS).map(|_| Reply::text("Answered by the model.")));
    let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let mut nodes = Vec::new();
    for dir in &dirs {
        nodes.push(start_node(dir.path(), &url, &upstream.base_url).await);
    }
    let db = Database::connect(&url).await.unwrap();
    let http = reqwest::Client::new();

    // 200 chats, made through all three.
    let mut chats = Vec::new();
    for i in 0..CHATS {
        chats.push(
            as_admin(&http, &nodes[i % 3].base)
                .new_chat_with(&json!({}))
                .await,
        );
    }

    // Each chat's turns go round-robin to all three processes; each is served by its owner.
    let mut acknowledged: Vec<(String, String)> = Vec::new();
    // Every process that answered for each chat, before the kill: only ever its owner.
    let mut served_for: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for round in 0..3 {
        let turns = futures_util::stream::iter(chats.iter().enumerate().map(|(i, chat)| {
            let (http, node) = (&http, &nodes[(i + round) % 3]);
            async move {
                let text = format!("round {round} of {chat}");
                let (served, answer) = send(http, node, chat, &text).await;
                (chat.clone(), text, served, answer)
            }
        }))
        .buffer_unordered(8)
        .collect::<Vec<_>>()
        .await;
        for (chat, text, served, answer) in turns {
            assert_eq!(answer, "Answered by the model.");
            let owner = owner_of(&db, &chat).await;
            assert_eq!(
                Some(&served),
                owner.as_ref(),
                "{chat} was served by its owner"
            );
            served_for.entry(chat.clone()).or_default().insert(served);
            acknowledged.push((chat, text));
        }
    }
    // A /v1 request names its chat in the body: sent to another process, it is answered by
    // the owner, and stored once.
    for (i, chat) in chats.iter().enumerate().take(30) {
        let text = format!("v1 turn in {chat}");
        let owner = owner_of(&db, chat).await.unwrap();
        let node = nodes.iter().find(|n| n.id != owner).unwrap();
        let response = as_admin(&http, &node.base)
            .openai()
            .chat_completions()
            .json(&json!({
                "messages": [{"role": "user", "content": text}],
                "x_chat_id": chat,
                "stream": i % 2 == 0,
            }))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{:?}", response.text().await);
        let served = response.headers()[SERVED_BY].to_str().unwrap().to_string();
        let mut body = response.text().await.unwrap();
        assert_eq!(served, owner, "{body}");
        served_for.entry(chat.clone()).or_default().insert(served);
        let answer = if i % 2 == 0 {
            content(&drain_frames(&mut body))
        } else {
            let body: Value = serde_json::from_str(&body).unwrap();
            body["choices"][0]["message"]["content"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        assert_eq!(answer, "Answered by the model.");
        acknowledged.push((chat.clone(), text));
    }
    // Reads too reach the owner, from any process.
    for (i, chat) in chats.iter().enumerate().take(30) {
        let response = as_admin(&http, &nodes[(i + 1) % 3].base)
            .chat_api()
            .tree(chat)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let served = response.headers()[SERVED_BY].to_str().unwrap().to_string();
        assert_eq!(Some(&served), owner_of(&db, chat).await.as_ref());
        served_for.entry(chat.clone()).or_default().insert(served);
    }
    // Each chat was answered by one process only, though asked through all three.
    for (chat, served) in &served_for {
        assert_eq!(served.len(), 1, "{chat} was served by {served:?}");
    }
    // No process has taken a chat from a dead one yet.
    for node in &nodes {
        assert_eq!(
            failovers(&http, node).await,
            0,
            "{} before the kill",
            node.id
        );
    }
    let owners: BTreeMap<String, String> = {
        let mut owners = BTreeMap::new();
        for chat in &chats {
            owners.insert(chat.clone(), owner_of(&db, chat).await.expect("an owner"));
        }
        owners
    };
    let spread: BTreeSet<&String> = owners.values().collect();
    assert_eq!(spread.len(), 3, "chats are owned by all three processes");
    // Each process is reached where it advertises itself.
    for node in &nodes {
        let addresses = query_strings(
            &db,
            "SELECT DISTINCT address FROM leases WHERE owner = $1",
            vec![node.id.clone().into()],
        )
        .await;
        let port = node.base.rsplit(':').next().unwrap();
        assert_eq!(
            addresses,
            [vec![Some(format!("http://localhost:{port}"))]],
            "{}",
            node.id
        );
    }

    // The third process owns a chat that streams slowly and one paused on a question.
    let victim = nodes[2].id.clone();
    let theirs: Vec<&String> = owners
        .iter()
        .filter(|(_, owner)| **owner == victim)
        .map(|(chat, _)| chat)
        .collect();
    let (streaming, paused) = (theirs[0].clone(), theirs[1].clone());
    upstream.script_for(
        "ask-marker",
        [
            Reply::tool_call(
                "ask_1",
                "ask_user",
                json!({"question": "Which one?", "options": ["Left", "Right"]}),
            ),
            Reply::text("You chose, and here is the rest."),
        ],
    );
    let question = as_admin(&http, &nodes[0].base)
        .chat_api()
        .send_message(&paused)
        .json(&json!({"content": "ask-marker"}))
        .send()
        .await
        .unwrap();
    assert_eq!(question.headers()[SERVED_BY].to_str().unwrap(), victim);
    let mut body = question.text().await.unwrap();
    let correlation_id = drain_frames(&mut body)
        .iter()
        .map(|f| f.json())
        .find(|j| j["type"] == "x_ask_user.question")
        .expect("a question")["correlation_id"]
        .as_str()
        .unwrap()
        .to_string();
    acknowledged.push((paused.clone(), "ask-marker".into()));

    upstream.script_for(
        "slow-marker",
        [Reply::text(&"word ".repeat(60)).event_gap(Duration::from_millis(150))],
    );
    let stream = as_admin(&http, &nodes[1].base)
        .chat_api()
        .send_message(&streaming)
        .json(&json!({"content": "slow-marker"}))
        .send()
        .await
        .unwrap();
    assert_eq!(stream.headers()[SERVED_BY].to_str().unwrap(), victim);
    let run_id = stream.headers()["x-run-id"].to_str().unwrap().to_string();
    acknowledged.push((streaming.clone(), "slow-marker".into()));
    let mut chunks = stream.bytes_stream();
    let mut buffer = String::new();
    let mut streamed = String::new();
    let mut last_seen = 0;
    while streamed.len() < 60 {
        let bytes = chunks.next().await.expect("the stream goes on").unwrap();
        buffer.push_str(&String::from_utf8_lossy(&bytes));
        for frame in drain_frames(&mut buffer) {
            last_seen = frame.id.unwrap_or(last_seen);
            if let Some(text) = frame.json()["choices"][0]["delta"]["content"].as_str() {
                streamed.push_str(text);
            }
        }
    }
    // A client re-attaching through yet another process gets the events after the last it saw,
    // from the owner, as they come.
    let reattached = reattach(&http, &nodes[0], &streaming, &run_id, last_seen).await;
    assert_eq!(reattached.headers()[SERVED_BY].to_str().unwrap(), victim);
    let mut again = reattached.bytes_stream();
    let mut buffer = String::new();
    let first_again = loop {
        let bytes = again
            .next()
            .await
            .expect("events after the last seen")
            .unwrap();
        buffer.push_str(&String::from_utf8_lossy(&bytes));
        if let Some(frame) = drain_frames(&mut buffer).into_iter().next() {
            break frame;
        }
    };
    assert!(
        first_again.id.unwrap() > last_seen,
        "{first_again:?} after {last_seen}"
    );
    drop(again);
    // Long enough for a draft to be saved.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    drop(nodes[2].process.take()); // SIGKILL
    let killed = Instant::now();
    // The client's stream, forwarded through a survivor, ends.
    while let Some(next) = chunks.next().await {
        if next.is_err() {
            break;
        }
    }

    // Within the lease time and a few seconds, the dead process's chats answer elsewhere.
    let survivors = [&nodes[0], &nodes[1]];
    let response = once_taken_over(killed, LEASE_SECS + 8, || {
        as_admin(&http, &survivors[0].base)
            .chat_api()
            .send_message(&streaming)
            .json(&json!({"content": "after the kill"}))
    })
    .await;
    let served = response.headers()[SERVED_BY].to_str().unwrap().to_string();
    let answer = content(&drain_frames(&mut response.text().await.unwrap()));
    let handover = killed.elapsed();
    println!("first answer through a survivor {handover:?} after the kill");
    assert_ne!(served, victim);
    assert_eq!(answer, "Answered by the model.");
    acknowledged.push((streaming.clone(), "after the kill".into()));
    // The cut-off run is interrupted, the text it had streamed kept as its answer.
    let interrupted = query_strings(
        &db,
        "SELECT r.status, m.content FROM runs r JOIN messages u ON u.id = r.user_message_id \
         LEFT JOIN messages m ON m.id = r.assistant_message_id \
         WHERE r.chat_id = $1 AND u.content = 'slow-marker'",
        vec![streaming.clone().into()],
    )
    .await;
    assert_eq!(interrupted.len(), 1);
    assert_eq!(interrupted[0][0].as_deref(), Some("interrupted"));
    let kept = interrupted[0][1].clone().unwrap_or_default();
    // Saved as it streamed: what the client saw and what was kept agree as far as both go.
    assert!(
        kept.starts_with("word word")
            && (kept.starts_with(streamed.trim_end()) || streamed.starts_with(kept.trim_end())),
        "kept {kept:?}, streamed {streamed:?}"
    );

    // The client re-attaching through a survivor, after the failover, learns how the run
    // ended, numbered past what it saw, without the text a second time.
    let reattached = reattach(&http, survivors[1], &streaming, &run_id, last_seen).await;
    let frames = drain_frames(&mut reattached.text().await.unwrap());
    let finished = frames
        .iter()
        .map(|f| f.json())
        .find(|j| j["type"] == "run.finished")
        .expect("how the run ended");
    assert_eq!(finished["stop_reason"], "interrupted");
    assert_eq!(content(&frames), "", "no text told twice");
    assert!(frames.iter().all(|f| f.id.is_none_or(|id| id > last_seen)));

    // The question asked on the dead process is answered through another.
    let answered = once_taken_over(killed, LEASE_SECS + 15, || {
        as_admin(&http, &survivors[1].base)
            .chat_api()
            .answer_ask(&paused, &correlation_id)
            .json(&json!({"answer": "Left"}))
    })
    .await;
    assert_ne!(answered.headers()[SERVED_BY].to_str().unwrap(), victim);
    let mut body = answered.text().await.unwrap();
    let resumed = content(&drain_frames(&mut body));
    assert!(resumed.contains("You chose"), "{resumed:?}");

    // Every chat of the dead process answers through the survivors.
    for (i, chat) in theirs.iter().enumerate().skip(2) {
        let text = format!("after the kill in {chat}");
        let (served, _) = send(&http, survivors[i % 2], chat, &text).await;
        assert_ne!(served, victim);
        acknowledged.push(((*chat).clone(), text));
    }

    // No acknowledged message was lost.
    let stored: BTreeSet<(String, String)> = query_strings(
        &db,
        "SELECT chat_id, content FROM messages WHERE role = 'user'",
        vec![],
    )
    .await
    .into_iter()
    .map(|row| (row[0].clone().unwrap(), row[1].clone().unwrap_or_default()))
    .collect();
    for message in &acknowledged {
        assert!(stored.contains(message), "lost {message:?}");
    }
    // And stored once: a forwarded request is not also stored where it arrived.
    let v1_turns = query_strings(
        &db,
        "SELECT content FROM messages WHERE role = 'user' AND content LIKE 'v1 turn in %'",
        vec![],
    )
    .await;
    assert_eq!(v1_turns.len(), 30, "each /v1 turn stored once");
    // No chat was owned twice: every change of owner took a lease from the dead process, after
    // it had expired.
    let handovers = query_strings(
        &db,
        "SELECT key, from_owner, CASE WHEN at >= from_expires_at THEN 'after' ELSE 'before' END \
         FROM lease_handovers WHERE from_owner IS NOT NULL",
        vec![],
    )
    .await;
    assert!(
        !handovers.is_empty(),
        "the dead process's chats changed hands"
    );
    for row in &handovers {
        assert_eq!(row[1].as_deref(), Some(victim.as_str()), "{row:?}");
        assert_eq!(row[2].as_deref(), Some("after"), "{row:?}");
    }
    let survivors_ready = ready(&http, survivors[0]).await;
    assert!(
        survivors_ready["cluster"]["forwarded_requests"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert!(survivors_ready["cluster"]["chat_leases"].as_u64().unwrap() > 0);
    // Each chat of the dead process was taken over once, by one survivor.
    let taken = failovers(&http, survivors[0]).await + failovers(&http, survivors[1]).await;
    assert!(
        taken >= theirs.len() as u64,
        "{taken} failovers for {} chats",
        theirs.len()
    );
    // One survivor does the cluster's once-only jobs (recovery, retention).
    let mut jobs = 0;
    for survivor in survivors {
        jobs += ready(&http, survivor).await["cluster"]["job_leases"]
            .as_u64()
            .unwrap();
    }
    assert!(jobs >= 1, "a survivor holds the recovery job");
    let metrics = http
        .get(format!("{}/metrics", survivors[0].base))
        .bearer_auth(ADMIN_KEY)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("colloquy_cluster_failovers_total"),
        "{metrics}"
    );

    drop(nodes);
    db.close().await.unwrap();
    database.drop().await;
}

/// The status of every document of `chat`, from the database.
async fn document_statuses(db: &DatabaseConnection, chat: &str) -> Vec<String> {
    query_strings(
        db,
        "SELECT status FROM documents WHERE chat_id = $1 AND deleted_at IS NULL",
        vec![chat.to_string().into()],
    )
    .await
    .into_iter()
    .map(|row| row[0].clone().unwrap_or_default())
    .collect()
}

async fn until_processed(db: &DatabaseConnection, chat: &str, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let statuses = document_statuses(db, chat).await;
        if !statuses.is_empty() && statuses.iter().all(|s| s == "processed") {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{chat}'s documents are still {statuses:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Runs `sql` with `chat` as `$1`.
async fn execute(db: &DatabaseConnection, sql: &str, chat: &str) {
    db.execute_raw(Statement::from_sql_and_values(
        DbBackend::Postgres,
        sql,
        [chat.to_string().into()],
    ))
    .await
    .unwrap();
}

/// A process's `/health/ready`.
async fn ready(http: &reqwest::Client, node: &Node) -> Value {
    http.get(format!("{}/health/ready", node.base))
        .read_json()
        .await
}

async fn failovers(http: &reqwest::Client, node: &Node) -> u64 {
    ready(http, node).await["cluster"]["failovers"]
        .as_u64()
        .unwrap()
}

/// Re-attaches to a run's events through `node`, after the event `last_seen`.
async fn reattach(
    http: &reqwest::Client,
    node: &Node,
    chat: &str,
    run_id: &str,
    last_seen: usize,
) -> reqwest::Response {
    let response = as_admin(http, &node.base)
        .chat_api()
        .run_events(chat, run_id)
        .header("last-event-id", last_seen.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response
}

/// A chat whose owner died with work left in it — a document it was processing, an upload it
/// had placed but not recorded — has that work finished by the process that takes the chat,
/// whether a request takes it or (nobody asking) the recovery job does. A chat its live owner
/// let lapse is no failover: taking it counts none and resumes nothing of the owner's.
#[actix_web::test]
async fn work_a_dead_owner_left_in_a_chat_is_finished_by_the_next_owner() {
    let Some(database) = OwnDatabase::create("colloquy_cluster").await else {
        return;
    };
    let url = database.url.clone();
    let upstream = FakeUpstream::start().await;
    upstream.script((0..8).map(|_| Reply::text("Answered by the model.")));
    let dir = tempfile::tempdir().unwrap();
    let node = start_node(dir.path(), &url, &upstream.base_url).await;
    let db = Database::connect(&url).await.unwrap();
    let http = reqwest::Client::new();

    // Four chats, each with a processed document, made through this process.
    let mut chats = Vec::new();
    for name in ["processing", "placed", "unasked", "lapsed"] {
        let chat = as_admin(&http, &node.base).new_chat_with(&json!({})).await;
        let form = reqwest::multipart::Form::new().part(
            "file",
            reqwest::multipart::Part::bytes(
                format!("Notes on {name}: the lease decides who finishes the work.").into_bytes(),
            )
            .file_name(format!("{name}.txt")),
        );
        let uploaded = as_admin(&http, &node.base)
            .chat_api()
            .upload_document(&chat)
            .multipart(form)
            .send()
            .await
            .unwrap();
        assert!(
            uploaded.status().is_success(),
            "{:?}",
            uploaded.text().await
        );
        until_processed(&db, &chat, Duration::from_secs(30)).await;
        chats.push(chat);
    }
    let [processing, placed, unasked, lapsed] = <[String; 4]>::try_from(chats).unwrap();
    let before = failovers(&http, &node).await;

    // As a process that died would leave them: a document cut off mid-processing, an upload
    // whose bytes were placed but not recorded, each chat's lease expired under a process
    // whose own lease is gone. The fourth chat's owner is alive: it let the chat lapse.
    for chat in [&processing, &unasked, &lapsed] {
        execute(
            &db,
            "UPDATE documents SET status = 'processing' WHERE chat_id = $1",
            chat,
        )
        .await;
    }
    // Renamed into place, the row still naming the upload's part file.
    execute(
        &db,
        "UPDATE documents SET status = 'uploading', storage_path = storage_path || '.part'          WHERE chat_id = $1",
        &placed,
    )
    .await;
    db.execute_unprepared(
        "INSERT INTO leases (key, owner, address, acquired_at, expires_at) \
         VALUES ('process:proc_alive', 'proc_alive', 'http://127.0.0.1:9', now(), \
                 now() + interval '1 hour')",
    )
    .await
    .unwrap();
    for chat in [&processing, &placed, &unasked] {
        execute(
            &db,
            "UPDATE leases SET owner = 'proc_dead', expires_at = now() - interval '1 second' \
             WHERE key = 'chat:' || $1",
            chat,
        )
        .await;
    }
    execute(
        &db,
        "UPDATE leases SET owner = 'proc_alive', expires_at = now() - interval '1 second' \
         WHERE key = 'chat:' || $1",
        &lapsed,
    )
    .await;
    // This process learns at its next renewal that it no longer holds them.
    tokio::time::sleep(Duration::from_millis(LEASE_SECS * 1000 / 3 + 700)).await;

    // A request takes each of the first two chats: their documents are finished.
    for chat in [&processing, &placed] {
        let (served, _) = send(&http, &node, chat, "who finishes the work?").await;
        assert_eq!(served, node.id);
        until_processed(&db, chat, Duration::from_secs(20)).await;
    }
    // Nobody asks for the third: the recovery job takes it within a lease time or two.
    until_processed(&db, &unasked, Duration::from_secs(4 * LEASE_SECS + 10)).await;
    assert_eq!(
        owner_of(&db, &unasked).await.as_deref(),
        Some(node.id.as_str())
    );
    let after = failovers(&http, &node).await;
    assert_eq!(
        after - before,
        3,
        "each chat of the dead process is one failover"
    );

    // The lapsed chat of a live process: taken, but its document is the owner's to finish.
    let (served, _) = send(&http, &node, &lapsed, "taken after a lapse").await;
    assert_eq!(served, node.id);
    tokio::time::sleep(Duration::from_secs(2 * LEASE_SECS)).await;
    assert_eq!(document_statuses(&db, &lapsed).await, ["processing"]);
    assert_eq!(
        failovers(&http, &node).await,
        after,
        "a lapse is no failover"
    );

    drop(node);
    db.close().await.unwrap();
    database.drop().await;
}

/// A chat left idle passivates and lets its lease lapse (nobody renews it), so another process
/// takes it on its next request, without waiting for the first to stop: a lapse, no failover.
#[actix_web::test]
async fn an_idle_chat_lets_its_lease_lapse_and_another_process_takes_it() {
    let Some(database) = OwnDatabase::create("colloquy_cluster").await else {
        return;
    };
    let url = database.url.clone();
    let upstream = FakeUpstream::start().await;
    upstream.script((0..4).map(|_| Reply::text("Answered by the model.")));
    let dirs: Vec<_> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let idle = [("COLLOQUY_AGENT__CHAT_IDLE_SECS", "1")];
    let first = start_node_with(dirs[0].path(), &url, &upstream.base_url, &idle).await;
    let second = start_node_with(dirs[1].path(), &url, &upstream.base_url, &idle).await;
    let db = Database::connect(&url).await.unwrap();
    let http = reqwest::Client::new();
    let chat = as_admin(&http, &first.base).new_chat_with(&json!({})).await;
    let (served, _) = send(&http, &first, &chat, "hello").await;
    assert_eq!(served, first.id);
    assert_eq!(
        owner_of(&db, &chat).await.as_deref(),
        Some(first.id.as_str())
    );

    // Idle for a second, then a lease time unrenewed: nobody owns it.
    let deadline = Instant::now() + Duration::from_secs(LEASE_SECS + 15);
    while owner_of(&db, &chat).await.is_some() {
        assert!(
            Instant::now() < deadline,
            "the idle chat's lease never lapsed"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (served, _) = send(&http, &second, &chat, "hello again").await;
    assert_eq!(served, second.id, "the next process asked takes the chat");
    assert_eq!(
        owner_of(&db, &chat).await.as_deref(),
        Some(second.id.as_str())
    );
    assert_eq!(failovers(&http, &second).await, 0, "a lapse is no failover");
    // Both turns are in the chat, whichever process stored them.
    let tree: Value = as_admin(&http, &first.base)
        .chat_api()
        .tree(&chat)
        .read_json()
        .await;
    let text = tree.to_string();
    assert!(
        text.contains("hello again") && text.contains("\"hello\""),
        "{text}"
    );

    drop((first, second));
    db.close().await.unwrap();
    database.drop().await;
}

#[actix_web::test]
async fn a_message_one_process_stored_is_found_by_searching_on_another() {
    let Some(database) = OwnDatabase::create("colloquy_cluster").await else {
        return;
    };
    let url = database.url.clone();
    let upstream = FakeUpstream::start().await;
    upstream.script([Reply::text("Answered by the model.")]);
    let dirs: Vec<_> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let often = [("COLLOQUY_SEARCH__CATCH_UP_INTERVAL_MS", "200")];
    let first = start_node_with(dirs[0].path(), &url, &upstream.base_url, &often).await;
    let second = start_node_with(dirs[1].path(), &url, &upstream.base_url, &often).await;
    let http = reqwest::Client::new();
    let chat = as_admin(&http, &first.base).new_chat_with(&json!({})).await;
    let (served, _) = send(&http, &first, &chat, "a quokka on the ferry").await;
    assert_eq!(served, first.id);

    // The second process was never told: its index catches up from the database (its pages of
    // chats by `updated_at`, PostgreSQL's way).
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let response = http
            .get(format!("{}/chat/api/search?q=quokka", second.base))
            .bearer_auth(ADMIN_KEY)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let body: Value = response.json().await.unwrap();
        if let Some(hit) = body["data"].as_array().and_then(|hits| hits.first()) {
            assert_eq!(hit["chat_id"], chat.as_str());
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the other process's message was never found: {body}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    drop((first, second));
    database.drop().await;
}

#[actix_web::test]
async fn a_request_forwarded_to_a_stalled_owner_is_answered_503_once_its_lease_lapses() {
    let Some(database) = OwnDatabase::create("colloquy_stall").await else {
        return;
    };
    let url = database.url.clone();
    let upstream = FakeUpstream::start().await;
    upstream.script([Reply::text("Answered by the model.")]);
    let dirs: Vec<_> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let timeout = [("COLLOQUY_CLUSTER__FORWARD_TIMEOUT_SECS", "4")];
    let owner = start_node_with(dirs[0].path(), &url, &upstream.base_url, &timeout).await;
    let other = start_node_with(dirs[1].path(), &url, &upstream.base_url, &timeout).await;
    let http = reqwest::Client::new();
    let chat = as_admin(&http, &owner.base).new_chat_with(&json!({})).await;
    let (served, _) = send(&http, &owner, &chat, "hello").await;
    assert_eq!(served, owner.id);
    // Forwarded to a live owner: answered by it.
    let read = http
        .get(format!("{}/chat/api/chats/{chat}", other.base))
        .bearer_auth(ADMIN_KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), 200);
    assert_eq!(read.headers()[SERVED_BY], owner.id.as_str());

    signal(&owner, "-STOP");
    let stalled = Instant::now();
    let read = http
        .get(format!("{}/chat/api/chats/{chat}", other.base))
        .bearer_auth(ADMIN_KEY)
        .timeout(Duration::from_secs(30))
        .send()
        .await;
    let waited = stalled.elapsed();
    signal(&owner, "-CONT");
    let read = read.expect("answered, not hung");
    assert_eq!(read.status(), 503, "after {waited:?}");
    assert_eq!(read.headers()["retry-after"], "1");
    assert_eq!(read.headers()[SERVED_BY], other.id.as_str());
    let body: Value = read.json().await.unwrap();
    assert_eq!(body["error"]["code"], "chat_owner_unresponsive");
    assert!(
        waited >= Duration::from_secs(4) && waited < Duration::from_secs(4 + LEASE_SECS + 4),
        "answered after the forward timeout and the lease: {waited:?}"
    );

    drop((owner, other));
    database.drop().await;
}

/// Re-attaching to a run whose owner was killed, through another process, polled every 250 ms:
/// a 503 with `Retry-After` while the dead owner's lease lasts, then the run's end
/// (`interrupted`) — never a 404, and without waiting for the recovery sweep.
#[actix_web::test]
async fn reattaching_after_the_owner_is_killed_is_never_a_404() {
    let Some(database) = OwnDatabase::create("colloquy_reattach").await else {
        return;
    };
    let url = database.url.clone();
    let upstream = FakeUpstream::start().await;
    upstream.script([Reply::text(&"word ".repeat(200)).event_gap(Duration::from_millis(100))]);
    let dirs: Vec<_> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let mut owner = start_node(dirs[0].path(), &url, &upstream.base_url).await;
    let other = start_node(dirs[1].path(), &url, &upstream.base_url).await;
    let http = reqwest::Client::new();
    let chat = as_admin(&http, &owner.base).new_chat_with(&json!({})).await;
    let stream = as_admin(&http, &owner.base)
        .chat_api()
        .send_message(&chat)
        .json(&json!({"content": "a long answer"}))
        .send()
        .await
        .unwrap();
    let run_id = stream.headers()["x-run-id"].to_str().unwrap().to_string();
    let mut chunks = stream.bytes_stream();
    let mut buffer = String::new();
    let mut last_seen = 0;
    while last_seen < 5 {
        let bytes = chunks.next().await.expect("the stream goes on").unwrap();
        buffer.push_str(&String::from_utf8_lossy(&bytes));
        for frame in drain_frames(&mut buffer) {
            last_seen = frame.id.unwrap_or(last_seen);
        }
    }
    drop(owner.process.take()); // SIGKILL
    let killed = Instant::now();
    let finished = loop {
        assert!(
            killed.elapsed() < Duration::from_secs(LEASE_SECS + 10),
            "the run's end never came"
        );
        let response = as_admin(&http, &other.base)
            .chat_api()
            .run_events(&chat, &run_id)
            .header("last-event-id", last_seen.to_string())
            .send()
            .await
            .unwrap();
        match response.status().as_u16() {
            200 => {
                let frames = drain_frames(&mut response.text().await.unwrap());
                break frames
                    .iter()
                    .map(|f| f.json())
                    .find(|j| j["type"] == "run.finished")
                    .expect("how the run ended");
            }
            503 => assert!(response.headers().contains_key("retry-after")),
            other => panic!(
                "re-attaching {:?} after the kill: {other} {}",
                killed.elapsed(),
                response.text().await.unwrap()
            ),
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(finished["stop_reason"], "interrupted");

    drop(other);
    database.drop().await;
}

/// The stall probe of issue 45, 20 times: an owner streaming in a chat is `SIGSTOP`ped past its
/// lease, another process takes the chat and answers a newer turn, and the owner is woken. Its
/// stale run must write nothing (the fence): the newer turn is kept and stays the chat's active
/// leaf, the stale run stays `interrupted`, and no two messages share a `seq`.
#[actix_web::test]
async fn an_owner_woken_after_a_takeover_writes_nothing_the_newer_turn_is_kept() {
    const ROUNDS: usize = 2;
    const CHATS_PER_ROUND: usize = 10;
    let Some(database) = OwnDatabase::create("colloquy_fence").await else {
        return;
    };
    let url = database.url.clone();
    let upstream = FakeUpstream::start().await;
    // Anything unrouted (a title) is answered plainly.
    upstream.script((0..200).map(|_| Reply::text("A title")));
    let dirs: Vec<_> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let stalled = start_node(dirs[0].path(), &url, &upstream.base_url).await;
    let other = start_node(dirs[1].path(), &url, &upstream.base_url).await;
    let db = Database::connect(&url).await.unwrap();
    let http = reqwest::Client::new();

    for round in 0..ROUNDS {
        let mut probes = Vec::new();
        for i in 0..CHATS_PER_ROUND {
            let stale = format!("<stale {round}.{i}>");
            let newer = format!("<newer {round}.{i}>");
            // Streaming when the owner stops, and all sent by the time it wakes: its run then
            // ends at once, racing the renewal that would tell it the chat was taken.
            upstream.script_for(
                &stale,
                [Reply::text(&"stale ".repeat(20)).event_gap(Duration::from_millis(100))],
            );
            upstream.script_for(&newer, [Reply::text("The newer answer.")]);
            let chat = as_admin(&http, &stalled.base)
                .new_chat_with(&json!({}))
                .await;
            let response = as_admin(&http, &stalled.base)
                .chat_api()
                .send_message(&chat)
                .json(&json!({"content": stale}))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 200);
            assert_eq!(response.headers()[SERVED_BY], stalled.id.as_str());
            let run = response.headers()["x-run-id"].to_str().unwrap().to_string();
            probes.push((chat, run, newer, response.bytes_stream()));
        }
        // Each stale run is streaming its answer.
        for (_, _, _, stream) in &mut probes {
            let mut buffer = String::new();
            while buffer.matches("stale ").count() < 3 {
                let bytes = stream.next().await.expect("the stream goes on").unwrap();
                buffer.push_str(&String::from_utf8_lossy(&bytes));
            }
        }

        signal(&stalled, "-STOP");
        let stopped = Instant::now();
        for (chat, ..) in &probes {
            while owner_of(&db, chat).await.is_some() {
                assert!(stopped.elapsed() < Duration::from_secs(LEASE_SECS + 5));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        // The other process takes each chat and answers a newer turn.
        let mut newer_runs = Vec::new();
        for (chat, _, newer, _) in &probes {
            let response = as_admin(&http, &other.base)
                .chat_api()
                .send_message(chat)
                .json(&json!({"content": newer}))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 200, "{:?}", response.text().await);
            assert_eq!(response.headers()[SERVED_BY], other.id.as_str());
            let run = response.headers()["x-run-id"].to_str().unwrap().to_string();
            let frames = drain_frames(&mut response.text().await.unwrap());
            assert_eq!(content(&frames), "The newer answer.");
            newer_runs.push(run);
        }
        signal(&stalled, "-CONT");

        // The woken owner's streams end, however they end.
        for (chat, _, _, stream) in &mut probes {
            let ended = tokio::time::timeout(Duration::from_secs(30), async {
                while let Some(Ok(_)) = stream.next().await {}
            })
            .await;
            assert!(
                ended.is_ok(),
                "the woken owner's stream in {chat} never ended"
            );
        }
        // Give anything the woken process still had in flight time to try its writes.
        tokio::time::sleep(Duration::from_secs(1)).await;

        for ((chat, stale_run, newer, _), newer_run) in probes.iter().zip(&newer_runs) {
            let status = query_strings(
                &db,
                "SELECT status FROM runs WHERE id = $1",
                vec![stale_run.clone().into()],
            )
            .await;
            assert_eq!(
                status,
                vec![vec![Some("interrupted".to_string())]],
                "round {round}: the stale run in {chat} changed status"
            );
            let shared_seq = query_strings(
                &db,
                "SELECT CAST(seq AS TEXT) FROM messages WHERE chat_id = $1 \
                 GROUP BY seq HAVING COUNT(*) > 1",
                vec![chat.clone().into()],
            )
            .await;
            assert!(
                shared_seq.is_empty(),
                "round {round}: answers in {chat} share a seq: {shared_seq:?}"
            );
            let leaf = query_strings(
                &db,
                "SELECT CAST(c.active_leaf_id AS TEXT), m.run_id FROM chats c \
                 JOIN messages m ON m.id = c.active_leaf_id WHERE c.id = $1",
                vec![chat.clone().into()],
            )
            .await;
            assert_eq!(
                leaf.first().and_then(|row| row[1].clone()).as_deref(),
                Some(newer_run.as_str()),
                "round {round}: the active leaf of {chat} is not the newer answer: {leaf:?}"
            );
            // Read through the woken process too: the newer turn is there.
            let messages: Value = as_admin(&http, &stalled.base)
                .chat_api()
                .messages(chat)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let text = messages.to_string();
            assert!(
                text.contains(newer.as_str()) && text.contains("The newer answer."),
                "round {round}: the newer turn is missing from {chat}: {text}"
            );
        }
    }

    drop((stalled, other));
    database.drop().await;
}

/// Epochs and fencing at the lease level, against PostgreSQL: a key taken from an expired
/// holder has a higher epoch; the old holder's fence check fails (typed), the new one's
/// passes; and the hourly prune deletes old handovers and long-lapsed rows, keeping the live
/// ones (a pruned key taken again never reuses an epoch).
#[actix_web::test]
async fn epochs_grow_with_each_owner_the_old_one_is_fenced_and_old_records_are_pruned() {
    use colloquy::cluster::{Claim, Cluster, Fenced};
    use sea_orm::TransactionTrait;
    let Some(database) = OwnDatabase::create("colloquy_epochs").await else {
        return;
    };
    let db = Database::connect(&database.url).await.unwrap();
    colloquy::db::migrate(&db).await.unwrap();
    let lease = Duration::from_millis(1500);
    let first = Cluster::new(db.clone(), "proc_first".into(), "http://a".into(), lease);
    let second = Cluster::new(db.clone(), "proc_second".into(), "http://b".into(), lease);
    let key = "chat:fenced";

    assert!(matches!(
        first.claim(key).await.unwrap(),
        Claim::Mine { .. }
    ));
    let taken_at = first.epoch(key).unwrap();
    assert!(matches!(
        second.claim(key).await.unwrap(),
        Claim::Elsewhere { .. }
    ));
    let txn = db.begin().await.unwrap();
    first.fence(&txn, key, taken_at).await.unwrap();
    txn.commit().await.unwrap();

    tokio::time::sleep(lease + Duration::from_millis(300)).await;
    let Claim::Mine { taken_from, .. } = second.claim(key).await.unwrap() else {
        panic!("an expired lease is taken");
    };
    assert_eq!(taken_from.as_deref(), Some("proc_first"));
    let now_at = second.epoch(key).unwrap();
    assert_eq!(now_at, taken_at + 1, "a change of owner raises the epoch");

    let txn = db.begin().await.unwrap();
    let refused = first.fence(&txn, key, taken_at).await.unwrap_err();
    assert_eq!(
        Fenced::parse(&refused),
        Some(Fenced {
            key: key.into(),
            epoch: taken_at
        })
    );
    drop(txn);
    assert_eq!(
        first.epoch(key),
        None,
        "a fenced process stops holding the key"
    );
    let txn = db.begin().await.unwrap();
    second.fence(&txn, key, now_at).await.unwrap();
    // The old epoch is refused even to the new owner.
    assert!(Fenced::is(
        &second.fence(&txn, key, taken_at).await.unwrap_err()
    ));
    drop(txn);

    // Old records: a handover 8 days old and a row that lapsed 2 hours ago.
    db.execute_unprepared(
        "INSERT INTO lease_handovers (key, from_owner, from_expires_at, to_owner, at) \
         VALUES ('chat:old', NULL, NULL, 'proc_gone', now() - interval '8 days'); \
         INSERT INTO leases (key, owner, address, epoch, acquired_at, expires_at) \
         VALUES ('chat:lapsed', 'proc_gone', 'http://gone', 41, now() - interval '3 hours', \
         now() - interval '2 hours')",
    )
    .await
    .unwrap();
    let (handovers, leases) = second.prune(Duration::from_secs(7 * 86_400)).await.unwrap();
    assert_eq!((handovers, leases), (1, 1));
    let kept = query_strings(&db, "SELECT key FROM leases ORDER BY key", vec![]).await;
    assert_eq!(kept, vec![vec![Some(key.to_string())]]);
    let recent = query_strings(&db, "SELECT key FROM lease_handovers", vec![]).await;
    assert_eq!(
        recent.len(),
        2,
        "this test's own handovers are kept: {recent:?}"
    );
    assert_eq!(
        second.prune(Duration::from_secs(7 * 86_400)).await.unwrap(),
        (0, 0)
    );

    // A pruned key taken again starts past any epoch it had.
    assert!(matches!(
        first.claim("chat:lapsed").await.unwrap(),
        Claim::Mine { .. }
    ));
    assert!(first.epoch("chat:lapsed").unwrap() > 41);

    drop(db);
    database.drop().await;
}

/// Three processes, each with its own data directory, sharing files through a real
/// S3-compatible store (moto): a vector store's file and a chat's image uploaded through one
/// are, after that one is `kill -9`ed, searched (its index rebuilt from the database in the
/// new owner's own directory) and served through the others; nothing of them is in any
/// process's data directory.
#[actix_web::test]
async fn processes_with_their_own_data_directories_share_files_through_the_object_store() {
    use crate::object_storage::{BUCKET, files_in, keys, start_s3, upload_file};
    let Some(database) = OwnDatabase::create("colloquy_objects").await else {
        return;
    };
    let url = database.url.clone();
    let s3 = start_s3().await;
    let upstream = FakeUpstream::start().await;
    upstream.script((0..20).map(|_| Reply::text("Answered by the model.")));
    let storage_url = format!("s3://{BUCKET}/cluster");
    let settings = [
        ("COLLOQUY_STORAGE__URL", storage_url.as_str()),
        ("COLLOQUY_STORAGE__ENDPOINT", s3.url.as_str()),
        ("COLLOQUY_STORAGE__ACCESS_KEY_ID", "testing"),
        ("COLLOQUY_STORAGE__SECRET_ACCESS_KEY", "testing"),
    ];
    let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let mut nodes = Vec::new();
    for dir in &dirs {
        nodes.push(start_node_with(dir.path(), &url, &upstream.base_url, &settings).await);
    }
    let http = reqwest::Client::new();
    let first = as_admin(&http, &nodes[0].base);

    // Through the first: a file in a vector store, and an image in a chat.
    let file = upload_file(
        first.openai(),
        "basalt.txt",
        &"Basalt columns form when lava cools slowly and cracks.\n".repeat(40),
    )
    .await;
    let store: Value = first
        .openai()
        .create_vector_store()
        .json(&json!({"name": "geology"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let store_id = store["id"].as_str().unwrap().to_string();
    let added = first
        .openai()
        .add_vector_store_file(&store_id)
        .json(&json!({"file_id": file["id"]}))
        .send()
        .await
        .unwrap();
    assert!(added.status().is_success(), "{:?}", added.text().await);
    let served_by = added.headers()[SERVED_BY].to_str().unwrap().to_string();
    assert_eq!(served_by, nodes[0].id, "the first process owns the store");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let files: Value = first
            .openai()
            .vector_store_files(&store_id)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if files["data"][0]["status"] == "completed" {
            break;
        }
        assert!(Instant::now() < deadline, "not processed: {files}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let chat = first.new_chat_with(&json!({})).await;
    send(&http, &nodes[0], &chat, "hello").await;
    let png = crate::images::PNG.to_vec();
    let uploaded =
        crate::images::upload_image(first.chat_api(), &chat, png.clone(), "picture.png").await;
    assert_eq!(uploaded.status(), 201);
    let attachment: Value = uploaded.json().await.unwrap();
    let attachment_id = attachment["id"].as_str().unwrap().to_string();
    assert_eq!(
        keys(&s3.url, &format!("cluster/attachments/{chat}/"))
            .await
            .len(),
        1
    );

    drop(nodes[0].process.take()); // SIGKILL
    let killed = Instant::now();

    // The second searches the store: its own index, rebuilt from the database.
    let found = once_taken_over(killed, LEASE_SECS + 15, || {
        as_admin(&http, &nodes[1].base)
            .openai()
            .search_vector_store(&store_id)
            .json(&json!({"query": "basalt lava"}))
    })
    .await;
    assert_eq!(found.headers()[SERVED_BY], nodes[1].id.as_str());
    let found: Value = found.json().await.unwrap();
    assert_eq!(found["data"][0]["filename"], "basalt.txt", "{found}");
    // The third serves the image.
    let image = once_taken_over(killed, LEASE_SECS + 15, || {
        as_admin(&http, &nodes[2].base)
            .chat_api()
            .attachment(&chat, &attachment_id)
    })
    .await;
    assert_eq!(image.bytes().await.unwrap().to_vec(), png);
    // A screenshot in the store (as a browser session keeps one) is served by any process.
    let shot = format!("shot_{}", uuid::Uuid::new_v4().simple());
    let put = http
        .put(format!(
            "{}/{BUCKET}/cluster/screenshots/{chat}/{shot}.png",
            s3.url
        ))
        .body(png.clone())
        .send()
        .await
        .unwrap();
    assert!(put.status().is_success());
    for node in &nodes[1..] {
        let served = as_admin(&http, &node.base)
            .chat_api()
            .screenshot(&chat, &shot)
            .send()
            .await
            .unwrap();
        assert_eq!(served.status(), 200, "through {}", node.base);
        assert_eq!(served.bytes().await.unwrap().to_vec(), png);
    }
    // And the chat goes on.
    let (_, answer) = send(&http, &nodes[2], &chat, "still there?").await;
    assert_eq!(answer, "Answered by the model.");

    // No process kept any of these files in its own directory.
    for dir in &dirs {
        let local: Vec<String> = files_in(dir.path())
            .into_iter()
            .filter(|path| {
                ["/attachments/", "/documents/", "/files/"]
                    .iter()
                    .any(|d| path.contains(d))
            })
            .collect();
        assert!(local.is_empty(), "files kept locally: {local:?}");
    }

    drop(nodes);
    database.drop().await;
}

/// A knowledge base owned by one process, searched from a chat another process owns: that
/// process reads a local copy of its index made from the database (its own data directory),
/// and a document added through the owner afterwards is found there too.
#[actix_web::test]
async fn a_knowledge_base_owned_elsewhere_is_searched_from_a_copy_kept_up_to_date() {
    let Some(database) = OwnDatabase::create("colloquy_kb_copy").await else {
        return;
    };
    let url = database.url.clone();
    let upstream = FakeUpstream::start().await;
    upstream.script((0..20).map(|_| Reply::text("A title")));
    let dirs: Vec<_> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let owner = start_node(dirs[0].path(), &url, &upstream.base_url).await;
    let searcher = start_node(dirs[1].path(), &url, &upstream.base_url).await;
    let http = reqwest::Client::new();
    let through_owner = as_admin(&http, &owner.base);

    let kb: Value = through_owner
        .api()
        .create_knowledge_base()
        .json(&json!({"name": "Runbooks"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let kb_id = kb["id"].as_str().unwrap().to_string();
    let add = |filename: &'static str, text: &'static str| {
        let form = reqwest::multipart::Form::new().part(
            "file",
            reqwest::multipart::Part::bytes(text.as_bytes().to_vec()).file_name(filename),
        );
        through_owner.api().add_kb_document(&kb_id).multipart(form)
    };
    let kb = kb_id.as_str();
    let settled = |count: usize| async move {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let list: Value = through_owner
                .api()
                .kb_documents(kb)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let documents = list["documents"].as_array().unwrap();
            if documents.len() == count && documents.iter().all(|d| d["status"] == "processed") {
                return;
            }
            assert!(Instant::now() < deadline, "not processed: {list}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };
    let added = add(
        "deploy.md",
        "Production deployments happen on Tuesdays after the change review.",
    )
    .send()
    .await
    .unwrap();
    assert_eq!(added.status(), 201, "{:?}", added.text().await);
    assert_eq!(added.headers()[SERVED_BY], owner.id.as_str());
    settled(1).await;

    let agent: Value = as_admin(&http, &searcher.base)
        .api()
        .create_agent()
        .json(&json!({"name": "Ops", "knowledge_base_ids": [kb_id]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let chat = as_admin(&http, &searcher.base)
        .new_chat_with(&json!({"agent_id": agent["id"]}))
        .await;
    let ask = |marker: &str, call: &str, query: &str| {
        upstream.script_for(
            marker,
            [
                Reply::tool_call(call, "search_knowledge", json!({"query": query})),
                Reply::text("Found it."),
            ],
        );
    };
    let result_of = |call: &str| -> Value {
        let message = upstream
            .received()
            .iter()
            .flat_map(|r| r.body["messages"].as_array().cloned().unwrap_or_default())
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == call)
            .unwrap_or_else(|| panic!("no tool result for {call}"));
        serde_json::from_str(message["content"].as_str().unwrap()).unwrap()
    };

    ask(
        "<first>",
        "tc_deploy",
        "when do production deployments happen",
    );
    let (served, _) = send(&http, &searcher, &chat, "<first> deployments?").await;
    assert_eq!(served, searcher.id, "the chat is the second process's");
    let deploy = result_of("tc_deploy");
    assert_eq!(deploy["results"][0]["filename"], "deploy.md", "{deploy}");

    // A document added through the owner is found from the other process's copy.
    let added = add(
        "oncall.md",
        "The on-call engineer answers pages within fifteen minutes.",
    )
    .send()
    .await
    .unwrap();
    assert_eq!(added.status(), 201);
    settled(2).await;
    ask(
        "<second>",
        "tc_oncall",
        "how fast does the on-call engineer answer pages",
    );
    send(&http, &searcher, &chat, "<second> on-call?").await;
    let oncall = result_of("tc_oncall");
    assert_eq!(oncall["results"][0]["filename"], "oncall.md", "{oncall}");

    drop((owner, searcher));
    database.drop().await;
}

#[actix_web::test]
async fn a_shared_link_opened_on_another_process_is_answered_by_the_chats_owner() {
    let Some(database) = OwnDatabase::create("colloquy_cluster").await else {
        return;
    };
    let url = database.url.clone();
    let upstream = FakeUpstream::start().await;
    upstream.script([Reply::text("Shared across processes.")]);
    let dirs: Vec<_> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let first = start_node(dirs[0].path(), &url, &upstream.base_url).await;
    let second = start_node(dirs[1].path(), &url, &upstream.base_url).await;
    let http = reqwest::Client::new();
    let chat = as_admin(&http, &first.base).new_chat_with(&json!({})).await;
    let (served, _) = send(&http, &first, &chat, "a question to share").await;
    assert_eq!(served, first.id);

    let share: Value = http
        .post(format!("{}/chat/api/chats/{chat}/shares", second.base))
        .bearer_auth(ADMIN_KEY)
        .json(&json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = share["token"]
        .as_str()
        .expect("a new link's token")
        .to_string();

    // The second process does not own the chat: it hands the read to the owner.
    let response = http
        .get(format!("{}/shared/{token}", second.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()[SERVED_BY].to_str().unwrap(), first.id);
    let body: Value = response.json().await.unwrap();
    let text = body["messages"].to_string();
    assert!(
        text.contains("a question to share") && text.contains("Shared across processes."),
        "{body}"
    );

    drop((first, second));
    database.drop().await;
}
