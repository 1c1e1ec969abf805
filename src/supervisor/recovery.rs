//! What a process picks up at start-up, in a stated order, before any job starts
//! (`supervisor::jobs`): 1. runs a previous process left `running` become `interrupted`
//! (keeping their drafts) unless a Deep Think checkpoint lets them continue (`recover_runs`,
//! before any session exists); then in `recover`: 2. answered questions whose continuation
//! never finished are resumed, 3. Deep Think runs continue from their checkpoints, 4. uploads
//! a crash left half-committed are repaired (a complete one is committed, even if its
//! resumption window passed meanwhile: the upload sweep starts only after), 5. document
//! processing that was cut off resumes.
//!
//! With several processes on one PostgreSQL, only what no live process holds is picked up; a
//! chat taken over from a dead process later has its documents repaired the same way
//! (`take_over_documents`), and the holder of `job:recovery` recovers the runs and documents of
//! chats nobody opens (`recover_orphans`).

use entities::ids::ChatId;
use sea_orm::DatabaseConnection;

use super::continuation::Continuation;
use super::launch::Launcher;
use crate::cluster::Cluster;
use crate::config::MAX_CUT_OFF_ATTEMPTS;

/// Step 1: marks interrupted the runs a previous process left unfinished, but for the Deep Think
/// runs that continue from a checkpoint, which are returned (those of chats a live process
/// holds are left to it).
pub async fn recover_runs(
    db: &DatabaseConnection,
    cluster: Option<&Cluster>,
) -> anyhow::Result<Vec<Continuation>> {
    // Chats a live process holds: their runs and answers are that process's, not ours.
    let live = match cluster {
        Some(cluster) => cluster.live_chat_keys().await?,
        None => Default::default(),
    };
    let continuations: Vec<_> = super::continuation::continuable(db)
        .await?
        .into_iter()
        .filter(|c| !live.contains(&crate::cluster::chat_key(c.run.chat_id.as_str())))
        .collect();
    let continuing: Vec<_> = continuations.iter().map(|c| c.run.id.clone()).collect();
    let interrupted = match cluster {
        Some(cluster) => {
            crate::chat::recovery::recover_orphaned_runs(db, cluster, &continuing).await?
        }
        None => crate::chat::recovery::recover_interrupted_runs(db, &continuing).await?,
    };
    if interrupted > 0 {
        tracing::warn!(
            interrupted,
            "runs left unfinished by the previous process were marked interrupted, keeping the \
             text they had streamed"
        );
    }
    Ok(continuations)
}

/// Steps 2-5, in order.
pub async fn recover(launcher: &Launcher, continuations: Vec<Continuation>) {
    resume_unfinished_answers(launcher).await;
    for continuation in continuations {
        let run = continuation.run.clone();
        match super::continuation::continue_run(launcher, continuation).await {
            Ok(_) => {
                tracing::info!(run_id = %run.id, "continued a Deep Think run from its checkpoint")
            }
            Err(err) => {
                tracing::error!(run_id = %run.id, %err,
                    "cannot continue a Deep Think run; it is recovered as interrupted");
                if let Err(err) = crate::chat::recovery::recover_run(&launcher.db, &run).await {
                    tracing::error!(run_id = %run.id, %err, "cannot mark a run interrupted");
                }
            }
        }
    }
    if launcher.sessions.cluster().is_some() {
        // A chat taken from a process that died: the uploads it was committing and the
        // documents it was processing there are this process's now.
        let workspace = launcher.workspace.clone();
        launcher.sessions.on_takeover(Box::new(move |chat| {
            let workspace = workspace.clone();
            tokio::spawn(async move { take_over_documents(&workspace, &chat).await });
        }));
    }
    // With several processes, a chat's documents are resumed by the process that takes the
    // chat (a live owner is processing them).
    let mut ours = std::collections::HashSet::new();
    match launcher.workspace.chats_with_unfinished().await {
        Ok(chats) => {
            for chat in chats {
                if launcher.sessions.claim(&chat).await.is_ok() {
                    ours.insert(chat);
                }
            }
        }
        Err(err) => tracing::error!(%err, "could not look for unfinished documents"),
    }
    let workspace = &launcher.workspace;
    match workspace
        .recover_uncommitted(|chat| ours.contains(chat))
        .await
    {
        Ok(recovered) if recovered != crate::documents::Recovered::default() => {
            tracing::warn!(
                completed = recovered.completed,
                failed = recovered.failed,
                "repaired uploads left half-committed"
            );
        }
        Ok(_) => {}
        Err(err) => tracing::error!(%err, "could not repair half-committed uploads"),
    }
    match workspace
        .resume_unfinished(|chat| ours.contains(chat))
        .await
    {
        Ok(resumed) => {
            if resumed.requeued > 0 {
                tracing::info!(count = resumed.requeued, "resumed processing of documents");
            }
            if resumed.failed > 0 {
                tracing::warn!(
                    count = resumed.failed,
                    "documents whose processing was cut off repeatedly were marked error"
                );
            }
        }
        Err(err) => tracing::error!(%err, "could not resume document processing"),
    }
}

