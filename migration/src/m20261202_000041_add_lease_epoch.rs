//! `leases.epoch`: raised each time a key changes owner, so a chat's writes can be fenced by
//! the epoch their process took the chat at (issue 45): a process that stalled past its lease
//! writes nothing once another took the chat. Rows from before start at 0; the next change of
//! owner makes them 1. Also an index on `lease_handovers.at`, by which old handovers are pruned.

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261129_000036_create_leases_tables::{LeaseHandovers, Leases};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(Leases::Table)
                    .add_column(big_integer(NewColumn::Epoch).default(0))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_lease_handovers_at")
                    .table(LeaseHandovers::Table)
                    .col(LeaseHandovers::At)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name("idx_lease_handovers_at")
                    .table(LeaseHandovers::Table)
                    .to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Leases::Table)
                    .drop_column(NewColumn::Epoch)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum NewColumn {
    Epoch,
}
