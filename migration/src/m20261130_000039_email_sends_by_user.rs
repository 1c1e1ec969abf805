//! `email_sends` keeps its rows when their agent is deleted and records the user who sent
//! each (issue 49): send_email's hourly limits count per agent, per user and server-wide, and a
//! deleted agent must not free its user's slots. The table is rebuilt (SQLite cannot drop a
//! foreign key): `agent_id` without one, `user_id` whose rows go with their account.

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000001_create_users_table::Users;
use crate::m20261121_000005_create_agents_table::Agents;
use crate::m20261127_000028_create_email_sends_table::EmailSends;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The table being built, renamed `email_sends` once the rows are in.
#[derive(DeriveIden)]
enum Rebuilt {
    #[sea_orm(iden = "email_sends_rebuilt")]
    Table,
}

#[derive(DeriveIden)]
enum NewColumn {
    UserId,
}

/// The columns both shapes share, in order.
const SHARED: &str = "id, agent_id, correlation_id, recipient, subject, status, error, \
                      created_at, finished_at";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    /// One transaction on one connection, SQLite too: the table is dropped and its rebuilt
    /// copy renamed to it, which another connection of the pool might not yet see dropped.
    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }

    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let mut table = columns();
        table.col(text(NewColumn::UserId)).foreign_key(
            ForeignKey::create()
                .name("fk_email_sends_user_id")
                .from(Rebuilt::Table, NewColumn::UserId)
                .to(Users::Table, Users::Id)
                .on_delete(ForeignKeyAction::Cascade),
        );
        manager.create_table(table).await?;
        // Every row has its agent still (the old foreign key cascaded), so its user is known.
        manager
            .get_connection()
            .execute_unprepared(&format!(
                "INSERT INTO email_sends_rebuilt ({SHARED}, user_id) \
                 SELECT {}, agents.user_id FROM email_sends \
                 JOIN agents ON agents.id = email_sends.agent_id",
                qualified()
            ))
            .await?;
        replace(manager).await?;
        index(
            manager,
            "idx_email_sends_user_id_created_at",
            NewColumn::UserId,
        )
        .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_email_sends_created_at")
                    .table(EmailSends::Table)
                    .col(EmailSends::CreatedAt)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let mut table = columns();
        table.foreign_key(
            ForeignKey::create()
                .name("fk_email_sends_agent_id")
                .from(Rebuilt::Table, EmailSends::AgentId)
                .to(Agents::Table, Agents::Id)
                .on_delete(ForeignKeyAction::Cascade),
        );
        manager.create_table(table).await?;
        // The sends of deleted agents cannot be kept under the old foreign key.
        manager
            .get_connection()
            .execute_unprepared(&format!(
                "INSERT INTO email_sends_rebuilt ({SHARED}) \
                 SELECT {} FROM email_sends \
                 JOIN agents ON agents.id = email_sends.agent_id",
                qualified()
            ))
            .await?;
        replace(manager).await
    }
}

/// `email_sends_rebuilt` with the columns both shapes share.
fn columns() -> TableCreateStatement {
    Table::create()
        .table(Rebuilt::Table)
        .col(text(EmailSends::Id).primary_key())
        .col(text(EmailSends::AgentId))
        .col(text_null(EmailSends::CorrelationId))
        .col(text(EmailSends::Recipient))
        .col(text(EmailSends::Subject))
        .col(string(EmailSends::Status))
        .col(text_null(EmailSends::Error))
        .col(timestamp_with_time_zone(EmailSends::CreatedAt))
        .col(timestamp_with_time_zone_null(EmailSends::FinishedAt))
        .to_owned()
}

/// `SHARED`, each column of `email_sends`.
fn qualified() -> String {
    SHARED
        .split(", ")
        .map(|column| format!("email_sends.{}", column.trim()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Drops `email_sends` (and its indexes), renames the rebuilt table to it, and indexes it as
/// both shapes are.
async fn replace(manager: &SchemaManager<'_>) -> Result<(), DbErr> {
    manager
        .drop_table(Table::drop().table(EmailSends::Table).to_owned())
        .await?;
    manager
        .rename_table(
            Table::rename()
                .table(Rebuilt::Table, EmailSends::Table)
                .to_owned(),
        )
        .await?;
    // PostgreSQL names a primary key's index after its table and keeps the name on a rename.
    if manager.get_database_backend() == sea_orm_migration::sea_orm::DatabaseBackend::Postgres {
        manager
            .get_connection()
            .execute_unprepared("ALTER INDEX email_sends_rebuilt_pkey RENAME TO email_sends_pkey")
            .await?;
    }
    index(
        manager,
        "idx_email_sends_agent_id_created_at",
        EmailSends::AgentId,
    )
    .await?;
    manager
        .create_index(
            Index::create()
                .if_not_exists()
                .name("idx_email_sends_correlation_id")
                .table(EmailSends::Table)
                .col(EmailSends::CorrelationId)
                .unique()
                .to_owned(),
        )
        .await
}

/// An index on `column` and `created_at`: what an hourly limit counts by.
async fn index(
    manager: &SchemaManager<'_>,
    name: &str,
    column: impl IntoIden,
) -> Result<(), DbErr> {
    manager
        .create_index(
            Index::create()
                .if_not_exists()
                .name(name)
                .table(EmailSends::Table)
                .col(column)
                .col(EmailSends::CreatedAt)
                .to_owned(),
        )
        .await
}
