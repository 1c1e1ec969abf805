//! `Storage`: where Colloquy keeps files (image attachments, browser screenshots, uploaded
//! documents), by key (`attachments/<chat>/<id>`). Two backends behind one interface:
//!
//! - the data directory (the default): a key is a path under it, written to a temporary file
//!   and renamed into place, so a reader sees a whole file or none — the layout of every
//!   earlier version;
//! - any S3-compatible object store (`[storage] url = "s3://bucket/prefix"`), through the
//!   `object_store` crate: a put is one request (or a multipart upload for a file, aborted on
//!   failure), and an object is visible only once complete. Processes on several machines then
//!   share their files through the store instead of a shared file system.
//!
//! A store configured after files were kept in the data directory still finds them: a key the
//! store lacks is read from the data directory (and removed from both).
//!
//! Errors are `std::io::Error`s (`NotFound` for a missing key), as file reads were.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use object_store::path::Path as Key;
use object_store::{ObjectStore, ObjectStoreExt, WriteMultipart};
use secrecy::ExposeSecret;
use tokio::io::AsyncReadExt;

use crate::config::StorageConfig;

/// The largest piece a file is sent to an object store in.
const PART_BYTES: usize = 8 * 1024 * 1024;

/// Where files live; cheap to clone.
#[derive(Clone)]
pub struct Storage {
    backend: Arc<Backend>,
}

enum Backend {
    Directory(PathBuf),
    Objects {
        store: Arc<dyn ObjectStore>,
        /// Prepended to every key (the URL's path).
        prefix: String,
        /// `s3://bucket/prefix`, for logs.
        url: String,
        /// The data directory, where files kept before the store was configured still are.
        earlier: PathBuf,
    },
}

impl std::fmt::Debug for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &*self.backend {
            Backend::Directory(root) => write!(f, "Storage({})", root.display()),
            Backend::Objects { url, .. } => write!(f, "Storage({url})"),
        }
    }
}

impl Storage {
    /// Files under `root` (the data directory).
    pub fn directory(root: &Path) -> Self {
        Self {
            backend: Arc::new(Backend::Directory(root.to_path_buf())),
        }
    }

    /// The store `config` names, or the data directory `data_dir` without one.
    pub fn from_config(config: &StorageConfig, data_dir: &Path) -> anyhow::Result<Self> {
        let Some(parsed) = config.bucket_and_prefix() else {
            return Ok(Self::directory(data_dir));
        };
        let (bucket, prefix) = parsed.map_err(anyhow::Error::msg)?;
        let mut builder = object_store::aws::AmazonS3Builder::from_env()
            .with_bucket_name(&bucket)
            .with_region(config.region.as_deref().unwrap_or("us-east-1"));
        if let Some(endpoint) = &config.endpoint {
            builder = builder
                .with_endpoint(endpoint)
                .with_allow_http(endpoint.starts_with("http://"))
                // A store of one's own (MinIO, Ceph, …) serves the bucket in the path.
                .with_virtual_hosted_style_request(false);
        }
        if let Some(key) = &config.access_key_id {
            builder = builder.with_access_key_id(key.expose_secret());
        }
        if let Some(secret) = &config.secret_access_key {
            builder = builder.with_secret_access_key(secret.expose_secret());
        }
        let store = builder.build()?;
        Ok(Self {
            backend: Arc::new(Backend::Objects {
                store: Arc::new(store),
                url: format!("s3://{bucket}/{prefix}"),
                prefix,
                earlier: data_dir.to_path_buf(),
            }),
        })
    }

    /// Whether files are in the data directory (a key is then a path there).
    pub fn is_directory(&self) -> bool {
        matches!(&*self.backend, Backend::Directory(_))
    }

    /// Where `key` is in the data directory, when that is the backend.
    pub fn local_path(&self, key: &str) -> Option<PathBuf> {
        match &*self.backend {
            Backend::Directory(root) => Some(root.join(key)),
            Backend::Objects { .. } => None,
        }
    }

    fn object(prefix: &str, key: &str) -> std::io::Result<Key> {
        let full = if prefix.is_empty() {
            key.to_string()
        } else {
            format!("{prefix}/{key}")
        };
        Key::parse(&full).map_err(|err| std::io::Error::new(std::io::ErrorKind::InvalidInput, err))
    }

