//! `email_sends` table: each email `send_email` sent or began to send, by agent and user — what
//! its hourly limits count (so a restart does not reset them, and deleting an agent keeps its
//! rows: they go only with their user's account) and what makes a confirmed send happen at most
//! once when its continuation is resumed after a crash. The body is not kept.

use sea_orm::entity::prelude::*;
use serde::{Deserialize, Serialize};

use crate::ids::{AgentId, EmailSendId, UserId};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "email_sends")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: EmailSendId,
    /// The agent whose run sent it (one limit is per agent); no foreign key: the row outlives
    /// the agent, so deleting one frees none of its user's slots.
    #[sea_orm(column_type = "Text")]
    pub agent_id: AgentId,
    /// The agent's owner (one limit is per user, over all their agents).
    #[sea_orm(column_type = "Text")]
    pub user_id: UserId,
    /// The ask the user confirmed it with (`pending_asks.correlation_id`); `None` when
    /// `email.confirm` is off. Unique: one confirmation, one send.
    #[sea_orm(column_type = "Text", nullable, unique)]
    pub correlation_id: Option<String>,
    #[sea_orm(column_type = "Text")]
    pub recipient: String,
    #[sea_orm(column_type = "Text")]
    pub subject: String,
    pub status: EmailSendStatus,
    /// Why it failed (the SMTP server's words).
    #[sea_orm(column_type = "Text", nullable)]
    pub error: Option<String>,
    pub created_at: ChronoDateTimeUtc,
    pub finished_at: Option<ChronoDateTimeUtc>,
}

/// Where a send is: `Sending` from just before the SMTP exchange until it ends, `Sent` or
/// `Failed`. A `Sending` row a dead process left may or may not have gone out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, EnumIter, DeriveActiveEnum, Serialize, Deserialize)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum EmailSendStatus {
    #[sea_orm(string_value = "sending")]
    Sending,
    #[sea_orm(string_value = "sent")]
    Sent,
    #[sea_orm(string_value = "failed")]
    Failed,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::users::Entity",
        from = "Column::UserId",
        to = "super::users::Column::Id",
        on_update = "NoAction",
        on_delete = "Cascade"
    )]
    Users,
}

impl ActiveModelBehavior for ActiveModel {}
