//! Creates the `documents` table: uploaded files of a chat and their text-extraction state;
//! each document is backed by exactly one artifact.

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000006_create_chats_table::Chats;
use crate::m20261121_000011_create_artifacts_table::Artifacts;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Documents::Table)
                    .if_not_exists()
                    .col(text(Documents::Id).primary_key())
                    .col(text(Documents::ChatId))
                    .col(text_uniq(Documents::ArtifactId))
                    .col(string(Documents::Filename))
                    .col(big_integer(Documents::SizeBytes))
                    .col(string(Documents::ContentType))
                    .col(string(Documents::StoragePath))
                    .col(string(Documents::Status))
                    .col(text_null(Documents::Error))
                    .col(text_null(Documents::Warning))
                    .col(boolean(Documents::Searchable).default(false))
                    .col(big_integer(Documents::CharCount).default(0))
                    .col(timestamp_with_time_zone(Documents::UploadedAt))
                    .col(timestamp_with_time_zone_null(Documents::ProcessedAt))
                    .col(timestamp_with_time_zone_null(Documents::DeletedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_documents_chat_id")
                            .from(Documents::Table, Documents::ChatId)
                            .to(Chats::Table, Chats::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_documents_artifact_id")
                            .from(Documents::Table, Documents::ArtifactId)
                            .to(Artifacts::Table, Artifacts::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_documents_chat_id_uploaded_at")
                    .table(Documents::Table)
                    .col(Documents::ChatId)
                    .col(Documents::UploadedAt)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // Dropping the table also drops its indexes and constraints.
        manager
            .drop_table(Table::drop().table(Documents::Table).if_exists().to_owned())
            .await
    }
}

#[derive(DeriveIden)]
pub enum Documents {
    Table,
    Id,
    ChatId,
    ArtifactId,
    Filename,
    SizeBytes,
    ContentType,
    StoragePath,
    Status,
    Error,
    Warning,
    Searchable,
    CharCount,
    UploadedAt,
    ProcessedAt,
    DeletedAt,
}
