//! `agents.sql_database`: the declared database (`[[sql.databases]]` id) an agent's
//! `execute_sql` queries; null for the only one declared.

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000005_create_agents_table::Agents;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Agents::Table)
                    .add_column(text_null(NewColumn::SqlDatabase))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Agents::Table)
                    .drop_column(NewColumn::SqlDatabase)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum NewColumn {
    SqlDatabase,
}
