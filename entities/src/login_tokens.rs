//! `login_tokens` table: one-time login links, stored as the hash of their token.

use sea_orm::entity::prelude::*;

use crate::ids::{LoginTokenId, UserId};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "login_tokens")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: LoginTokenId,
    #[sea_orm(column_type = "Text")]
    pub user_id: UserId,
    #[sea_orm(unique)]
    pub token_hash: String,
    pub created_at: ChronoDateTimeUtc,
    pub expires_at: ChronoDateTimeUtc,
    /// Set when the link is redeemed; a used token must not be accepted again.
    pub used_at: Option<ChronoDateTimeUtc>,
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
