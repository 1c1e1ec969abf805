//! OpenAI's files and vector stores on the workspace: a user's uploaded files (`files`
//! table, kept under `<data dir>/files/<user>/`), and a file added to a vector store (a chat)
//! becoming one of its documents, processed like any upload; likewise a chat's document
//! copied into a knowledge base (its stored bytes copied, then processed afresh).

use std::path::{Path, PathBuf};

use chrono::Utc;
use entities::documents::{self, DocumentStatus};
use entities::files;
use entities::ids::{ArtifactId, ChatId, FileId, UserId};
use sea_orm::{ActiveModelTrait, ColumnTrait, DbErr, EntityTrait, QueryFilter, QueryOrder, Set};

use super::{CommitError, CreateError, DocumentsError, Upload, Workspace};

/// Why a file could not be added to a vector store.
#[derive(Debug, thiserror::Error)]
pub enum AddFileError {
    #[error(transparent)]
    Create(#[from] CreateError),
    #[error(transparent)]
    Commit(#[from] CommitError),
    #[error("the stored file could not be read: {0}")]
    Io(#[from] std::io::Error),
    /// The document to copy is not (or no longer) there.
    #[error("document not found")]
    NoSuchDocument,
    /// The document to copy has not been uploaded whole yet.
    #[error("{0} is still uploading; add it once its upload has finished")]
    StillUploading(String),
    #[error(transparent)]
    Db(#[from] DbErr),
}

impl Workspace {
    /// Where a user's uploaded files live.
    pub fn user_files_dir(&self, user_id: &UserId) -> PathBuf {
        self.inner.data_dir.join("files").join(user_id.as_str())
    }

    /// Records a file written to `path` (under `user_files_dir`) as the user's.
    pub async fn record_file(
        &self,
        id: FileId,
        user_id: &UserId,
        filename: &str,
        purpose: &str,
        bytes: u64,
        path: &Path,
    ) -> Result<files::Model, DbErr> {
        let stored = self
            .keep_file(&Self::file_key(user_id, &id), path)
            .await
            .map_err(|err| DbErr::Custom(format!("the file could not be stored: {err}")))?;
        files::ActiveModel {
            id: Set(id),
            user_id: Set(user_id.clone()),
            filename: Set(filename.to_string()),
            purpose: Set(purpose.to_string()),
            bytes: Set(bytes as i64),
            storage_path: Set(stored),
            created_at: Set(Utc::now()),
        }
        .insert(&self.inner.db)
        .await
    }

    /// The file if `user_id` uploaded it.
    pub async fn file_owned(
        &self,
        user_id: &UserId,
        id: &FileId,
    ) -> Result<Option<files::Model>, DbErr> {
        files::Entity::find_by_id(id.clone())
            .filter(files::Column::UserId.eq(user_id))
            .one(&self.inner.db)
            .await
    }

    /// The user's files, newest first.
    pub async fn files_of(&self, user_id: &UserId) -> Result<Vec<files::Model>, DbErr> {
        files::Entity::find()
            .filter(files::Column::UserId.eq(user_id))
            .order_by_desc(files::Column::CreatedAt)
            .all(&self.inner.db)
            .await
    }

    /// Deletes the user's file and its bytes; documents made from it stay in their stores.
    pub async fn delete_file(&self, user_id: &UserId, id: &FileId) -> Result<bool, DbErr> {
        let Some(file) = self.file_owned(user_id, id).await? else {
            return Ok(false);
        };
        files::Entity::delete_by_id(file.id)
            .exec(&self.inner.db)
            .await?;
        self.remove_stored(&file.storage_path).await;
        Ok(true)
    }

    /// Adds `file` to the vector store `chat_id` as a document (a copy of its bytes), queued
    /// for processing as an upload is. The caller checked that both are the user's.
    pub async fn add_file(
        &self,
        chat_id: &ChatId,
        file: &files::Model,
    ) -> Result<documents::Model, AddFileError> {
        self.add_copy(
            chat_id,
            &file.storage_path,
            &file.filename,
            file.bytes as u64,
            Some(file.id.clone()),
        )
        .await
    }

    /// Copies the document `artifact_id` of the chat `from` into the chat `to` (a knowledge
    /// base) as a new document, processed afresh. The caller checked that both are the user's.
    pub async fn copy_document(
        &self,
        from: &ChatId,
        artifact_id: &ArtifactId,
        to: &ChatId,
    ) -> Result<documents::Model, AddFileError> {
        let source = documents::Entity::find()
            .filter(documents::Column::ChatId.eq(from))
            .filter(documents::Column::ArtifactId.eq(artifact_id))
            .filter(documents::Column::DeletedAt.is_null())
            .one(&self.inner.db)
            .await?
            .ok_or(AddFileError::NoSuchDocument)?;
        if source.status == DocumentStatus::Uploading {
            return Err(AddFileError::StillUploading(source.filename));
        }
        let size = source.size_bytes as u64;
        self.add_copy(to, &source.storage_path, &source.filename, size, None)
            .await
    }

    /// Copies `source` into the uploads directory, records it as a new document of `chat_id`
    /// and commits it (`commit_upload`), as an upload would be.
    async fn add_copy(
        &self,
        chat_id: &ChatId,
        source: &str,
        filename: &str,
        size: u64,
        file_id: Option<FileId>,
    ) -> Result<documents::Model, AddFileError> {
        let dir = self.uploads_dir();
        tokio::fs::create_dir_all(&dir).await?;
        let part = dir.join(format!("{}.part", uuid::Uuid::now_v7().simple()));
        if let Err(err) = self.copy_stored(source, &part).await {
            let _ = tokio::fs::remove_file(&part).await;
            return Err(err.into());
        }
        let document = match self
            .create(chat_id, filename, size, &part, DocumentStatus::Uploading)
            .await
        {
            Ok(document) => document,
            Err(err) => {
                let _ = tokio::fs::remove_file(&part).await;
                return Err(err.into());
            }
        };
        let upload = Upload {
            document_id: document.id,
            chat_id: chat_id.clone(),
            filename: filename.to_string(),
            source: part,
            size,
            file_id,
            upload_id: None,
        };
        Ok(self.commit_upload(&upload).await?)
    }

    /// The store's document made from `file_id`, if it has one.
    pub async fn document_of_file(
        &self,
        chat_id: &ChatId,
        file_id: &FileId,
    ) -> Result<Option<documents::Model>, DocumentsError> {
        Ok(documents::Entity::find()
            .filter(documents::Column::ChatId.eq(chat_id))
            .filter(documents::Column::FileId.eq(file_id))
            .filter(documents::Column::DeletedAt.is_null())
            .one(&self.inner.db)
            .await?)
    }
}
