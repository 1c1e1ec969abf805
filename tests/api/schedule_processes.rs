//! Schedules across real `colloquy serve` processes: one SIGKILLed and started again on the
//! same SQLite database fires no due time twice and skips those missed while it was down; two
//! sharing one PostgreSQL (`COLLOQUY_TEST_POSTGRES_URL`, skipped with a note when unset; CI
//! sets it) fire each of 20 due times exactly once. Due every second under the test-only
//! seconds field. A schedule whose due times all pass while its server is down fires once on
//! restart under `run_once`, and not at all under `skip`.

use std::collections::BTreeSet;
use std::process::Command;
use std::time::{Duration, Instant};

use chrono::{DateTime, Timelike, Utc};
use entities::ids::{ChatId, ScheduleId};
use sea_orm::{
    ColumnTrait, Database, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter,
};
use serde_json::{Value, json};

use crate::client::{Api, Call, Client};
use crate::helpers::ADMIN_KEY;
use crate::helpers::free_port;
use crate::subprocess::{Background, start_within};

const BINARY: &str = env!("CARGO_BIN_EXE_colloquy");
/// How long one server process may live in these tests.
const PROCESS_LIMIT: Duration = Duration::from_secs(240);

/// A `colloquy serve` on its own port, over `database` (a URL; `None`: SQLite in `dir`).
struct Server {
    _process: Background,
    base: String,
    http: reqwest::Client,
}

