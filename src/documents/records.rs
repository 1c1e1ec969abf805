//! Document records and their limits: counting, listing, creating (one chat's creations in
//! turn, so the per-chat limit holds — a knowledge base's, for one made as a knowledge base),
//! and soft deletion.

use entities::documents::DocumentStatus;
use entities::ids::{ArtifactId, ChatId, DocumentId};
use std::sync::Arc;

use chrono::Utc;
use entities::{artifacts, document_chunks, documents};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DbErr, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect, Set,
};
use tokio::sync::Mutex;

use super::{DocumentsError, KIND_DOCUMENT, Workspace};

/// Documents whose artifact id `artifact_ids` remembers before starting over: some 10 MB,
/// far more than the documents searched in a while.
const MAX_REMEMBERED_ARTIFACTS: usize = 100_000;

/// The most documents a chat may hold: a chat's own uploads, or a knowledge base's (a chat
/// made as a vector store) under a limit of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentLimit {
    Chat(usize),
    KnowledgeBase(usize),
}

impl DocumentLimit {
    pub fn max(self) -> usize {
        match self {
            Self::Chat(max) | Self::KnowledgeBase(max) => max,
        }
    }

    /// What holds the documents, in words.
    pub fn holder(self) -> &'static str {
        match self {
            Self::Chat(_) => "this chat",
            Self::KnowledgeBase(_) => "this knowledge base",
        }
    }
}

/// Why a document record was not created.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    #[error(
        "{} already holds {} documents, the most allowed; delete one first",
        .limit.holder(),
        .limit.max()
    )]
    TooMany { limit: DocumentLimit },
    #[error(transparent)]
    Db(#[from] DbErr),
}

impl Workspace {
    /// Documents of a chat that count against the per-chat limit: not deleted, and not an
    /// upload that failed before its bytes were stored (`error` without a processing
    /// attempt, see `commit`), which holds nothing.
    pub async fn count(&self, chat_id: &ChatId) -> Result<u64, DbErr> {
        use sea_orm::Condition;
        documents::Entity::find()
            .filter(documents::Column::ChatId.eq(chat_id))
            .filter(documents::Column::DeletedAt.is_null())
            .filter(
                Condition::any()
                    .add(documents::Column::Status.ne(DocumentStatus::Error))
                    .add(documents::Column::ProcessingAttempts.gt(0)),
            )
            .count(&self.inner.db)
            .await
    }

    /// How many documents the chat may hold: a knowledge base (a chat made as a vector store)
    /// has its own limit.
    pub async fn document_limit(&self, chat_id: &ChatId) -> Result<DocumentLimit, DbErr> {
        use sea_orm::QuerySelect;
        let knowledge_base: Option<bool> = entities::chats::Entity::find_by_id(chat_id.clone())
            .select_only()
            .column(entities::chats::Column::IsVectorStore)
            .into_tuple()
            .one(&self.inner.db)
            .await?;
        let limits = &self.inner.limits;
        Ok(match knowledge_base {
            Some(true) => DocumentLimit::KnowledgeBase(limits.max_files_per_knowledge_base),
            _ => DocumentLimit::Chat(limits.max_files_per_chat),
        })
    }

    /// A chat's documents, most recent first.
    pub async fn list(&self, chat_id: &ChatId) -> Result<Vec<documents::Model>, DbErr> {
        documents::Entity::find()
            .filter(documents::Column::ChatId.eq(chat_id))
            .filter(documents::Column::DeletedAt.is_null())
            .order_by_desc(documents::Column::UploadedAt)
            .order_by_desc(documents::Column::Id)
            .all(&self.inner.db)
            .await
    }

    /// A chat's `limit` most recent documents, most recent first.
    pub async fn list_recent(
        &self,
        chat_id: &ChatId,
        limit: u64,
    ) -> Result<Vec<documents::Model>, DbErr> {
        use sea_orm::QuerySelect;
        documents::Entity::find()
            .filter(documents::Column::ChatId.eq(chat_id))
            .filter(documents::Column::DeletedAt.is_null())
            .order_by_desc(documents::Column::UploadedAt)
            .order_by_desc(documents::Column::Id)
            .limit(limit)
            .all(&self.inner.db)
            .await
    }

    /// document id → artifact id, for the given documents of a chat (a search's hits: never
    /// the whole chat, so the cost does not grow with its documents). A document's artifact
    /// never changes, so answers are remembered (up to `MAX_REMEMBERED_ARTIFACTS`).
    pub async fn artifact_ids(
        &self,
        chat_id: &ChatId,
        document_ids: &[DocumentId],
    ) -> Result<std::collections::HashMap<DocumentId, ArtifactId>, DbErr> {
        use sea_orm::QuerySelect;
        let remembered = &self.inner.artifact_of;
        let mut found = std::collections::HashMap::with_capacity(document_ids.len());
        let mut missing = Vec::new();
        for id in document_ids {
            match remembered.get(id) {
                Some(artifact) => {
                    found.insert(id.clone(), artifact.clone());
                }
                None => missing.push(id.clone()),
            }
        }
        if missing.is_empty() {
            return Ok(found);
        }
        let rows: Vec<(DocumentId, ArtifactId)> = documents::Entity::find()
            .select_only()
            .column(documents::Column::Id)
            .column(documents::Column::ArtifactId)
            .filter(documents::Column::ChatId.eq(chat_id))
            .filter(documents::Column::Id.is_in(missing))
            .into_tuple()
            .all(&self.inner.db)
            .await?;
        for (id, artifact) in rows {
            self.remember_artifact(&id, &artifact);
            found.insert(id, artifact);
        }
        Ok(found)
    }

