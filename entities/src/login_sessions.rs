//! `login_sessions` table: browser sessions, identified by the hash of their cookie token.

use sea_orm::entity::prelude::*;

use crate::ids::{LoginSessionId, UserId};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "login_sessions")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: LoginSessionId,
    #[sea_orm(column_type = "Text")]
    pub user_id: UserId,
    #[sea_orm(unique)]
    pub token_hash: String,
    pub created_at: ChronoDateTimeUtc,
    pub expires_at: ChronoDateTimeUtc,
    pub last_seen_at: Option<ChronoDateTimeUtc>,
    /// The `User-Agent` the session was started with (cut short), to tell sessions apart.
    pub user_agent: Option<String>,
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