impl Server {
    async fn start(dir: &std::path::Path, database: Option<&str>) -> Self {
        let port = free_port();
        let mut command = Command::new(BINARY);
        command
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("COLLOQUY_DATA_DIR", dir)
            .env("COLLOQUY_BIND", format!("127.0.0.1:{port}"))
            .env("COLLOQUY_LOG__FILTER", "warn")
            .env("COLLOQUY_LLM__BASE_URL", "http://127.0.0.1:9/v1")
            .env("COLLOQUY_AUTH__BOOTSTRAP_API_KEY", ADMIN_KEY)
            .env("COLLOQUY_SCHEDULES__TEST_ONLY_SECONDS_FIELD", "true")
            .env("COLLOQUY_SCHEDULES__POLL_INTERVAL_MS", "200")
            .env("COLLOQUY_SCHEDULES__MISSED_GRACE_SECS", "1")
            .arg("serve");
        if let Some(url) = database {
            command.env("COLLOQUY_DATABASE__URL", url);
        }
        let process = start_within(command, "colloquy serve", PROCESS_LIMIT);
        let server = Self {
            _process: process,
            base: format!("http://127.0.0.1:{port}"),
            http: reqwest::Client::new(),
        };
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let ready = server
                .http
                .get(format!("{}/health/ready", server.base))
                .send()
                .await;
            if ready.is_ok_and(|r| r.status().is_success()) {
                return server;
            }
            assert!(
                Instant::now() < deadline,
                "colloquy serve did not become ready"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// `/api/...` on this server, with the admin's key.
    fn api(&self) -> Api<'_> {
        Client::with_key(&self.http, &self.base, ADMIN_KEY).api()
    }

    /// Sends `request` with `body`; it must succeed.
    async fn post(&self, request: reqwest::RequestBuilder, body: Value) -> Value {
        let path = request.describe();
        let response = request.json(&body).send().await.unwrap();
        assert!(
            response.status().is_success(),
            "{path}: {:?}",
            response.text().await
        );
        response.json().await.unwrap()
    }

    /// A schedule due every second, firing a one-step workflow; its id and chat.
    async fn every_second(&self) -> (ScheduleId, ChatId) {
        let workflow = self
            .post(
                self.api().create_workflow(),
                json!({"name": "tick", "steps": [{"id": "a", "tool": "calculator", "arguments": {"expression": "1 + 1"}}]}),
            )
            .await;
        let schedule = self
            .post(
                self.api().create_schedule(),
                json!({"name": "tick", "cron": "* * * * * *", "workflow_id": workflow["id"]}),
            )
            .await;
        (
            ScheduleId::from_string(schedule["id"].as_str().unwrap()),
            ChatId::from_string(schedule["chat_id"].as_str().unwrap()),
        )
    }
}

async fn firings(
    db: &DatabaseConnection,
    id: &ScheduleId,
) -> Vec<entities::schedule_firings::Model> {
    entities::schedule_firings::Entity::find()
        .filter(entities::schedule_firings::Column::ScheduleId.eq(id.clone()))
        .all(db)
        .await
        .unwrap()
}

async fn runs_in(db: &DatabaseConnection, chat: &ChatId) -> u64 {
    entities::runs::Entity::find()
        .filter(entities::runs::Column::ChatId.eq(chat.clone()))
        .count(db)
        .await
        .unwrap()
}

/// Waits until the schedule has `count` firings.
async fn wait_for_firings(
    db: &DatabaseConnection,
    id: &ScheduleId,
    count: usize,
    within: Duration,
) {
    let deadline = Instant::now() + within;
    while firings(db, id).await.len() < count {
        assert!(
            Instant::now() < deadline,
            "{count} firings did not happen within {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Every firing was one run: distinct due times, each with its own run, and as many runs in
/// the schedule's chat as firings that started one.
async fn assert_each_fired_once(
    db: &DatabaseConnection,
    id: &ScheduleId,
    chat: &ChatId,
) -> Vec<DateTime<Utc>> {
    let all = firings(db, id).await;
    let due: BTreeSet<DateTime<Utc>> = all.iter().map(|f| f.due_at).collect();
    assert_eq!(due.len(), all.len(), "a due time fired twice");
    let run_ids: BTreeSet<String> = all
        .iter()
        .filter_map(|f| f.run_id.as_ref().map(|r| r.to_string()))
        .collect();
    assert_eq!(
        run_ids.len(),
        all.iter().filter(|f| f.run_id.is_some()).count()
    );
    assert_eq!(
        runs_in(db, chat).await,
        run_ids.len() as u64,
        "runs in the chat besides the firings' own"
    );
    due.into_iter().collect()
}

#[actix_web::test]
async fn a_server_killed_and_restarted_fires_no_due_time_twice_and_skips_the_missed_ones() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), None).await;
    let url = format!(
        "sqlite://{}?mode=rw",
        dir.path().join("colloquy.db").display()
    );
    let db = Database::connect(&url).await.unwrap();
    let (id, chat) = server.every_second().await;
    wait_for_firings(&db, &id, 3, Duration::from_secs(30)).await;
    drop(server); // SIGKILL to its process group
    let killed_at = Utc::now();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let restarted_at = Utc::now();
    let server = Server::start(dir.path(), None).await;
    let before = firings(&db, &id).await.len();
    wait_for_firings(&db, &id, before + 3, Duration::from_secs(30)).await;
    server
        .post(server.api().pause_schedule(&id), json!({}))
        .await;
    tokio::time::sleep(Duration::from_secs(1)).await;

    let due = assert_each_fired_once(&db, &id, &chat).await;
    let missed: Vec<_> = due
        .iter()
        .filter(|at| {
            // The grace (1 s) lets a due time just before the new process's first look fire.
            **at > killed_at + chrono::Duration::seconds(1)
                && **at < restarted_at - chrono::Duration::seconds(1)
        })
        .collect();
    let seen: Vec<_> = firings(&db, &id)
        .await
        .into_iter()
        .map(|f| (f.due_at, f.claimed_at, f.claimed_by, f.status))
        .collect();
    assert!(
        missed.is_empty(),
        "due times missed while down were fired: {missed:?} (killed {killed_at}, restarted {restarted_at}): {seen:?}"
    );
    let schedule = entities::schedules::Entity::find_by_id(id.clone())
        .one(&db)
        .await
        .unwrap()
        .unwrap();
    assert!(
        schedule.skipped_firings >= 3,
        "skipped {}",
        schedule.skipped_firings
    );
    // The firing the kill cut off (if one was running) is not run again: it is marked
    // interrupted, never left claimed. (A firing the new process claimed just before the pause
    // is claimed until its run ends, which on a loaded machine may take a moment: waited for.)
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let all = firings(&db, &id).await;
        let claimed: Vec<_> = all
            .iter()
            .filter(|f| f.status == entities::schedule_firings::FiringStatus::Claimed)
            .map(|f| (f.due_at, f.claimed_at, f.claimed_by.clone()))
            .collect();
        if claimed.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "firings left claimed: {claimed:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Three due times a few seconds ahead (in one minute, so one six-field rule names them), and
/// that rule: due on those seconds of this minute today, then not for a year.
fn three_seconds_ahead() -> (Vec<DateTime<Utc>>, String) {
    let mut first = (Utc::now() + chrono::Duration::seconds(6))
        .with_nanosecond(0)
        .unwrap();
    if first.second() > 57 {
        first += chrono::Duration::seconds(i64::from(60 - first.second()));
    }
    let due: Vec<_> = (0..3)
        .map(|n| first + chrono::Duration::seconds(n))
        .collect();
    let seconds: Vec<String> = due.iter().map(|d| d.second().to_string()).collect();
    let cron = format!(
        "{} {} {} {} {} *",
        seconds.join(","),
        first.minute(),
        first.hour(),
        first.format("%-d"),
        first.format("%-m"),
    );
    (due, cron)
}

#[actix_web::test]
async fn due_times_missed_while_down_fire_once_on_restart_under_run_once_and_never_under_skip() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), None).await;
    let url = format!(
        "sqlite://{}?mode=rw",
        dir.path().join("colloquy.db").display()
    );
    let db = Database::connect(&url).await.unwrap();
    let (due, cron) = three_seconds_ahead();
    let workflow = server
        .post(
            server.api().create_workflow(),
            json!({"name": "catch up", "steps": [{"id": "a", "tool": "calculator", "arguments": {"expression": "1 + 1"}}]}),
        )
        .await;
    let mut made = Vec::new();
    for policy in ["run_once", "skip"] {
        let schedule = server
            .post(
                server.api().create_schedule(),
                json!({"name": policy, "cron": cron, "workflow_id": workflow["id"], "missed_policy": policy}),
            )
            .await;
        assert_eq!(schedule["missed_policy"], policy);
        assert_eq!(schedule["next_firings"][0], json!(due[0]), "{cron}");
        made.push(ScheduleId::from_string(schedule["id"].as_str().unwrap()));
    }
    drop(server); // SIGKILL, before the first due time
    assert!(
        Utc::now() < due[0],
        "the server was killed too late to miss anything"
    );
    let last = due[2];
    while Utc::now() < last + chrono::Duration::seconds(3) {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let _server = Server::start(dir.path(), None).await;
    let (run_once, skip) = (&made[0], &made[1]);
    wait_for_firings(&db, run_once, 1, Duration::from_secs(30)).await;
    // Looks enough for a second catch-up, if there were one.
    tokio::time::sleep(Duration::from_secs(3)).await;

    let caught_up = firings(&db, run_once).await;
    assert_eq!(
        caught_up.len(),
        1,
        "exactly one catch-up firing: {caught_up:?}"
    );
    assert_eq!(
        caught_up[0].due_at, last,
        "the latest missed due time fires"
    );
    assert!(
        firings(&db, skip).await.is_empty(),
        "skip fires none of them"
    );
    for (id, skipped) in [(run_once, 2), (skip, 3)] {
        let row = entities::schedules::Entity::find_by_id(id.clone())
            .one(&db)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(row.skipped_firings, skipped, "{}", row.name);
        assert!(
            row.next_due_at
                .is_none_or(|next| next > last + chrono::Duration::days(300))
        );
    }
}

