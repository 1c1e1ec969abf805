//! `artifact_versions` table: the content of each version of an artifact.

use sea_orm::entity::prelude::*;

use crate::ids::{ArtifactId, ArtifactVersionId, MessageId};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "artifact_versions")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: ArtifactVersionId,
    /// Unique together with `version`.
    #[sea_orm(column_type = "Text")]
    pub artifact_id: ArtifactId,
    pub version: i32,
    #[sea_orm(column_type = "Text")]
    pub content: String,
    /// Not a foreign key.
    pub message_id: Option<MessageId>,
    pub created_at: ChronoDateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::artifacts::Entity",
        from = "Column::ArtifactId",
        to = "super::artifacts::Column::Id",
        on_update = "NoAction",
        on_delete = "Cascade"
    )]
    Artifacts,
}

impl Related<super::artifacts::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Artifacts.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
