//! `workflows` table: a user's named, versioned recipe. The steps of each version are in
//! `workflow_versions`; `version` is the current one (a PATCH adds a version, never edits one).

use sea_orm::entity::prelude::*;
use serde::{Deserialize, Serialize};

use crate::ids::{UserId, WorkflowId};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "workflows")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: WorkflowId,
    #[sea_orm(column_type = "Text")]
    pub user_id: UserId,
    #[sea_orm(column_type = "Text")]
    pub name: String,
    /// The current version (1 when created).
    pub version: i32,
    pub created_at: ChronoDateTimeUtc,
    pub updated_at: ChronoDateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
