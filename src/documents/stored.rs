//! Where a document's or a Files API file's bytes are, as its `storage_path` records it: a path
//! in the data directory (the default, and every row from before object storage), or
//! `object:<key>` in the configured object store (`storage::Storage`). Reading, copying and
//! removing go through here, so each works whichever the row names.

use std::path::Path;

use entities::ids::{ChatId, DocumentId, FileId, UserId};

use super::Workspace;

/// How `storage_path` names an object of the object store.
pub const OBJECT_PREFIX: &str = "object:";

impl Workspace {
    /// Whether files go to an object store rather than the data directory.
    pub(super) fn in_objects(&self) -> bool {
        !self.inner.storage.is_directory()
    }

    /// What a row records as the place of `key`: its path in the data directory (as rows
    /// always have), or `object:<key>`.
    pub(super) fn reference(&self, key: &str) -> String {
        match self.inner.storage.local_path(key) {
            Some(path) => path.to_string_lossy().into_owned(),
            None => format!("{OBJECT_PREFIX}{key}"),
        }
    }

    /// The object key of a committed document's bytes.
    pub(super) fn document_key(chat_id: &ChatId, document_id: &DocumentId) -> String {
        format!("documents/{chat_id}/{document_id}")
    }

    /// The object key of a user's Files API file.
    pub(super) fn file_key(user_id: &UserId, file_id: &FileId) -> String {
        format!("files/{user_id}/{file_id}")
    }

    /// Keeps the complete file at `source` as `key` (moved into the data directory, or sent
    /// to the object store and then removed); the reference to record. Nothing is left at
    /// `key` if it fails.
    pub(super) async fn keep_file(&self, key: &str, source: &Path) -> std::io::Result<String> {
        self.inner.storage.put_file(key, source).await?;
        if self.inner.storage.local_path(key).as_deref() != Some(source)
            && let Err(err) = tokio::fs::remove_file(source).await
            && err.kind() != std::io::ErrorKind::NotFound
        {
            tracing::debug!(%err, "could not remove a file once kept");
        }
        Ok(self.reference(key))
    }

    /// The size of what is kept at `key`, if anything is.
    pub(super) async fn stored_size(&self, key: &str) -> Option<u64> {
        self.inner.storage.size(key).await.ok().flatten()
    }

    /// The bytes `reference` names.
    pub async fn read_stored(&self, reference: &str) -> std::io::Result<Vec<u8>> {
        match reference.strip_prefix(OBJECT_PREFIX) {
            Some(key) => self.inner.storage.get(key).await,
            None => tokio::fs::read(reference).await,
        }
    }

    /// Writes the bytes `reference` names to the local file `target` (a copy).
    pub(super) async fn copy_stored(&self, reference: &str, target: &Path) -> std::io::Result<()> {
        match reference.strip_prefix(OBJECT_PREFIX) {
            Some(key) => {
                let bytes = self.inner.storage.get(key).await?;
                tokio::fs::write(target, bytes).await
            }
            None => tokio::fs::copy(reference, target).await.map(|_| ()),
        }
    }

    /// Removes the bytes `reference` names; already gone is no error.
    pub(super) async fn remove_stored(&self, reference: &str) {
        let removed = match reference.strip_prefix(OBJECT_PREFIX) {
            Some(key) => self.inner.storage.delete(key).await,
            None => tokio::fs::remove_file(reference).await,
        };
        if let Err(err) = removed {
            tracing::debug!(%err, "stored file already gone");
        }
    }
}
