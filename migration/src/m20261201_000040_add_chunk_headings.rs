//! `document_chunks.headings`: the title and headings a chunk is under or holds (JSON,
//! `{"path": [...], "within": [...]}`), from its document's outline (issue 51). The index gives
//! them a boosted field of their own and results show the path. Null for chunks made before,
//! and for documents without headings.

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000014_create_document_chunks_table::DocumentChunks;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(DocumentChunks::Table)
                    .add_column(text_null(NewColumn::Headings))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(DocumentChunks::Table)
                    .drop_column(NewColumn::Headings)
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
enum NewColumn {
    Headings,
}
