//! Creates the `api_keys` table: hashed bearer keys for the OpenAI-compatible API.

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
                    .table(ApiKeys::Table)
                    .if_not_exists()
                    .col(text(ApiKeys::Id).primary_key())
                    .col(text(ApiKeys::UserId))
                    .col(string(ApiKeys::Name))
                    .col(string_uniq(ApiKeys::KeyHash))
                    .col(string(ApiKeys::KeyPrefix))
                    .col(timestamp_with_time_zone(ApiKeys::CreatedAt))
                    .col(timestamp_with_time_zone_null(ApiKeys::LastUsedAt))
                    .col(timestamp_with_time_zone_null(ApiKeys::RevokedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_api_keys_user_id")
                            .from(ApiKeys::Table, ApiKeys::UserId)
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
                    .name("idx_api_keys_user_id")
                    .table(ApiKeys::Table)
                    .col(ApiKeys::UserId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // Dropping the table also drops its indexes and constraints.
        manager
            .drop_table(Table::drop().table(ApiKeys::Table).if_exists().to_owned())
            .await
    }
}

#[derive(DeriveIden)]
pub enum ApiKeys {
    Table,
    Id,
    UserId,
    Name,
    KeyHash,
    KeyPrefix,
    CreatedAt,
    LastUsedAt,
    RevokedAt,
}
