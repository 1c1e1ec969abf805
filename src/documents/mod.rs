//! The document workspace service (seed 002): document records, the processing queue, the
//! per-chat hybrid indexes, and (`uploads`) who may write or end an unfinished upload.
//! Processing (extract → chunk → embed → store → index) runs on tokio tasks bounded by a
//! semaphore, with CPU work on the blocking pool — never on a chat's mailbox. Chunks and their vectors are stored in the database, so an index directory that is
//! missing or corrupt is rebuilt from them. Documents are chat-level: the same in every branch.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use dashmap::DashMap;
use entities::{artifacts, document_chunks, documents};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, DbErr, EntityTrait, PaginatorTrait,
    QueryFilter, QueryOrder, Set, TransactionTrait,
};
use serde::Serialize;
use tokio::sync::{Mutex, Semaphore};

use crate::config::{Config, DocumentsConfig, MAX_CUT_OFF_ATTEMPTS};
use crate::retrieval::chunk::Chunker;
use crate::retrieval::embed::{self, SharedEmbedder};
use crate::retrieval::extract::{self, DocKind};
use crate::retrieval::index::{ChatIndex, IndexedChunk, SearchHit};
use crate::retrieval::text::Deadline;

pub mod uploads;

pub use uploads::{Termination, UploadClaim, upload_status};

pub const KIND_DOCUMENT: &str = "document";
/// Chunks embedded per embedder call.
const EMBED_BATCH: usize = 64;

pub mod status {
    pub const UPLOADING: &str = "uploading";
    pub const PROCESSING: &str = "processing";
    pub const PROCESSED: &str = "processed";
    pub const ERROR: &str = "error";
}

/// One chat's open index, and the documents waiting to go into it.
///
/// Documents are indexed in groups: each one queues its chunks in `waiting`, then takes the
/// index's lock; whoever gets it indexes everything waiting at that moment in one commit and
/// tells the others. A commit is the fixed cost of an edit (some 25-50 ms, most of it making
/// the files durable), so a burst of uploads costs a few commits rather than one each.
pub struct OpenIndex {
    index: Arc<Mutex<ChatIndex>>,
    waiting: std::sync::Mutex<Vec<Waiting>>,
    /// When the chat last asked for it; an index idle long enough is closed.
    last_used: std::sync::Mutex<std::time::Instant>,
}

struct Waiting {
    document_id: String,
    chunks: Vec<IndexedChunk>,
    done: tokio::sync::oneshot::Sender<Result<(), String>>,
}

impl OpenIndex {
    pub fn new(index: ChatIndex) -> Self {
        Self {
            index: Arc::new(Mutex::new(index)),
            waiting: std::sync::Mutex::default(),
            last_used: std::sync::Mutex::new(std::time::Instant::now()),
        }
    }

    fn touch(&self) {
        *self
            .last_used
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = std::time::Instant::now();
    }

    fn idle_for(&self) -> Duration {
        self.last_used
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .elapsed()
    }

    /// Replaces a document's chunks in the index (none: removes them), together with any
    /// other documents waiting; searchable when this returns.
    pub async fn replace_document(
        &self,
        document_id: String,
        chunks: Vec<IndexedChunk>,
    ) -> anyhow::Result<()> {
        let (done, outcome) = tokio::sync::oneshot::channel();
        self.lock_waiting().push(Waiting {
            document_id,
            chunks,
            done,
        });
        let mut guard = self.index.clone().lock_owned().await;
        let batch = std::mem::take(&mut *self.lock_waiting());
        // Empty when another document's turn took this one along.
        if !batch.is_empty() {
            let mut documents = Vec::with_capacity(batch.len());
            let mut waiters = Vec::with_capacity(batch.len());
            for waiting in batch {
                documents.push((waiting.document_id, waiting.chunks));
                waiters.push(waiting.done);
            }
            let ids: Vec<String> = documents.iter().map(|(id, _)| id.clone()).collect();
            let result =
                tokio::task::spawn_blocking(move || guard.replace_documents(documents)).await;
            let result = match result {
                Ok(Ok(rejected)) => Ok(rejected),
                Ok(Err(err)) => Err(format!("indexing failed: {err:#}")),
                Err(err) => Err(format!("indexing failed: {err}")),
            };
            for (id, waiter) in ids.into_iter().zip(waiters) {
                let outcome = match &result {
                    Ok(rejected) => match rejected.iter().find(|(r, _)| *r == id) {
                        Some((_, reason)) => Err(format!("indexing failed: {reason}")),
                        None => Ok(()),
                    },
                    Err(err) => Err(err.clone()),
                };
                // A waiter that went away no longer needs to know.
                let _ = waiter.send(outcome);
            }
        } else {
            drop(guard);
        }
        outcome
            .await
            .map_err(|_| anyhow::anyhow!("indexing was abandoned"))?
            .map_err(anyhow::Error::msg)
    }

