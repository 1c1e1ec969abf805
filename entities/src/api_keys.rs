//! `api_keys` table: bearer keys for the API, stored only as a SHA-256 hash.

use sea_orm::entity::prelude::*;

use crate::ids::{ApiKeyId, UserId};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "api_keys")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: ApiKeyId,
    #[sea_orm(column_type = "Text")]
    pub user_id: UserId,
    pub name: String,
    /// Lowercase hex SHA-256 of the full key.
    #[sea_orm(unique)]
    pub key_hash: String,
    /// First characters of the key, shown to humans to tell keys apart.
    pub key_prefix: String,
    pub created_at: ChronoDateTimeUtc,
    pub last_used_at: Option<ChronoDateTimeUtc>,
    pub revoked_at: Option<ChronoDateTimeUtc>,
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