    /// Keeps `bytes` at `key`, replacing what was there; visible only once whole.
    pub async fn put(&self, key: &str, bytes: Bytes) -> std::io::Result<()> {
        match &*self.backend {
            Backend::Directory(root) => {
                let target = root.join(key);
                let dir = target.parent().unwrap_or(root);
                let name = target
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let temporary = dir.join(format!(".{name}.partial"));
                tokio::fs::create_dir_all(dir).await?;
                tokio::fs::write(&temporary, &bytes).await?;
                tokio::fs::rename(&temporary, &target).await
            }
            Backend::Objects { store, prefix, .. } => {
                store
                    .put(&Self::object(prefix, key)?, bytes.into())
                    .await
                    .map_err(io_error)?;
                Ok(())
            }
        }
    }

    /// Keeps the file at `source` at `key` (moved into place in the data directory, sent in
    /// parts to a store). A failure leaves nothing at `key` (a store's multipart upload is
    /// aborted); `source` is left for the caller.
    pub async fn put_file(&self, key: &str, source: &Path) -> std::io::Result<()> {
        match &*self.backend {
            Backend::Directory(root) => {
                let target = root.join(key);
                if let Some(dir) = target.parent() {
                    tokio::fs::create_dir_all(dir).await?;
                }
                tokio::fs::rename(source, &target).await
            }
            Backend::Objects { store, prefix, .. } => {
                let upload = store
                    .put_multipart(&Self::object(prefix, key)?)
                    .await
                    .map_err(io_error)?;
                let mut writer = WriteMultipart::new_with_chunk_size(upload, PART_BYTES);
                let sent = async {
                    let mut file = tokio::fs::File::open(source).await?;
                    let mut buffer = vec![0u8; 256 * 1024];
                    loop {
                        let read = file.read(&mut buffer).await?;
                        if read == 0 {
                            return Ok::<_, std::io::Error>(());
                        }
                        writer.wait_for_capacity(4).await.map_err(io_error)?;
                        writer.write(&buffer[..read]);
                    }
                }
                .await;
                match sent {
                    Ok(()) => writer.finish().await.map(|_| ()).map_err(io_error),
                    Err(err) => {
                        if let Err(abort) = writer.abort().await {
                            tracing::warn!(%key, error = %abort, "could not abort a failed upload");
                        }
                        Err(err)
                    }
                }
            }
        }
    }

    /// The bytes at `key`; `NotFound` when there are none.
    pub async fn get(&self, key: &str) -> std::io::Result<Vec<u8>> {
        match &*self.backend {
            Backend::Directory(root) => tokio::fs::read(root.join(key)).await,
            Backend::Objects {
                store,
                prefix,
                earlier,
                ..
            } => {
                let object = match store.get(&Self::object(prefix, key)?).await {
                    Ok(object) => object,
                    Err(object_store::Error::NotFound { .. }) => {
                        return tokio::fs::read(earlier.join(key)).await;
                    }
                    Err(err) => return Err(io_error(err)),
                };
                Ok(object.bytes().await.map_err(io_error)?.to_vec())
            }
        }
    }

    /// The first `n` bytes at `key` (fewer if it is shorter).
    pub async fn get_head(&self, key: &str, n: usize) -> std::io::Result<Vec<u8>> {
        match &*self.backend {
            Backend::Directory(root) => {
                let file = tokio::fs::File::open(root.join(key)).await?;
                let mut head = Vec::with_capacity(n);
                file.take(n as u64).read_to_end(&mut head).await?;
                Ok(head)
            }
            Backend::Objects { store, prefix, .. } => {
                let location = Self::object(prefix, key)?;
                let size = store.head(&location).await.map_err(io_error)?.size;
                let end = size.min(n as u64);
                if end == 0 {
                    return Ok(Vec::new());
                }
                let bytes = store.get_range(&location, 0..end).await.map_err(io_error)?;
                Ok(bytes.to_vec())
            }
        }
    }

