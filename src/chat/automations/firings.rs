//! Firing a schedule exactly once. Each process looks for active schedules whose
//! `next_due_at` has come; a due time is claimed in one transaction that moves `next_due_at`
//! on with a conditional UPDATE (only the process that still sees the old value wins) and
//! inserts the firing's row (unique per schedule and due time), so it is recorded before its
//! run starts. Due times missed while no server ran follow the schedule's policy. Outcomes
//! are recorded here (`skipped` for a firing whose owner may not act), and a schedule that
//! failed too often in a row pauses itself.

use chrono::{DateTime, Duration, Utc};
use entities::ids::{RunId, ScheduleFiringId};
use entities::schedule_firings::{self, FiringStatus};
use entities::schedules::{self, MissedPolicy, ScheduleStatus};
use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Set, TransactionTrait,
};

use super::cron::CronTiming;

/// How soon after its claim a firing's run begins (milliseconds in practice): a run begun in
/// the schedule's chat within this window of a stale claim counts as that firing's.
const START_WINDOW: Duration = Duration::seconds(10);

/// Due schedules taken per look: the rest wait for the next one.
pub const DUE_PER_LOOK: u64 = 100;

/// A due time this process won, recorded and ready to run.
#[derive(Debug, Clone)]
pub struct Claim {
    pub firing: schedule_firings::Model,
    pub schedule: schedules::Model,
}

/// Active schedules due at `now`, the most overdue first.
pub async fn due(
    db: &DatabaseConnection,
    now: DateTime<Utc>,
) -> Result<Vec<schedules::Model>, DbErr> {
    schedules::Entity::find()
        .filter(schedules::Column::Status.eq(ScheduleStatus::Active))
        .filter(schedules::Column::NextDueAt.lte(now))
        .order_by_asc(schedules::Column::NextDueAt)
        .limit(DUE_PER_LOOK)
        .all(db)
        .await
}

/// What a look at a due schedule decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The due time to fire, if any.
    pub fire: Option<DateTime<Utc>>,
    /// Due times passed over.
    pub skipped: usize,
    /// The next due time after now.
    pub next: Option<DateTime<Utc>>,
}

/// Decides what a schedule due since `first` does at `now`: the latest due time fires if it
/// is within `grace` (policy `skip`), or in any case (`run_once`); the others are skipped.
pub fn decide(
    timing: &CronTiming,
    policy: MissedPolicy,
    first: DateTime<Utc>,
    now: DateTime<Utc>,
    grace: Duration,
) -> Decision {
    let (count, latest) = timing.due_between(first, now);
    let on_time = now - latest <= grace;
    let fire = match policy {
        MissedPolicy::Skip => on_time,
        MissedPolicy::RunOnce => true,
    };
    Decision {
        fire: fire.then_some(latest),
        skipped: count - usize::from(fire),
        next: timing.next_after(now),
    }
}

/// Tries to claim `schedule`'s due time for this process (`process`): `None` when another
/// process moved it on first, or when the decision fires nothing.
pub async fn claim(
    db: &DatabaseConnection,
    schedule: &schedules::Model,
    decision: &Decision,
    process: &str,
) -> Result<Option<Claim>, DbErr> {
    let Some(first) = schedule.next_due_at else {
        return Ok(None);
    };
    let txn = db.begin().await?;
    let now = crate::db::now(&txn).await?;
    let moved = schedules::Entity::update_many()
        .col_expr(schedules::Column::NextDueAt, Expr::value(decision.next))
        .col_expr(
            schedules::Column::SkippedFirings,
            Expr::col(schedules::Column::SkippedFirings).add(decision.skipped as i32),
        )
        .col_expr(schedules::Column::UpdatedAt, Expr::value(now))
        .filter(schedules::Column::Id.eq(schedule.id.clone()))
        .filter(schedules::Column::Status.eq(ScheduleStatus::Active))
        .filter(schedules::Column::NextDueAt.eq(first))
        .exec(&txn)
        .await?;
    if moved.rows_affected != 1 {
        txn.rollback().await?;
        return Ok(None);
    }
    let Some(due_at) = decision.fire else {
        txn.commit().await?;
        return Ok(None);
    };
    let firing = schedule_firings::ActiveModel {
        id: Set(ScheduleFiringId::generate()),
        schedule_id: Set(schedule.id.clone()),
        due_at: Set(due_at),
        status: Set(FiringStatus::Claimed),
        run_id: Set(None),
        claimed_by: Set(process.to_string()),
        error: Set(None),
        claimed_at: Set(now),
        finished_at: Set(None),
    }
    .insert(&txn)
    .await;
    let firing = match firing {
        Ok(firing) => firing,
        // The unique (schedule, due time) index: someone recorded this firing already.
        Err(err) => {
            tracing::warn!(schedule_id = %schedule.id, %err, "a firing was already recorded");
            txn.rollback().await?;
            return Ok(None);
        }
    };
    txn.commit().await?;
    Ok(Some(Claim {
        firing,
        schedule: schedule.clone(),
    }))
}

