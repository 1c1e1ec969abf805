//! OpenAI's stateful APIs over Colloquy's chats:
//! - `responses`: a stored Responses API response (OpenAI's `store: true`), one per
//!   run, in the chat it ran in, with what it was asked (its input items and request) and, once
//!   it ended, the response object;
//! - `files`: a user's uploaded files (`POST /v1/files`), kept on disk until deleted;
//! - `chats.metadata` (a conversation's or vector store's `metadata`) and
//!   `chats.is_vector_store` (a chat made by `POST /v1/vector_stores`, kept out of the UI's
//!   chat list);
//! - `documents.file_id`: the file a vector store's document was made from.

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000001_create_users_table::Users;
use crate::m20261121_000006_create_chats_table::Chats;
use crate::m20261121_000013_create_documents_table::Documents;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Responses::Table)
                    .if_not_exists()
                    .col(text(Responses::Id).primary_key())
                    .col(text(Responses::UserId))
                    .col(text(Responses::ChatId))
                    .col(text(Responses::RunId))
                    .col(text_null(Responses::PreviousResponseId))
                    .col(json(Responses::Request))
                    .col(json(Responses::InputItems))
                    .col(json_null(Responses::Body))
                    .col(timestamp_with_time_zone(Responses::CreatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_responses_user_id")
                            .from(Responses::Table, Responses::UserId)
                            .to(Users::Table, Users::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_responses_chat_id")
                            .from(Responses::Table, Responses::ChatId)
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
                    .name("idx_responses_run_id")
                    .table(Responses::Table)
                    .col(Responses::RunId)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(Files::Table)
                    .if_not_exists()
                    .col(text(Files::Id).primary_key())
                    .col(text(Files::UserId))
                    .col(text(Files::Filename))
                    .col(text(Files::Purpose))
                    .col(big_integer(Files::Bytes))
                    .col(text(Files::StoragePath))
                    .col(timestamp_with_time_zone(Files::CreatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_files_user_id")
                            .from(Files::Table, Files::UserId)
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
                    .name("idx_files_user_id")
                    .table(Files::Table)
                    .col(Files::UserId)
                    .to_owned(),
            )
            .await?;
        // SQLite adds one column per ALTER TABLE.
        manager
            .alter_table(
                Table::alter()
                    .table(Chats::Table)
                    .add_column(json_null(NewColumn::Metadata))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Chats::Table)
                    .add_column(boolean(NewColumn::IsVectorStore).default(false))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Documents::Table)
                    .add_column(text_null(NewColumn::FileId))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Documents::Table)
                    .drop_column(NewColumn::FileId)
                    .to_owned(),
            )
            .await?;
        for column in [NewColumn::IsVectorStore, NewColumn::Metadata] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Chats::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .drop_table(Table::drop().table(Files::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(Responses::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
pub enum Responses {
    Table,
    Id,
    UserId,
    ChatId,
    RunId,
    PreviousResponseId,
    Request,
    InputItems,
    Body,
    CreatedAt,
}

#[derive(DeriveIden)]
pub enum Files {
    Table,
    Id,
    UserId,
    Filename,
    Purpose,
    Bytes,
    StoragePath,
    CreatedAt,
}

#[derive(DeriveIden)]
enum NewColumn {
    Metadata,
    IsVectorStore,
    FileId,
}
