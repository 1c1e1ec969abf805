//! `agents.chat_tools_enabled`: whether an agent's chats keep the tools every chat has
//! (artifacts, memory, ask_user, file_search) when its `enabled_tools` names none of them.
//! True by default, as the specification has them always present.

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
                    .add_column(boolean(NewColumn::ChatToolsEnabled).default(true))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Agents::Table)
                    .drop_column(NewColumn::ChatToolsEnabled)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum NewColumn {
    ChatToolsEnabled,
}
