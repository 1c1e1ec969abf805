//! Creates the `login_sessions` table: browser sessions identified by a hashed cookie token.

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
                    .table(LoginSessions::Table)
                    .if_not_exists()
                    .col(text(LoginSessions::Id).primary_key())
                    .col(text(LoginSessions::UserId))
                    .col(string_uniq(LoginSessions::TokenHash))
                    .col(timestamp_with_time_zone(LoginSessions::CreatedAt))
                    .col(timestamp_with_time_zone(LoginSessions::ExpiresAt))
                    .col(timestamp_with_time_zone_null(LoginSessions::LastSeenAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_login_sessions_user_id")
                            .from(LoginSessions::Table, LoginSessions::UserId)
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
                    .name("idx_login_sessions_user_id")
                    .table(LoginSessions::Table)
                    .col(LoginSessions::UserId)
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_login_sessions_expires_at")
                    .table(LoginSessions::Table)
                    .col(LoginSessions::ExpiresAt)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // Dropping the table also drops its indexes and constraints.
        manager
            .drop_table(
                Table::drop()
                    .table(LoginSessions::Table)
                    .if_exists()
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
pub enum LoginSessions {
    Table,
    Id,
    UserId,
    TokenHash,
    CreatedAt,
    ExpiresAt,
    LastSeenAt,
}
