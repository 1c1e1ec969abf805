//! Creates the `chats` table: conversations owned by a user, optionally bound to an agent.

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000001_create_users_table::Users;
use crate::m20261121_000005_create_agents_table::Agents;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Chats::Table)
                    .if_not_exists()
                    .col(text(Chats::Id).primary_key())
                    .col(text(Chats::UserId))
                    .col(text_null(Chats::AgentId))
                    .col(string(Chats::Title))
                    // A message id; deliberately no foreign key (messages reference chats).
                    .col(string_null(Chats::ActiveLeafId))
                    .col(boolean(Chats::Ephemeral).default(false))
                    .col(string_null(Chats::Embedder))
                    .col(timestamp_with_time_zone(Chats::CreatedAt))
                    .col(timestamp_with_time_zone(Chats::UpdatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_chats_user_id")
                            .from(Chats::Table, Chats::UserId)
                            .to(Users::Table, Users::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_chats_agent_id")
                            .from(Chats::Table, Chats::AgentId)
                            .to(Agents::Table, Agents::Id)
                            .on_delete(ForeignKeyAction::SetNull),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_chats_user_id_updated_at")
                    .table(Chats::Table)
                    .col(Chats::UserId)
                    .col(Chats::UpdatedAt)
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_chats_agent_id")
                    .table(Chats::Table)
                    .col(Chats::AgentId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // Dropping the table also drops its indexes and constraints.
        manager
            .drop_table(Table::drop().table(Chats::Table).if_exists().to_owned())
            .await
    }
}

#[derive(DeriveIden)]
pub enum Chats {
    Table,
    Id,
    UserId,
    AgentId,
    Title,
    ActiveLeafId,
    Ephemeral,
    Embedder,
    CreatedAt,
    UpdatedAt,
}
