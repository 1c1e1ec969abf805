//! `artifacts` table: named, versioned deliverables of a chat; the content of each
//! version lives in `artifact_versions`.

use sea_orm::entity::prelude::*;

use crate::ids::{ArtifactId, ChatId, MessageId};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "artifacts")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: ArtifactId,
    /// Unique together with `identifier`.
    #[sea_orm(column_type = "Text")]
    pub chat_id: ChatId,
    /// Stable name of the artifact within its chat.
    pub identifier: String,
    pub title: String,
    pub mime_type: String,
    pub language: Option<String>,
    /// One of `artifact`, `document`.
    pub kind: String,
    /// Highest `artifact_versions.version` of this artifact.
    pub latest_version: i32,
    /// Not a foreign key.
    pub message_id: Option<MessageId>,
    pub created_at: ChronoDateTimeUtc,
    pub updated_at: ChronoDateTimeUtc,
    /// Soft-deletion time.
    pub deleted_at: Option<ChronoDateTimeUtc>,
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
    #[sea_orm(has_many = "super::artifact_versions::Entity")]
    ArtifactVersions,
    #[sea_orm(has_one = "super::documents::Entity")]
    Documents,
}

impl Related<super::chats::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Chats.def()
    }
}

impl Related<super::artifact_versions::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::ArtifactVersions.def()
    }
}

impl Related<super::documents::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Documents.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
