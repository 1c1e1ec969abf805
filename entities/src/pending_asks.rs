//! `pending_asks` table: a question a paused run put to the user, with the checkpoint
//! needed to resume the run once it is answered.

use sea_orm::entity::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "pending_asks")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: String,
    #[sea_orm(unique)]
    pub correlation_id: String,
    #[sea_orm(column_type = "Text")]
    pub chat_id: String,
    #[sea_orm(column_type = "Text")]
    pub run_id: String,
    #[sea_orm(column_type = "Text")]
    pub user_id: String,
    pub tool_call_id: String,
    /// The question shown to the user (JSON).
    pub question: Json,
    /// Run state needed to resume after the answer (JSON).
    pub checkpoint: Json,
    /// One of `pending`, `answered`, `resuming`, `completed`, `cancelled`, `expired`, `failed`.
    pub status: String,
    pub answer: Option<Json>,
    pub created_at: ChronoDateTimeUtc,
    pub expires_at: ChronoDateTimeUtc,
    pub answered_at: Option<ChronoDateTimeUtc>,
    /// Times an answered ask's continuation was resumed at start-up; one that keeps being
    /// cut off is failed instead of resumed at every start. Defaults to 0.
    pub resume_attempts: i32,
    /// What the run waits for: `ask_user` (a question for the person) or `client_tools`
    /// (the results of tools the API client runs itself).
    pub kind: String,
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
