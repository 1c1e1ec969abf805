//! OpenAI's files and vector stores on the workspace: a user's uploaded files (`files`
//! table, kept under `<data dir>/files/<user>/`), and a file added to a vector store (a chat)
//! becoming one of its documents, processed like any upload.

use std::path::{Path, PathBuf};

use chrono::Utc;
use entities::documents::{self, DocumentStatus};
use entities::files;
use entities::ids::{ChatId, FileId, UserId};
use sea_orm::sea_query::Expr;
use sea_orm::{ActiveModelTrait, ColumnTrait, DbErr, EntityTrait, QueryFilter, QueryOrder, Set};

use super::{CreateError, DocumentsError, Workspace};

use crate::retrieval::extract::SNIFF_BYTES;

/// Why a file could not be added to a vector store.
#[derive(Debug, thiserror::Error)]
pub enum AddFileError {
    #[error(transparent)]
    Create(#[from] CreateError),
    #[error("the stored file could not be read: {0}")]
    Io(#[from] std::io::Error),
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
        files::ActiveModel {
            id: Set(id),
            user_id: Set(user_id.clone()),
            filename: Set(filename.to_string()),
            purpose: Set(purpose.to_string()),
            bytes: Set(bytes as i64),
            storage_path: Set(path.to_string_lossy().into_owned()),
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
        if let Err(err) = tokio::fs::remove_file(&file.storage_path).await {
            tracing::debug!(%err, "stored file already gone");
        }
        Ok(true)
    }

    /// Adds `file` to the vector store `chat_id` as a document (a copy of its bytes), queued
    /// for processing as an upload is. The caller checked that both are the user's.
    pub async fn add_file(
        &self,
        chat_id: &ChatId,
        file: &files::Model,
    ) -> Result<documents::Model, AddFileError> {
        let source = PathBuf::from(&file.storage_path);
        let head = read_head(&source).await?;
        let size = file.bytes as u64;
        let dir = self.files_dir(chat_id);
        tokio::fs::create_dir_all(&dir).await?;
        let document = self
            .create(
                chat_id,
                &file.filename,
                size,
                &dir,
                DocumentStatus::Uploading,
            )
            .await?;
        let target = dir.join(document.id.as_str());
        if let Err(err) = tokio::fs::copy(&source, &target).await {
            self.delete(chat_id, &document.artifact_id).await.ok();
            return Err(err.into());
        }
        let (_, content_type) = crate::retrieval::extract::sniff(&head, &file.filename);
        documents::Entity::update_many()
            .col_expr(
                documents::Column::StoragePath,
                Expr::value(target.to_string_lossy().into_owned()),
            )
            .col_expr(documents::Column::ContentType, Expr::value(content_type))
            .col_expr(documents::Column::FileId, Expr::value(file.id.as_str()))
            .filter(documents::Column::Id.eq(document.id.clone()))
            .exec(&self.inner.db)
            .await?;
        self.submit(&document.id, size).await?;
        Ok(documents::Entity::find_by_id(document.id.clone())
            .one(&self.inner.db)
            .await?
            .unwrap_or(document))
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

async fn read_head(path: &Path) -> std::io::Result<Vec<u8>> {
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
