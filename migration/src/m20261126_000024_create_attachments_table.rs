//! Creates the `attachments` table: images attached to user messages (their bytes are files
//! under the data directory), one chat's and one user's each.

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000001_create_users_table::Users;
use crate::m20261121_000006_create_chats_table::Chats;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Attachments::Table)
                    .if_not_exists()
                    .col(text(Attachments::Id).primary_key())
                    .col(text(Attachments::ChatId))
                    .col(text(Attachments::UserId))
                    .col(text_null(Attachments::MessageId))
                    .col(text(Attachments::MimeType))
                    .col(big_integer(Attachments::Size))
                    .col(text(Attachments::Sha256))
                    .col(timestamp_with_time_zone(Attachments::CreatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_attachments_chat_id")
                            .from(Attachments::Table, Attachments::ChatId)
                            .to(Chats::Table, Chats::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_attachments_user_id")
                            .from(Attachments::Table, Attachments::UserId)
                            .to(Users::Table, Users::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_attachments_chat_id")
                    .table(Attachments::Table)
                    .col(Attachments::ChatId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(Attachments::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
pub enum Attachments {
    Table,
    Id,
    ChatId,
    UserId,
    MessageId,
    MimeType,
    Size,
    Sha256,
    CreatedAt,
}
