//! `messages` table: the message tree of a chat; `parent_id` links form the branches.

use sea_orm::entity::prelude::*;

use crate::ids::{ChatId, MessageId, RunId};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "messages")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: MessageId,
    #[sea_orm(column_type = "Text")]
    pub chat_id: ChatId,
    /// Previous message on this branch; `None` for a root. Deleting a message deletes
    /// its whole subtree (ON DELETE CASCADE).
    #[sea_orm(column_type = "Text", nullable)]
    pub parent_id: Option<MessageId>,
    pub role: MessageRole,
    #[sea_orm(column_type = "Text", nullable)]
    pub content: Option<String>,
    /// Deliverables attached to the message, such as artifacts (JSON).
    pub parts: Option<Json>,
    /// Tool calls requested by an assistant message (JSON).
    pub tool_calls: Option<Json>,
    /// For `tool` messages: the id of the tool call this answers.
    pub tool_call_id: Option<String>,
    /// Run that produced the message; not a foreign key.
    pub run_id: Option<RunId>,
    pub stop_reason: Option<crate::stop_reason::StopReason>,
    /// An answer's reasoning (the model's thinking before it answered), shown to people and
    /// never sent back to the model.
    #[sea_orm(column_type = "Text", nullable)]
    pub reasoning: Option<String>,
    /// How long the model reasoned, in milliseconds.
    pub reasoning_ms: Option<i64>,
    /// The model that wrote an answer.
    pub model: Option<String>,
    /// Monotonically increasing order of messages within a chat.
    pub seq: i64,
    pub created_at: ChronoDateTimeUtc,
}

/// Who wrote a stored message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, EnumIter, DeriveActiveEnum, Serialize, Deserialize)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum MessageRole {
    #[sea_orm(string_value = "system")]
    System,
    #[sea_orm(string_value = "user")]
    User,
    #[sea_orm(string_value = "assistant")]
    Assistant,
    /// A tool's result, answering the call named by `tool_call_id`.
    #[sea_orm(string_value = "tool")]
    Tool,
}

impl MessageRole {
    /// The role as stored and as the API names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::System => "system",
            Self::User => "user",
            Self::Assistant => "assistant",
            Self::Tool => "tool",
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
