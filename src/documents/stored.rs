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

    /// The object key of a committed document's bytes.
    pub(super) fn document_key(chat_id: &ChatId, document_id: &DocumentId) -> String {
        format!("documents/{chat_id}/{document_id}")
    }

    /// The object key of a user's Files API file.
    pub(super) fn file_key(user_id: &UserId, file_id: &FileId) -> String {
        format!("files/{user_id}/{file_id}")
    }

    /// Sends the complete file at `source` to the object store as `key` and removes it; the
    /// reference to record. Nothing is left at `key` if it fails.
    pub(super) async fn send_to_objects(
        &self,
        key: &str,
        source: &Path,
    ) -> std::io::Result<String> {
        self.inner.storage.put_file(key, source).await?;
        if let Err(err) = tokio::fs::remove_file(source).await {
            tracing::debug!(%err, "a sent file was already gone");
        }
        Ok(format!("{OBJECT_PREFIX}{key}"))
    }

    /// The size of the object `key`, if it is in the store.
    pub(super) async fn object_size(&self, key: &str) -> Option<u64> {
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
