//! Creates `leases` and `lease_handovers`, for several processes on one PostgreSQL: a lease
//! (`chat:<id>` for a chat's actor, `job:<name>` for work done once per cluster) is held by one
//! process (`owner`, reached at `address`) until `expires_at`, renewed while it is used; a
//! lease taken from another process (or first taken) is recorded in `lease_handovers`, with
//! when the previous holder's lease expired, so who owned what can be checked afterwards.
//! SQLite runs one process and leaves both tables empty.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Leases::Table)
                    .if_not_exists()
                    .col(text(Leases::Key).primary_key())
                    .col(text(Leases::Owner))
                    .col(text(Leases::Address))
                    .col(timestamp_with_time_zone(Leases::AcquiredAt))
                    .col(timestamp_with_time_zone(Leases::ExpiresAt))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_leases_owner")
                    .table(Leases::Table)
                    .col(Leases::Owner)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(LeaseHandovers::Table)
                    .if_not_exists()
                    .col(
                        big_integer(LeaseHandovers::Id)
                            .auto_increment()
                            .primary_key(),
                    )
                    .col(text(LeaseHandovers::Key))
                    .col(text_null(LeaseHandovers::FromOwner))
                    .col(timestamp_with_time_zone_null(LeaseHandovers::FromExpiresAt))
                    .col(text(LeaseHandovers::ToOwner))
                    .col(timestamp_with_time_zone(LeaseHandovers::At))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_lease_handovers_key")
                    .table(LeaseHandovers::Table)
                    .col(LeaseHandovers::Key)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(LeaseHandovers::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(Leases::Table).to_owned())
            .await
    }
}

#[derive(DeriveIden)]
pub enum Leases {
    Table,
    Key,
    Owner,
    Address,
    AcquiredAt,
    ExpiresAt,
}

#[derive(DeriveIden)]
pub enum LeaseHandovers {
    Table,
    Id,
    Key,
    FromOwner,
    FromExpiresAt,
    ToOwner,
    At,
}
