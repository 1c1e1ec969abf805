//! Committing an upload: the one writer that turns a document row in `uploading` (its bytes in
//! a `.part` file) into a stored document queued for processing. The multipart upload, the tus
//! completion and the Files API all call `commit_upload`.
//!
//! The steps are ordered so that every state a crash can leave is recognisable:
//! 1. the bytes are kept at the document's key, `documents/<chat>/<document id>` (moved into
//!    the data directory, or sent to the object store) — derivable from the row alone;
//! 2. one transaction records path, type, size and `processing` (and marks a tus upload
//!    complete), only while the row is still `uploading`;
//! 3. the document is queued.
//!
//! A retry finds the bytes already in place and goes on; a failed step 1 removes the bytes and
//! marks the row `error` (never counted against the per-chat limit, see `records::count`).
//! `recover_uncommitted` repairs what a dead process left between the steps (at start-up, and
//! in a chat taken over from it).

use std::path::{Path, PathBuf};

use chrono::Utc;
use entities::documents::{self, DocumentStatus};
use entities::ids::{ChatId, DocumentId, FileId, UploadId};
use entities::uploads::{self, UploadStatus};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, DbErr, EntityTrait, QueryFilter, TransactionTrait};

use super::Workspace;
use crate::retrieval::extract::SNIFF_BYTES;

/// An upload whose bytes are complete in `source`, ready to become a stored document.
#[derive(Debug, Clone)]
pub struct Upload {
    pub document_id: DocumentId,
    pub chat_id: ChatId,
    pub filename: String,
    /// Where the bytes are now (a `.part` file); moved, not copied.
    pub source: PathBuf,
    pub size: u64,
    /// The Files API file the document was made from.
    pub file_id: Option<FileId>,
    /// The tus upload that carried the bytes; marked complete with the document.
    pub upload_id: Option<UploadId>,
}

/// Why an upload could not be committed.
#[derive(Debug, thiserror::Error)]
pub enum CommitError {
    /// The bytes could not be moved to their final place; the row is `error` now.
    #[error("the uploaded file could not be stored: {0}")]
    Store(#[source] std::io::Error),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// What `recover_uncommitted` did at start-up.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Recovered {
    /// Uploads whose bytes were in place (or complete in their `.part`): now `processing`.
    pub completed: usize,
    /// Uploads whose bytes are gone: now `error`.
    pub failed: usize,
}

impl Workspace {
    /// Moves an upload's bytes to their final place, records them and queues processing.
    /// Safe to call again after any failure or crash; a committed document is left as is.
    pub async fn commit_upload(&self, upload: &Upload) -> Result<documents::Model, CommitError> {
        let placed = self.place(upload).await;
        let target = match placed {
            Ok(target) => target,
            Err(err) => {
                let message =
                    format!("the uploaded file could not be stored: {err}; upload it again");
                tracing::error!(document_id = %upload.document_id, %err, "could not store an upload");
                let _ = tokio::fs::remove_file(&upload.source).await;
                self.abandon(&upload.document_id, upload.upload_id.as_ref(), &message)
                    .await?;
                return Err(CommitError::Store(err));
            }
        };
        let recorded = self.record_committed(upload, &target).await?;
        if recorded {
            self.enqueue(upload.document_id.clone());
        }
        documents::Entity::find_by_id(upload.document_id.clone())
            .one(&self.inner.db)
            .await?
            .ok_or_else(|| DbErr::RecordNotFound(format!("document {}", upload.document_id)))
            .map_err(CommitError::Db)
    }

    /// Step 1: the bytes kept at the document's key (moved into the data directory, or sent
    /// to the object store in parts, a failure leaving nothing there); the reference to
    /// record. Already there (a retry, or a crash after the move) when `source` is gone and
    /// the key holds `size` bytes.
    async fn place(&self, upload: &Upload) -> std::io::Result<String> {
        let key = Self::document_key(&upload.chat_id, &upload.document_id);
        if !tokio::fs::try_exists(&upload.source).await.unwrap_or(false)
            && self.stored_size(&key).await == Some(upload.size)
        {
            return Ok(self.reference(&key));
        }
        self.keep_file(&key, &upload.source).await
    }

