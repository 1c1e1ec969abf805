//! `messages.reasoning` and `messages.reasoning_ms`: an answer's reasoning (what the model
//! thought before answering, from `reasoning_content`, `reasoning` or a `<think>` block) and how
//! long it reasoned, kept for people to read and never sent back to the model.

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000007_create_messages_table::Messages;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // SQLite adds one column per ALTER TABLE.
        manager
            .alter_table(
                Table::alter()
                    .table(Messages::Table)
                    .add_column(text_null(NewColumn::Reasoning))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Messages::Table)
                    .add_column(big_integer_null(NewColumn::ReasoningMs))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [NewColumn::ReasoningMs, NewColumn::Reasoning] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Messages::Table)
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
    Reasoning,
    ReasoningMs,
}
