//! Creates the `runs` table: one agent loop execution (model calls + tools) within a chat.

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
                    .table(Runs::Table)
                    .if_not_exists()
                    .col(text(Runs::Id).primary_key())
                    .col(text(Runs::ChatId))
                    .col(text(Runs::UserId))
                    .col(string(Runs::Status))
                    .col(string_null(Runs::StopReason))
                    .col(string_null(Runs::UserMessageId))
                    .col(string_null(Runs::AssistantMessageId))
                    .col(integer(Runs::Iterations).default(0))
                    .col(big_integer(Runs::InputTokens).default(0))
                    .col(big_integer(Runs::OutputTokens).default(0))
                    .col(text_null(Runs::Error))
                    .col(json_null(Runs::Options))
                    .col(timestamp_with_time_zone(Runs::CreatedAt))
                    .col(timestamp_with_time_zone_null(Runs::FinishedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_runs_chat_id")
                            .from(Runs::Table, Runs::ChatId)
                            .to(Chats::Table, Chats::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_runs_user_id")
                            .from(Runs::Table, Runs::UserId)
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
                    .name("idx_runs_chat_id_created_at")
                    .table(Runs::Table)
                    .col(Runs::ChatId)
                    .col(Runs::CreatedAt)
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_runs_status")
                    .table(Runs::Table)
                    .col(Runs::Status)
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_runs_user_id")
                    .table(Runs::Table)
                    .col(Runs::UserId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // Dropping the table also drops its indexes and constraints.
        manager
            .drop_table(Table::drop().table(Runs::Table).if_exists().to_owned())
            .await
    }
}

#[derive(DeriveIden)]
pub enum Runs {
    Table,
    Id,
    ChatId,
    UserId,
    Status,
    StopReason,
    UserMessageId,
    AssistantMessageId,
    Iterations,
    InputTokens,
    OutputTokens,
    Error,
    Options,
    CreatedAt,
    FinishedAt,
}
