//! `pending_asks` table: a question a paused run put to the user, with the checkpoint
//! needed to resume the run once it is answered.

use sea_orm::entity::prelude::*;

use crate::ids::{AskCorrelationId, AskId, ChatId, RunId, UserId};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "pending_asks")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: AskId,
    #[sea_orm(unique)]
    pub correlation_id: AskCorrelationId,
    #[sea_orm(column_type = "Text")]
    pub chat_id: ChatId,
    #[sea_orm(column_type = "Text")]
    pub run_id: RunId,
    #[sea_orm(column_type = "Text")]
    pub user_id: UserId,
    pub tool_call_id: String,
    /// The question shown to the user (JSON).
    pub question: Json,
    /// Run state needed to resume after the answer (JSON).
    pub checkpoint: Json,
    pub status: AskStatus,
    pub answer: Option<Json>,
    pub created_at: ChronoDateTimeUtc,
    pub expires_at: ChronoDateTimeUtc,
    pub answered_at: Option<ChronoDateTimeUtc>,
    /// Times an answered ask's continuation was resumed at start-up; one that keeps being
    /// cut off is failed instead of resumed at every start. Defaults to 0.
    pub resume_attempts: i32,
    /// What the run waits for.
    pub kind: AskKind,
}

/// Where an ask is: `Pending` until claimed by an answer (`Answered`), then `Completed` once
/// its continuation is stored; or `Cancelled` (the conversation moved on), `Expired`, or
/// `Failed` (its continuation was cut off again and again).
#[derive(Debug, Clone, Copy, PartialEq, Eq, EnumIter, DeriveActiveEnum, Serialize, Deserialize)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum AskStatus {
    #[sea_orm(string_value = "pending")]
    Pending,
    #[sea_orm(string_value = "answered")]
    Answered,
    #[sea_orm(string_value = "completed")]
    Completed,
    #[sea_orm(string_value = "cancelled")]
    Cancelled,
    #[sea_orm(string_value = "expired")]
    Expired,
    #[sea_orm(string_value = "failed")]
    Failed,
}

/// What a paused run waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, EnumIter, DeriveActiveEnum, Serialize, Deserialize)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum AskKind {
    /// A question for the person (the ask_user tool).
    #[sea_orm(string_value = "ask_user")]
    AskUser,
    /// The results of tools the API client runs itself (Chat Completions `tools`), sent with
    /// the client's next request in the same chat.
    #[sea_orm(string_value = "client_tools")]
    ClientTools,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::chats::Entity",
        from = "Column::ChatId",
        to = "super::chats::Column::Id",
        on_update = "NoAction",
        on_delete = "Cascade"
    )]
    Chats,
    #[sea_orm(
        belongs_to = "super::runs::Entity",
        from = "Column::RunId",
        to = "super::runs::Column::Id",
        on_update = "NoAction",
        on_delete = "Cascade"
    )]
    Runs,
    #[sea_orm(
        belongs_to = "super::users::Entity",
        from = "Column::UserId",
        to = "super::users::Column::Id",
        on_update = "NoAction",
        on_delete = "Cascade"
    )]
    Users,
}

impl Related<super::chats::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Chats.def()
    }
}

impl Related<super::runs::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Runs.def()
    }
}

impl Related<super::users::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Users.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
