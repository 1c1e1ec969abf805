//! Pending asks in the database: a paused run's question (an ask_user question, or a `/v1` run's
//! client tool calls), checkpoint and status (`pending` → `answered` → `completed`, or
//! `cancelled` / `expired`, or `failed` when its continuation was cut off again and again).
//! Status changes are conditional UPDATEs, so an answer is claimed once even when two arrive
//! together.

use chrono::{DateTime, Utc};
use entities::ids::{AskCorrelationId, AskId, ChatId, RunId, UserId};
use entities::runs::RunStatus;
use entities::{pending_asks, runs};
use sea_orm::QuerySelect;
use sea_orm::sea_query::Expr;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QueryOrder,
    Set, TransactionTrait,
};
use serde_json::Value;

pub use entities::pending_asks::{AskKind, AskStatus};

/// A new pending ask.
pub struct NewAsk {
    pub kind: AskKind,
    pub correlation_id: AskCorrelationId,
    pub chat_id: ChatId,
    pub run_id: RunId,
    pub user_id: UserId,
    pub tool_call_id: String,
    pub question: Value,
    pub checkpoint: Value,
    pub expires_at: DateTime<Utc>,
}

pub async fn insert<C: ConnectionTrait>(db: &C, ask: NewAsk) -> Result<(), DbErr> {
    let row = pending_asks::ActiveModel {
        id: Set(AskId::generate()),
        correlation_id: Set(ask.correlation_id),
        chat_id: Set(ask.chat_id),
        run_id: Set(ask.run_id),
        user_id: Set(ask.user_id),
        tool_call_id: Set(ask.tool_call_id),
        question: Set(ask.question),
        checkpoint: Set(ask.checkpoint),
        status: Set(AskStatus::Pending),
        answer: Set(None),
        created_at: Set(Utc::now()),
        expires_at: Set(ask.expires_at),
        answered_at: Set(None),
        resume_attempts: Set(0),
        kind: Set(ask.kind),
    };
    // Not read back (no `RETURNING`): nothing of it is needed.
    pending_asks::Entity::insert(row)
        .exec_without_returning(db)
        .await?;
    Ok(())
}

pub async fn find(
    db: &DatabaseConnection,
    correlation_id: &AskCorrelationId,
) -> Result<Option<pending_asks::Model>, DbErr> {
    pending_asks::Entity::find()
        .filter(pending_asks::Column::CorrelationId.eq(correlation_id))
        .one(db)
        .await
}

/// Claims a pending, unexpired ask for `answer`. `false` if someone else got there first or it
/// is no longer pending.
pub async fn claim<C: ConnectionTrait>(
    db: &C,
    correlation_id: &AskCorrelationId,
    answer: &Value,
) -> Result<bool, DbErr> {
    let now = Utc::now();
    let result = pending_asks::Entity::update_many()
        .col_expr(
            pending_asks::Column::Status,
            Expr::value(AskStatus::Answered),
        )
        .col_expr(pending_asks::Column::Answer, Expr::value(answer.clone()))
        .col_expr(pending_asks::Column::AnsweredAt, Expr::value(now))
        .filter(pending_asks::Column::CorrelationId.eq(correlation_id))
        .filter(pending_asks::Column::Status.eq(AskStatus::Pending))
        .filter(pending_asks::Column::ExpiresAt.gt(now))
        .exec(db)
        .await?;
    Ok(result.rows_affected == 1)
}

pub async fn mark_expired(
    db: &DatabaseConnection,
    correlation_id: &AskCorrelationId,
) -> Result<(), DbErr> {
    pending_asks::Entity::update_many()
        .col_expr(
            pending_asks::Column::Status,
            Expr::value(AskStatus::Expired),
        )
        .filter(pending_asks::Column::CorrelationId.eq(correlation_id))
        .filter(pending_asks::Column::Status.eq(AskStatus::Pending))
        .exec(db)
        .await?;
    Ok(())
}

/// Marks an answered ask's continuation done (inside the transaction that stores its answer).
pub async fn complete<C: ConnectionTrait>(
    db: &C,
    correlation_id: &AskCorrelationId,
) -> Result<(), DbErr> {
    pending_asks::Entity::update_many()
        .col_expr(
            pending_asks::Column::Status,
            Expr::value(AskStatus::Completed),
        )
        .filter(pending_asks::Column::CorrelationId.eq(correlation_id))
        .exec(db)
        .await?;
    Ok(())
}

/// A chat's pending asks (which a new turn cancels, `cancel`).
pub async fn pending_in<C: ConnectionTrait>(
    db: &C,
    chat_id: &ChatId,
) -> Result<Vec<pending_asks::Model>, DbErr> {
    pending_asks::Entity::find()
        .filter(pending_asks::Column::ChatId.eq(chat_id))
        .filter(pending_asks::Column::Status.eq(AskStatus::Pending))
        .all(db)
        .await
}

