//! Each chat's open index: opened (and rebuilt from the database if it disagrees) on first
//! use, written in group commits, and closed when the chat goes idle.
//!
//! `OpenIndex` serialises indexing per chat: every document waiting for the chat's lock is
//! indexed in one commit, and only then marked `processed`. An index nothing holds is closed
//! once its chat has been idle `agent.chat_idle_secs` (`close_idle_indexes`, swept every
//! minute).

use entities::documents::DocumentStatus;
use entities::ids::{ChatId, DocumentId};
use std::sync::Arc;
use std::time::Duration;

use entities::{document_chunks, documents};
use sea_orm::{ColumnTrait, DbErr, EntityTrait, QueryFilter, QueryOrder};
use tokio::sync::Mutex;

use crate::retrieval::embed;
use crate::retrieval::index::{ChatIndex, IndexedChunk};
use crate::retrieval::outline::ChunkHeadings;

use super::{DocumentsError, Workspace};

/// One chat's open index, and the documents waiting to go into it.
///
/// Documents are indexed in groups: each one queues its chunks in `waiting`, then takes the
/// index's lock; whoever gets it indexes everything waiting at that moment in one commit and
/// tells the others. A commit is the fixed cost of an edit (some 25-50 ms, most of it making
/// the files durable), so a burst of uploads costs a few commits rather than one each.
pub struct OpenIndex {
    pub(super) index: Arc<Mutex<ChatIndex>>,
    waiting: std::sync::Mutex<Vec<Waiting>>,
    /// When the chat last asked for it; an index idle long enough is closed.
    last_used: std::sync::Mutex<std::time::Instant>,
}

