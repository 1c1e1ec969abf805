//! An index on `chats (updated_at, id)`: the chat search's catch-up reads the chats changed
//! since its mark in that order, a page at a time. Without it each page scanned every chat and
//! sorted the recent ones (the only index by time leads with `user_id`), so a busy server's
//! catch-up read the whole table a few hundred times every two seconds.

use sea_orm_migration::prelude::*;

use crate::m20261121_000006_create_chats_table::Chats;

const NAME: &str = "idx_chats_updated_at_id";

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name(NAME)
                    .table(Chats::Table)
                    .col(Chats::UpdatedAt)
                    .col(Chats::Id)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(Index::drop().name(NAME).table(Chats::Table).to_owned())
            .await
    }
}
