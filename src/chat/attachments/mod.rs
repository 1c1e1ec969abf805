//! Images attached to user messages: `Attachments` keeps them (a row of `attachments` per
//! image, its bytes in the files' `Storage` at `attachments/<chat>/<id>`: the data directory,
//! written to a temporary file and renamed, or an object store), checks them by their bytes and size before anything is kept (`image`), links
//! them to the message they are sent with, reads them back for a run, and forgets a deleted
//! chat's. Lookups are scoped to the chat and its owner: someone else's image is not found.
//! Fetching an image from a URL is not done here (the HTTP layer does it through the
//! SSRF-guarded fetcher); the loop turns references into bytes (`agent::images`).

pub mod image;

use chrono::Utc;
use entities::attachments;
use entities::ids::{AttachmentId, ChatId, MessageId, UserId};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    QueryFilter, Set,
};
use sha2::{Digest, Sha256};

pub use image::{ImagePart, ImageType};

/// Tokens one image is counted as, whatever its size or its base64's length: about what
/// OpenAI charges for a 1024×1024 image in detail (765), above LLaVA's 576 and Gemma 3's 256.
/// A model that tiles large images counts more, which the margin partly covers.
pub const IMAGE_TOKENS: u64 = 768;

use crate::config::AttachmentsConfig;
use crate::storage::Storage;