/// Resumes the runs of questions that were answered while a previous process was running but
/// whose continuation never finished: the stored answer is delivered, once.
async fn resume_unfinished_answers(launcher: &Launcher) {
    let db = &launcher.db;
    let unfinished = match crate::chat::asks::unfinished(db).await {
        Ok(unfinished) => unfinished,
        Err(err) => {
            tracing::error!(%err, "cannot look for unfinished answers");
            return;
        }
    };
    for ask in unfinished {
        let Some(answer) = ask.answer.clone() else {
            continue;
        };
        // With several processes, only the process that takes the chat resumes it (a live
        // owner is running it).
        if launcher.sessions.claim(&ask.chat_id).await.is_err() {
            continue;
        }
        let correlation_id = ask.correlation_id.clone();
        // The continuation ran once when the answer came, then once per earlier start.
        let cut_offs = ask.resume_attempts + 1;
        if cut_offs >= MAX_CUT_OFF_ATTEMPTS {
            let reason = format!(
                "the run's continuation after this answer was cut off {cut_offs} times \
                 (a crash or restart); it is not resumed again"
            );
            match crate::chat::asks::fail_unresumable(db, &ask, &reason).await {
                Ok(()) => {
                    tracing::warn!(%correlation_id, cut_offs, "gave up on an answered question")
                }
                Err(err) => {
                    tracing::error!(%correlation_id, %err, "cannot fail an answered question")
                }
            }
            continue;
        }
        if let Err(err) = crate::chat::asks::record_resumption(db, &correlation_id).await {
            tracing::error!(%correlation_id, %err, "cannot record a resumption; not resuming");
            continue;
        }
        match super::resume::resume_answered(launcher, ask, answer, None, Vec::new()).await {
            Ok(log) => {
                tracing::info!(%correlation_id, run_id = %log.run_id, "resumed an answered question")
            }
            Err(err) => {
                tracing::error!(%correlation_id, %err, "cannot resume an answered question")
            }
        }
    }
}

/// A chat's documents left unfinished by a process that died (the chat is this process's
/// now): half-committed uploads are repaired, cut-off processing resumed.
async fn take_over_documents(workspace: &crate::documents::Workspace, chat: &ChatId) {
    match workspace.recover_uncommitted(|c| c == chat).await {
        Ok(recovered) if recovered != crate::documents::Recovered::default() => {
            tracing::warn!(%chat, completed = recovered.completed, failed = recovered.failed,
                "repaired uploads a dead process left half-committed");
        }
        Ok(_) => {}
        Err(err) => tracing::error!(%chat, %err, "could not repair half-committed uploads"),
    }
    match workspace.resume_unfinished(|c| c == chat).await {
        Ok(resumed) if resumed.requeued + resumed.failed > 0 => {
            tracing::info!(%chat, requeued = resumed.requeued, failed = resumed.failed,
                "resumed the documents a dead process was processing");
        }
        Ok(_) => {}
        Err(err) => tracing::error!(%chat, %err, "could not resume document processing"),
    }
}

/// With several processes, every lease time (run by the holder of `job:recovery`): what dead
/// processes left in chats nobody opens — their runs (interrupted, drafts kept), and their
/// documents (the chat is taken, which hands them to `take_over_documents`).
pub(super) async fn recover_orphans(launcher: &Launcher, cluster: &Cluster) {
    match crate::chat::recovery::recover_orphaned_runs(&launcher.db, cluster, &[]).await {
        Ok(0) => {}
        Ok(count) => tracing::warn!(
            count,
            "runs of a process that stopped renewing its chats were marked interrupted, keeping \
             the text they had streamed"
        ),
        Err(err) => tracing::warn!(%err, "could not recover the runs of a dead process"),
    }
    let chats = match launcher.workspace.chats_with_unfinished().await {
        Ok(chats) => chats,
        Err(err) => {
            tracing::warn!(%err, "could not look for unfinished documents");
            return;
        }
    };
    for chat in chats {
        let key = crate::cluster::chat_key(chat.as_str());
        if matches!(cluster.abandoned(&key).await, Ok(true))
            && let Err(err) = launcher.sessions.claim(&chat).await
        {
            tracing::warn!(%chat, %err, "could not take a dead process's documents");
        }
    }
}
