//! What survives a crash of a run: the draft of its answer, saved as it streams, becomes an
//! `interrupted` answer on its branch at the next start, and a finished run (interrupted or
//! not) can still be looked up by its owner after the process that ran it is gone.

use chrono::Utc;
use entities::ids::{ChatId, MessageId, RunId, UserId};
use entities::messages::MessageRole;
use entities::runs::RunStatus;
use entities::stop_reason::StopReason;
use entities::{chats, messages, runs};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QueryOrder,
    Set, TransactionTrait,
};

/// Saves the answer text a running run has produced so far. A run that already finished
/// keeps what it finished with.
pub async fn save_draft<C: sea_orm::ConnectionTrait>(
    db: &C,
    run_id: &RunId,
    draft: &str,
) -> Result<(), DbErr> {
    runs::Entity::update_many()
        .col_expr(runs::Column::Draft, Expr::value(draft))
        .filter(runs::Column::Id.eq(run_id))
        .filter(runs::Column::Status.eq(RunStatus::Running))
        .exec(db)
        .await?;
    Ok(())
}

/// Marks the runs a dead process left `running` as `interrupted`. A run that had streamed
/// text keeps it: the draft becomes an assistant message (stop reason `interrupted`) under the
/// user message it answered, made the chat's active leaf if the question was. Runs before any
/// chat session starts, so nothing in memory disagrees. Runs in `continuing` (Deep Think runs
/// that go on from their checkpoint) are left alone. Returns how many runs were marked.
pub async fn recover_interrupted_runs(
    db: &DatabaseConnection,
    continuing: &[RunId],
) -> Result<u64, DbErr> {
    let running = runs::Entity::find()
        .filter(runs::Column::Status.eq(RunStatus::Running))
        .filter(runs::Column::Id.is_not_in(continuing.iter().cloned()))
        .all(db)
        .await?;
    recover_each(db, running).await
}

/// Recovers each run; returns how many there were. One run's draft that cannot be kept must
/// not stop the server from starting (that would be a crash loop of its own): the run is then
/// marked without it.
async fn recover_each(db: &DatabaseConnection, running: Vec<runs::Model>) -> Result<u64, DbErr> {
    let count = running.len() as u64;
    for run in running {
        if let Err(err) = recover_run(db, &run).await {
            tracing::error!(run_id = %run.id, %err, "could not keep an interrupted run's draft");
            mark_interrupted(db, &run.id, run.assistant_message_id.clone()).await?;
        }
    }
    Ok(count)
}

/// Recovers the runs of one chat left `running` by a process that no longer holds it (with
/// several processes, the one taking the chat over does this before its session loads).
/// Returns how many runs were marked.
/// `continuing` runs are left alone.
pub async fn recover_chat_runs(
    db: &DatabaseConnection,
    chat_id: &ChatId,
    continuing: &[RunId],
) -> Result<u64, DbErr> {
    let running = runs::Entity::find()
        .filter(runs::Column::ChatId.eq(chat_id.clone()))
        .filter(runs::Column::Status.eq(RunStatus::Running))
        .filter(runs::Column::Id.is_not_in(continuing.iter().cloned()))
        .all(db)
        .await?;
    recover_each(db, running).await
}

/// Marks a running run `interrupted`, with `answer_id` as its answer; false if it was not
/// running (another process recovered it first).
async fn mark_interrupted<C: sea_orm::ConnectionTrait>(
    db: &C,
    run_id: &RunId,
    answer_id: Option<MessageId>,
) -> Result<bool, DbErr> {
    let marked = runs::Entity::update_many()
        .col_expr(runs::Column::Status, Expr::value(RunStatus::Interrupted))
        .col_expr(
            runs::Column::StopReason,
            Expr::value(StopReason::Interrupted),
        )
        .col_expr(runs::Column::AssistantMessageId, Expr::value(answer_id))
        .col_expr(runs::Column::FinishedAt, Expr::value(Utc::now()))
        .col_expr(runs::Column::Draft, Expr::value(Option::<String>::None))
        .filter(runs::Column::Id.eq(run_id))
        .filter(runs::Column::Status.eq(RunStatus::Running))
        .exec(db)
        .await?;
    Ok(marked.rows_affected == 1)
}