    /// Lets the index's background merges finish (see `ChatIndex::settle`).
    pub async fn settle(&self) -> anyhow::Result<()> {
        let mut guard = self.index.clone().lock_owned().await;
        tokio::task::spawn_blocking(move || guard.settle()).await?
    }

    /// Takes the index back, once no one else holds this.
    pub fn into_inner(self: Arc<Self>) -> Option<ChatIndex> {
        let open = Arc::into_inner(self)?;
        Arc::into_inner(open.index).map(Mutex::into_inner)
    }

    /// The waiting list holds no invariant a panic could break.
    fn lock_waiting(&self) -> std::sync::MutexGuard<'_, Vec<Waiting>> {
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A document as the REST API lists it (seed 002).
#[derive(Debug, Clone, Serialize)]
pub struct DocumentView {
    pub artifact_id: String,
    pub filename: String,
    pub size: i64,
    #[serde(rename = "type")]
    pub content_type: String,
    pub uploaded_at: chrono::DateTime<Utc>,
    pub status: String,
    pub searchable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

impl From<documents::Model> for DocumentView {
    fn from(row: documents::Model) -> Self {
        Self {
            artifact_id: row.artifact_id,
            filename: row.filename,
            size: row.size_bytes,
            content_type: row.content_type,
            uploaded_at: row.uploaded_at,
            status: row.status,
            searchable: row.searchable,
            error: row.error,
            warning: row.warning,
        }
    }
}

/// What `Workspace::resume_unfinished` did at start-up.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Resumed {
    /// Documents queued for processing again.
    pub requeued: usize,
    /// Documents marked `error` because their processing kept being cut off.
    pub failed: usize,
}

#[derive(Clone)]
pub struct Workspace {
    inner: Arc<Inner>,
}

struct Inner {
    db: DatabaseConnection,
    limits: DocumentsConfig,
    data_dir: PathBuf,
    embedder: SharedEmbedder,
    /// Open indexes by chat; the cell makes concurrent first uses open the directory once.
    indexes: DashMap<String, Arc<tokio::sync::OnceCell<Arc<OpenIndex>>>>,
    permits: Semaphore,
    chunker: Chunker,
    /// Per chat, held from counting the chat's documents to inserting a new one, so two
    /// uploads arriving together cannot both take the last place (other chats do not wait).
    creating: DashMap<String, Arc<Mutex<()>>>,
    /// Uploads a PATCH is writing or a termination is ending.
    upload_claims: uploads::UploadClaims,
}

/// Why a document record was not created.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    #[error("this chat already holds {max} documents, the most allowed; delete one first")]
    TooMany { max: usize },
    #[error(transparent)]
    Db(#[from] DbErr),
}

impl Workspace {
    pub fn new(db: DatabaseConnection, config: &Config, embedder: SharedEmbedder) -> Self {
        let limits = config.documents.clone();
        Self {
            inner: Arc::new(Inner {
                db,
                permits: Semaphore::new(limits.processing_concurrency.max(1)),
                chunker: Chunker::new(limits.chunk_tokens, limits.chunk_overlap_tokens),
                limits,
                data_dir: config.data_dir.clone(),
                embedder,
                indexes: DashMap::new(),
                creating: DashMap::new(),
                upload_claims: uploads::UploadClaims::default(),
            }),
        }
    }

    pub fn limits(&self) -> &DocumentsConfig {
        &self.inner.limits
    }

