//! `documents` table: files uploaded into a chat and their text-extraction state; each
//! document is backed by exactly one artifact.

use sea_orm::entity::prelude::*;

use crate::ids::{ArtifactId, ChatId, DocumentId, FileId};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "documents")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: DocumentId,
    #[sea_orm(column_type = "Text")]
    pub chat_id: ChatId,
    #[sea_orm(column_type = "Text", unique)]
    pub artifact_id: ArtifactId,
    pub filename: String,
    pub size_bytes: i64,
    pub content_type: String,
    pub storage_path: String,
    pub status: DocumentStatus,
    #[sea_orm(column_type = "Text", nullable)]
    pub error: Option<String>,
    #[sea_orm(column_type = "Text", nullable)]
    pub warning: Option<String>,
    /// Defaults to `false` in the database.
    pub searchable: bool,
    /// Defaults to 0 in the database.
    pub char_count: i64,
    pub uploaded_at: ChronoDateTimeUtc,
    pub processed_at: Option<ChronoDateTimeUtc>,
    /// Soft-deletion time.
    pub deleted_at: Option<ChronoDateTimeUtc>,
    /// Times processing was begun; recorded before each attempt, so a document whose
    /// processing is cut off again and again is failed instead of retried. Defaults to 0.
    pub processing_attempts: i32,
    /// The file (`POST /v1/files`) a vector store's document was made from, if any.
    #[sea_orm(column_type = "Text", nullable)]
    pub file_id: Option<FileId>,
}

/// Where a document is on its way to being searchable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, EnumIter, DeriveActiveEnum, Serialize, Deserialize)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum DocumentStatus {
    /// Its bytes are still arriving (tus).
    #[sea_orm(string_value = "uploading")]
    Uploading,
    /// Queued or being extracted, chunked, embedded and indexed.
    #[sea_orm(string_value = "processing")]
    Processing,
    /// Done: searchable if it had text.
    #[sea_orm(string_value = "processed")]
    Processed,
    /// Processing failed; `error` says why.
    #[sea_orm(string_value = "error")]
    Error,
}

impl DocumentStatus {
    /// The status as stored and as the API names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Uploading => "uploading",
            Self::Processing => "processing",
            Self::Processed => "processed",
            Self::Error => "error",
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
        belongs_to = "super::artifacts::Entity",
        from = "Column::ArtifactId",
        to = "super::artifacts::Column::Id",
        on_update = "NoAction",
        on_delete = "Cascade"
    )]
    Artifacts,
    #[sea_orm(has_many = "super::document_chunks::Entity")]
    DocumentChunks,
}

impl Related<super::chats::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Chats.def()
    }
}

impl Related<super::artifacts::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Artifacts.def()
    }
}

impl Related<super::document_chunks::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::DocumentChunks.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