/// Cancels `pending` (the chat's pending asks, `pending_in`: the conversation moved on) and
/// their paused runs, each only while it is still pending or paused; returns the correlation
/// ids of the questions among them (client tool calls are not announced).
pub async fn cancel<C: ConnectionTrait>(
    db: &C,
    pending: &[pending_asks::Model],
) -> Result<Vec<AskCorrelationId>, DbErr> {
    for ask in pending {
        pending_asks::Entity::update_many()
            .col_expr(
                pending_asks::Column::Status,
                Expr::value(AskStatus::Cancelled),
            )
            .filter(pending_asks::Column::Id.eq(ask.id.clone()))
            .filter(pending_asks::Column::Status.eq(AskStatus::Pending))
            .exec(db)
            .await?;
        runs::Entity::update_many()
            .col_expr(runs::Column::Status, Expr::value(RunStatus::Cancelled))
            .col_expr(runs::Column::StopReason, Expr::value(AskStatus::Cancelled))
            .col_expr(runs::Column::FinishedAt, Expr::value(Utc::now()))
            .filter(runs::Column::Id.eq(ask.run_id.clone()))
            .filter(runs::Column::Status.eq(RunStatus::Paused))
            .exec(db)
            .await?;
    }
    Ok(pending
        .iter()
        .filter(|ask| ask.kind == AskKind::AskUser)
        .map(|a| a.correlation_id.clone())
        .collect())
}

/// The chat's latest client tool calls still waiting for their results (expired or not:
/// the caller tells the two apart).
pub async fn pending_client_tools(
    db: &DatabaseConnection,
    chat_id: &ChatId,
) -> Result<Option<pending_asks::Model>, DbErr> {
    pending_asks::Entity::find()
        .filter(pending_asks::Column::ChatId.eq(chat_id))
        .filter(pending_asks::Column::Kind.eq(AskKind::ClientTools))
        .filter(pending_asks::Column::Status.eq(AskStatus::Pending))
        .order_by_desc(pending_asks::Column::CreatedAt)
        .one(db)
        .await
}

/// A chat's unexpired pending questions, oldest first.
pub async fn list_pending(
    db: &DatabaseConnection,
    chat_id: &ChatId,
) -> Result<Vec<pending_asks::Model>, DbErr> {
    pending_asks::Entity::find()
        .filter(pending_asks::Column::ChatId.eq(chat_id))
        .filter(pending_asks::Column::Kind.eq(AskKind::AskUser))
        .filter(pending_asks::Column::Status.eq(AskStatus::Pending))
        .filter(pending_asks::Column::ExpiresAt.gt(Utc::now()))
        .order_by_asc(pending_asks::Column::CreatedAt)
        .all(db)
        .await
}

/// How many of a chat's asks, newest first, `list_recent` returns.
pub const RECENT_ASKS: u64 = 100;

/// A chat's latest questions whatever their state (pending, answered, cancelled, expired, ...),
/// oldest first, so a reloaded UI can show each question with its outcome.
pub async fn list_recent(
    db: &DatabaseConnection,
    chat_id: &ChatId,
) -> Result<Vec<pending_asks::Model>, DbErr> {
    let mut asks = pending_asks::Entity::find()
        .filter(pending_asks::Column::ChatId.eq(chat_id))
        .filter(pending_asks::Column::Kind.eq(AskKind::AskUser))
        .order_by_desc(pending_asks::Column::CreatedAt)
        .limit(RECENT_ASKS)
        .all(db)
        .await?;
    asks.reverse();
    Ok(asks)
}

/// Records that an answered ask's continuation is being resumed at start-up.
pub async fn record_resumption(
    db: &DatabaseConnection,
    correlation_id: &AskCorrelationId,
) -> Result<(), DbErr> {
    pending_asks::Entity::update_many()
        .col_expr(
            pending_asks::Column::ResumeAttempts,
            sea_orm::sea_query::ExprTrait::add(Expr::col(pending_asks::Column::ResumeAttempts), 1),
        )
        .filter(pending_asks::Column::CorrelationId.eq(correlation_id))
        .exec(db)
        .await?;
    Ok(())
}

/// Gives up on an answered ask whose continuation keeps being cut off: the ask is `failed` and
/// its run `failed` with `reason`, in one transaction.
pub async fn fail_unresumable(
    db: &DatabaseConnection,
    ask: &pending_asks::Model,
    reason: &str,
) -> Result<(), DbErr> {
    let txn = db.begin().await?;
    pending_asks::Entity::update_many()
        .col_expr(pending_asks::Column::Status, Expr::value(AskStatus::Failed))
        .filter(pending_asks::Column::Id.eq(ask.id.clone()))
        .exec(&txn)
        .await?;
    runs::Entity::update_many()
        .col_expr(runs::Column::Status, Expr::value(RunStatus::Failed))
        .col_expr(runs::Column::StopReason, Expr::value("interrupted"))
        .col_expr(runs::Column::Error, Expr::value(reason))
        .col_expr(runs::Column::FinishedAt, Expr::value(Utc::now()))
        .filter(runs::Column::Id.eq(ask.run_id.clone()))
        .exec(&txn)
        .await?;
    txn.commit().await
}

/// Asks that were answered but whose continuation never completed (the process died).
pub async fn unfinished(db: &DatabaseConnection) -> Result<Vec<pending_asks::Model>, DbErr> {
    pending_asks::Entity::find()
        .filter(pending_asks::Column::Status.eq(AskStatus::Answered))
        .all(db)
        .await
}
