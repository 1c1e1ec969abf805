//! The document workspace service (docs/spec.md#document-workspace): document records, the
//! processing queue, the per-chat hybrid indexes, and (`uploads`) who may write or end an
//! unfinished upload.
//! Processing (extract → chunk → embed → store → index) runs on tokio tasks bounded by a
//! semaphore, with CPU work on the blocking pool — never on a chat's mailbox. Chunks and their
//! vectors are stored in the database, so an index directory that is missing or corrupt is
//! rebuilt from them. Documents are chat-level: the same in every branch. By concern:
//! `records` (records and limits), `commit` (an upload's bytes placed, recorded and queued:
//! its one writer), `queue` (processing), `open_index` (each chat's open index), `search` (one
//! chat's, or several as one ranking), `files` (OpenAI files, and copies into a knowledge
//! base), `uploads`.

use entities::ids::{ArtifactId, ChatId, DocumentId};
use std::path::PathBuf;
use std::sync::Arc;

use chrono::Utc;
use dashmap::DashMap;
use entities::documents::{self, DocumentStatus};
use sea_orm::{DatabaseConnection, DbErr};
use serde::Serialize;
use tokio::sync::{Mutex, Semaphore};

use crate::config::{Config, DocumentsConfig};
use crate::retrieval::chunk::Chunker;
use crate::retrieval::embed::SharedEmbedder;

mod commit;
mod files;
mod open_index;
mod queue;
mod records;
mod search;
mod stored;
pub mod uploads;

pub use commit::{CommitError, Recovered, Upload};
pub use files::AddFileError;
pub use open_index::OpenIndex;
pub use queue::Resumed;
pub use records::{CreateError, DocumentLimit};
pub use search::{Found, FoundTogether, SearchStages};

