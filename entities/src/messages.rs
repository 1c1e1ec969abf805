//! `messages` table: the message tree of a chat; `parent_id` links form the branches.

use sea_orm::entity::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "messages")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: String,
    #[sea_orm(column_type = "Text")]
    pub chat_id: String,
    /// Previous message on this branch; `None` for a root. Deleting a message deletes
    /// its whole subtree (ON DELETE CASCADE).
    #[sea_orm(column_type = "Text", nullable)]
    pub parent_id: Option<String>,
    /// One of `system`, `user`, `assistant`, `tool`.
    pub role: String,
    #[sea_orm(column_type = "Text", nullable)]
    pub content: Option<String>,
    /// Deliverables attached to the message, such as artifacts (JSON).
    pub parts: Option<Json>,
    /// Tool calls requested by an assistant message (JSON).
    pub tool_calls: Option<Json>,
    /// For `tool` messages: the id of the tool call this answers.
    pub tool_call_id: Option<String>,
    /// Run that produced the message; not a foreign key.
    pub run_id: Option<String>,
    pub stop_reason: Option<String>,
    /// Monotonically increasing order of messages within a chat.
    pub seq: i64,
    pub created_at: ChronoDateTimeUtc,
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
    /// The parent message (self-reference).
    #[sea_orm(
        belongs_to = "Entity",
        from = "Column::ParentId",
        to = "Column::Id",
        on_update = "NoAction",
        on_delete = "Cascade"
    )]
    Parent,
    /// The child messages (self-reference).
    #[sea_orm(has_many = "Entity", via_rel = "Relation::Parent")]
    Children,
}

impl Related<super::chats::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Chats.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
