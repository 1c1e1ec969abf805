//! Creates the `agents` table: per-user presets (system prompt, model, tools) for chats.

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
                    .table(Agents::Table)
                    .if_not_exists()
                    .col(text(Agents::Id).primary_key())
                    .col(text(Agents::UserId))
                    .col(string(Agents::Name))
                    .col(text_null(Agents::SystemPrompt))
                    .col(string_null(Agents::Model))
                    .col(boolean(Agents::ToolsEnabled).default(true))
                    .col(json_null(Agents::EnabledTools))
                    .col(timestamp_with_time_zone(Agents::CreatedAt))
                    .col(timestamp_with_time_zone(Agents::UpdatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_agents_user_id")
                            .from(Agents::Table, Agents::UserId)
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
                    .name("idx_agents_user_id")
                    .table(Agents::Table)
                    .col(Agents::UserId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // Dropping the table also drops its indexes and constraints.
        manager
            .drop_table(Table::drop().table(Agents::Table).if_exists().to_owned())
            .await
    }
}

#[derive(DeriveIden)]
pub enum Agents {
    Table,
    Id,
    UserId,
    Name,
    SystemPrompt,
    Model,
    ToolsEnabled,
    EnabledTools,
    CreatedAt,
    UpdatedAt,
}