/// Why a document operation failed.
#[derive(Debug, thiserror::Error)]
pub enum DocumentsError {
    #[error(transparent)]
    Database(#[from] sea_orm::DbErr),
    #[error(transparent)]
    Index(#[from] crate::retrieval::index::IndexError),
    #[error(transparent)]
    Embed(#[from] crate::retrieval::embed::EmbedError),
    #[error(transparent)]
    Extract(#[from] crate::retrieval::extract::ExtractError),
    /// A step that could not finish: indexing failed or was abandoned, a stored file could
    /// not be read, a background task failed.
    #[error("{0}")]
    Failed(String),
}

impl From<std::io::Error> for DocumentsError {
    fn from(err: std::io::Error) -> Self {
        Self::Failed(format!("the index's files: {err}"))
    }
}

impl From<tokio::task::JoinError> for DocumentsError {
    fn from(err: tokio::task::JoinError) -> Self {
        Self::Failed(format!("a background task failed: {err}"))
    }
}

pub use uploads::{NewUpload, Termination, UploadClaim};

pub const KIND_DOCUMENT: &str = "document";

/// A document as the REST API lists it (docs/spec.md#documents-api).
#[derive(Debug, Clone, Serialize)]
pub struct DocumentView {
    pub artifact_id: ArtifactId,
    pub filename: String,
    pub size: i64,
    #[serde(rename = "type")]
    pub content_type: String,
    pub uploaded_at: chrono::DateTime<Utc>,
    pub status: DocumentStatus,
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

#[derive(Clone)]
pub struct Workspace {
    inner: Arc<Inner>,
}

struct Inner {
    db: DatabaseConnection,
    /// Where committed documents and Files API files go (see `stored`).
    storage: crate::storage::Storage,
    limits: DocumentsConfig,
    data_dir: PathBuf,
    embedder: SharedEmbedder,
    /// Open indexes by chat; the cell makes concurrent first uses open the directory once.
    indexes: DashMap<ChatId, Arc<tokio::sync::OnceCell<Arc<OpenIndex>>>>,
    permits: Semaphore,
    chunker: Chunker,
    /// Per chat, held from counting the chat's documents to inserting a new one, so two
    /// uploads arriving together cannot both take the last place (other chats do not wait).
    creating: DashMap<ChatId, Arc<Mutex<()>>>,
    /// Uploads a PATCH is writing or a termination is ending.
    upload_claims: uploads::UploadClaims,
    /// The artifact of each document a search has returned: it never changes, and looking it
    /// up in the database cost a search more than the search itself.
    artifact_of: DashMap<DocumentId, ArtifactId>,
    /// With several processes: how a chat's document writes are fenced.
    fencing: std::sync::OnceLock<Fencing>,
    /// Chats taken from another process whose index was not open: rebuilt when next opened.
    rebuild_next: dashmap::DashSet<ChatId>,
}

/// Takes a chat's lease as its session would (recovering what a previous owner left); whether
/// this process holds it now.
pub type OwnChat = Arc<
    dyn Fn(ChatId) -> std::pin::Pin<Box<dyn std::future::Future<Output = bool> + Send>>
        + Send
        + Sync,
>;

struct Fencing {
    cluster: crate::cluster::Cluster,
    own: OwnChat,
}

impl Workspace {
    pub fn new(
        db: DatabaseConnection,
        config: &Config,
        embedder: SharedEmbedder,
        storage: crate::storage::Storage,
    ) -> Self {
        let limits = config.documents.clone();
        Self {
            inner: Arc::new(Inner {
                db,
                storage,
                permits: Semaphore::new(limits.processing_concurrency.max(1)),
                chunker: Chunker::new(limits.chunk_tokens, limits.chunk_overlap_tokens),
                limits,
                data_dir: config.data_dir.clone(),
                embedder,
                indexes: DashMap::new(),
                creating: DashMap::new(),
                upload_claims: uploads::UploadClaims::default(),
                artifact_of: DashMap::new(),
                fencing: std::sync::OnceLock::new(),
                rebuild_next: dashmap::DashSet::new(),
            }),
        }
    }

    /// Fences a chat's document writes by its lease (several processes), as a chat's session
    /// writes are (`chat::ChatWriter`): each runs in a transaction that first checks this
    /// process holds the chat at the epoch it holds it at, taking it through `own` if it let
    /// it lapse meanwhile (a long document outlasting an idle chat). A process that stalled
    /// and lost the chat writes none of its documents. Set once, at start-up.
    pub fn join(&self, cluster: crate::cluster::Cluster, own: OwnChat) {
        let _ = self.inner.fencing.set(Fencing { cluster, own });
    }

    /// A transaction for writing `chat_id`'s documents, fenced with a cluster.
    pub(crate) async fn begin_for(
        &self,
        chat_id: &ChatId,
    ) -> Result<sea_orm::DatabaseTransaction, DbErr> {
        use sea_orm::TransactionTrait;
        let Some(fencing) = self.inner.fencing.get() else {
            return self.inner.db.begin().await;
        };
        let key = crate::cluster::chat_key(chat_id.as_str());
        if fencing.cluster.epoch(&key).is_none() {
            (fencing.own)(chat_id.clone()).await;
        }
        // Not held (another process owns the chat): no lease has epoch 0, so the check fails.
        let epoch = fencing.cluster.epoch(&key).unwrap_or(0);
        fencing.cluster.begin_fenced(&key, epoch).await
    }

    pub fn limits(&self) -> &DocumentsConfig {
        &self.inner.limits
    }

    /// Where a chat's stored files live.
    pub fn files_dir(&self, chat_id: &ChatId) -> PathBuf {
        self.inner.data_dir.join("documents").join(chat_id.as_str())
    }

    /// Where unfinished uploads live.
    pub fn uploads_dir(&self) -> PathBuf {
        self.inner.data_dir.join("uploads")
    }

    fn index_dir(&self, chat_id: &ChatId) -> PathBuf {
        self.inner.data_dir.join("indexes").join(chat_id.as_str())
    }

    /// Drops a deleted chat's index and stored files (its rows went with the chat).
    pub async fn forget(&self, chat_id: &ChatId) {
        self.inner.indexes.remove(chat_id);
        if self.in_objects()
            && let Err(err) = self
                .inner
                .storage
                .delete_all(&format!("documents/{chat_id}"))
                .await
        {
            tracing::warn!(%chat_id, %err, "could not remove a deleted chat's stored documents");
        }
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
    use crate::retrieval::index::{ChatIndex, IndexedChunk};
    use entities::ids::{ChunkId, DocumentId};
    use std::time::Duration;

    fn chunks(document: &str, texts: &[&str]) -> Vec<IndexedChunk> {
        texts
            .iter()
            .enumerate()
            .map(|(i, text)| IndexedChunk {
                chunk_id: ChunkId::from_string(format!("{document}-{i}")),
                document_id: DocumentId::from_string(document),
                filename: format!("{document}.txt"),
                text: text.to_string(),
                headings: Default::default(),
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
                (
                    d,
                    open.replace_document(DocumentId::from_string(id), chunks)
                        .await,
                )
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
        open.replace_document(DocumentId::from_string("d7"), Vec::new())
            .await
            .unwrap();
        let index = open.index.lock().await;
        assert_eq!((index.len(), index.indexed_len()), (10, 10));
    }

    /// A workspace over a fresh migrated SQLite file, with `chats` chats of one user.
    async fn workspace(
        chats: usize,
        max_files: usize,
    ) -> (tempfile::TempDir, Workspace, Vec<ChatId>) {
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
        let workspace = Workspace::new(
            db,
            &config,
            Arc::new(HashEmbedder::default()),
            crate::storage::Storage::directory(&config.data_dir),
        );
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
            workspace.create(&chats[1], "b.txt", 1, &path, DocumentStatus::Processing),
        )
        .await
        .expect("another chat's creation did not wait");
        assert!(created.is_ok());
        // Within one chat the limit still holds.
        let second = workspace
            .create(&chats[1], "c.txt", 1, &path, DocumentStatus::Processing)
            .await;
        assert!(matches!(
            second,
            Err(CreateError::TooMany {
                limit: DocumentLimit::Chat(1)
            })
        ));
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
        assert!(hits.hits.is_empty());
        assert_eq!(workspace.open_indexes(), 1);
    }

    async fn processed(workspace: &Workspace, chat: &ChatId, text: &str) {
        use sea_orm::EntityTrait;
        let part = workspace.uploads_dir().join("notes.part");
        tokio::fs::create_dir_all(workspace.uploads_dir())
            .await
            .unwrap();
        tokio::fs::write(&part, text).await.unwrap();
        let doc = workspace
            .create(
                chat,
                "notes.md",
                text.len() as u64,
                &part,
                DocumentStatus::Uploading,
            )
            .await
            .unwrap();
        workspace
            .commit_upload(&Upload {
                document_id: doc.id.clone(),
                chat_id: chat.clone(),
                filename: "notes.md".into(),
                source: part,
                size: text.len() as u64,
                file_id: None,
                upload_id: None,
            })
            .await
            .unwrap();
        for _ in 0..200 {
            let row = documents::Entity::find_by_id(doc.id.clone())
                .one(&workspace.inner.db)
                .await
                .unwrap()
                .unwrap();
            if row.status == DocumentStatus::Processed {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the document was not processed");
    }

    async fn finds(workspace: &Workspace, chat: &ChatId, query: &str) -> bool {
        let found = workspace.search(chat, query, 3).await.unwrap();
        found.hits.iter().any(|hit| hit.text.contains(query))
    }

    /// Another process owned the chat meanwhile and its chunks changed (same number of them):
    /// taking the chat rebuilds this process's index from the database, open or not.
    #[tokio::test]
    async fn an_index_taken_back_is_rebuilt_from_the_database_even_at_the_same_size() {
        use sea_orm::ConnectionTrait;
        let (_dir, workspace, chats) = workspace(1, 5).await;
        let chat = &chats[0];
        processed(&workspace, chat, "The alpine meadow blooms in June.").await;
        assert!(finds(&workspace, chat, "alpine").await);
        let change = "UPDATE document_chunks SET text = 'Basalt cools into columns.'";
        workspace.inner.db.execute_unprepared(change).await.unwrap();

        // Closed, then opened again: the same number of chunks, so the stale words stay.
        assert_eq!(workspace.close_idle_indexes(Duration::ZERO).await, 1);
        assert!(
            !finds(&workspace, chat, "Basalt").await,
            "stale, as expected"
        );
        // Taken while closed: the next opening rebuilds it.
        assert_eq!(workspace.close_idle_indexes(Duration::ZERO).await, 1);
        workspace.refresh_index(chat);
        assert!(finds(&workspace, chat, "Basalt").await);

        // Taken while open: rebuilt in place.
        let change = "UPDATE document_chunks SET text = 'Coral reefs grow slowly.'";
        workspace.inner.db.execute_unprepared(change).await.unwrap();
        assert!(!finds(&workspace, chat, "Coral").await);
        workspace.refresh_index(chat);
        let mut rebuilt = false;
        for _ in 0..100 {
            if finds(&workspace, chat, "Coral").await {
                rebuilt = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(rebuilt, "the open index was rebuilt");
    }
}
