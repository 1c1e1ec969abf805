//! Two processes racing for one due time, without the schedulers' timing in the way: two
//! connection pools (as two processes have) call `firings::claim` at once on the same schedule
//! and due time, twenty times, on SQLite and on PostgreSQL (`COLLOQUY_TEST_POSTGRES_URL`;
//! skipped with a note when unset). Each due time has exactly one winner and one firing row.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{Duration, TimeZone, Utc};
use colloquy::chat::automations::firings::{self, Decision};
use entities::ids::ScheduleId;
use entities::schedules;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, Database, DatabaseConnection, EntityTrait, QueryFilter, Set,
};
use serde_json::json;

use crate::client::Call;
use crate::helpers::{TestApp, spawn_app, spawn_app_with};
use crate::workflows::create_workflow;

/// Due times raced for.
const RACES: usize = 20;

/// A daily schedule whose due times are set far ahead (so the app's own scheduler never sees
/// them due), then raced for by `a` and `b`; returns how many each won.
async fn race_twenty_due_times(
    app: &TestApp,
    a: &DatabaseConnection,
    b: &DatabaseConnection,
) -> BTreeMap<&'static str, usize> {
    let workflow = create_workflow(
        app,
        json!({"name": "w", "steps": [{"id": "a", "tool": "calculator", "arguments": {"expression": "1 + 1"}}]}),
    )
    .await;
    let created: serde_json::Value = app
        .api()
        .create_schedule()
        .json(&json!({"name": "Raced", "cron": "0 3 * * *", "workflow_id": workflow["id"]}))
        .read_json()
        .await;
    let id = ScheduleId::from_string(created["id"].as_str().unwrap());
    let mut wins = BTreeMap::from([("a", 0), ("b", 0)]);
    for race in 0..RACES {
        let due = Utc.with_ymd_and_hms(2099, 1, 1, 3, 0, 0).unwrap() + Duration::days(race as i64);
        let mut row: schedules::ActiveModel = schedules::Entity::find_by_id(id.clone())
            .one(&app.db)
            .await
            .unwrap()
            .unwrap()
            .into();
        row.next_due_at = Set(Some(due));
        // Both processes read the same row before either claims.
        let seen = row.update(&app.db).await.unwrap();
        let decision = Decision {
            fire: Some(due),
            skipped: 0,
            next: Some(due + Duration::days(1)),
        };
        // Who is polled first alternates, so neither always starts ahead.
        let (first, second) = if race % 2 == 0 {
            (("a", a), ("b", b))
        } else {
            (("b", b), ("a", a))
        };
        let (one, two) = tokio::join!(
            firings::claim(first.1, &seen, &decision, first.0),
            firings::claim(second.1, &seen, &decision, second.0),
        );
        let won: Vec<&str> = [(first.0, one), (second.0, two)]
            .into_iter()
            .filter_map(|(name, claimed)| {
                claimed
                    .unwrap_or_else(|err| panic!("{name}'s claim failed instead of losing: {err}"))
                    .map(|_| name)
            })
            .collect();
        assert_eq!(won.len(), 1, "due time {due}: winners {won:?}");
        *wins.get_mut(won[0]).unwrap() += 1;
    }
    let rows = entities::schedule_firings::Entity::find()
        .filter(entities::schedule_firings::Column::ScheduleId.eq(id.clone()))
        .all(&app.db)
        .await
        .unwrap();
    let due: BTreeSet<_> = rows.iter().map(|f| f.due_at).collect();
    assert_eq!(rows.len(), RACES, "one firing row per due time");
    assert_eq!(due.len(), RACES);
    let after = schedules::Entity::find_by_id(id)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        after.next_due_at,
        Some(Utc.with_ymd_and_hms(2099, 1, 1, 3, 0, 0).unwrap() + Duration::days(RACES as i64)),
        "the winner moved the schedule on"
    );
    wins
}

#[actix_web::test]
async fn two_claims_racing_for_one_due_time_on_sqlite_have_one_winner_twenty_times() {
    let app = spawn_app().await;
    let url = format!(
        "sqlite://{}?mode=rw",
        app.data_dir.path().join("colloquy.db").display()
    );
    let other = Database::connect(&url).await.unwrap();
    let wins = race_twenty_due_times(&app, &app.db, &other).await;
    println!("wins: {wins:?}");
}

#[actix_web::test]
async fn two_claims_racing_for_one_due_time_on_postgresql_have_one_winner_twenty_times() {
    let Some(database) = crate::postgres::OwnDatabase::create("colloquy_claims").await else {
        return;
    };
    let url = database.url.clone();
    let app = spawn_app_with(|config| config.database.url = Some(url.clone())).await;
    let other = Database::connect(&url).await.unwrap();
    let wins = race_twenty_due_times(&app, &app.db, &other).await;
    println!("wins: {wins:?}");
    // On PostgreSQL both pools truly run at once: each won some.
    assert!(
        wins.values().all(|&n| n > 0),
        "one side never won: {wins:?}"
    );
    other.close().await.unwrap();
    drop(app);
    database.drop().await;
}
