//! Creates `agent_knowledge_bases`: which knowledge bases (chats made as vector stores) an
//! agent searches with `search_knowledge`, in the order the agent names them. Both sides
//! cascade, so deleting a knowledge base or an agent leaves no dangling name behind.

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000005_create_agents_table::Agents;
use crate::m20261121_000006_create_chats_table::Chats;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(AgentKnowledgeBases::Table)
                    .if_not_exists()
                    .col(text(AgentKnowledgeBases::AgentId))
                    .col(text(AgentKnowledgeBases::ChatId))
                    .col(integer(AgentKnowledgeBases::Position))
                    .primary_key(
                        Index::create()
                            .col(AgentKnowledgeBases::AgentId)
                            .col(AgentKnowledgeBases::ChatId),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_agent_knowledge_bases_agent_id")
                            .from(AgentKnowledgeBases::Table, AgentKnowledgeBases::AgentId)
                            .to(Agents::Table, Agents::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_agent_knowledge_bases_chat_id")
                            .from(AgentKnowledgeBases::Table, AgentKnowledgeBases::ChatId)
                            .to(Chats::Table, Chats::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_agent_knowledge_bases_chat_id")
                    .table(AgentKnowledgeBases::Table)
                    .col(AgentKnowledgeBases::ChatId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(AgentKnowledgeBases::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
pub enum AgentKnowledgeBases {
    Table,
    AgentId,
    ChatId,
    Position,
}
