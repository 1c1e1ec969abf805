//! Creates the `artifact_versions` table: the immutable content of each artifact version.

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000011_create_artifacts_table::Artifacts;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(ArtifactVersions::Table)
                    .if_not_exists()
                    .col(text(ArtifactVersions::Id).primary_key())
                    .col(text(ArtifactVersions::ArtifactId))
                    .col(integer(ArtifactVersions::Version))
                    .col(text(ArtifactVersions::Content))
                    .col(string_null(ArtifactVersions::MessageId))
                    .col(timestamp_with_time_zone(ArtifactVersions::CreatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_artifact_versions_artifact_id")
                            .from(ArtifactVersions::Table, ArtifactVersions::ArtifactId)
                            .to(Artifacts::Table, Artifacts::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_artifact_versions_artifact_id_version")
                    .table(ArtifactVersions::Table)
                    .col(ArtifactVersions::ArtifactId)
                    .col(ArtifactVersions::Version)
                    .unique()
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // Dropping the table also drops its indexes and constraints.
        manager
            .drop_table(
                Table::drop()
                    .table(ArtifactVersions::Table)
                    .if_exists()
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
pub enum ArtifactVersions {
    Table,
    Id,
    ArtifactId,
    Version,
    Content,
    MessageId,
    CreatedAt,
}
