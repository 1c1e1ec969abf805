//! Creates the `uploads` table: state of tus resumable uploads into a chat.

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
                    .table(Uploads::Table)
                    .if_not_exists()
                    .col(text(Uploads::Id).primary_key())
                    .col(text(Uploads::ChatId))
                    .col(text(Uploads::UserId))
                    .col(string(Uploads::Filename))
                    .col(big_integer(Uploads::UploadLength))
                    .col(big_integer(Uploads::UploadOffset).default(0))
                    .col(json_null(Uploads::Metadata))
                    .col(string(Uploads::StoragePath))
                    .col(string_null(Uploads::DocumentId))
                    .col(string(Uploads::Status))
                    .col(timestamp_with_time_zone(Uploads::CreatedAt))
                    .col(timestamp_with_time_zone(Uploads::UpdatedAt))
                    .col(timestamp_with_time_zone(Uploads::ExpiresAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_uploads_chat_id")
                            .from(Uploads::Table, Uploads::ChatId)
                            .to(Chats::Table, Chats::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_uploads_user_id")
                            .from(Uploads::Table, Uploads::UserId)
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
                    .name("idx_uploads_chat_id")
                    .table(Uploads::Table)
                    .col(Uploads::ChatId)
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_uploads_user_id")
                    .table(Uploads::Table)
                    .col(Uploads::UserId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // Dropping the table also drops its indexes and constraints.
        manager
            .drop_table(Table::drop().table(Uploads::Table).if_exists().to_owned())
            .await
    }
}

#[derive(DeriveIden)]
pub enum Uploads {
    Table,
    Id,
    ChatId,
    UserId,
    Filename,
    UploadLength,
    UploadOffset,
    Metadata,
    StoragePath,
    DocumentId,
    Status,
    CreatedAt,
    UpdatedAt,
    ExpiresAt,
}
