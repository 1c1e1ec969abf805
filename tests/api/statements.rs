//! What a stored turn costs the database (issue 48): every statement the server runs is
//! counted on its own connection (`colloquy_db_statements_total`), so the cost of a
//! `/v1/chat/completions` turn — a new chat's first, then a following one — is measured exactly
//! and cannot creep back.

use std::time::Duration;

use sea_orm::EntityTrait;
use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, spawn_app_with};
use crate::postgres::OwnDatabase;

/// At most this many statements for a new chat's first stored turn: the turn's one transaction
/// (the chat, inserted with its active leaf already set, the user's message, the run) and the
/// answer's (the message, the leaf, the run's end). The owner's default agent is kept from the
/// turn before (`chat::turn_cache`), the chat's session starts empty instead of reading the
/// chat back, and a chat just made has no documents or questions to look up. (Before issue
/// 48: 12; with the chat's leaf set by an update of its own: 7.)
const FIRST_TURN_MAX: u64 = 6;
/// At most this many for a following turn of the same chat: the two transactions of three. The
/// chat, its agent and its recent documents are kept from its last turn. (Before issue 48: 12.)
const FOLLOWING_TURN_MAX: u64 = 6;
/// The writes a following turn cannot do without (the user's message, the leaf and the run;
/// the answer, the leaf and the run's end): fewer counted means statements went uncounted.
const FOLLOWING_TURN_MIN: u64 = 6;
/// The writes a new chat's first turn cannot do without (the chat, the user's message and the
/// run; the answer, the leaf and the run's end).
const FIRST_TURN_MIN: u64 = 6;
/// On PostgreSQL, where other processes may change what a turn reads, nothing is kept: a new
/// chat's first turn reads its owner's default agent, a following turn the chat, its agent and
/// its documents; and taking a new chat's lease is one statement (the lease and the record of
/// its first owner together, `Cluster::claim_new`), and each of a turn's two transactions
/// checks the lease (the fence) once. The lease needs the chat's row, so a new chat is stored
/// before its turn there, and the turn sets its active leaf by an update of its own.
const POSTGRES_FIRST_TURN_MAX: u64 = FIRST_TURN_MAX + 1 + 1 + 3;
const POSTGRES_FOLLOWING_TURN_MAX: u64 = FOLLOWING_TURN_MAX + 3 + 2;

/// The statement count once nothing has run for a while (background jobs at start-up, writes
/// that follow an answer).
async fn settled(app: &TestApp) -> u64 {
    let metrics = &app.state.launcher.metrics;
    let mut last = metrics.db_statements();
    let mut still = 0;
    for _ in 0..200 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let now = metrics.db_statements();
        if now == last {
            still += 1;
            if still == 8 {
                return now;
            }
        } else {
            (last, still) = (now, 0);
        }
    }
    panic!("the database never went quiet");
}