    /// Step 2: path, type, size and `processing` in one transaction, with the tus upload's
    /// completion. `false` when the row was no longer `uploading` (committed already, deleted).
    async fn record_committed(&self, upload: &Upload, target: &str) -> Result<bool, DbErr> {
        // What turns keep of it is stale once this returns (`chat::turn_cache`).
        let _changed = crate::chat::turn_cache::Changed;
        let head = match target.strip_prefix(super::stored::OBJECT_PREFIX) {
            Some(key) => self
                .inner
                .storage
                .get_head(key, SNIFF_BYTES)
                .await
                .unwrap_or_default(),
            None => read_head(Path::new(target)).await.unwrap_or_default(),
        };
        let (_, content_type) = crate::retrieval::extract::sniff(&head, &upload.filename);
        let path = target.to_string();
        let txn = self.begin_for(&upload.chat_id).await?;
        let mut update = documents::Entity::update_many()
            .col_expr(documents::Column::StoragePath, Expr::value(path.clone()))
            .col_expr(documents::Column::ContentType, Expr::value(content_type))
            .col_expr(
                documents::Column::SizeBytes,
                Expr::value(upload.size as i64),
            )
            .col_expr(
                documents::Column::Status,
                Expr::value(DocumentStatus::Processing),
            );
        if let Some(file_id) = &upload.file_id {
            update = update.col_expr(documents::Column::FileId, Expr::value(file_id.as_str()));
        }
        let updated = update
            .filter(documents::Column::Id.eq(upload.document_id.clone()))
            .filter(documents::Column::Status.eq(DocumentStatus::Uploading))
            .exec(&txn)
            .await?
            .rows_affected;
        if let Some(upload_id) = &upload.upload_id {
            uploads::Entity::update_many()
                .col_expr(uploads::Column::Status, Expr::value(UploadStatus::Complete))
                .col_expr(uploads::Column::StoragePath, Expr::value(path))
                .col_expr(uploads::Column::UpdatedAt, Expr::value(Utc::now()))
                .filter(uploads::Column::Id.eq(upload_id))
                .filter(uploads::Column::Status.eq(UploadStatus::Uploading))
                .exec(&txn)
                .await?;
        }
        txn.commit().await?;
        Ok(updated == 1)
    }

    /// Marks an `uploading` document `error` (its bytes never reached their place) and ends
    /// its tus upload, if any, in one transaction. Such a document (never processed) does not
    /// count against the per-chat limit.
    pub async fn abandon(
        &self,
        document_id: &DocumentId,
        upload_id: Option<&UploadId>,
        message: &str,
    ) -> Result<(), DbErr> {
        // What turns keep of it is stale once this returns (`chat::turn_cache`).
        let _changed = crate::chat::turn_cache::Changed;
        let txn = self.inner.db.begin().await?;
        documents::Entity::update_many()
            .col_expr(
                documents::Column::Status,
                Expr::value(DocumentStatus::Error),
            )
            .col_expr(documents::Column::Error, Expr::value(message))
            .col_expr(documents::Column::ProcessedAt, Expr::value(Utc::now()))
            .filter(documents::Column::Id.eq(document_id.clone()))
            .filter(documents::Column::Status.eq(DocumentStatus::Uploading))
            .exec(&txn)
            .await?;
        if let Some(upload_id) = upload_id {
            uploads::Entity::update_many()
                .col_expr(
                    uploads::Column::Status,
                    Expr::value(UploadStatus::Terminated),
                )
                .col_expr(uploads::Column::UpdatedAt, Expr::value(Utc::now()))
                .filter(uploads::Column::Id.eq(upload_id))
                .filter(uploads::Column::Status.eq(UploadStatus::Uploading))
                .exec(&txn)
                .await?;
        }
        txn.commit().await
    }

