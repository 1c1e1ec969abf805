//! `chat_shares` (issue 50): read-only links to a chat. Only the SHA-256 of a link's token is
//! stored (a leaked table opens nothing); a link goes with its chat and its owner (cascades),
//! and is revoked by deleting its row.

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000001_create_users_table::Users;
use crate::m20261121_000006_create_chats_table::Chats;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(ChatShares::Table)
                    .if_not_exists()
                    .col(text(ChatShares::Id).primary_key())
                    .col(text(ChatShares::ChatId))
                    .col(text(ChatShares::UserId))
                    .col(text(ChatShares::TokenHash))
                    .col(timestamp_with_time_zone(ChatShares::CreatedAt))
                    .col(timestamp_with_time_zone_null(ChatShares::ExpiresAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_chat_shares_chat_id")
                            .from(ChatShares::Table, ChatShares::ChatId)
                            .to(Chats::Table, Chats::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_chat_shares_user_id")
                            .from(ChatShares::Table, ChatShares::UserId)
                            .to(Users::Table, Users::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        // A link is found by its token's hash, and nothing else finds it.
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_chat_shares_token_hash")
                    .table(ChatShares::Table)
                    .col(ChatShares::TokenHash)
                    .unique()
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_chat_shares_chat_id")
                    .table(ChatShares::Table)
                    .col(ChatShares::ChatId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(ChatShares::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
pub enum ChatShares {
    Table,
    Id,
    ChatId,
    UserId,
    TokenHash,
    CreatedAt,
    ExpiresAt,
}