    /// Where a chat's stored files live.
    pub fn files_dir(&self, chat_id: &str) -> PathBuf {
        self.inner.data_dir.join("documents").join(chat_id)
    }

    /// Where unfinished uploads live.
    pub fn uploads_dir(&self) -> PathBuf {
        self.inner.data_dir.join("uploads")
    }

    fn index_dir(&self, chat_id: &str) -> PathBuf {
        self.inner.data_dir.join("indexes").join(chat_id)
    }

    /// Documents of a chat that count against the per-chat limit (not deleted).
    pub async fn count(&self, chat_id: &str) -> Result<u64, DbErr> {
        documents::Entity::find()
            .filter(documents::Column::ChatId.eq(chat_id))
            .filter(documents::Column::DeletedAt.is_null())
            .count(&self.inner.db)
            .await
    }

    /// A chat's documents, most recent first.
    pub async fn list(&self, chat_id: &str) -> Result<Vec<documents::Model>, DbErr> {
        documents::Entity::find()
            .filter(documents::Column::ChatId.eq(chat_id))
            .filter(documents::Column::DeletedAt.is_null())
            .order_by_desc(documents::Column::UploadedAt)
            .order_by_desc(documents::Column::Id)
            .all(&self.inner.db)
            .await
    }

    /// document id → artifact id, for a chat's live documents.
    pub async fn artifact_ids(
        &self,
        chat_id: &str,
    ) -> Result<std::collections::HashMap<String, String>, DbErr> {
        Ok(self
            .list(chat_id)
            .await?
            .into_iter()
            .map(|d| (d.id, d.artifact_id))
            .collect())
    }

    /// Whether a chat has documents the model can search.
    pub async fn has_searchable(&self, chat_id: &str) -> Result<bool, DbErr> {
        let count = documents::Entity::find()
            .filter(documents::Column::ChatId.eq(chat_id))
            .filter(documents::Column::DeletedAt.is_null())
            .filter(documents::Column::Searchable.eq(true))
            .count(&self.inner.db)
            .await?;
        Ok(count > 0)
    }

    /// Creates a document and its artifact record, in `status`.
    pub async fn create(
        &self,
        chat_id: &str,
        filename: &str,
        size: u64,
        storage_path: &std::path::Path,
        status: &str,
    ) -> Result<documents::Model, CreateError> {
        let lock = self.creation_lock(chat_id);
        let created = {
            let _creating = lock.lock().await;
            self.create_counted(chat_id, filename, size, storage_path, status)
                .await
        };
        drop(lock);
        // The chat's lock is forgotten once no creation holds or waits for it.
        self.inner
            .creating
            .remove_if(chat_id, |_, lock| Arc::strong_count(lock) == 1);
        created
    }

    /// The lock that orders one chat's document creations.
    fn creation_lock(&self, chat_id: &str) -> Arc<Mutex<()>> {
        self.inner
            .creating
            .entry(chat_id.to_string())
            .or_default()
            .clone()
    }

    /// `create`, under the chat's creation lock.
    async fn create_counted(
        &self,
        chat_id: &str,
        filename: &str,
        size: u64,
        storage_path: &std::path::Path,
        status: &str,
    ) -> Result<documents::Model, CreateError> {
        let max = self.inner.limits.max_files_per_chat;
        if self.count(chat_id).await? >= max as u64 {
            return Err(CreateError::TooMany { max });
        }
        let now = Utc::now();
        let artifact_id = format!("doc_{}", uuid::Uuid::now_v7().simple());
        let txn = self.inner.db.begin().await?;
        artifacts::ActiveModel {
            id: Set(artifact_id.clone()),
            chat_id: Set(chat_id.to_string()),
            identifier: Set(artifact_id.clone()),
            title: Set(filename.to_string()),
            mime_type: Set("application/octet-stream".into()),
            language: Set(None),
            kind: Set(KIND_DOCUMENT.into()),
            latest_version: Set(1),
            message_id: Set(None),
            created_at: Set(now),
            updated_at: Set(now),
            deleted_at: Set(None),
        }
        .insert(&txn)
        .await?;
        let row = documents::ActiveModel {
            id: Set(uuid::Uuid::now_v7().to_string()),
            chat_id: Set(chat_id.to_string()),
            artifact_id: Set(artifact_id),
            filename: Set(filename.to_string()),
            size_bytes: Set(size as i64),
            content_type: Set("application/octet-stream".into()),
            storage_path: Set(storage_path.to_string_lossy().into_owned()),
            status: Set(status.into()),
            error: Set(None),
            warning: Set(None),
            searchable: Set(false),
            char_count: Set(0),
            uploaded_at: Set(now),
            processed_at: Set(None),
            deleted_at: Set(None),
            processing_attempts: Set(0),
        }
        .insert(&txn)
        .await?;
        txn.commit().await?;
        Ok(row)
    }