/// Firings claimed more than `older_than` ago that never got a run (their process died between
/// the claim and the start), taken over by `process` one at a time with a conditional UPDATE —
/// unless a run began in the schedule's chat right after the claim (its process died before
/// recording it): that firing is marked interrupted, never run twice.
pub async fn take_over_stale(
    db: &DatabaseConnection,
    older_than: Duration,
    process: &str,
) -> Result<Vec<Claim>, DbErr> {
    let cutoff = crate::db::now(db).await? - older_than;
    let stale = schedule_firings::Entity::find()
        .filter(schedule_firings::Column::Status.eq(FiringStatus::Claimed))
        .filter(schedule_firings::Column::ClaimedAt.lt(cutoff))
        .limit(DUE_PER_LOOK)
        .all(db)
        .await?;
    let mut claims = Vec::new();
    for firing in stale {
        let now = crate::db::now(db).await?;
        let taken = schedule_firings::Entity::update_many()
            .col_expr(schedule_firings::Column::ClaimedBy, Expr::value(process))
            .col_expr(schedule_firings::Column::ClaimedAt, Expr::value(now))
            .filter(schedule_firings::Column::Id.eq(firing.id.clone()))
            .filter(schedule_firings::Column::Status.eq(FiringStatus::Claimed))
            .filter(schedule_firings::Column::ClaimedAt.eq(firing.claimed_at))
            .exec(db)
            .await?;
        if taken.rows_affected != 1 {
            continue;
        }
        let Some(schedule) = schedules::Entity::find_by_id(firing.schedule_id.clone())
            .one(db)
            .await?
        else {
            continue;
        };
        // A run begun in its chat just after the claim, and named by no other firing, may be
        // this firing's, started by a process that died before recording it: never run it a
        // second time.
        let begun = entities::runs::Entity::find()
            .filter(entities::runs::Column::ChatId.eq(schedule.chat_id.clone()))
            .filter(entities::runs::Column::CreatedAt.gte(firing.claimed_at))
            .filter(entities::runs::Column::CreatedAt.lte(firing.claimed_at + START_WINDOW))
            .filter(
                entities::runs::Column::Id.not_in_subquery(
                    sea_orm::sea_query::Query::select()
                        .column(schedule_firings::Column::RunId)
                        .from(schedule_firings::Entity)
                        .and_where(schedule_firings::Column::RunId.is_not_null())
                        .to_owned(),
                ),
            )
            .order_by_asc(entities::runs::Column::CreatedAt)
            .one(db)
            .await?;
        if let Some(run) = begun {
            let mut active: schedule_firings::ActiveModel = firing.into();
            active.status = Set(FiringStatus::Interrupted);
            // The firing names the run it did begin, as one recorded in time would.
            active.run_id = Set(Some(run.id));
            active.error = Set(Some(
                "its process died as its run began; it is not run again".into(),
            ));
            active.finished_at = Set(Some(Utc::now()));
            active.update(db).await?;
            continue;
        }
        claims.push(Claim {
            firing: schedule_firings::Model {
                claimed_by: process.to_string(),
                claimed_at: now,
                ..firing
            },
            schedule,
        });
    }
    Ok(claims)
}

/// The firing's run has started.
pub async fn started(
    db: &DatabaseConnection,
    firing: &ScheduleFiringId,
    run_id: &RunId,
) -> Result<(), DbErr> {
    schedule_firings::Entity::update_many()
        .col_expr(
            schedule_firings::Column::Status,
            Expr::value(FiringStatus::Running),
        )
        .col_expr(schedule_firings::Column::RunId, Expr::value(run_id.clone()))
        .filter(schedule_firings::Column::Id.eq(firing.clone()))
        .exec(db)
        .await?;
    Ok(())
}

/// The firing was not run (`reason`: why; its owner's account is disabled). It counts among
/// the schedule's skipped due times, not its failures; the schedule stays as it is.
pub async fn skipped(db: &DatabaseConnection, claim: &Claim, reason: &str) -> Result<(), DbErr> {
    schedule_firings::Entity::update_many()
        .col_expr(
            schedule_firings::Column::Status,
            Expr::value(FiringStatus::Skipped),
        )
        .col_expr(schedule_firings::Column::Error, Expr::value(reason))
        .col_expr(
            schedule_firings::Column::FinishedAt,
            Expr::value(Utc::now()),
        )
        .filter(schedule_firings::Column::Id.eq(claim.firing.id.clone()))
        .exec(db)
        .await?;
    schedules::Entity::update_many()
        .col_expr(
            schedules::Column::SkippedFirings,
            Expr::col(schedules::Column::SkippedFirings).add(1),
        )
        .filter(schedules::Column::Id.eq(claim.schedule.id.clone()))
        .exec(db)
        .await?;
    Ok(())
}

