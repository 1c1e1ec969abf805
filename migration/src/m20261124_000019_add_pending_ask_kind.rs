//! `pending_asks.kind`: what a paused run waits for. `ask_user`, a question for the person
//! (the default, and what every earlier row is); `client_tools`, the results of tools the
//! client of Chat Completions runs itself, sent with its next request in the same chat.

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000009_create_pending_asks_table::PendingAsks;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(PendingAsks::Table)
                    .add_column(string(NewColumn::Kind).default("ask_user"))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(PendingAsks::Table)
                    .drop_column(NewColumn::Kind)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum NewColumn {
    Kind,
}
