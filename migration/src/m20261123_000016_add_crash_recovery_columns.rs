//! What a crash must not lose or repeat. `documents.processing_attempts` and
//! `pending_asks.resume_attempts` count how often work resumed at start-up was begun, so work
//! cut off more than once is failed instead of crashing the server at every start;
//! `runs.draft` holds the answer text a running run has streamed so far, so a crash keeps it.

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000008_create_runs_table::Runs;
use crate::m20261121_000009_create_pending_asks_table::PendingAsks;
use crate::m20261121_000013_create_documents_table::Documents;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Documents::Table)
                    .add_column(integer(NewColumn::ProcessingAttempts).default(0))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(PendingAsks::Table)
                    .add_column(integer(NewColumn::ResumeAttempts).default(0))
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Runs::Table)
                    .add_column(text_null(NewColumn::Draft))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Runs::Table)
                    .drop_column(NewColumn::Draft)
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(PendingAsks::Table)
                    .drop_column(NewColumn::ResumeAttempts)
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Documents::Table)
                    .drop_column(NewColumn::ProcessingAttempts)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum NewColumn {
    ProcessingAttempts,
    ResumeAttempts,
    Draft,
}
