//! The scheduler: every `schedules.poll_interval_ms` each process looks for due schedules,
//! claims each due time through the database (`chat::automations::firings`: only one process
//! wins it, and the firing is recorded before its run starts), and fires it as a run in the
//! schedule's chat — its workflow, or its prompt as a user message. When the run ends the
//! outcome is recorded; after `max_consecutive_failures` failures in a row the schedule
//! pauses itself, saying why. A run acts as its owner only through `Accounts::acting_as`: a
//! due time of a disabled owner is recorded as skipped and the schedule moves on to its next.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;

use super::Launcher;
use crate::auth::{Accounts, ActingAsError, Principal};
use crate::chat::automations::firings::{self, Claim};
use crate::chat::session::Turn;
use crate::run::events::{RunEvent, StopReason};
use crate::run::log::RunLog;
use crate::supervisor::launch::RunOptions;
use crate::supervisor::turn::{Answer, ChatSlot, TurnRequest, TurnTarget};

/// A firing claimed this long ago that still has no run lost its process between the claim
/// and the start (which takes milliseconds): another process takes it over. Without a cluster
/// (SQLite: one process) every firing still claimed at start-up was claimed before a restart,
/// by a process now dead: those are taken over at once (`take_over`, at start-up).
const STALE_CLAIM: Duration = Duration::from_secs(120);

/// Starts this process's scheduler (call once, at start-up, after recovery); `accounts` says
/// whom each firing may act as.
pub fn start(launcher: Launcher, accounts: Accounts) {
    let config = launcher.config.schedules.clone();
    if config.test_only_seconds_field {
        tracing::error!(
            "schedules.test_only_seconds_field is ON: cron expressions may have a seconds field. \
             This setting is for tests only; turn it off in production"
        );
    }
    let process = uuid::Uuid::now_v7().simple().to_string();
    tokio::spawn(async move {
        // Before this process claims anything: a firing its predecessor claimed and never
        // recorded a run for is taken over now (its run, if begun, names it), not minutes
        // later.
        if launcher.sessions.cluster().is_none()
            && let Err(err) = take_over(&launcher, &accounts, &process, Duration::ZERO).await
        {
            tracing::warn!(%err, "could not take over the firings a stopped process claimed");
        }
        let poll = Duration::from_millis(config.poll_interval_ms.max(50));
        let mut every = tokio::time::interval(poll);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // At start-up, then about every ten seconds: firings whose runs a dead process (this
        // one before a restart, or another whose chat was taken over) left interrupted.
        let sweep_every = (Duration::from_secs(10).as_millis() / poll.as_millis()).max(1);
        let mut ticks: u128 = 0;
        loop {
            every.tick().await;
            if ticks.is_multiple_of(sweep_every) {
                match firings::interrupted_by_restart(&launcher.db).await {
                    Ok(0) => {}
                    Ok(count) => tracing::warn!(
                        count,
                        "schedule firings cut off when their process stopped were marked interrupted"
                    ),
                    Err(err) => {
                        tracing::warn!(%err, "could not look for firings cut off by a stop")
                    }
                }
            }
            ticks += 1;
            if let Err(err) = look(&launcher, &accounts, &process).await {
                tracing::warn!(%err, "could not look for due schedules");
            }
        }
    });
}

/// One look: claims and fires what is due, and takes over stale claims.
async fn look(
    launcher: &Launcher,
    accounts: &Accounts,
    process: &str,
) -> Result<(), sea_orm::DbErr> {
    let db = &launcher.db;
    // The database's clock: with several processes, all judge due times by the same one.
    let now = crate::db::now(db).await?;
    let grace = chrono::Duration::seconds(launcher.config.schedules.missed_grace_secs as i64);
    let schedules = super::schedules(launcher);
    for schedule in firings::due(db, now).await? {
        let Some(first) = schedule.next_due_at else {
            continue;
        };
        let timing = match schedules.timing(&schedule) {
            Ok(timing) => timing,
            Err(err) => {
                let reason = format!("paused: its timing no longer parses ({err})");
                if let Err(err) = schedules
                    .pause(&schedule.user_id, &schedule.id, &reason)
                    .await
                {
                    tracing::warn!(schedule_id = %schedule.id, %err, "could not pause a schedule");
                }
                continue;
            }
        };
        let decision = firings::decide(&timing, schedule.missed_policy, first, now, grace);
        if decision.skipped > 0 {
            tracing::info!(schedule_id = %schedule.id, skipped = decision.skipped, "due times missed while no server ran are skipped");
        }
        // With several processes, the one owning the schedule's chat fires it (another would
        // only find the chat elsewhere); a chat nobody holds is taken here.
        match launcher.sessions.claim(&schedule.chat_id).await {
            Ok(()) => {}
            Err(crate::chat::SessionError::Elsewhere { .. }) => continue,
            Err(crate::chat::SessionError::Db(err)) => return Err(err),
        }
        if let Some(claim) = firings::claim(db, &schedule, &decision, process).await? {
            fire(launcher.clone(), accounts.clone(), claim);
        }
    }
    take_over(launcher, accounts, process, STALE_CLAIM).await
}

