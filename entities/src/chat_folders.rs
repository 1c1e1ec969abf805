//! `chat_folders` table: a user's folders of chats (`fld_…`), one level deep: a folder holds
//! chats (`chats.folder_id`), never other folders. Deleting one moves its chats out of it.

use sea_orm::entity::prelude::*;
use serde::{Deserialize, Serialize};

use crate::ids::{ChatFolderId, UserId};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "chat_folders")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: ChatFolderId,
    #[sea_orm(column_type = "Text")]
    pub user_id: UserId,
    pub name: String,
    /// Where it sits among its owner's folders, smallest first.
    pub position: i32,
    pub created_at: ChronoDateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::users::Entity",
        from = "Column::UserId",
        to = "super::users::Column::Id",
        on_update = "NoAction",
        on_delete = "Cascade"
    )]
    Users,
}

impl Related<super::users::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Users.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