    /// The size of the bytes at `key`, `None` when there are none.
    pub async fn size(&self, key: &str) -> std::io::Result<Option<u64>> {
        let found = match &*self.backend {
            Backend::Directory(root) => match tokio::fs::metadata(root.join(key)).await {
                Ok(meta) if meta.is_file() => Ok(meta.len()),
                Ok(_) => Err(std::io::ErrorKind::NotFound.into()),
                Err(err) => Err(err),
            },
            Backend::Objects { store, prefix, .. } => store
                .head(&Self::object(prefix, key)?)
                .await
                .map(|meta| meta.size)
                .map_err(io_error),
        };
        match found {
            Ok(size) => Ok(Some(size)),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// Removes `key`; one already gone is no error.
    pub async fn delete(&self, key: &str) -> std::io::Result<()> {
        let done = match &*self.backend {
            Backend::Directory(root) => tokio::fs::remove_file(root.join(key)).await,
            Backend::Objects {
                store,
                prefix,
                earlier,
                ..
            } => {
                let _ = tokio::fs::remove_file(earlier.join(key)).await;
                store
                    .delete(&Self::object(prefix, key)?)
                    .await
                    .map_err(io_error)
            }
        };
        match done {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }

    /// Removes every key under `prefix/` (a deleted chat's files).
    pub async fn delete_all(&self, prefix: &str) -> std::io::Result<()> {
        let done = match &*self.backend {
            Backend::Directory(root) => tokio::fs::remove_dir_all(root.join(prefix)).await,
            Backend::Objects {
                store,
                prefix: base,
                earlier,
                ..
            } => {
                let _ = tokio::fs::remove_dir_all(earlier.join(prefix)).await;
                let under = Self::object(base, prefix)?;
                let keys = store
                    .list(Some(&under))
                    .map_ok(|meta| meta.location)
                    .boxed();
                store
                    .delete_stream(keys)
                    .try_collect::<Vec<_>>()
                    .await
                    .map(|_| ())
                    .map_err(io_error)
            }
        };
        match done {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }

    /// The names directly under `prefix/` (a directory's entries; a store's common prefixes
    /// and objects).
    pub async fn children(&self, prefix: &str) -> std::io::Result<Vec<String>> {
        match &*self.backend {
            Backend::Directory(root) => {
                let mut entries = match tokio::fs::read_dir(root.join(prefix)).await {
                    Ok(entries) => entries,
                    Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                        return Ok(Vec::new());
                    }
                    Err(err) => return Err(err),
                };
                let mut names = Vec::new();
                while let Some(entry) = entries.next_entry().await? {
                    if let Some(name) = entry.file_name().to_str() {
                        names.push(name.to_string());
                    }
                }
                Ok(names)
            }
            Backend::Objects {
                store,
                prefix: base,
                ..
            } => {
                let under = Self::object(base, prefix)?;
                let listed = store
                    .list_with_delimiter(Some(&under))
                    .await
                    .map_err(io_error)?;
                Ok(listed
                    .common_prefixes
                    .iter()
                    .chain(listed.objects.iter().map(|meta| &meta.location))
                    .filter_map(|path| path.filename().map(str::to_string))
                    .collect())
            }
        }
    }

    /// What `/health` and logs say the storage is.
    pub fn describe(&self) -> String {
        match &*self.backend {
            Backend::Directory(_) => "data directory".into(),
            Backend::Objects { url, .. } => url.clone(),
        }
    }
}

fn io_error(err: object_store::Error) -> std::io::Error {
    match err {
        object_store::Error::NotFound { .. } => {
            std::io::Error::new(std::io::ErrorKind::NotFound, err)
        }
        other => std::io::Error::other(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_data_directory_keeps_each_key_as_a_file_and_forgets_by_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let storage = Storage::directory(dir.path());
        storage
            .put("attachments/chat1/a", Bytes::from_static(b"one"))
            .await
            .unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("attachments/chat1/a")).unwrap(),
            b"one"
        );
        assert_eq!(storage.get("attachments/chat1/a").await.unwrap(), b"one");
        assert_eq!(
            storage.get("attachments/chat1/b").await.unwrap_err().kind(),
            std::io::ErrorKind::NotFound
        );
        assert_eq!(storage.children("attachments").await.unwrap(), ["chat1"]);
        storage.delete("attachments/chat1/b").await.unwrap();
        let source = dir.path().join("upload.part");
        std::fs::write(&source, b"two").unwrap();
        storage
            .put_file("documents/chat1/d", &source)
            .await
            .unwrap();
        assert!(!source.exists(), "moved, not copied");
        assert_eq!(storage.get("documents/chat1/d").await.unwrap(), b"two");
        storage.delete_all("attachments/chat1").await.unwrap();
        storage.delete_all("attachments/never").await.unwrap();
        assert!(!dir.path().join("attachments/chat1").exists());
        assert!(storage.children("attachments").await.unwrap().is_empty());
    }
}