/// A process fires only the schedules whose chat it holds the lease of, so here one process
/// usually fires them all: what this shows is that sharing one PostgreSQL neither doubles nor
/// loses a due time. That two claims racing for the same due time have one winner is shown
/// directly in `schedule_claims`.
#[actix_web::test]
async fn two_servers_on_one_postgresql_fire_each_of_twenty_due_times_exactly_once() {
    let Some(database) = crate::postgres::OwnDatabase::create("colloquy_sched").await else {
        return;
    };
    let url = database.url.clone();

    let dir_a = tempfile::tempdir().unwrap();
    let dir_b = tempfile::tempdir().unwrap();
    let a = Server::start(dir_a.path(), Some(&url)).await;
    let b = Server::start(dir_b.path(), Some(&url)).await;
    let db = Database::connect(&url).await.unwrap();
    let (id, chat) = a.every_second().await;
    wait_for_firings(&db, &id, 21, Duration::from_secs(60)).await;
    b.post(b.api().pause_schedule(&id), json!({})).await;
    tokio::time::sleep(Duration::from_secs(2)).await;

    let due = assert_each_fired_once(&db, &id, &chat).await;
    assert!(due.len() >= 20, "{} firings", due.len());
    // No due time was lost either: one firing for every second from the first to the last.
    let span = (*due.last().unwrap() - *due.first().unwrap()).num_seconds() + 1;
    assert_eq!(span as usize, due.len(), "due times were skipped: {due:?}");
    let claimers: BTreeSet<String> = firings(&db, &id)
        .await
        .into_iter()
        .map(|f| f.claimed_by)
        .collect();
    println!("firings claimed by {} processes", claimers.len());
    drop((a, b));
    db.close().await.unwrap();
    database.drop().await;
}
