//! The `email_sends` rows: what an agent, a user or the whole server sent in the last hour
//! (their limits), a send begun (`Sending`) and its end (`Sent` / `Failed`), and the send a
//! confirmation already made.

use chrono::{DateTime, Utc};
use entities::email_sends::{self, EmailSendStatus};
use entities::ids::{AgentId, EmailSendId, UserId};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Set,
};

/// The hour the limit counts over.
pub const WINDOW: chrono::TimeDelta = chrono::TimeDelta::hours(1);

/// Whose sends a limit counts.
pub enum Counted<'a> {
    Agent(&'a AgentId),
    /// All the user's agents', deleted ones' too.
    User(&'a UserId),
    Server,
}

/// The sends that count against `whose` limit now (begun or sent within the hour, oldest
/// first; a failed one does not count), at most `limit` of them.
pub async fn counted(
    db: &DatabaseConnection,
    whose: Counted<'_>,
    limit: u32,
) -> Result<Vec<DateTime<Utc>>, DbErr> {
    let since = Utc::now() - WINDOW;
    let query = email_sends::Entity::find()
        .select_only()
        .column(email_sends::Column::CreatedAt);
    let query = match whose {
        Counted::Agent(agent) => query.filter(email_sends::Column::AgentId.eq(agent)),
        Counted::User(user) => query.filter(email_sends::Column::UserId.eq(user)),
        Counted::Server => query,
    };
    query
        .filter(email_sends::Column::CreatedAt.gt(since))
        .filter(email_sends::Column::Status.ne(EmailSendStatus::Failed))
        .order_by_asc(email_sends::Column::CreatedAt)
        .limit(u64::from(limit))
        .into_tuple()
        .all(db)
        .await
}

/// A send about to begin.
pub struct Begun<'a> {
    pub agent: &'a AgentId,
    pub user: &'a UserId,
    pub correlation_id: Option<&'a str>,
    pub recipient: &'a str,
    pub subject: &'a str,
}

/// Records a send as `Sending`; fails (unique index) if its confirmation already has one.
pub async fn begin(db: &DatabaseConnection, send: Begun<'_>) -> Result<EmailSendId, DbErr> {
    let id = EmailSendId::generate();
    email_sends::ActiveModel {
        id: Set(id.clone()),
        agent_id: Set(send.agent.clone()),
        user_id: Set(send.user.clone()),
        correlation_id: Set(send.correlation_id.map(str::to_string)),
        recipient: Set(send.recipient.to_string()),
        subject: Set(send.subject.to_string()),
        status: Set(EmailSendStatus::Sending),
        error: Set(None),
        created_at: Set(Utc::now()),
        finished_at: Set(None),
    }
    .insert(db)
    .await?;
    Ok(id)
}

/// Records how a send ended: `Sent`, or `Failed` with the server's words.
pub async fn finish(
    db: &DatabaseConnection,
    id: &EmailSendId,
    error: Option<&str>,
) -> Result<(), DbErr> {
    let status = if error.is_some() {
        EmailSendStatus::Failed
    } else {
        EmailSendStatus::Sent
    };
    email_sends::Entity::update_many()
        .col_expr(email_sends::Column::Status, Expr::value(status))
        .col_expr(
            email_sends::Column::Error,
            Expr::value(error.map(str::to_string)),
        )
        .col_expr(email_sends::Column::FinishedAt, Expr::value(Utc::now()))
        .filter(email_sends::Column::Id.eq(id.clone()))
        .exec(db)
        .await?;
    Ok(())
}

/// The send a confirmation already made, if any.
pub async fn of_confirmation(
    db: &DatabaseConnection,
    correlation_id: &str,
) -> Result<Option<email_sends::Model>, DbErr> {
    email_sends::Entity::find()
        .filter(email_sends::Column::CorrelationId.eq(correlation_id))
        .one(db)
        .await
}
