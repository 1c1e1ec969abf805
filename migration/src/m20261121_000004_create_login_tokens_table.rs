//! Creates the `login_tokens` table: hashed one-time login links.

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
                    .table(LoginTokens::Table)
                    .if_not_exists()
                    .col(text(LoginTokens::Id).primary_key())
                    .col(text(LoginTokens::UserId))
                    .col(string_uniq(LoginTokens::TokenHash))
                    .col(timestamp_with_time_zone(LoginTokens::CreatedAt))
                    .col(timestamp_with_time_zone(LoginTokens::ExpiresAt))
                    .col(timestamp_with_time_zone_null(LoginTokens::UsedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_login_tokens_user_id")
                            .from(LoginTokens::Table, LoginTokens::UserId)
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
                    .name("idx_login_tokens_user_id")
                    .table(LoginTokens::Table)
                    .col(LoginTokens::UserId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // Dropping the table also drops its indexes and constraints.
        manager
            .drop_table(
                Table::drop()
                    .table(LoginTokens::Table)
                    .if_exists()
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
pub enum LoginTokens {
    Table,
    Id,
    UserId,
    TokenHash,
    CreatedAt,
    ExpiresAt,
    UsedAt,
}