    /// The text artifacts of the documents `hits` came from, in each hit's own chat (a
    /// search across several chats: a knowledge base's, a vector store's). A lookup that
    /// fails leaves that chat's hits without one.
    pub async fn artifact_ids_of_hits(
        &self,
        hits: &[(ChatId, crate::retrieval::index::SearchHit)],
    ) -> std::collections::HashMap<DocumentId, ArtifactId> {
        let mut chats: Vec<&ChatId> = Vec::new();
        for (chat_id, _) in hits {
            if !chats.contains(&chat_id) {
                chats.push(chat_id);
            }
        }
        let mut found = std::collections::HashMap::new();
        for chat_id in chats {
            let mut documents: Vec<DocumentId> = Vec::new();
            for (_, hit) in hits.iter().filter(|(c, _)| c == chat_id) {
                if !documents.contains(&hit.document_id) {
                    documents.push(hit.document_id.clone());
                }
            }
            found.extend(
                self.artifact_ids(chat_id, &documents)
                    .await
                    .unwrap_or_default(),
            );
        }
        found
    }

    /// Remembers a document's artifact for `artifact_ids`.
    pub(super) fn remember_artifact(&self, document_id: &DocumentId, artifact_id: &ArtifactId) {
        let remembered = &self.inner.artifact_of;
        if remembered.len() >= MAX_REMEMBERED_ARTIFACTS {
            remembered.clear();
        }
        remembered.insert(document_id.clone(), artifact_id.clone());
    }

    /// Whether a chat has documents the model can search: the first one found answers, so a
    /// chat of thousands costs what a chat of one does.
    pub async fn has_searchable(&self, chat_id: &ChatId) -> Result<bool, DbErr> {
        let first = documents::Entity::find()
            .select_only()
            .column(documents::Column::Id)
            .filter(documents::Column::ChatId.eq(chat_id))
            .filter(documents::Column::DeletedAt.is_null())
            .filter(documents::Column::Searchable.eq(true))
            .into_tuple::<DocumentId>()
            .one(&self.inner.db)
            .await?;
        Ok(first.is_some())
    }

    /// Creates a document and its artifact record, in `status`.
    pub async fn create(
        &self,
        chat_id: &ChatId,
        filename: &str,
        size: u64,
        storage_path: &std::path::Path,
        status: DocumentStatus,
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
    pub(super) fn creation_lock(&self, chat_id: &ChatId) -> Arc<Mutex<()>> {
        self.inner
            .creating
            .entry(chat_id.clone())
            .or_default()
            .clone()
    }

    /// `create`, under the chat's creation lock.
    pub(super) async fn create_counted(
        &self,
        chat_id: &ChatId,
        filename: &str,
        size: u64,
        storage_path: &std::path::Path,
        status: DocumentStatus,
    ) -> Result<documents::Model, CreateError> {
        // What turns keep of it is stale once this returns (`chat::turn_cache`).
        let _changed = crate::chat::turn_cache::Changed;
        let limit = self.document_limit(chat_id).await?;
        if self.count(chat_id).await? >= limit.max() as u64 {
            return Err(CreateError::TooMany { limit });
        }
        let now = Utc::now();
        let artifact_id = ArtifactId::generate_for_document();
        let txn = self.begin_for(chat_id).await?;
        artifacts::ActiveModel {
            id: Set(artifact_id.clone()),
            chat_id: Set(chat_id.clone()),
            identifier: Set(artifact_id.to_string()),
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
            id: Set(DocumentId::generate()),
            chat_id: Set(chat_id.clone()),
            artifact_id: Set(artifact_id),
            filename: Set(filename.to_string()),
            size_bytes: Set(size as i64),
            content_type: Set("application/octet-stream".into()),
            storage_path: Set(storage_path.to_string_lossy().into_owned()),
            status: Set(status),
            error: Set(None),
            warning: Set(None),
            searchable: Set(false),
            char_count: Set(0),
            uploaded_at: Set(now),
            processed_at: Set(None),
            deleted_at: Set(None),
            processing_attempts: Set(0),
            file_id: Set(None),
        }
        .insert(&txn)
        .await?;
        txn.commit().await?;
        Ok(row)
    }

    /// Soft-deletes a document; its chunks leave search at once.
    pub async fn delete(
        &self,
        chat_id: &ChatId,
        artifact_id: &ArtifactId,
    ) -> Result<bool, DocumentsError> {
        use sea_orm::sea_query::Expr;
        // What turns keep of it is stale once this returns (`chat::turn_cache`).
        let _changed = crate::chat::turn_cache::Changed;
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
        let txn = self.begin_for(chat_id).await?;
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
        self.remove_stored(&doc.storage_path).await;
        Ok(true)
    }
}
