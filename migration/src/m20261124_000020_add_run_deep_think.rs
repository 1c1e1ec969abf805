//! `runs.deep_think`: a Deep Think run's checkpoint (its plan, each finished sub-task's findings,
//! what was spent), so a run cut off by a crash or restart continues from the next sub-task.

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000008_create_runs_table::Runs;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Runs::Table)
                    .add_column(json_null(NewColumn::DeepThink))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Runs::Table)
                    .drop_column(NewColumn::DeepThink)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum NewColumn {
    DeepThink,
}
