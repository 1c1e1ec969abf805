//! Creates the `memories` table: facts remembered for a chat, optionally with an embedding.

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000006_create_chats_table::Chats;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Memories::Table)
                    .if_not_exists()
                    .col(text(Memories::Id).primary_key())
                    .col(text(Memories::ChatId))
                    .col(text(Memories::Content))
                    .col(string(Memories::Category))
                    .col(blob_null(Memories::Embedding))
                    .col(string_null(Memories::Embedder))
                    .col(timestamp_with_time_zone(Memories::CreatedAt))
                    .col(timestamp_with_time_zone(Memories::UpdatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_memories_chat_id")
                            .from(Memories::Table, Memories::ChatId)
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
                    .name("idx_memories_chat_id")
                    .table(Memories::Table)
                    .col(Memories::ChatId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // Dropping the table also drops its indexes and constraints.
        manager
            .drop_table(Table::drop().table(Memories::Table).if_exists().to_owned())
            .await
    }
}

#[derive(DeriveIden)]
pub enum Memories {
    Table,
    Id,
    ChatId,
    Content,
    Category,
    Embedding,
    Embedder,
    CreatedAt,
    UpdatedAt,
}
