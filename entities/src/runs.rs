//! `runs` table: one execution of the agent loop (model calls and tools) within a chat.

use sea_orm::entity::prelude::*;

use crate::ids::{ChatId, MessageId, RunId, UserId};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "runs")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: RunId,
    #[sea_orm(column_type = "Text")]
    pub chat_id: ChatId,
    #[sea_orm(column_type = "Text")]
    pub user_id: UserId,
    pub status: RunStatus,
    pub stop_reason: Option<crate::stop_reason::StopReason>,
    /// Not a foreign key.
    pub user_message_id: Option<MessageId>,
    /// Not a foreign key.
    pub assistant_message_id: Option<MessageId>,
    /// Defaults to 0 in the database.
    pub iterations: i32,
    /// Defaults to 0 in the database.
    pub input_tokens: i64,
    /// Defaults to 0 in the database.
    pub output_tokens: i64,
    #[sea_orm(column_type = "Text", nullable)]
    pub error: Option<String>,
    /// Options of the run (JSON; shape defined by the application).
    pub options: Option<Json>,
    pub created_at: ChronoDateTimeUtc,
    pub finished_at: Option<ChronoDateTimeUtc>,
    /// The answer text streamed so far while the run is `running` (saved about once a
    /// second), so a crash keeps it; becomes an `interrupted` answer at the next start.
    #[sea_orm(column_type = "Text", nullable)]
    pub draft: Option<String>,
    /// What each tool call of the run did (JSON array of `{id, name, arguments, success,
    /// preview, error}`), appended as each round of calls finishes.
    pub tool_calls: Option<Json>,
    /// A Deep Think run's checkpoint (JSON; its plan and each finished sub-task's findings),
    /// so a run cut off by a restart continues from the next sub-task.
    pub deep_think: Option<Json>,
}

/// Where a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, EnumIter, DeriveActiveEnum, Serialize, Deserialize)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Generating, or running tools.
    #[sea_orm(string_value = "running")]
    Running,
    /// Ended with an answer (also at its iteration, length or time limit).
    #[sea_orm(string_value = "completed")]
    Completed,
    /// Waiting for the user's answer or the client's tool results.
    #[sea_orm(string_value = "paused")]
    Paused,
    /// Stopped by the user, or its question was left behind by a new message.
    #[sea_orm(string_value = "cancelled")]
    Cancelled,
    /// Ended by an error: the model server's, a Deep Think run's whose every sub-task
    /// failed, or a workflow's step.
    #[sea_orm(string_value = "failed")]
    Failed,
    /// Cut off by a crash or restart; its draft was kept.
    #[sea_orm(string_value = "interrupted")]
    Interrupted,
}

impl RunStatus {
    /// The status as stored and as the API names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Completed => "completed",
            Self::Paused => "paused",
            Self::Cancelled => "cancelled",
            Self::Failed => "failed",
            Self::Interrupted => "interrupted",
        }
    }
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
        belongs_to = "super::users::Entity",
        from = "Column::UserId",
        to = "super::users::Column::Id",
        on_update = "NoAction",
        on_delete = "Cascade"
    )]
    Users,
    #[sea_orm(has_many = "super::pending_asks::Entity")]
    PendingAsks,
}

impl Related<super::chats::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Chats.def()
    }
}

impl Related<super::users::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Users.def()
    }
}

impl Related<super::pending_asks::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::PendingAsks.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
