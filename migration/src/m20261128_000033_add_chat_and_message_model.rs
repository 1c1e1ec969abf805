//! `chats.model` (the model a chat's next turn asks for, chosen in the model picker; `NULL`:
//! the agent's, else the server's default) and `messages.model` (the model that wrote an
//! answer, shown under it).

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000006_create_chats_table::Chats;
use crate::m20261121_000007_create_messages_table::Messages;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Chats::Table)
                    .add_column(text_null(NewColumn::Model))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Messages::Table)
                    .add_column(text_null(NewColumn::Model))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Messages::Table)
                    .drop_column(NewColumn::Model)
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Chats::Table)
                    .drop_column(NewColumn::Model)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum NewColumn {
    Model,
}
