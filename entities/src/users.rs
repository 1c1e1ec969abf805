//! `users` table: accounts; every other row ultimately belongs to a user.

use sea_orm::entity::prelude::*;

use crate::ids::UserId;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "users")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: UserId,
    #[sea_orm(unique)]
    pub username: String,
    /// Password hash; `None` means password login is disabled for this user.
    pub password_hash: Option<String>,
    /// Defaults to `false` in the database.
    pub is_admin: bool,
    /// The model the user's new chats start with; `NULL`: the server's default.
    pub default_model: Option<String>,
    /// Switched off by an admin: no sign-in, and its sessions and keys do not authenticate.
    /// Defaults to `false` in the database.
    pub disabled: bool,
    pub created_at: ChronoDateTimeUtc,
    /// The name the UI shows; `None`: the username.
    pub display_name: Option<String>,
    /// The IANA time zone the user set (`Europe/Paris`); `None`: UTC. A schedule created
    /// without a zone takes it.
    pub time_zone: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(has_many = "super::api_keys::Entity")]
    ApiKeys,
    #[sea_orm(has_many = "super::login_sessions::Entity")]
    LoginSessions,
    #[sea_orm(has_many = "super::login_tokens::Entity")]
    LoginTokens,
    #[sea_orm(has_many = "super::agents::Entity")]
    Agents,
    #[sea_orm(has_many = "super::chats::Entity")]
    Chats,
    #[sea_orm(has_many = "super::runs::Entity")]
    Runs,
    #[sea_orm(has_many = "super::pending_asks::Entity")]
    PendingAsks,
    #[sea_orm(has_many = "super::uploads::Entity")]
    Uploads,
}

impl Related<super::api_keys::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::ApiKeys.def()
    }
}

impl Related<super::login_sessions::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::LoginSessions.def()
    }
}

impl Related<super::login_tokens::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::LoginTokens.def()
    }
}

impl Related<super::agents::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Agents.def()
    }
}

impl Related<super::chats::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Chats.def()
    }
}

impl Related<super::runs::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Runs.def()
    }
}

impl Related<super::pending_asks::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::PendingAsks.def()
    }
}

impl Related<super::uploads::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Uploads.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