    /// Marks an uploaded document `processing` and queues it.
    pub async fn submit(&self, document_id: &str, size: u64) -> Result<(), DbErr> {
        use sea_orm::sea_query::Expr;
        documents::Entity::update_many()
            .col_expr(documents::Column::Status, Expr::value(status::PROCESSING))
            .col_expr(documents::Column::SizeBytes, Expr::value(size as i64))
            .filter(documents::Column::Id.eq(document_id))
            .exec(&self.inner.db)
            .await?;
        self.enqueue(document_id.to_string());
        Ok(())
    }

    /// Processes a document in the background, at most `processing_concurrency` at once.
    pub fn enqueue(&self, document_id: String) {
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

    /// Re-queues documents a previous process left in `processing`, except those whose
    /// processing was already cut off `MAX_CUT_OFF_ATTEMPTS` times: they are marked `error`,
    /// so a file that crashes the process does not crash it again at every start.
    pub async fn resume_unfinished(&self) -> Result<Resumed, DbErr> {
        let pending = documents::Entity::find()
            .filter(documents::Column::Status.eq(status::PROCESSING))
            .filter(documents::Column::DeletedAt.is_null())
            .all(&self.inner.db)
            .await?;
        let mut resumed = Resumed::default();
        for doc in pending {
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

    async fn fail(&self, document_id: &str, message: &str) {
        use sea_orm::sea_query::Expr;
        let result = documents::Entity::update_many()
            .col_expr(documents::Column::Status, Expr::value(status::ERROR))
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
    async fn process(
        &self,
        document_id: &str,
        permit: tokio::sync::SemaphorePermit<'_>,
    ) -> anyhow::Result<()> {
        let db = &self.inner.db;
        let Some(doc) = documents::Entity::find_by_id(document_id).one(db).await? else {
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
        let bytes = tokio::fs::read(&doc.storage_path)
            .await
            .map_err(|err| anyhow::anyhow!("the stored file could not be read: {err}"))?;
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
            anyhow::Ok((content_type, extraction, chunks))
        })
        .await??;
        let mut vectors = Vec::with_capacity(chunks.len());
        for batch in chunks.chunks(EMBED_BATCH) {
            let texts = batch.iter().map(|c| c.text.clone()).collect();
            vectors.extend(self.inner.embedder.embed(texts).await?);
        }
        let embedder_id = self.inner.embedder.id().to_string();
        let now = Utc::now();
        let rows: Vec<document_chunks::ActiveModel> = chunks
            .iter()
            .zip(&vectors)
            .map(|(chunk, vector)| document_chunks::ActiveModel {
                id: Set(uuid::Uuid::now_v7().to_string()),
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
            .map(|((row, chunk), vector)| IndexedChunk {
                chunk_id: row.id.clone().unwrap(),
                document_id: doc.id.clone(),
                filename: doc.filename.clone(),
                text: chunk.text,
                vector,
            })
            .collect();
        let searchable = extraction.text.is_some() && !indexed.is_empty();
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
    async fn store_processed(
        &self,
        doc: &documents::Model,
        rows: Vec<document_chunks::ActiveModel>,
        content_type: &str,
        searchable: bool,
        extraction: &extract::Extraction,
        warning: Option<String>,
    ) -> Result<(), DbErr> {
        let txn = self.inner.db.begin().await?;
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
        update.status = Set(status::PROCESSED.into());
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

    /// A chat's index, opened (and rebuilt from the database if it disagrees with it) on first
    /// use.
    pub async fn index(&self, chat_id: &str) -> anyhow::Result<Arc<OpenIndex>> {
        let cell = self
            .inner
            .indexes
            .entry(chat_id.to_string())
            .or_default()
            .clone();
        let index = cell.get_or_try_init(|| self.open_index(chat_id)).await?;
        index.touch();
        Ok(index.clone())
    }

    /// How many chats' indexes are open.
    pub fn open_indexes(&self) -> usize {
        self.inner.indexes.len()
    }

    /// Closes the indexes no one has asked for in `idle` and no one holds (a search, a
    /// document being indexed, a first use still opening it); returns how many. The next use
    /// opens the index again, so an idle chat costs no memory and no open files.
    pub async fn close_idle_indexes(&self, idle: Duration) -> usize {
        // Only the map holds the cell, and only the cell holds the index: checked under the
        // map's lock, so no `index` call can be between finding the cell and using it.
        let unused = |cell: &Arc<tokio::sync::OnceCell<Arc<OpenIndex>>>| {
            Arc::strong_count(cell) == 1
                && cell
                    .get()
                    .is_some_and(|open| Arc::strong_count(open) == 1 && open.idle_for() >= idle)
        };
        let candidates: Vec<String> = self
            .inner
            .indexes
            .iter()
            .filter(|entry| unused(entry.value()))
            .map(|entry| entry.key().clone())
            .collect();
        let mut closed = Vec::new();
        for chat_id in candidates {
            if let Some((_, cell)) = self
                .inner
                .indexes
                .remove_if(&chat_id, |_, cell| unused(cell))
            {
                closed.push(cell);
            }
        }
        let count = closed.len();
        // Closing an index closes its writer, which may wait on the disk: not on this task.
        if count > 0 {
            let _ = tokio::task::spawn_blocking(move || drop(closed)).await;
        }
        count
    }

    /// Every `every`, closes the indexes idle for `idle` (`close_idle_indexes`).
    pub fn start_index_sweeper(&self, every: Duration, idle: Duration) {
        let this = self.clone();
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            loop {
                ticks.tick().await;
                let closed = this.close_idle_indexes(idle).await;
                if closed > 0 {
                    tracing::debug!(closed, "closed idle document indexes");
                }
            }
        });
    }

    async fn open_index(&self, chat_id: &str) -> anyhow::Result<Arc<OpenIndex>> {
        let (chunks, stale) = self.stored_chunks(chat_id).await?;
        let dir = self.index_dir(chat_id);
        let index = tokio::task::spawn_blocking(move || {
            let mut index = ChatIndex::open(&dir)?;
            if !index.needs_rebuild(chunks.len()) {
                index.load_vectors(chunks);
            } else {
                tracing::warn!(dir = %dir.display(), indexed = index.indexed_len(), stored = chunks.len(),
                    "document index disagrees with the database; rebuilding it");
                index.rebuild(chunks)?;
            }
            anyhow::Ok(index)
        })
        .await??;
        for document_id in stale {
            tracing::info!(%document_id, "re-embedding a document made with another embedder");
            self.enqueue(document_id);
        }
        Ok(Arc::new(OpenIndex::new(index)))
    }

    /// A chat's stored chunks of live documents with vectors from the current embedder, and
    /// the documents whose vectors came from another one.
    async fn stored_chunks(
        &self,
        chat_id: &str,
    ) -> Result<(Vec<IndexedChunk>, Vec<String>), DbErr> {
        let docs = documents::Entity::find()
            .filter(documents::Column::ChatId.eq(chat_id))
            .filter(documents::Column::DeletedAt.is_null())
            .filter(documents::Column::Status.eq(status::PROCESSED))
            .all(&self.inner.db)
            .await?;
        let embedder_id = self.inner.embedder.id();
        let mut out = Vec::new();
        let mut stale = Vec::new();
        for doc in docs {
            let chunks = document_chunks::Entity::find()
                .filter(document_chunks::Column::DocumentId.eq(doc.id.clone()))
                .order_by_asc(document_chunks::Column::ChunkIndex)
                .all(&self.inner.db)
                .await?;
            for chunk in chunks {
                let vector = chunk
                    .embedding
                    .as_deref()
                    .filter(|_| chunk.embedder.as_deref() == Some(embedder_id))
                    .and_then(embed::from_blob);
                // A vector from another embedder is not comparable: its document is
                // re-processed instead.
                match vector {
                    Some(vector) => out.push(IndexedChunk {
                        chunk_id: chunk.id,
                        document_id: doc.id.clone(),
                        filename: doc.filename.clone(),
                        text: chunk.text,
                        vector,
                    }),
                    None if !stale.contains(&doc.id) => stale.push(doc.id.clone()),
                    None => {}
                }
            }
        }
        Ok((out, stale))
    }

    /// Searches a chat's documents: hybrid BM25 + vector ranking, relevance = cosine in [0, 1].
    pub async fn search(
        &self,
        chat_id: &str,
        query: &str,
        limit: usize,
    ) -> anyhow::Result<Vec<SearchHit>> {
        let vector = embed::embed_one(self.inner.embedder.as_ref(), query).await?;
        let index = self.index(chat_id).await?;
        let guard = index.index.clone().lock_owned().await;
        let query = query.to_string();
        tokio::task::spawn_blocking(move || guard.search(&query, &vector, limit)).await?
    }

    /// Soft-deletes a document; its chunks leave search at once.
    pub async fn delete(&self, chat_id: &str, artifact_id: &str) -> anyhow::Result<bool> {
        use sea_orm::sea_query::Expr;
        let db = &self.inner.db;
        let Some(doc) = documents::Entity::find()
            .filter(documents::Column::ChatId.eq(chat_id))
            .filter(documents::Column::ArtifactId.eq(artifact_id))
            .filter(documents::Column::DeletedAt.is_null())
            .one(db)
            .await?
        else {
            return Ok(false);
        };
        let now = Utc::now();
        let txn = db.begin().await?;
        documents::Entity::update_many()
            .col_expr(documents::Column::DeletedAt, Expr::value(now))
            .filter(documents::Column::Id.eq(doc.id.clone()))
            .exec(&txn)
            .await?;
        artifacts::Entity::update_many()
            .col_expr(artifacts::Column::DeletedAt, Expr::value(now))
            .filter(artifacts::Column::Id.eq(artifact_id))
            .exec(&txn)
            .await?;
        document_chunks::Entity::delete_many()
            .filter(document_chunks::Column::DocumentId.eq(doc.id.clone()))
            .exec(&txn)
            .await?;
        txn.commit().await?;
        self.index(chat_id)
            .await?
            .replace_document(doc.id.clone(), Vec::new())
            .await?;
        if let Err(err) = tokio::fs::remove_file(&doc.storage_path).await {
            tracing::debug!(%err, "stored file already gone");
        }
        Ok(true)
    }

    /// Drops a deleted chat's index and stored files (its rows went with the chat).
    pub async fn forget(&self, chat_id: &str) {
        self.inner.indexes.remove(chat_id);
        for dir in [self.index_dir(chat_id), self.files_dir(chat_id)] {
            if let Err(err) = tokio::fs::remove_dir_all(&dir).await
                && err.kind() != std::io::ErrorKind::NotFound
            {
                tracing::warn!(dir = %dir.display(), %err, "could not remove a deleted chat's files");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieval::embed::hash::HashEmbedder;

    fn chunks(document: &str, texts: &[&str]) -> Vec<IndexedChunk> {
        texts
            .iter()
            .enumerate()
            .map(|(i, text)| IndexedChunk {
                chunk_id: format!("{document}-{i}"),
                document_id: document.into(),
                filename: format!("{document}.txt"),
                text: text.to_string(),
                vector: HashEmbedder::default().embed_text(text),
            })
            .collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn documents_indexed_at_once_are_all_searchable_and_a_bad_one_fails_alone() {
        let dir = tempfile::tempdir().unwrap();
        let open = Arc::new(OpenIndex::new(ChatIndex::open(dir.path()).unwrap()));
        let mut tasks = tokio::task::JoinSet::new();
        for d in 0..12 {
            let open = open.clone();
            tasks.spawn(async move {
                let id = format!("d{d}");
                let mut chunks = chunks(&id, &[&format!("report number{d} on sharding")]);
                if d == 5 {
                    chunks[0].vector.truncate(3);
                }
                (d, open.replace_document(id, chunks).await)
            });
        }
        let mut failed = Vec::new();
        while let Some(done) = tasks.join_next().await {
            let (d, outcome) = done.unwrap();
            if let Err(err) = outcome {
                assert!(err.to_string().contains("3-dimensional"), "{err:#}");
                failed.push(d);
            }
        }
        assert_eq!(failed, [5]);
        let index = open.index.lock().await;
        assert_eq!((index.len(), index.indexed_len()), (11, 11));
        let query = "number7";
        let hits = index
            .search(query, &HashEmbedder::default().embed_text(query), 1)
            .unwrap();
        assert_eq!(hits[0].document_id, "d7");
        drop(index);

        // Replacing with nothing removes a document.
        open.replace_document("d7".into(), Vec::new())
            .await
            .unwrap();
        let index = open.index.lock().await;
        assert_eq!((index.len(), index.indexed_len()), (10, 10));
    }

    /// A workspace over a fresh migrated SQLite file, with `chats` chats of one user.
    async fn workspace(
        chats: usize,
        max_files: usize,
    ) -> (tempfile::TempDir, Workspace, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config {
            data_dir: dir.path().to_path_buf(),
            ..Config::default()
        };
        config.documents.max_files_per_chat = max_files;
        let db = crate::db::connect(&config).await.unwrap();
        crate::db::migrate(&db).await.unwrap();
        let user = crate::auth::Accounts::new(db.clone(), 1, 1)
            .create_user(crate::auth::NewUser {
                username: "reader",
                password: None,
                is_admin: false,
            })
            .await
            .unwrap();
        let store = crate::chat::Chats::new(db.clone());
        let mut ids = Vec::new();
        for _ in 0..chats {
            ids.push(store.create(&user.id, None, false).await.unwrap().id);
        }
        let workspace = Workspace::new(db, &config, Arc::new(HashEmbedder::default()));
        (dir, workspace, ids)
    }

    #[tokio::test]
    async fn a_chat_creating_a_document_does_not_hold_up_another_chat() {
        let (dir, workspace, chats) = workspace(2, 1).await;
        let path = dir.path().join("file.txt");
        // Chat 0 is in the middle of creating one (its lock held)...
        let busy = workspace.creation_lock(&chats[0]);
        let _held = busy.lock().await;
        // ... and chat 1 creates its own meanwhile.
        let created = tokio::time::timeout(
            Duration::from_secs(5),
            workspace.create(&chats[1], "b.txt", 1, &path, status::PROCESSING),
        )
        .await
        .expect("another chat's creation did not wait");
        assert!(created.is_ok());
        // Within one chat the limit still holds.
        let second = workspace
            .create(&chats[1], "c.txt", 1, &path, status::PROCESSING)
            .await;
        assert!(matches!(second, Err(CreateError::TooMany { max: 1 })));
        // Chat 1's lock was forgotten once unused; chat 0's is still held.
        assert_eq!(workspace.inner.creating.len(), 1);
    }

    #[tokio::test]
    async fn an_idle_index_is_closed_and_one_in_use_is_not() {
        let (_dir, workspace, chats) = workspace(2, 5).await;
        let in_use = workspace.index(&chats[0]).await.unwrap();
        workspace.index(&chats[1]).await.unwrap();
        assert_eq!(workspace.open_indexes(), 2);
        // Used recently: kept.
        assert_eq!(
            workspace.close_idle_indexes(Duration::from_secs(600)).await,
            0
        );
        // Idle (for a zero allowance), but chat 0's is held by a search: only chat 1's closes.
        assert_eq!(workspace.close_idle_indexes(Duration::ZERO).await, 1);
        assert_eq!(workspace.open_indexes(), 1);
        drop(in_use);
        assert_eq!(workspace.close_idle_indexes(Duration::ZERO).await, 1);
        assert_eq!(workspace.open_indexes(), 0);
        // The next use opens it again.
        let hits = workspace.search(&chats[1], "anything", 3).await.unwrap();
        assert!(hits.is_empty());
        assert_eq!(workspace.open_indexes(), 1);
    }
}
