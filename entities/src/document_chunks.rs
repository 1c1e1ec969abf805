//! `document_chunks` table: the text chunks a document was split into for retrieval,
//! each optionally with an embedding vector.

use sea_orm::entity::prelude::*;

use crate::ids::{ChatId, ChunkId, DocumentId};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "document_chunks")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: ChunkId,
    /// Unique together with `chunk_index`.
    #[sea_orm(column_type = "Text")]
    pub document_id: DocumentId,
    #[sea_orm(column_type = "Text")]
    pub chat_id: ChatId,
    /// Position of the chunk within its document.
    pub chunk_index: i32,
    #[sea_orm(column_type = "Text")]
    pub text: String,
    pub token_count: i32,
    /// Embedding vector as raw bytes (BLOB on SQLite, bytea on PostgreSQL).
    #[sea_orm(column_type = "Blob", nullable)]
    pub embedding: Option<Vec<u8>>,
    /// Which embedder produced `embedding`.
    pub embedder: Option<String>,
    /// The title and headings the chunk is under or holds, as JSON (`ChunkHeadings`); null
    /// when its document has none, or for chunks made before headings were kept.
    #[sea_orm(column_type = "Text", nullable)]
    pub headings: Option<String>,
    pub created_at: ChronoDateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::documents::Entity",
        from = "Column::DocumentId",
        to = "super::documents::Column::Id",
        on_update = "NoAction",
        on_delete = "Cascade"
    )]
    Documents,
    #[sea_orm(
        belongs_to = "super::chats::Entity",
        from = "Column::ChatId",
        to = "super::chats::Column::Id",
        on_update = "NoAction",
        on_delete = "Cascade"
    )]
    Chats,
}

impl Related<super::documents::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Documents.def()
    }
}

impl Related<super::chats::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Chats.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