/// Keeps one run's draft as its interrupted answer and marks it, in one transaction (also for a
/// Deep Think run whose continuation could not start).
pub async fn recover_run(db: &DatabaseConnection, run: &runs::Model) -> Result<(), DbErr> {
    let txn = db.begin().await?;
    // Marked first, so that of two processes recovering it at once (the second waits on the
    // row) only one keeps the draft; the answer's id is set once the draft is stored.
    if !mark_interrupted(&txn, &run.id, run.assistant_message_id.clone()).await? {
        return txn.rollback().await;
    }
    if let (Some(draft), Some(question), None) =
        (&run.draft, &run.user_message_id, &run.assistant_message_id)
        && !draft.trim().is_empty()
        && messages::Entity::find_by_id(question.clone())
            .one(&txn)
            .await?
            .is_some()
    {
        let last_seq = messages::Entity::find()
            .filter(messages::Column::ChatId.eq(run.chat_id.clone()))
            .order_by_desc(messages::Column::Seq)
            .one(&txn)
            .await?
            .map_or(0, |m| m.seq);
        let id = MessageId::generate();
        messages::ActiveModel {
            id: Set(id.clone()),
            chat_id: Set(run.chat_id.clone()),
            parent_id: Set(Some(question.clone())),
            role: Set(MessageRole::Assistant),
            content: Set(Some(draft.clone())),
            parts: Set(None),
            tool_calls: Set(None),
            tool_call_id: Set(None),
            run_id: Set(Some(run.id.clone())),
            stop_reason: Set(Some(StopReason::Interrupted)),
            // A draft keeps the answer's text only; its reasoning is lost with the process.
            reasoning: Set(None),
            reasoning_ms: Set(None),
            model: Set(None),
            seq: Set(last_seq + 1),
            created_at: Set(Utc::now()),
        }
        .insert(&txn)
        .await?;
        chats::Entity::update_many()
            .col_expr(chats::Column::ActiveLeafId, Expr::value(id.clone()))
            // A message was stored: the chat search's catch-up looks at chats by this.
            .col_expr(chats::Column::UpdatedAt, Expr::value(Utc::now()))
            .filter(chats::Column::Id.eq(run.chat_id.clone()))
            .filter(chats::Column::ActiveLeafId.eq(question.clone()))
            .exec(&txn)
            .await?;
        runs::Entity::update_many()
            .col_expr(runs::Column::AssistantMessageId, Expr::value(Some(id)))
            .filter(runs::Column::Id.eq(run.id.clone()))
            .exec(&txn)
            .await?;
    }
    txn.commit().await
}

/// A run of `chat_id` owned by `user_id`, with its answer message if it has one.
pub async fn find_run(
    db: &DatabaseConnection,
    user_id: &UserId,
    chat_id: &ChatId,
    run_id: &RunId,
) -> Result<Option<(runs::Model, Option<messages::Model>)>, DbErr> {
    let Some(run) = runs::Entity::find_by_id(run_id.clone())
        .filter(runs::Column::ChatId.eq(chat_id))
        .filter(runs::Column::UserId.eq(user_id))
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    let answer = match &run.assistant_message_id {
        Some(id) => messages::Entity::find_by_id(id.clone()).one(db).await?,
        None => None,
    };
    Ok(Some((run, answer)))
}

/// With several processes: recovers the runs left `running` in chats no live process holds
/// (their owner died), each chat under its lease, taken for the recovery and let lapse after;
/// chats this process or another live one holds are left alone, as are `continuing` runs.
/// Returns how many runs were marked.
pub async fn recover_orphaned_runs(
    db: &DatabaseConnection,
    cluster: &crate::cluster::Cluster,
    continuing: &[RunId],
) -> Result<u64, DbErr> {
    let running = runs::Entity::find()
        .filter(runs::Column::Status.eq(RunStatus::Running))
        .filter(runs::Column::Id.is_not_in(continuing.iter().cloned()))
        .all(db)
        .await?;
    let chats: std::collections::BTreeSet<ChatId> =
        running.into_iter().map(|run| run.chat_id).collect();
    let mut count = 0;
    for chat_id in chats {
        let key = crate::cluster::chat_key(chat_id.as_str());
        if cluster.holds(&key) {
            continue;
        }
        if let crate::cluster::Claim::Mine {
            was_ours: false, ..
        } = cluster.claim(&key).await?
        {
            count += recover_chat_runs(db, &chat_id, continuing).await?;
            cluster.let_lapse(&key);
        }
    }
    Ok(count)
}
