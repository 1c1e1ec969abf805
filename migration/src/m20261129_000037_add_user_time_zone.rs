//! `users.time_zone`: the IANA zone a person set on the account page (null: UTC), which a
//! schedule they create without a zone of its own takes. And the lookups a chat's page makes
//! by chat: its schedules (when one next fires there) and its workflow runs (their steps).

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000001_create_users_table::Users;
use crate::m20261128_000029_create_workflows_tables::WorkflowRuns;
use crate::m20261128_000030_create_schedules_table::Schedules;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Users::Table)
                    .add_column(text_null(NewColumn::TimeZone))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_schedules_chat_id")
                    .table(Schedules::Table)
                    .col(Schedules::ChatId)
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_workflow_runs_chat_id")
                    .table(WorkflowRuns::Table)
                    .col(WorkflowRuns::ChatId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name("idx_workflow_runs_chat_id")
                    .table(WorkflowRuns::Table)
                    .to_owned(),
            )
            .await?;
        manager
            .drop_index(
                Index::drop()
                    .name("idx_schedules_chat_id")
                    .table(Schedules::Table)
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Users::Table)
                    .drop_column(NewColumn::TimeZone)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum NewColumn {
    TimeZone,
}
