//! `attachments` table: images attached to user messages. The bytes live on disk under
//! `<data_dir>/attachments/<chat>/<id>`; the row says whose they are and what they are.

use sea_orm::entity::prelude::*;

use crate::ids::{AttachmentId, ChatId, MessageId, UserId};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "attachments")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: AttachmentId,
    #[sea_orm(column_type = "Text")]
    pub chat_id: ChatId,
    #[sea_orm(column_type = "Text")]
    pub user_id: UserId,
    /// The message it was first sent with; `None` while it waits in a composer (such rows
    /// are swept after a day). Not a foreign key: an edit may send it again with another
    /// version of the message, and deleting the first keeps it for the others.
    #[sea_orm(column_type = "Text", nullable)]
    pub message_id: Option<MessageId>,
    /// The type its bytes were recognised as (`image/png`, `image/jpeg`, `image/gif`,
    /// `image/webp`), never what a client claimed.
    pub mime_type: String,
    pub size: i64,
    /// SHA-256 of the bytes, hex.
    pub sha256: String,
    pub created_at: ChronoDateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::chats::Entity",
        from = "Column::ChatId",
        to = "super::chats::Column::Id",
        on_update = "NoAction",
        on_delete = "Cascade"
    )]
    Chats,
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
