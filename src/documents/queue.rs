//! The processing queue: extract → chunk → embed → store → index, on tokio tasks bounded by a
//! semaphore with CPU work on the blocking pool, and resuming what a dead process left.

use chrono::Utc;
use entities::documents::DocumentStatus;
use entities::ids::{ChatId, ChunkId, DocumentId};
use entities::{artifacts, document_chunks, documents};
use sea_orm::{ActiveModelTrait, ColumnTrait, DbErr, EntityTrait, QueryFilter, Set};

use crate::config::MAX_CUT_OFF_ATTEMPTS;
use crate::retrieval::embed;
use crate::retrieval::extract::{self, DocKind};
use crate::retrieval::index::IndexedChunk;
use crate::retrieval::outline::ChunkHeadings;
use crate::retrieval::text::Deadline;

use super::{DocumentsError, Workspace};

/// Chunks embedded per embedder call.
const EMBED_BATCH: usize = 64;

/// What `Workspace::resume_unfinished` did at start-up.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Resumed {
    /// Documents queued for processing again.
    pub requeued: usize,
    /// Documents marked `error` because their processing kept being cut off.
    pub failed: usize,
}

impl Workspace {
    /// Marks an uploaded document `processing` and queues it.
    pub async fn submit(&self, document_id: &DocumentId, size: u64) -> Result<(), DbErr> {
        use sea_orm::sea_query::Expr;
        // What turns keep of it is stale once this returns (`chat::turn_cache`).
        let _changed = crate::chat::turn_cache::Changed;
        documents::Entity::update_many()
            .col_expr(
                documents::Column::Status,
                Expr::value(DocumentStatus::Processing),
            )
            .col_expr(documents::Column::SizeBytes, Expr::value(size as i64))
            .filter(documents::Column::Id.eq(document_id))
            .exec(&self.inner.db)
            .await?;
        self.enqueue(document_id.clone());
        Ok(())
    }

    /// Processes a document in the background, at most `processing_concurrency` at once.
    pub fn enqueue(&self, document_id: DocumentId) {
        let this = self.clone();
        tokio::spawn(async move {
            let Ok(permit) = this.inner.permits.acquire().await else {
                return;
            };
            if let Err(err) = this.process(&document_id, permit).await {
                tracing::error!(%document_id, %err, "document processing failed");
                this.fail(&document_id, &err.to_string()).await;
            }
        });
    }

    /// The chats with documents a process may have left unfinished: being processed, or
    /// uploaded and not yet committed (`recover_uncommitted`).
    pub async fn chats_with_unfinished(&self) -> Result<Vec<ChatId>, DbErr> {
        let pending = documents::Entity::find()
            .filter(
                documents::Column::Status
                    .is_in([DocumentStatus::Processing, DocumentStatus::Uploading]),
            )
            .filter(documents::Column::DeletedAt.is_null())
            .all(&self.inner.db)
            .await?;
        let chats: std::collections::BTreeSet<ChatId> =
            pending.into_iter().map(|doc| doc.chat_id).collect();
        Ok(chats.into_iter().collect())
    }

    /// Re-queues documents a previous process left in `processing`, except those whose
    /// processing was already cut off `MAX_CUT_OFF_ATTEMPTS` times: they are marked `error`,
    /// so a file that crashes the process does not crash it again at every start.
    /// `ours`: whether this process may process a chat's documents (with several processes,
    /// not those of a chat another live process holds: that one is processing them).
    pub async fn resume_unfinished(
        &self,
        ours: impl Fn(&ChatId) -> bool,
    ) -> Result<Resumed, DbErr> {
        let pending = documents::Entity::find()
            .filter(documents::Column::Status.eq(DocumentStatus::Processing))
            .filter(documents::Column::DeletedAt.is_null())
            .all(&self.inner.db)
            .await?;
        let mut resumed = Resumed::default();
        for doc in pending.into_iter().filter(|doc| ours(&doc.chat_id)) {
            if doc.processing_attempts >= MAX_CUT_OFF_ATTEMPTS {
                let reason = format!(
                    "processing this file was cut off {} times (a crash, restart or timeout); \
                     it is not retried. Delete it, or upload it again to retry.",
                    doc.processing_attempts
                );
                tracing::warn!(document_id = %doc.id, attempts = doc.processing_attempts,
                    "not resuming a document whose processing keeps being cut off");
                self.fail(&doc.id, &reason).await;
                resumed.failed += 1;
            } else {
                self.enqueue(doc.id);
                resumed.requeued += 1;
            }
        }
        Ok(resumed)
    }

