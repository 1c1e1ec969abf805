//! Creates the `pending_asks` table: questions a paused run put to the user, with the
//! checkpoint needed to resume it once answered.

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000001_create_users_table::Users;
use crate::m20261121_000006_create_chats_table::Chats;
use crate::m20261121_000008_create_runs_table::Runs;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(PendingAsks::Table)
                    .if_not_exists()
                    .col(text(PendingAsks::Id).primary_key())
                    .col(string_uniq(PendingAsks::CorrelationId))
                    .col(text(PendingAsks::ChatId))
                    .col(text(PendingAsks::RunId))
                    .col(text(PendingAsks::UserId))
                    .col(string(PendingAsks::ToolCallId))
                    .col(json(PendingAsks::Question))
                    .col(json(PendingAsks::Checkpoint))
                    .col(string(PendingAsks::Status))
                    .col(json_null(PendingAsks::Answer))
                    .col(timestamp_with_time_zone(PendingAsks::CreatedAt))
                    .col(timestamp_with_time_zone(PendingAsks::ExpiresAt))
                    .col(timestamp_with_time_zone_null(PendingAsks::AnsweredAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_pending_asks_chat_id")
                            .from(PendingAsks::Table, PendingAsks::ChatId)
                            .to(Chats::Table, Chats::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_pending_asks_run_id")
                            .from(PendingAsks::Table, PendingAsks::RunId)
                            .to(Runs::Table, Runs::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_pending_asks_user_id")
                            .from(PendingAsks::Table, PendingAsks::UserId)
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
                    .name("idx_pending_asks_chat_id_status")
                    .table(PendingAsks::Table)
                    .col(PendingAsks::ChatId)
                    .col(PendingAsks::Status)
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_pending_asks_run_id")
                    .table(PendingAsks::Table)
                    .col(PendingAsks::RunId)
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_pending_asks_user_id")
                    .table(PendingAsks::Table)
                    .col(PendingAsks::UserId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // Dropping the table also drops its indexes and constraints.
        manager
            .drop_table(
                Table::drop()
                    .table(PendingAsks::Table)
                    .if_exists()
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
pub enum PendingAsks {
    Table,
    Id,
    CorrelationId,
    ChatId,
    RunId,
    UserId,
    ToolCallId,
    Question,
    Checkpoint,
    Status,
    Answer,
    CreatedAt,
    ExpiresAt,
    AnsweredAt,
}
