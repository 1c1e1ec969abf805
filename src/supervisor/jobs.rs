//! A process's background work. Every periodic job starts through `every`, with its period
//! named here, and only once start-up's recovery is done (`supervisor::recovery`: a sweep must
//! not take what recovery would have repaired). With several processes on one PostgreSQL, a job
//! that must run once at a time runs in the process holding its `job:<key>` lease.
//!
//! The jobs: expired tus uploads (`UPLOAD_SWEEP`), the chats of plain `/v1` requests nobody
//! opened past `http.v1_chat_retention_days` (`API_CHAT_SWEEP`), images nobody sent
//! (`ATTACHMENT_SWEEP`), idle chats' open indexes (`INDEX_SWEEP`), idle browser sessions
//! (`tools::browser::Browsers`' own period, from `browser.idle_timeout_secs`), the heap
//! passivated chats freed (`os_limits`), the scheduler, and with several processes the recovery
//! of what dead processes left (`ORPHAN_RECOVERY`, every lease time) and the pruning of lease
//! records (`LEASE_PRUNE`: handovers past `cluster.handover_retention_days`, lapsed rows).

use std::future::Future;
use std::time::Duration;

use super::launch::Launcher;

/// How often uploads past their resumption window are terminated (their partial files and
/// documents go).
pub const UPLOAD_SWEEP: Duration = Duration::from_secs(600);
/// How often the chats of plain `/v1` requests past their retention are deleted.
pub const API_CHAT_SWEEP: Duration = Duration::from_secs(3600);
/// How often image attachments nobody sent are removed.
pub const ATTACHMENT_SWEEP: Duration = Duration::from_secs(3600);
/// How often lapsed lease rows and old records of changes of owner are pruned (a cluster).
pub const LEASE_PRUNE: Duration = Duration::from_secs(3600);
/// How often the open document indexes of idle chats are closed.
pub const INDEX_SWEEP: Duration = Duration::from_secs(60);

/// Which processes run a job.
#[derive(Clone, Copy)]
pub enum Runs {
    /// Each process, over what it holds.
    EveryProcess,
    /// One process at a time: the holder of `job:<key>` (every process when there is no
    /// cluster).
    Once(&'static str),
}

/// Runs `job` now and then every `period` (a late tick is delayed, never doubled), in the
/// processes `runs` says.
pub fn every<F, Fut>(launcher: &Launcher, period: Duration, runs: Runs, mut job: F)
where
    F: FnMut() -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let cluster = launcher.sessions.cluster().cloned();
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(period);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            if let Runs::Once(key) = runs
                && !crate::cluster::is_mine(cluster.as_ref(), key).await
            {
                continue;
            }
            job().await;
        }
    });
}

/// Starts every job (the scheduler acts as a schedule's owner through `accounts`). Call after
/// `recovery::recover`.
pub fn start(launcher: &Launcher, accounts: &crate::auth::Accounts) {
    let workspace = launcher.workspace.clone();
    every(launcher, UPLOAD_SWEEP, Runs::Once("retention"), move || {
        let workspace = workspace.clone();
        async move {
            match workspace.sweep_expired_uploads().await {
                Ok(0) => {}
                Ok(count) => tracing::info!(count, "terminated expired uploads"),
                Err(err) => tracing::warn!(%err, "could not sweep expired uploads"),
            }
        }
    });
    let this = launcher.clone();
    every(
        launcher,
        API_CHAT_SWEEP,
        Runs::Once("retention"),
        move || {
            let launcher = this.clone();
            async move {
                match launcher.sweep_api_chats().await {
                    Ok(0) => {}
                    Ok(count) => {
                        tracing::info!(count, "swept chats of /v1 requests past their retention")
                    }
                    Err(err) => tracing::warn!(%err, "could not sweep the chats of /v1 requests"),
                }
            }
        },
    );
    let attachments = launcher.attachments.clone();
    every(
        launcher,
        ATTACHMENT_SWEEP,
        Runs::Once("retention"),
        move || {
            let attachments = attachments.clone();
            async move {
                match attachments.sweep_unsent().await {
                    Ok(0) => {}
                    Ok(count) => tracing::info!(count, "removed images nobody sent"),
                    Err(err) => tracing::warn!(%err, "could not sweep unsent images"),
                }
            }
        },
    );
    // A chat's index is closed when the chat goes idle, as its session is.
    let workspace = launcher.workspace.clone();
    let idle = Duration::from_secs(launcher.config.agent.chat_idle_secs);
    every(launcher, INDEX_SWEEP, Runs::EveryProcess, move || {
        let workspace = workspace.clone();
        async move {
            let closed = workspace.close_idle_indexes(idle).await;
            if closed > 0 {
                tracing::debug!(closed, "closed idle document indexes");
            }
        }
    });
    let browsers = launcher.browsers.clone();
    let db = launcher.db.clone();
    every(
        launcher,
        browsers.sweep_period(),
        Runs::EveryProcess,
        move || {
            let (browsers, db) = (browsers.clone(), db.clone());
            async move {
                browsers.sweep(&db).await;
            }
        },
    );
    let containers = launcher.containers.clone();
    every(
        launcher,
        containers.sweep_period(),
        Runs::EveryProcess,
        move || {
            let containers = containers.clone();
            async move { containers.sweep().await }
        },
    );
    crate::allocator::start_heap_trimmer();
    super::automations::scheduler::start(launcher.clone(), accounts.clone());
    if let Some(cluster) = launcher.sessions.cluster().cloned() {
        let pruned = cluster.clone();
        let this = launcher.clone();
        every(
            launcher,
            cluster.lease(),
            Runs::Once("recovery"),
            move || {
                let (launcher, cluster) = (this.clone(), cluster.clone());
                async move { super::recovery::recover_orphans(&launcher, &cluster).await }
            },
        );
        let retention =
            Duration::from_secs(launcher.config.cluster.handover_retention_days * 86_400);
        every(launcher, LEASE_PRUNE, Runs::Once("retention"), move || {
            let cluster = pruned.clone();
            async move {
                match cluster.prune(retention).await {
                    Ok((0, 0)) => {}
                    Ok((handovers, leases)) => {
                        tracing::info!(handovers, leases, "pruned the cluster's lease records")
                    }
                    Err(err) => tracing::warn!(%err, "could not prune the cluster's lease records"),
                }
            }
        });
    }
}