    /// Repairs the documents a dead process left `uploading` in the chats `ours` accepts: at
    /// start-up (no request of this process in flight), the chats no live process holds; and
    /// a chat taken over from a process that died. In each:
    /// - bytes at the final place → recorded as committed (`processing`; `resume_unfinished`
    ///   queues them);
    /// - a tus upload still resumable (its row `uploading`, not all bytes received) → left
    ///   alone, the client resumes it or the sweeper ends it;
    /// - a tus upload whose `.part` holds every byte → committed from it;
    /// - anything else (a multipart or Files API upload cut off before its bytes were placed,
    ///   or a tus upload whose file is gone) → `error`, its partial file removed.
    pub async fn recover_uncommitted(
        &self,
        ours: impl Fn(&ChatId) -> bool,
    ) -> Result<Recovered, DbErr> {
        let stuck = documents::Entity::find()
            .filter(documents::Column::Status.eq(DocumentStatus::Uploading))
            .filter(documents::Column::DeletedAt.is_null())
            .all(&self.inner.db)
            .await?;
        let mut recovered = Recovered::default();
        for doc in stuck.into_iter().filter(|doc| ours(&doc.chat_id)) {
            let tus = uploads::Entity::find()
                .filter(uploads::Column::DocumentId.eq(doc.id.clone()))
                .one(&self.inner.db)
                .await?;
            let key = Self::document_key(&doc.chat_id, &doc.id);
            let target = self.reference(&key);
            let source = PathBuf::from(&doc.storage_path);
            let placed = self.stored_size(&key).await;
            let upload = |size: u64, source: PathBuf| Upload {
                document_id: doc.id.clone(),
                chat_id: doc.chat_id.clone(),
                filename: doc.filename.clone(),
                source,
                size,
                file_id: doc.file_id.clone(),
                upload_id: tus.as_ref().map(|t| t.id.clone()),
            };
            if let Some(size) = placed {
                // The bytes were placed; the row was not updated.
                if doc.storage_path != target {
                    let _ = tokio::fs::remove_file(&source).await;
                }
                self.record_committed(&upload(size, source), &target)
                    .await?;
                recovered.completed += 1;
                continue;
            }
            if let Some(tus) = &tus {
                let length = tus.upload_length as u64;
                let received = tokio::fs::metadata(&tus.storage_path)
                    .await
                    .ok()
                    .filter(|m| m.is_file())
                    .map(|m| m.len());
                match (tus.status, received) {
                    (UploadStatus::Uploading, Some(n)) if n < length => continue,
                    (UploadStatus::Uploading, None) if length > 0 => continue,
                    (UploadStatus::Uploading, Some(n)) if n == length => {
                        let whole = upload(length, PathBuf::from(&tus.storage_path));
                        if let Ok(reference) = self.place(&whole).await {
                            self.record_committed(&whole, &reference).await?;
                            recovered.completed += 1;
                            continue;
                        }
                    }
                    _ => {}
                }
            }
            tracing::warn!(document_id = %doc.id, "an upload cut off before its bytes were stored is marked error");
            let _ = tokio::fs::remove_file(&source).await;
            self.abandon(
                &doc.id,
                tus.as_ref().map(|t| &t.id),
                "the upload was cut off (a crash or restart) before the file was stored; \
                 upload it again",
            )
            .await?;
            recovered.failed += 1;
        }
        Ok(recovered)
    }
}

pub(super) async fn read_head(path: &Path) -> std::io::Result<Vec<u8>> {
    use tokio::io::AsyncReadExt;
    let mut file = tokio::fs::File::open(path).await?;
    let mut head = vec![0; SNIFF_BYTES];
    let mut filled = 0;
    while filled < head.len() {
        let read = file.read(&mut head[filled..]).await?;
        if read == 0 {
            break;
        }
        filled += read;
    }
    head.truncate(filled);
    Ok(head)
}
