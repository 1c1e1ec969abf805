//! Creates the `document_chunks` table: the text chunks (and embeddings) a document was
//! split into for retrieval.

use sea_orm_migration::{prelude::*, schema::*};

use crate::m20261121_000006_create_chats_table::Chats;
use crate::m20261121_000013_create_documents_table::Documents;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(DocumentChunks::Table)
                    .if_not_exists()
                    .col(text(DocumentChunks::Id).primary_key())
                    .col(text(DocumentChunks::DocumentId))
                    .col(text(DocumentChunks::ChatId))
                    .col(integer(DocumentChunks::ChunkIndex))
                    .col(text(DocumentChunks::Text))
                    .col(integer(DocumentChunks::TokenCount))
                    .col(blob_null(DocumentChunks::Embedding))
                    .col(string_null(DocumentChunks::Embedder))
                    .col(timestamp_with_time_zone(DocumentChunks::CreatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_document_chunks_document_id")
                            .from(DocumentChunks::Table, DocumentChunks::DocumentId)
                            .to(Documents::Table, Documents::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_document_chunks_chat_id")
                            .from(DocumentChunks::Table, DocumentChunks::ChatId)
                            .to(Chats::Table, Chats::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_document_chunks_chat_id")
                    .table(DocumentChunks::Table)
                    .col(DocumentChunks::ChatId)
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .if_not_exists()
                    .name("idx_document_chunks_document_id_chunk_index")
                    .table(DocumentChunks::Table)
                    .col(DocumentChunks::DocumentId)
                    .col(DocumentChunks::ChunkIndex)
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
                    .table(DocumentChunks::Table)
                    .if_exists()
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden)]
pub enum DocumentChunks {
    Table,
    Id,
    DocumentId,
    ChatId,
    ChunkIndex,
    Text,
    TokenCount,
    Embedding,
    Embedder,
    CreatedAt,
}
