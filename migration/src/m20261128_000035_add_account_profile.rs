//! The account page's columns: `users.display_name` (the name the UI shows; null: the
//! username) and `login_sessions.user_agent` (the browser a session was started from, so a
//! person can tell their sessions apart before signing one out).

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000001_create_users_table::Users;
use crate::m20261121_000003_create_login_sessions_table::LoginSessions;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One column per statement: SQLite alters a table one column at a time.
        manager
            .alter_table(
                Table::alter()
                    .table(Users::Table)
                    .add_column(text_null(NewColumn::DisplayName))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(LoginSessions::Table)
                    .add_column(text_null(NewColumn::UserAgent))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(LoginSessions::Table)
                    .drop_column(NewColumn::UserAgent)
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Users::Table)
                    .drop_column(NewColumn::DisplayName)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum NewColumn {
    DisplayName,
    UserAgent,
}