/// Records how a firing ended (`error`: why it failed) and counts the schedule's failures in a
/// row: at `max_failures` it pauses itself, saying why. Returns whether it paused.
pub async fn finished(
    db: &DatabaseConnection,
    claim: &Claim,
    error: Option<String>,
    max_failures: u32,
) -> Result<bool, DbErr> {
    let status = if error.is_some() {
        FiringStatus::Failed
    } else {
        FiringStatus::Succeeded
    };
    schedule_firings::Entity::update_many()
        .col_expr(schedule_firings::Column::Status, Expr::value(status))
        .col_expr(schedule_firings::Column::Error, Expr::value(error.clone()))
        .col_expr(
            schedule_firings::Column::FinishedAt,
            Expr::value(Utc::now()),
        )
        .filter(schedule_firings::Column::Id.eq(claim.firing.id.clone()))
        .exec(db)
        .await?;
    let schedule = &claim.schedule.id;
    let Some(error) = error else {
        schedules::Entity::update_many()
            .col_expr(schedules::Column::ConsecutiveFailures, Expr::value(0))
            .filter(schedules::Column::Id.eq(schedule.clone()))
            .exec(db)
            .await?;
        return Ok(false);
    };
    schedules::Entity::update_many()
        .col_expr(
            schedules::Column::ConsecutiveFailures,
            Expr::col(schedules::Column::ConsecutiveFailures).add(1),
        )
        .filter(schedules::Column::Id.eq(schedule.clone()))
        .exec(db)
        .await?;
    let Some(row) = schedules::Entity::find_by_id(schedule.clone())
        .one(db)
        .await?
    else {
        return Ok(false);
    };
    if row.status != ScheduleStatus::Active || (row.consecutive_failures as u32) < max_failures {
        return Ok(false);
    }
    let reason = format!(
        "paused itself after {} failed firings in a row; the last failed with: {error}",
        row.consecutive_failures
    );
    let mut active: schedules::ActiveModel = row.into();
    active.status = Set(ScheduleStatus::Paused);
    active.paused_reason = Set(Some(reason));
    active.next_due_at = Set(None);
    active.updated_at = Set(Utc::now());
    active.update(db).await?;
    Ok(true)
}

/// Firings a dead process left `running`: their runs were marked interrupted (at start-up, or
/// when another process took their chat over), and so are they (never started again: that
/// could run them twice). A run that ended a while ago with its firing still `running` lost
/// its process between the two records. Run at start-up and then every so often.
pub async fn interrupted_by_restart(db: &DatabaseConnection) -> Result<u64, DbErr> {
    let running = schedule_firings::Entity::find()
        .filter(schedule_firings::Column::Status.eq(FiringStatus::Running))
        .all(db)
        .await?;
    let mut count = 0;
    for firing in running {
        let Some(run_id) = &firing.run_id else {
            continue;
        };
        let settled_before = Utc::now() - chrono::Duration::minutes(1);
        let live = entities::runs::Entity::find_by_id(run_id.clone())
            .one(db)
            .await?
            .is_some_and(|run| match run.status {
                entities::runs::RunStatus::Running => true,
                entities::runs::RunStatus::Interrupted => false,
                // Ended on its own: its process records the firing's outcome in a moment.
                _ => run.finished_at.is_none_or(|at| at > settled_before),
            });
        if live {
            continue;
        }
        let mut active: schedule_firings::ActiveModel = firing.into();
        active.status = Set(FiringStatus::Interrupted);
        active.error = Set(Some("the server stopped while this firing ran".into()));
        active.finished_at = Set(Some(Utc::now()));
        active.update(db).await?;
        count += 1;
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn timing() -> CronTiming {
        CronTiming::parse("*/10 * * * *", "UTC", false).unwrap()
    }

    #[test]
    fn an_on_time_due_time_fires_and_the_next_is_after_now() {
        let first = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        let now = first + Duration::seconds(2);
        let decision = decide(
            &timing(),
            MissedPolicy::Skip,
            first,
            now,
            Duration::seconds(60),
        );
        assert_eq!(decision.fire, Some(first));
        assert_eq!(decision.skipped, 0);
        assert_eq!(
            decision.next,
            Some(Utc.with_ymd_and_hms(2026, 1, 1, 0, 10, 0).unwrap())
        );
    }

    #[test]
    fn missed_due_times_are_skipped_by_default_and_run_once_fires_the_latest() {
        let first = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        let now = Utc.with_ymd_and_hms(2026, 1, 1, 1, 5, 0).unwrap();
        let skip = decide(
            &timing(),
            MissedPolicy::Skip,
            first,
            now,
            Duration::seconds(60),
        );
        assert_eq!((skip.fire, skip.skipped), (None, 7));
        let once = decide(
            &timing(),
            MissedPolicy::RunOnce,
            first,
            now,
            Duration::seconds(60),
        );
        assert_eq!(
            once.fire,
            Some(Utc.with_ymd_and_hms(2026, 1, 1, 1, 0, 0).unwrap())
        );
        assert_eq!(once.skipped, 6);
    }
}
