//! `chats.context_strategy` and `chats.history_summary`: what a chat does with history that
//! outgrows the model's context window (leave the oldest turns out, or summarise them), and
//! the rolling summary of its oldest turns, kept so that each turn does not summarise again.

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000006_create_chats_table::Chats;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // SQLite adds one column per ALTER TABLE.
        manager
            .alter_table(
                Table::alter()
                    .table(Chats::Table)
                    .add_column(string_null(NewColumn::ContextStrategy))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Chats::Table)
                    .add_column(json_null(NewColumn::HistorySummary))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [NewColumn::HistorySummary, NewColumn::ContextStrategy] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Chats::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden)]
enum NewColumn {
    ContextStrategy,
    HistorySummary,
}
