//! Creates the `artifacts` table: named, versioned deliverables (code, documents) of a chat.

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000006_create_chats_table::Chats;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Artifacts::Table)
                    .if_not_exists()
                    .col(text(Artifacts::Id).primary_key())
                    .col(text(Artifacts::ChatId))
                    .col(string(Artifacts::Identifier))
                    .col(string(Artifacts::Title))
                    .col(string(Artifacts::MimeType))
                    .col(string_null(Artifacts::Language))
                    .col(string(Artifacts::Kind))
                    .col(integer(Artifacts::LatestVersion))
                    .col(string_null(Artifacts::MessageId))
                    .col(timestamp_with_time_zone(Artifacts::CreatedAt))
                    .col(timestamp_with_time_zone(Artifacts::UpdatedAt))
                    .col(timestamp_with_time_zone_null(Artifacts::DeletedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_artifacts_chat_id")
                            .from(Artifacts::Table, Artifacts::ChatId)
                            .to(Chats::Table, Chats::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_artifacts_chat_id_identifier")
                    .table(Artifacts::Table)
                    .col(Artifacts::ChatId)
                    .col(Artifacts::Identifier)
                    .unique()
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // Dropping the table also drops its indexes and constraints.
        manager
            .drop_table(Table::drop().table(Artifacts::Table).if_exists().to_owned())
            .await
    }
}

#[derive(DeriveIden)]
pub enum Artifacts {
    Table,
    Id,
    ChatId,
    Identifier,
    Title,
    MimeType,
    Language,
    Kind,
    LatestVersion,
    MessageId,
    CreatedAt,
    UpdatedAt,
    DeletedAt,
}