    pub(super) async fn fail(&self, document_id: &DocumentId, message: &str) {
        use sea_orm::sea_query::Expr;
        // What turns keep of it is stale once this returns (`chat::turn_cache`).
        let _changed = crate::chat::turn_cache::Changed;
        let result = documents::Entity::update_many()
            .col_expr(
                documents::Column::Status,
                Expr::value(DocumentStatus::Error),
            )
            .col_expr(documents::Column::Error, Expr::value(message))
            .col_expr(documents::Column::ProcessedAt, Expr::value(Utc::now()))
            .filter(documents::Column::Id.eq(document_id))
            .exec(&self.inner.db)
            .await;
        if let Err(err) = result {
            tracing::error!(%document_id, %err, "could not record a processing failure");
        }
    }

    /// Extracts, chunks and embeds a document under a processing `permit`, then indexes and
    /// stores it. The permit goes back before indexing, which waits its turn per chat, so the
    /// next document is prepared meanwhile.
    pub(super) async fn process(
        &self,
        document_id: &DocumentId,
        permit: tokio::sync::SemaphorePermit<'_>,
    ) -> Result<(), DocumentsError> {
        // What turns keep of it is stale once this returns (`chat::turn_cache`).
        let _changed = crate::chat::turn_cache::Changed;
        let db = &self.inner.db;
        let Some(doc) = documents::Entity::find_by_id(document_id.clone())
            .one(db)
            .await?
        else {
            return Ok(());
        };
        if doc.deleted_at.is_some() {
            return Ok(());
        }
        // Recorded before any work, so an attempt that takes the process down still counts.
        use sea_orm::sea_query::Expr;
        documents::Entity::update_many()
            .col_expr(
                documents::Column::ProcessingAttempts,
                sea_orm::sea_query::ExprTrait::add(
                    Expr::col(documents::Column::ProcessingAttempts),
                    1,
                ),
            )
            .filter(documents::Column::Id.eq(document_id))
            .exec(db)
            .await?;
        let bytes = self.read_stored(&doc.storage_path).await.map_err(|err| {
            DocumentsError::Failed(format!("the stored file could not be read: {err}"))
        })?;
        let filename = doc.filename.clone();
        let max_chars = self.inner.limits.max_text_chars;
        let budget = std::time::Duration::from_secs(self.inner.limits.extraction_budget_secs);
        let this = self.clone();
        let (content_type, extraction, chunks) = tokio::task::spawn_blocking(move || {
            let head = &bytes[..bytes.len().min(extract::SNIFF_BYTES)];
            let (kind, content_type) = extract::sniff(head, &filename);
            let deadline = Deadline::after(budget);
            let extraction = extract::extract(&bytes, kind, max_chars, &deadline)?;
            let chunks = match (&extraction.text, kind) {
                (Some(text), kind) if kind != DocKind::Binary => this.inner.chunker.chunk(text),
                _ => Vec::new(),
            };
            Ok::<_, DocumentsError>((content_type, extraction, chunks))
        })
        .await??;
        let mut vectors = Vec::with_capacity(chunks.len());
        for batch in chunks.chunks(EMBED_BATCH) {
            let texts = batch.iter().map(|c| c.text.clone()).collect();
            vectors.extend(self.inner.embedder.embed(texts).await?);
        }
        let embedder_id = self.inner.embedder.id().to_string();
        let now = Utc::now();
        let headings: Vec<ChunkHeadings> = chunks
            .iter()
            .map(|chunk| {
                extraction
                    .outline
                    .for_chunk(chunk.start, chunk.start + chunk.text.len())
            })
            .collect();
        let rows: Vec<document_chunks::ActiveModel> = chunks
            .iter()
            .zip(&vectors)
            .zip(&headings)
            .map(|((chunk, vector), headings)| document_chunks::ActiveModel {
                id: Set(ChunkId::generate()),
                headings: Set(headings.to_json()),
                document_id: Set(doc.id.clone()),
                chat_id: Set(doc.chat_id.clone()),
                chunk_index: Set(chunk.index as i32),
                text: Set(chunk.text.clone()),
                token_count: Set(chunk.token_count as i32),
                embedding: Set(Some(embed::to_blob(vector))),
                embedder: Set(Some(embedder_id.clone())),
                created_at: Set(now),
            })
            .collect();
        let indexed: Vec<IndexedChunk> = rows
            .iter()
            .zip(chunks)
            .zip(vectors)
            .zip(headings)
            .map(|(((row, chunk), vector), headings)| IndexedChunk {
                chunk_id: row.id.clone().unwrap(),
                document_id: doc.id.clone(),
                filename: doc.filename.clone(),
                text: chunk.text,
                headings,
                vector,
            })
            .collect();
        let searchable = extraction.text.is_some() && !indexed.is_empty();
        if extraction.truncated {
            // The document's warning tells its owner; this line tells the operator.
            tracing::warn!(
                document_id = %doc.id,
                artifact_id = %doc.artifact_id,
                filename = %doc.filename,
                original_bytes = doc.size_bytes,
                original_chars = %extraction
                    .original_chars
                    .map_or_else(|| "unknown".to_string(), |n| n.to_string()),
                kept_chars = extraction.char_count,
                "document text truncated: only the kept characters are searchable"
            );
        }
        let warning = extraction.truncated.then(|| {
            format!(
                "the text was truncated to the first {max_chars} characters; the rest is not searchable"
            )
        });
        drop(permit);
        // Opened before the chunks are stored, so a first open does not index them twice.
        let index = self.index(&doc.chat_id).await?;
        // Indexed before the document is marked processed, so a processed document is
        // searchable. If storing then fails, its chunks leave the index again.
        self.remember_artifact(&doc.id, &doc.artifact_id);
        index.replace_document(doc.id.clone(), indexed).await?;
        if let Err(err) = self
            .store_processed(&doc, rows, content_type, searchable, &extraction, warning)
            .await
        {
            if let Err(unindex) = index.replace_document(doc.id.clone(), Vec::new()).await {
                tracing::warn!(document_id = %doc.id, error = %format!("{unindex:#}"),
                    "could not take an unstored document out of the index; it is rebuilt on next open");
            }
            return Err(err.into());
        }
        Ok(())
    }

