//! `memories` table: facts remembered for a chat, optionally with an embedding vector.

use sea_orm::entity::prelude::*;

use crate::ids::{ChatId, MemoryId};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "memories")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: MemoryId,
    #[sea_orm(column_type = "Text")]
    pub chat_id: ChatId,
    #[sea_orm(column_type = "Text")]
    pub content: String,
    pub category: String,
    /// Embedding vector as raw bytes (BLOB on SQLite, bytea on PostgreSQL).
    #[sea_orm(column_type = "Blob", nullable)]
    pub embedding: Option<Vec<u8>>,
    /// Which embedder produced `embedding`.
    pub embedder: Option<String>,
    pub created_at: ChronoDateTimeUtc,
    pub updated_at: ChronoDateTimeUtc,
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
}

impl Related<super::chats::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Chats.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