/// Why an image was not kept or not found.
#[derive(Debug, thiserror::Error)]
pub enum AttachmentError {
    #[error("the image has {size} bytes; an image may have at most {limit}")]
    TooLarge { size: usize, limit: usize },
    #[error(
        "only PNG, JPEG, GIF and WebP images can be attached, and these bytes are {}",
        found.as_deref().unwrap_or("none of them")
    )]
    NotAnImage { found: Option<String> },
    #[error("a message may carry at most {max} images, not {count}")]
    TooMany { count: usize, max: usize },
    #[error(
        "this chat already holds {max} uploaded images not sent with a message: send or \
         remove them first (they are also removed after a day)"
    )]
    TooManyUnsent { max: usize },
    #[error("invalid image URL: {0}")]
    InvalidUrl(String),
    #[error("attachment {0} not found in this chat")]
    NotFound(String),
    #[error("cannot store the image: {0}")]
    Io(#[from] std::io::Error),
    #[error("database error: {0}")]
    Database(#[from] DbErr),
}

/// A chat's images: rows, files, and their limits.
#[derive(Clone)]
pub struct Attachments {
    db: DatabaseConnection,
    /// Files at `attachments/<chat>/<id>`.
    storage: Storage,
    limits: AttachmentsConfig,
}

impl Attachments {
    pub fn new(db: DatabaseConnection, storage: Storage, limits: AttachmentsConfig) -> Self {
        Self {
            db,
            storage,
            limits,
        }
    }

    pub fn limits(&self) -> &AttachmentsConfig {
        &self.limits
    }

    fn chat_prefix(chat_id: &ChatId) -> String {
        format!("attachments/{chat_id}")
    }

    fn key(chat_id: &ChatId, id: &AttachmentId) -> String {
        format!("attachments/{chat_id}/{id}")
    }

    /// Refuses more images on one message than allowed.
    pub fn check_count(&self, count: usize) -> Result<(), AttachmentError> {
        let max = self.limits.max_images_per_message;
        if count > max {
            return Err(AttachmentError::TooMany { count, max });
        }
        Ok(())
    }

    /// An upload of the chat API: refused while the chat holds `max_unsent_per_chat` images
    /// not sent with a message, else `store`d.
    pub async fn store_upload(
        &self,
        chat_id: &ChatId,
        user_id: &UserId,
        bytes: Vec<u8>,
    ) -> Result<attachments::Model, AttachmentError> {
        use sea_orm::PaginatorTrait;
        let unsent = attachments::Entity::find()
            .filter(attachments::Column::ChatId.eq(chat_id))
            .filter(attachments::Column::MessageId.is_null())
            .count(&self.db)
            .await?;
        let max = self.limits.max_unsent_per_chat;
        if unsent >= max as u64 {
            return Err(AttachmentError::TooManyUnsent { max });
        }
        self.store(chat_id, user_id, bytes).await
    }

    /// Checks `bytes` (an image of an allowed type, within the size limit) and keeps them as
    /// an image of `chat_id` not yet sent with a message. The file is complete on disk before
    /// the row exists.
    pub async fn store(
        &self,
        chat_id: &ChatId,
        user_id: &UserId,
        bytes: Vec<u8>,
    ) -> Result<attachments::Model, AttachmentError> {
        let kind = image::check(&bytes, self.limits.max_image_bytes)?;
        let id = AttachmentId::generate();
        let size = bytes.len();
        let key = Self::key(chat_id, &id);
        // Hashing 10 MiB is CPU work: not on the caller's thread.
        let (sha256, bytes) = tokio::task::spawn_blocking(move || {
            let digest: String = Sha256::digest(&bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            (digest, bytes)
        })
        .await
        .map_err(|err| std::io::Error::other(err.to_string()))?;
        self.storage.put(&key, bytes.into()).await?;
        let row = attachments::ActiveModel {
            id: Set(id),
            chat_id: Set(chat_id.clone()),
            user_id: Set(user_id.clone()),
            message_id: Set(None),
            mime_type: Set(kind.mime_type().to_string()),
            size: Set(i64::try_from(size).unwrap_or(i64::MAX)),
            sha256: Set(sha256),
            created_at: Set(Utc::now()),
        }
        .insert(&self.db)
        .await;
        match row {
            Ok(row) => Ok(row),
            Err(err) => {
                let _ = self.storage.delete(&key).await;
                Err(err.into())
            }
        }
    }

    /// The attachment, if it is `user_id`'s and in `chat_id`.
    pub async fn get_owned(
        &self,
        user_id: &UserId,
        chat_id: &ChatId,
        id: &AttachmentId,
    ) -> Result<Option<attachments::Model>, DbErr> {
        attachments::Entity::find_by_id(id.clone())
            .filter(attachments::Column::ChatId.eq(chat_id))
            .filter(attachments::Column::UserId.eq(user_id))
            .one(&self.db)
            .await
    }

    /// The chat's attachments, oldest first.
    pub async fn list(&self, chat_id: &ChatId) -> Result<Vec<attachments::Model>, DbErr> {
        use sea_orm::QueryOrder;
        attachments::Entity::find()
            .filter(attachments::Column::ChatId.eq(chat_id))
            .order_by_asc(attachments::Column::CreatedAt)
            .all(&self.db)
            .await
    }

    /// The image parts of a message `user_id` sends in `chat_id` with these attachments, in
    /// the order given (an id named twice counts once); any that is not theirs in this chat
    /// is `NotFound`.
    pub async fn parts_of(
        &self,
        user_id: &UserId,
        chat_id: &ChatId,
        ids: &[AttachmentId],
    ) -> Result<Vec<ImagePart>, AttachmentError> {
        let mut unique: Vec<AttachmentId> = Vec::with_capacity(ids.len());
        for id in ids {
            if !unique.contains(id) {
                unique.push(id.clone());
            }
        }
        self.check_count(unique.len())?;
        if unique.is_empty() {
            return Ok(Vec::new());
        }
        let rows = attachments::Entity::find()
            .filter(attachments::Column::Id.is_in(unique.iter().cloned()))
            .filter(attachments::Column::ChatId.eq(chat_id))
            .filter(attachments::Column::UserId.eq(user_id))
            .all(&self.db)
            .await?;
        unique
            .into_iter()
            .map(|id| {
                rows.iter()
                    .find(|row| row.id == id)
                    .map(|row| ImagePart {
                        attachment_id: row.id.clone(),
                        mime_type: row.mime_type.clone(),
                        detail: None,
                    })
                    .ok_or_else(|| AttachmentError::NotFound(id.into_string()))
            })
            .collect()
    }

    /// The stored bytes of an image of `chat_id`, read without blocking the caller's thread.
    pub async fn read(&self, chat_id: &ChatId, id: &AttachmentId) -> std::io::Result<Vec<u8>> {
        self.storage.get(&Self::key(chat_id, id)).await
    }

    /// Drops a deleted chat's image files (its rows went with the chat).
    pub async fn forget(&self, chat_id: &ChatId) {
        if let Err(err) = self.storage.delete_all(&Self::chat_prefix(chat_id)).await {
            tracing::warn!(%chat_id, %err, "could not remove a deleted chat's images");
        }
    }

    /// Deletes images uploaded more than `unsent_retention_hours` ago that no message was
    /// sent with; returns how many.
    pub async fn sweep_unsent(&self) -> Result<usize, DbErr> {
        let hours = i64::try_from(self.limits.unsent_retention_hours).unwrap_or(i64::MAX / 3600);
        let cutoff = Utc::now() - chrono::Duration::hours(hours);
        let stale = attachments::Entity::find()
            .filter(attachments::Column::MessageId.is_null())
            .filter(attachments::Column::CreatedAt.lt(cutoff))
            .all(&self.db)
            .await?;
        for row in &stale {
            attachments::Entity::delete_by_id(row.id.clone())
                .filter(attachments::Column::MessageId.is_null())
                .exec(&self.db)
                .await?;
            if let Err(err) = self.storage.delete(&Self::key(&row.chat_id, &row.id)).await {
                tracing::warn!(id = %row.id, %err, "could not remove an unsent image");
            }
        }
        Ok(stale.len())
    }
}

/// Records `message_id` as the message the images among `parts` were first sent with (those
/// already sent with another keep theirs). Called in the transaction that stores the message.
pub async fn link_parts<C: ConnectionTrait>(
    db: &C,
    chat_id: &ChatId,
    parts: &serde_json::Value,
    message_id: &MessageId,
) -> Result<(), DbErr> {
    let ids: Vec<AttachmentId> = ImagePart::of_parts(Some(parts))
        .into_iter()
        .map(|image| image.attachment_id)
        .collect();
    if ids.is_empty() {
        return Ok(());
    }
    attachments::Entity::update_many()
        .col_expr(
            attachments::Column::MessageId,
            sea_orm::sea_query::Expr::value(message_id.as_str()),
        )
        .filter(attachments::Column::Id.is_in(ids))
        .filter(attachments::Column::ChatId.eq(chat_id))
        .filter(attachments::Column::MessageId.is_null())
        .exec(db)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests;