struct Waiting {
    document_id: DocumentId,
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
        document_id: DocumentId,
        chunks: Vec<IndexedChunk>,
    ) -> Result<(), DocumentsError> {
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
            let ids: Vec<DocumentId> = documents.iter().map(|(id, _)| id.clone()).collect();
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
            .map_err(|_| DocumentsError::Failed("indexing was abandoned".into()))?
            .map_err(DocumentsError::Failed)
    }

    /// Lets the index's background merges finish (see `ChatIndex::settle`).
    pub async fn settle(&self) -> Result<(), DocumentsError> {
        let mut guard = self.index.clone().lock_owned().await;
        Ok(tokio::task::spawn_blocking(move || guard.settle()).await??)
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

impl Workspace {
    /// A chat's index, opened (and rebuilt from the database if it disagrees with it) on first
    /// use.
    pub async fn index(&self, chat_id: &ChatId) -> Result<Arc<OpenIndex>, DocumentsError> {
        let cell = self
            .inner
            .indexes
            .entry(chat_id.clone())
            .or_default()
            .clone();
        let index = cell.get_or_try_init(|| self.open_index(chat_id)).await?;
        index.touch();
        Ok(index.clone())
    }

    /// Rebuilds a chat's index from the chunks and vectors in the database: this process has
    /// just taken the chat (with several processes, an index on this process's disk may be
    /// older than what another owner stored meanwhile). An open index is rebuilt in place
    /// under its lock; otherwise the next opening rebuilds it. Best effort: a failure is
    /// logged, and the next opening compares the index with the database as always.
    pub fn refresh_index(&self, chat_id: &ChatId) {
        let open = self
            .inner
            .indexes
            .get(chat_id)
            .and_then(|cell| cell.get().cloned());
        let Some(open) = open else {
            self.inner.rebuild_next.insert(chat_id.clone());
            return;
        };
        let this = self.clone();
        let chat_id = chat_id.clone();
        tokio::spawn(async move { this.rebuild_open(&chat_id, open).await });
    }

    async fn rebuild_open(&self, chat_id: &ChatId, open: Arc<OpenIndex>) {
        let started = std::time::Instant::now();
        let rebuilt = async {
            let (chunks, _) = self.stored_chunks(chat_id).await?;
            let count = chunks.len();
            let mut guard = open.index.clone().lock_owned().await;
            tokio::task::spawn_blocking(move || guard.rebuild(chunks)).await??;
            Ok::<_, DocumentsError>(count)
        };
        match rebuilt.await {
            Ok(chunks) => tracing::info!(%chat_id, chunks,
                elapsed_ms = started.elapsed().as_millis() as u64,
                "rebuilt a taken chat's document index from the database"),
            Err(err) => tracing::warn!(%chat_id, error = %err,
                "could not rebuild a taken chat's document index"),
        }
    }

    /// With several processes, a chat this process does not own may still be searched here
    /// (a knowledge base): its index here is a local copy made from the database, brought up
    /// to date when the database holds another number of chunks than it does.
    pub(super) async fn index_of_other(
        &self,
        chat_id: &ChatId,
    ) -> Result<Arc<OpenIndex>, DocumentsError> {
        let index = self.index(chat_id).await?;
        let owned_here = self.inner.fencing.get().is_none_or(|fencing| {
            fencing
                .cluster
                .holds(&crate::cluster::chat_key(chat_id.as_str()))
        });
        if owned_here {
            return Ok(index);
        }
        let stored = self.stored_chunk_count(chat_id).await?;
        let indexed = index.index.lock().await.indexed_len();
        if stored != indexed {
            self.rebuild_open(chat_id, index.clone()).await;
        }
        Ok(index)
    }

    /// How many chunks of a chat's processed documents the database holds.
    async fn stored_chunk_count(&self, chat_id: &ChatId) -> Result<usize, DbErr> {
        use sea_orm::{PaginatorTrait, QuerySelect};
        let docs: Vec<DocumentId> = documents::Entity::find()
            .select_only()
            .column(documents::Column::Id)
            .filter(documents::Column::ChatId.eq(chat_id))
            .filter(documents::Column::DeletedAt.is_null())
            .filter(documents::Column::Status.eq(DocumentStatus::Processed))
            .into_tuple()
            .all(&self.inner.db)
            .await?;
        if docs.is_empty() {
            return Ok(0);
        }
        let count = document_chunks::Entity::find()
            .filter(document_chunks::Column::DocumentId.is_in(docs))
            .count(&self.inner.db)
            .await?;
        Ok(usize::try_from(count).unwrap_or(usize::MAX))
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
        let candidates: Vec<ChatId> = self
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

    pub(super) async fn open_index(
        &self,
        chat_id: &ChatId,
    ) -> Result<Arc<OpenIndex>, DocumentsError> {
        let (chunks, stale) = self.stored_chunks(chat_id).await?;
        let dir = self.index_dir(chat_id);
        let stemming = crate::retrieval::Stemming::from(self.inner.limits.stemming);
        // Taken from another process: whatever is on this disk is rebuilt from the database.
        let taken = self.inner.rebuild_next.remove(chat_id).is_some();
        let started = std::time::Instant::now();
        let index = tokio::task::spawn_blocking(move || {
            let mut index = ChatIndex::open_with(&dir, stemming)?;
            if taken && !index.is_outdated() {
                tracing::info!(dir = %dir.display(), chunks = chunks.len(),
                    "rebuilding a taken chat's document index from the database");
                index.rebuild(chunks)?;
            } else if index.is_outdated() && index.needs_rebuild(chunks.len()) {
                // It has to be rebuilt now anyway: in today's layout.
                tracing::warn!(dir = %dir.display(), "document index outdated and incomplete; rebuilding it");
                drop(index);
                index = build_fresh(&dir, stemming, chunks)?;
            } else if !index.needs_rebuild(chunks.len()) {
                index.load_vectors(chunks);
            } else {
                tracing::warn!(dir = %dir.display(), indexed = index.indexed_len(), stored = chunks.len(),
                    "document index disagrees with the database; rebuilding it");
                index.rebuild(chunks)?;
            }
            Ok::<_, DocumentsError>(index)
        })
        .await??;
        if taken {
            tracing::info!(%chat_id, elapsed_ms = started.elapsed().as_millis() as u64,
                "opened a taken chat's document index");
        }
        let outdated = index.is_outdated();
        for document_id in stale {
            tracing::info!(%document_id, "re-embedding a document made with another embedder");
            self.enqueue(document_id);
        }
        let open = Arc::new(OpenIndex::new(index));
        if outdated {
            let this = self.clone();
            let (chat_id, open) = (chat_id.clone(), open.clone());
            tokio::spawn(async move {
                if let Err(err) = this.upgrade(&chat_id, &open).await {
                    tracing::warn!(%chat_id, error = %err,
                        "could not rebuild an outdated document index; it stays in use as it is");
                }
            });
        }
        Ok(open)
    }

    /// Rebuilds an index made before exact words, stems and headings had fields of their own
    /// (after an upgrade) in today's layout, while the old one goes on answering searches and
    /// taking documents: the new one is built from the database beside it, then swapped in
    /// under the index's lock, with any document indexed meanwhile brought in.
    async fn upgrade(&self, chat_id: &ChatId, open: &OpenIndex) -> Result<(), DocumentsError> {
        let started = std::time::Instant::now();
        let dir = self.index_dir(chat_id);
        let next = sibling(&dir, "upgrade");
        let stemming = crate::retrieval::Stemming::from(self.inner.limits.stemming);
        let (chunks, _) = self.stored_chunks(chat_id).await?;
        let built: std::collections::HashSet<String> =
            chunks.iter().map(|c| c.chunk_id.to_string()).collect();
        let count = chunks.len();
        let staging = next.clone();
        tokio::task::spawn_blocking(move || {
            let mut fresh = build_fresh(&staging, stemming, chunks)?;
            fresh.settle()?;
            Ok::<_, DocumentsError>(())
        })
        .await??;
        let mut guard = open.index.clone().lock_owned().await;
        let (now, _) = self.stored_chunks(chat_id).await?;
        if !self.inner.indexes.contains_key(chat_id) {
            // The chat was deleted (or its index closed) meanwhile: nothing to swap into.
            let _ = tokio::fs::remove_dir_all(&next).await;
            return Ok(());
        }
        let changed =
            now.len() != built.len() || now.iter().any(|c| !built.contains(c.chunk_id.as_str()));
        tokio::task::spawn_blocking(move || {
            guard.settle()?;
            let old = sibling(&dir, "old");
            if old.exists() {
                std::fs::remove_dir_all(&old)?;
            }
            std::fs::rename(&dir, &old)?;
            if let Err(err) = std::fs::rename(&next, &dir) {
                // Put the old one back: it is still the index in use.
                std::fs::rename(&old, &dir)?;
                return Err(err.into());
            }
            let mut index = ChatIndex::open_with(&dir, stemming)?;
            if changed || index.needs_rebuild(now.len()) {
                index.rebuild(now)?;
            } else {
                index.load_vectors(now);
            }
            *guard = index;
            std::fs::remove_dir_all(&old)?;
            Ok::<_, DocumentsError>(())
        })
        .await??;
        tracing::info!(%chat_id, chunks = count, elapsed_ms = started.elapsed().as_millis() as u64,
            "rebuilt an outdated document index in today's layout");
        Ok(())
    }

    /// A chat's stored chunks of live documents with vectors from the current embedder, and
    /// the documents whose vectors came from another one.
    pub(super) async fn stored_chunks(
        &self,
        chat_id: &ChatId,
    ) -> Result<(Vec<IndexedChunk>, Vec<DocumentId>), DbErr> {
        let docs = documents::Entity::find()
            .filter(documents::Column::ChatId.eq(chat_id))
            .filter(documents::Column::DeletedAt.is_null())
            .filter(documents::Column::Status.eq(DocumentStatus::Processed))
            .all(&self.inner.db)
            .await?;
        let embedder_id = self.inner.embedder.id();
        let mut out = Vec::new();
        let mut stale = Vec::new();
        for doc in docs {
            // Searches name each hit's artifact: remembered now, it costs them no query.
            self.remember_artifact(&doc.id, &doc.artifact_id);
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
                        headings: ChunkHeadings::from_json(chunk.headings.as_deref()),
                        vector,
                    }),
                    None if !stale.contains(&doc.id) => stale.push(doc.id.clone()),
                    None => {}
                }
            }
        }
        Ok((out, stale))
    }
}

/// A directory beside `dir`, named after it with a suffix.
fn sibling(dir: &std::path::Path, suffix: &str) -> std::path::PathBuf {
    let mut name = dir.as_os_str().to_owned();
    name.push(".");
    name.push(suffix);
    std::path::PathBuf::from(name)
}

/// An index in `dir` made afresh from `chunks`, whatever was there before.
fn build_fresh(
    dir: &std::path::Path,
    stemming: crate::retrieval::Stemming,
    chunks: Vec<IndexedChunk>,
) -> Result<ChatIndex, DocumentsError> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    let mut index = ChatIndex::open_with(dir, stemming)?;
    index.rebuild(chunks)?;
    Ok(index)
}
