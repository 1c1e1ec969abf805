//! `chat_shares` table: read-only links to a chat (issue 50). The link's token is never
//! stored, only its SHA-256 (`token_hash`), by which a request's token is looked up.

use sea_orm::entity::prelude::*;
use serde::{Deserialize, Serialize};

use crate::ids::{ChatId, ChatShareId, UserId};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "chat_shares")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: ChatShareId,
    #[sea_orm(column_type = "Text")]
    pub chat_id: ChatId,
    /// The chat's owner, who made the link.
    #[sea_orm(column_type = "Text")]
    pub user_id: UserId,
    /// Lowercase hex SHA-256 of the token.
    #[sea_orm(column_type = "Text")]
    pub token_hash: String,
    pub created_at: ChronoDateTimeUtc,
    /// After this the link answers 404; `None`: until revoked.
    pub expires_at: Option<ChronoDateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
