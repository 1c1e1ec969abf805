//! Creates `workflows` (a user's named recipe, with the number of its current version),
//! `workflow_versions` (every saved version's steps: a PATCH adds one, none is changed) and
//! `workflow_runs` (each run of a workflow, naming the version it ran and how it ended).

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
                    .table(Workflows::Table)
                    .if_not_exists()
                    .col(text(Workflows::Id).primary_key())
                    .col(text(Workflows::UserId))
                    .col(text(Workflows::Name))
                    .col(integer(Workflows::Version))
                    .col(timestamp_with_time_zone(Workflows::CreatedAt))
                    .col(timestamp_with_time_zone(Workflows::UpdatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_workflows_user_id")
                            .from(Workflows::Table, Workflows::UserId)
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
                    .name("idx_workflows_user_id")
                    .table(Workflows::Table)
                    .col(Workflows::UserId)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(WorkflowVersions::Table)
                    .if_not_exists()
                    .col(text(WorkflowVersions::WorkflowId))
                    .col(integer(WorkflowVersions::Version))
                    .col(text(WorkflowVersions::Name))
                    .col(text_null(WorkflowVersions::Description))
                    .col(text_null(WorkflowVersions::AgentId))
                    .col(json(WorkflowVersions::Steps))
                    .col(timestamp_with_time_zone(WorkflowVersions::CreatedAt))
                    .primary_key(
                        Index::create()
                            .col(WorkflowVersions::WorkflowId)
                            .col(WorkflowVersions::Version),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_workflow_versions_workflow_id")
                            .from(WorkflowVersions::Table, WorkflowVersions::WorkflowId)
                            .to(Workflows::Table, Workflows::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(WorkflowRuns::Table)
                    .if_not_exists()
                    .col(text(WorkflowRuns::RunId).primary_key())
                    .col(text(WorkflowRuns::WorkflowId))
                    .col(integer(WorkflowRuns::Version))
                    .col(text(WorkflowRuns::UserId))
                    .col(text_null(WorkflowRuns::ChatId))
                    .col(string(WorkflowRuns::Status))
                    .col(text_null(WorkflowRuns::FailedStep))
                    .col(text_null(WorkflowRuns::Error))
                    .col(json_null(WorkflowRuns::Steps))
                    .col(timestamp_with_time_zone(WorkflowRuns::CreatedAt))
                    .col(timestamp_with_time_zone_null(WorkflowRuns::FinishedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_workflow_runs_workflow_id")
                            .from(WorkflowRuns::Table, WorkflowRuns::WorkflowId)
                            .to(Workflows::Table, Workflows::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_workflow_runs_workflow_id_created_at")
                    .table(WorkflowRuns::Table)
                    .col(WorkflowRuns::WorkflowId)
                    .col(WorkflowRuns::CreatedAt)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(WorkflowRuns::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(WorkflowVersions::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(Workflows::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
pub enum Workflows {
    Table,
    Id,
    UserId,
    Name,
    Version,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum WorkflowVersions {
    Table,
    WorkflowId,
    Version,
    Name,
    Description,
    AgentId,
    Steps,
    CreatedAt,
}

#[derive(DeriveIden)]
pub enum WorkflowRuns {
    Table,
    RunId,
    WorkflowId,
    Version,
    UserId,
    ChatId,
    Status,
    FailedStep,
    Error,
    Steps,
    CreatedAt,
    FinishedAt,
}