async fn complete(app: &TestApp, body: Value) -> Value {
    let response = app.openai().chat_completions().json(&body).call().await;
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

/// A warm-up turn, then a new chat's first stored turn and a following one: the statements
/// each ran.
async fn turn_costs(app: &TestApp) -> (u64, u64) {
    app.upstream.script([
        Reply::text("Warming up."),
        Reply::text("First answer."),
        Reply::text("Second answer."),
    ]);
    let stored_before = entities::messages::Entity::find()
        .all(&app.db)
        .await
        .unwrap()
        .len();
    // What a process does once (the API key looked up, the owner's default agent made) is not
    // a turn's cost.
    complete(
        app,
        json!({"model": "fake-model", "messages": [{"role": "user", "content": "Hi"}]}),
    )
    .await;
    let before = settled(app).await;
    let first = complete(
        app,
        json!({"model": "fake-model", "messages": [{"role": "user", "content": "Hello"}]}),
    )
    .await;
    assert_eq!(first["choices"][0]["message"]["content"], "First answer.");
    let chat = first["x_chat_id"].as_str().unwrap().to_string();
    let after_first = settled(app).await;

    let second = complete(
        app,
        json!({"model": "fake-model", "x_chat_id": chat,
               "messages": [{"role": "user", "content": "And again"}]}),
    )
    .await;
    assert_eq!(second["choices"][0]["message"]["content"], "Second answer.");
    let after_second = settled(app).await;
    // Every turn was stored: the two chats hold the three exchanges.
    let stored = entities::messages::Entity::find()
        .all(&app.db)
        .await
        .unwrap()
        .len();
    assert_eq!(stored - stored_before, 6);
    (after_first - before, after_second - after_first)
}

/// The least each turn cost over a few rounds of `turn_costs`. What a turn keeps is kept at
/// `chat::turn_cache`'s generation, which is process-wide: a test running beside this one that
/// writes an agent or a document makes a turn read again, as it must. A round free of that is
/// the turn's own cost; a regression costs more in every round.
async fn least_turn_costs(app: &TestApp) -> (u64, u64) {
    let (mut first, mut following) = (u64::MAX, u64::MAX);
    for _ in 0..3 {
        let (one, two) = turn_costs(app).await;
        (first, following) = (first.min(one), following.min(two));
    }
    (first, following)
}

#[actix_web::test]
async fn a_stored_turn_costs_a_few_statements_not_two_dozen() {
    // Nothing else runs meanwhile: the scheduler's polls and the chat search's catch-ups
    // with the database would be counted too.
    let app = spawn_app_with(|config| {
        config.schedules.poll_interval_ms = 3_600_000;
        config.search.catch_up_interval_ms = 3_600_000;
    })
    .await;
    let (first, following) = least_turn_costs(&app).await;
    eprintln!("SQLite statements: first turn {first}, following turn {following}");
    // Counted, the group commit's writer included: a turn's writes are six statements at least
    // (its two transactions of three; a new chat's first inserts the chat in place of the
    // leaf's first update).
    assert!(
        first >= FIRST_TURN_MIN && following >= FOLLOWING_TURN_MIN,
        "too few statements counted ({first}, {following}): some went uncounted"
    );
    assert!(
        first <= FIRST_TURN_MAX,
        "a new chat's first turn ran {first} statements (at most {FIRST_TURN_MAX})"
    );
    assert!(
        following <= FOLLOWING_TURN_MAX,
        "a following turn ran {following} statements (at most {FOLLOWING_TURN_MAX})"
    );
}

/// On PostgreSQL a process owns its chats by lease, and keeps no turn reads (see
/// `POSTGRES_FIRST_TURN_MAX`).
#[actix_web::test]
async fn on_postgresql_a_turn_adds_only_its_lease_and_fences() {
    let Some(database) = OwnDatabase::create("colloquy_statements").await else {
        return;
    };
    let url = database.url.clone();
    let app = spawn_app_with(move |config| {
        config.database.url = Some(url);
        config.schedules.poll_interval_ms = 3_600_000;
        config.search.catch_up_interval_ms = 3_600_000;
        // Renewals every lease / 3: none while turns are measured.
        config.cluster.lease_secs = 600;
    })
    .await;
    let (first, following) = least_turn_costs(&app).await;
    eprintln!("PostgreSQL statements: first turn {first}, following turn {following}");
    assert!(
        first <= POSTGRES_FIRST_TURN_MAX,
        "a new chat's first turn ran {first} statements (at most {POSTGRES_FIRST_TURN_MAX})"
    );
    assert!(
        following <= POSTGRES_FOLLOWING_TURN_MAX,
        "a following turn ran {following} statements (at most {POSTGRES_FOLLOWING_TURN_MAX})"
    );
    drop(app);
    database.drop().await;
}

/// A chat the chat API has just made (as the UI's "New chat" does before its first message):
/// its first turn reads nothing back — the chat, its agent and its empty documents are kept
/// from its creation, and its session starts empty — so it costs only its two transactions.
#[actix_web::test]
async fn the_first_turn_of_a_chat_just_made_reads_nothing_back() {
    let app = spawn_app_with(|config| {
        config.schedules.poll_interval_ms = 3_600_000;
        config.search.catch_up_interval_ms = 3_600_000;
    })
    .await;
    app.upstream.script([Reply::text("Warming up.")]);
    // The API key looked up and the owner's default agent made, once.
    let warm = app.new_chat().await;
    app.send_text(&warm, "Hi").await;

    // The least over a few rounds (see `least_turn_costs`), each measured from the chat's
    // creation on.
    let mut least = u64::MAX;
    for round in 0..3 {
        app.upstream.script([Reply::text("First answer.")]);
        settled(&app).await;
        let chat = app.new_chat().await;
        let before = app.state.launcher.metrics.db_statements();
        let frames = app.send_text(&chat, "Hello").await;
        let kinds: Vec<String> = frames.iter().map(crate::sse::Frame::kind).collect();
        assert!(kinds.contains(&"content".to_string()), "{kinds:?}");
        least = least.min(settled(&app).await - before);
        // Its answer was stored with its question, and the session that started empty holds
        // them.
        let view: Value = app.chat_api().messages(&chat).read_json().await;
        let said: Vec<&str> = view["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["content"].as_str())
            .collect();
        assert_eq!(said, ["Hello", "First answer."], "round {round}");
    }
    eprintln!("SQLite statements: the first turn of a chat just made {least}");
    assert!(
        least <= FOLLOWING_TURN_MAX,
        "the first turn of a chat just made ran {least} statements (at most {FOLLOWING_TURN_MAX})"
    );
}
