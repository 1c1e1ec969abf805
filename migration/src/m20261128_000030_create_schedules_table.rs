//! Creates `schedules`: a user's cron expression (five fields, in a time zone) that fires a
//! workflow or a prompt in a chat, with its next due time (what a firing claims with a
//! conditional UPDATE), its missed-firing policy and its run of failures.

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000001_create_users_table::Users;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Schedules::Table)
                    .if_not_exists()
                    .col(text(Schedules::Id).primary_key())
                    .col(text(Schedules::UserId))
                    .col(text(Schedules::ChatId))
                    .col(text(Schedules::Name))
                    .col(text(Schedules::Cron))
                    .col(text(Schedules::TimeZone))
                    .col(text_null(Schedules::WorkflowId))
                    .col(json_null(Schedules::Input))
                    .col(text_null(Schedules::Prompt))
                    .col(string(Schedules::MissedPolicy))
                    .col(string(Schedules::Status))
                    .col(text_null(Schedules::PausedReason))
                    .col(integer(Schedules::ConsecutiveFailures))
                    .col(integer(Schedules::SkippedFirings))
                    .col(timestamp_with_time_zone_null(Schedules::NextDueAt))
                    .col(timestamp_with_time_zone(Schedules::CreatedAt))
                    .col(timestamp_with_time_zone(Schedules::UpdatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_schedules_user_id")
                            .from(Schedules::Table, Schedules::UserId)
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
                    .name("idx_schedules_status_next_due_at")
                    .table(Schedules::Table)
                    .col(Schedules::Status)
                    .col(Schedules::NextDueAt)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(Schedules::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
pub enum Schedules {
    Table,
    Id,
    UserId,
    ChatId,
    Name,
    Cron,
    TimeZone,
    WorkflowId,
    Input,
    Prompt,
    MissedPolicy,
    Status,
    PausedReason,
    ConsecutiveFailures,
    SkippedFirings,
    NextDueAt,
    CreatedAt,
    UpdatedAt,
}