    /// Stores a processed document's chunks and marks it processed, in one transaction.
    pub(super) async fn store_processed(
        &self,
        doc: &documents::Model,
        rows: Vec<document_chunks::ActiveModel>,
        content_type: &str,
        searchable: bool,
        extraction: &extract::Extraction,
        warning: Option<String>,
    ) -> Result<(), DbErr> {
        // What turns keep of it is stale once this returns (`chat::turn_cache`).
        let _changed = crate::chat::turn_cache::Changed;
        let txn = self.begin_for(&doc.chat_id).await?;
        document_chunks::Entity::delete_many()
            .filter(document_chunks::Column::DocumentId.eq(doc.id.clone()))
            .exec(&txn)
            .await?;
        for batch in rows.chunks(200) {
            document_chunks::Entity::insert_many(batch.to_vec())
                .exec(&txn)
                .await?;
        }
        let mut update: documents::ActiveModel = doc.clone().into();
        update.status = Set(DocumentStatus::Processed);
        update.content_type = Set(content_type.to_string());
        update.searchable = Set(searchable);
        update.char_count = Set(extraction.char_count as i64);
        update.warning = Set(warning);
        update.error = Set(None);
        update.processed_at = Set(Some(Utc::now()));
        update.update(&txn).await?;
        {
            use sea_orm::sea_query::Expr;
            artifacts::Entity::update_many()
                .col_expr(artifacts::Column::MimeType, Expr::value(content_type))
                .filter(artifacts::Column::Id.eq(doc.artifact_id.clone()))
                .exec(&txn)
                .await?;
        }
        txn.commit().await
    }
}
