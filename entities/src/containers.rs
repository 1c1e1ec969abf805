//! `containers` table: the code interpreter's containers (`cntr_…`), each a user's and, when a
//! chat's run made it, that chat's. Its files are `container_files`; its sandbox (the live
//! interpreter) exists only while it is in use, in the process that runs its chat.

use sea_orm::entity::prelude::*;
use serde::{Deserialize, Serialize};

use crate::ids::{ChatId, ContainerId, UserId};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "containers")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: ContainerId,
    #[sea_orm(column_type = "Text")]
    pub user_id: UserId,
    #[sea_orm(column_type = "Text", nullable)]
    pub chat_id: Option<ChatId>,
    pub name: String,
    /// Minutes without a call after which its interpreter is stopped (its files stay).
    pub expires_after_minutes: i32,
    pub created_at: ChronoDateTimeUtc,
    pub last_active_at: ChronoDateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(has_many = "super::container_files::Entity")]
    ContainerFiles,
}

impl Related<super::container_files::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::ContainerFiles.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
