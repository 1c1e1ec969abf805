//! `files` table: files a user uploaded with `POST /v1/files`, kept on disk until deleted.

use sea_orm::entity::prelude::*;

use crate::ids::{FileId, UserId};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "files")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: FileId,
    #[sea_orm(column_type = "Text")]
    pub user_id: UserId,
    pub filename: String,
    /// OpenAI's `purpose`: `assistants` or `user_data`.
    pub purpose: String,
    pub bytes: i64,
    pub storage_path: String,
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

impl ActiveModelBehavior for ActiveModel {}