/// Takes over and fires the firings claimed more than `older_than` ago that never got a run
/// (`firings::take_over_stale`).
async fn take_over(
    launcher: &Launcher,
    accounts: &Accounts,
    process: &str,
    older_than: Duration,
) -> Result<(), sea_orm::DbErr> {
    let older_than = chrono::Duration::from_std(older_than).unwrap_or_default();
    for claim in firings::take_over_stale(&launcher.db, older_than, process).await? {
        tracing::warn!(schedule_id = %claim.schedule.id, "took over a firing whose process died before starting it");
        fire(launcher.clone(), accounts.clone(), claim);
    }
    Ok(())
}

/// Runs a claimed firing as its owner and records how it ended; an owner who may not act (a
/// disabled or deleted account) makes it a skipped firing, not a failure.
fn fire(launcher: Launcher, accounts: Accounts, claim: Claim) {
    tokio::spawn(async move {
        let db = &launcher.db;
        let error = match accounts.acting_as(&claim.schedule.user_id).await {
            Ok(principal) => run(&launcher, principal, &claim).await,
            Err(ActingAsError::Disabled) => {
                return skip(&launcher, &claim, "its owner's account is disabled").await;
            }
            Err(ActingAsError::Gone) => {
                return skip(&launcher, &claim, "its owner's account no longer exists").await;
            }
            Err(ActingAsError::Database(err)) => Some(err.to_string()),
        };
        let max = launcher.config.schedules.max_consecutive_failures;
        match firings::finished(db, &claim, error, max).await {
            Ok(true) => {
                tracing::warn!(schedule_id = %claim.schedule.id, "a schedule paused itself after failing {max} times in a row")
            }
            Ok(false) => {}
            Err(err) => tracing::warn!(%err, "could not record a firing's outcome"),
        }
    });
}

/// Runs the firing as `principal`: `None` when it succeeded, else why it failed.
async fn run(launcher: &Launcher, principal: Principal, claim: &Claim) -> Option<String> {
    match start_run(launcher, principal, claim).await {
        Ok(log) => {
            if let Err(err) = firings::started(&launcher.db, &claim.firing.id, &log.run_id).await {
                tracing::warn!(%err, "could not record a firing's run");
            }
            outcome(&log).await
        }
        Err(why) => Some(why),
    }
}

/// Records the firing as skipped, saying why; the schedule moves on to its next due time.
async fn skip(launcher: &Launcher, claim: &Claim, reason: &str) {
    tracing::info!(schedule_id = %claim.schedule.id, reason, "a firing is skipped");
    if let Err(err) = firings::skipped(&launcher.db, claim, reason).await {
        tracing::warn!(%err, "could not record a skipped firing");
    }
}

/// Starts the firing's run in the schedule's chat.
async fn start_run(
    launcher: &Launcher,
    principal: Principal,
    claim: &Claim,
) -> Result<Arc<RunLog>, String> {
    let schedule = &claim.schedule;
    let target = match (&schedule.workflow_id, &schedule.prompt) {
        (Some(workflow_id), _) => {
            let workflow = super::workflows(launcher)
                .get(&schedule.user_id, workflow_id, None)
                .await
                .map_err(|err| err.to_string())?;
            let input = schedule
                .input
                .clone()
                .unwrap_or_else(|| serde_json::json!({}));
            TurnTarget::Workflow {
                chat: ChatSlot::Existing(schedule.chat_id.clone()),
                workflow,
                input,
            }
        }
        (None, Some(prompt)) => TurnTarget::Chat {
            chat_id: schedule.chat_id.clone(),
            turn: Turn::Send {
                parent_id: None,
                content: prompt.clone(),
                images: Vec::new(),
            },
        },
        (None, None) => return Err("the schedule fires neither a workflow nor a prompt".into()),
    };
    let request = TurnRequest {
        principal,
        target,
        options: RunOptions::default(),
        answer: Answer::WhenDurable,
    };
    let started = launcher.open(request).await.map(|started| started.log);
    started.map_err(|err| err.to_string())
}

/// Waits for the run to end: `None` when it completed, else why it failed (its error — a
/// workflow that stopped at a step ends its run with one naming the step — or a stop other
/// than completion). Only the run's last event, `Finished`, is read.
async fn outcome(log: &Arc<RunLog>) -> Option<String> {
    let mut events = Box::pin(log.whole());
    while let Some((_, event)) = events.next().await {
        if let RunEvent::Finished {
            stop_reason, error, ..
        } = event.as_ref()
        {
            if let Some(error) = error {
                return Some(error.message.clone());
            }
            if *stop_reason != StopReason::Completed {
                return Some(format!("the run ended with {}", stop_reason.as_str()));
            }
            return None;
        }
    }
    Some("the run ended without finishing".into())
}
