//! `container_files` table: a file in a code interpreter container (`cfile_…`), placed there by
//! the user (`source` `user`) or written by the code (`assistant`), at `path` under
//! `/mnt/data`; its bytes are in the storage under `containers/<container>/<id>`.

use sea_orm::entity::prelude::*;
use serde::{Deserialize, Serialize};

use crate::ids::{ContainerFileId, ContainerId};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "container_files")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: ContainerFileId,
    #[sea_orm(column_type = "Text")]
    pub container_id: ContainerId,
    /// Where it is in the sandbox: an absolute path under `/mnt/data`.
    pub path: String,
    pub bytes: i64,
    /// `user` (uploaded or named by file id) or `assistant` (written by the code).
    pub source: String,
    pub created_at: ChronoDateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::containers::Entity",
        from = "Column::ContainerId",
        to = "super::containers::Column::Id",
        on_update = "NoAction",
        on_delete = "Cascade"
    )]
    Containers,
}

impl Related<super::containers::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Containers.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
