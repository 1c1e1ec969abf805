//! Creates `schedule_firings`: each firing of a schedule, recorded when it is claimed (before
//! its run starts), unique per (schedule, due time) so that however many processes share the
//! database a due time fires once; then its run and outcome.

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261128_000030_create_schedules_table::Schedules;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(ScheduleFirings::Table)
                    .if_not_exists()
                    .col(text(ScheduleFirings::Id).primary_key())
                    .col(text(ScheduleFirings::ScheduleId))
                    .col(timestamp_with_time_zone(ScheduleFirings::DueAt))
                    .col(string(ScheduleFirings::Status))
                    .col(text_null(ScheduleFirings::RunId))
                    .col(text(ScheduleFirings::ClaimedBy))
                    .col(text_null(ScheduleFirings::Error))
                    .col(timestamp_with_time_zone(ScheduleFirings::ClaimedAt))
                    .col(timestamp_with_time_zone_null(ScheduleFirings::FinishedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_schedule_firings_schedule_id")
                            .from(ScheduleFirings::Table, ScheduleFirings::ScheduleId)
                            .to(Schedules::Table, Schedules::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_schedule_firings_schedule_id_due_at")
                    .table(ScheduleFirings::Table)
                    .col(ScheduleFirings::ScheduleId)
                    .col(ScheduleFirings::DueAt)
                    .unique()
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(ScheduleFirings::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
enum ScheduleFirings {
    Table,
    Id,
    ScheduleId,
    DueAt,
    Status,
    RunId,
    ClaimedBy,
    Error,
    ClaimedAt,
    FinishedAt,
}
