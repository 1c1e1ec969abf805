//! `uploads` table: state of tus resumable uploads into a chat.

use sea_orm::entity::prelude::*;

use crate::ids::{ChatId, DocumentId, UploadId, UserId};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "uploads")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: UploadId,
    #[sea_orm(column_type = "Text")]
    pub chat_id: ChatId,
    #[sea_orm(column_type = "Text")]
    pub user_id: UserId,
    pub filename: String,
    /// Total size announced by the client (tus `Upload-Length`).
    pub upload_length: i64,
    /// Bytes received so far (tus `Upload-Offset`); defaults to 0 in the database.
    pub upload_offset: i64,
    /// Decoded tus `Upload-Metadata` (JSON).
    pub metadata: Option<Json>,
    pub storage_path: String,
    /// Document created from the finished upload; not a foreign key.
    pub document_id: Option<DocumentId>,
    pub status: UploadStatus,
    pub created_at: ChronoDateTimeUtc,
    pub updated_at: ChronoDateTimeUtc,
    pub expires_at: ChronoDateTimeUtc,
}

/// Where a tus upload is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, EnumIter, DeriveActiveEnum, Serialize, Deserialize)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum UploadStatus {
    /// Bytes are still expected.
    #[sea_orm(string_value = "uploading")]
    Uploading,
    /// Every byte arrived; the document was handed on.
    #[sea_orm(string_value = "complete")]
    Complete,
    /// Deleted by the client, or expired.
    #[sea_orm(string_value = "terminated")]
    Terminated,
}

impl UploadStatus {
    /// The status as stored and as the API names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Uploading => "uploading",
            Self::Complete => "complete",
            Self::Terminated => "terminated",
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

impl ActiveModelBehavior for ActiveModel {}
