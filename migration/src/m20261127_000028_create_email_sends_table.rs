//! Creates the `email_sends` table: each email send_email sent or began to send, by agent (its
//! hourly limit is counted here, so it holds across restarts), with the confirmation it was
//! sent on (unique: a confirmed send goes out at most once).

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000005_create_agents_table::Agents;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(EmailSends::Table)
                    .if_not_exists()
                    .col(text(EmailSends::Id).primary_key())
                    .col(text(EmailSends::AgentId))
                    .col(text_null(EmailSends::CorrelationId))
                    .col(text(EmailSends::Recipient))
                    .col(text(EmailSends::Subject))
                    .col(string(EmailSends::Status))
                    .col(text_null(EmailSends::Error))
                    .col(timestamp_with_time_zone(EmailSends::CreatedAt))
                    .col(timestamp_with_time_zone_null(EmailSends::FinishedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_email_sends_agent_id")
                            .from(EmailSends::Table, EmailSends::AgentId)
                            .to(Agents::Table, Agents::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_email_sends_agent_id_created_at")
                    .table(EmailSends::Table)
                    .col(EmailSends::AgentId)
                    .col(EmailSends::CreatedAt)
                    .to_owned(),
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

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(EmailSends::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
pub enum EmailSends {
    Table,
    Id,
    AgentId,
    CorrelationId,
    Recipient,
    Subject,
    Status,
    Error,
    CreatedAt,
    FinishedAt,
}
