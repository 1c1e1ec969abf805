//! `runs.tool_calls`: a summary of each tool call a run made (name, arguments, outcome and a
//! preview of the result), so an answer's tool calls can be shown again after a reload. Tool
//! messages themselves are not part of a chat's stored history.

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
                    .add_column(json_null(NewColumn::ToolCalls))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Runs::Table)
                    .drop_column(NewColumn::ToolCalls)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum NewColumn {
    ToolCalls,
}
