//! `Containers`: the code interpreter's containers. A container is a row (`containers`), its
//! files (`container_files`, their bytes in the storage under `containers/<id>/<file id>`) and,
//! while it is in use, a sandbox of this process (`Sandbox`, the live interpreter whose Python
//! state persists from one call to the next).
//!
//! - A call (`exec`) starts the container's sandbox if it has none (its files put back in its
//!   `/mnt/data`), runs the code, and keeps every file the code wrote or changed: read out of
//!   the sandbox, stored, recorded. One call at a time per container. Files are placed part by
//!   part (`Sandbox::put`), each part under a bound of its own: only the code has the call's
//!   time limit, and a restart that cannot put the files back is a failure to start.
//! - Sandboxes are bounded per process (`max_containers`): a new one takes the place of the
//!   one used longest ago that is idle, or is refused when all are busy.
//! - `sweep` (a background job) stops the sandboxes idle past `idle_minutes` (the Python state
//!   is gone; the files stay) and deletes containers unused for `retention_days`.
//! - A chat's containers go with it (`forget_chat`; the rows by the foreign key).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use bytes::Bytes;
use chrono::Utc;
use entities::container_files;
use entities::containers;
use entities::ids::{ChatId, ContainerFileId, ContainerId, FileId, UserId};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, DbErr, EntityTrait, PaginatorTrait,
    QueryFilter, QueryOrder, Set,
};
use serde_json::{Value, json};

use super::sandbox::{Limits, Sandbox, SandboxError, Spec, find_program};
use crate::config::CodeInterpreterConfig;
use crate::documents::Workspace;
use crate::metrics::Metrics;
use crate::storage::Storage;

/// Where a container's files and their bytes live: the mount point in the sandbox.
pub const DATA: &str = "/mnt/data";

/// The largest file read back out of a sandbox and kept (a larger one stays in the sandbox
/// only, and the log says so): what one answer line carries is bounded by it.
const MAX_KEPT_FILE: u64 = 64 * 1024 * 1024;

/// The most one call's answer may be: its output, eight figures and the list of its files.
const MAX_EXEC_ANSWER: usize = 48 * 1024 * 1024;

/// How long a new sandbox may take to be ready.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// Why a container operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ContainerError {
    #[error("the code interpreter is not available here: {0}")]
    Unavailable(String),
    #[error("no such container")]
    NotFound,
    #[error("no such file in this container")]
    FileNotFound,
    #[error("{0}")]
    Limit(String),
    #[error("{0}")]
    Invalid(String),
    #[error("every sandbox of this server is busy; try again shortly")]
    Busy,
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    #[error(transparent)]
    Db(#[from] DbErr),
    #[error("a container file could not be stored or read: {0}")]
    Io(#[from] std::io::Error),
}

/// What one call did.
#[derive(Debug, Default)]
pub struct Execution {
    /// What it printed (standard output, then standard error, then what its programs wrote),
    /// cut at `max_output_chars` with a note.
    pub logs: String,
    /// The exception it raised, as Python prints it (`None`: it ran to its end).
    pub error: Option<String>,
    /// The limit the exception means it reached (`memory`, `file_size`, `container_size`,
    /// `processes`, `open_files`), if any.
    pub limit: Option<&'static str>,
    /// The figures matplotlib held at its end, as PNG.
    pub images: Vec<Vec<u8>>,
    /// The files it wrote or changed, as now stored.
    pub files: Vec<container_files::Model>,
}

/// A container's sandbox in this process, and what is known of its files.
struct Slot {
    sandbox: Option<Sandbox>,
    uid: Option<super::uids::UidLease>,
    /// The files of `/mnt/data` as last stored: path → (id, size, modification time).
    known: HashMap<String, (ContainerFileId, u64, i64)>,
    /// Taken out of the list (stopped, evicted): a call that waited for it finds a new one.
    evicted: bool,
}

struct Live {
    slot: Arc<tokio::sync::Mutex<Slot>>,
    last_used: Instant,
}

struct Inner {
    config: CodeInterpreterConfig,
    spec: Option<Spec>,
    unavailable: Option<String>,
    db: DatabaseConnection,
    storage: Storage,
    workspace: Workspace,
    metrics: Arc<Metrics>,
    live: Mutex<HashMap<ContainerId, Live>>,
    /// Whether sandboxes run as users of their own (the server is root).
    own_users: bool,
}

/// The code interpreter's containers; cheap to clone.
#[derive(Clone)]
pub struct Containers {
    inner: Arc<Inner>,
}

fn storage_key(container: &ContainerId, file: &ContainerFileId) -> String {
    format!("containers/{container}/{file}")
}

/// The limit an exception of the code's means it reached.
fn limit_of(error: &Value) -> Option<&'static str> {
    let name = error["ename"].as_str().unwrap_or_default();
    let value = error["evalue"].as_str().unwrap_or_default();
    match name {
        "MemoryError" => Some("memory"),
        _ if value.contains("[Errno 27]") => Some("file_size"),
        _ if value.contains("[Errno 28]") => Some("container_size"),
        _ if value.contains("[Errno 24]") => Some("open_files"),
        _ if value.contains("[Errno 11]") => Some("processes"),
        _ => None,
    }
}

/// `text` cut to at most `max` characters.
fn cut(text: &str, max: usize) -> (&str, bool) {
    match text.char_indices().nth(max) {
        Some((end, _)) => (&text[..end], true),
        None => (text, false),
    }
}

impl Containers {
    pub fn new(
        config: &CodeInterpreterConfig,
        db: DatabaseConnection,
        storage: Storage,
        workspace: Workspace,
        metrics: Arc<Metrics>,
    ) -> Self {
        let bwrap = find_program(&config.bwrap_path);
        let python = find_program(&config.python_path);
        let unavailable = if !config.enabled {
            Some("code_interpreter.enabled is false".to_string())
        } else if bwrap.is_none() {
            Some(format!(
                "bubblewrap ({}) is not installed",
                config.bwrap_path.display()
            ))
        } else if python.is_none() {
            Some(format!(
                "Python ({}) is not installed",
                config.python_path.display()
            ))
        } else {
            None
        };
        let spec = bwrap.zip(python).map(|(bwrap, python)| Spec {
            bwrap,
            python,
            limits: Limits {
                memory_mb: config.memory_mb,
                max_processes: config.max_processes,
                max_open_files: config.max_open_files,
                container_mb: config.container_mb,
                tmp_mb: 64,
            },
        });
        // SAFETY: geteuid has no preconditions.
        let own_users = unsafe { libc::geteuid() } == 0;
        Self {
            inner: Arc::new(Inner {
                config: config.clone(),
                spec,
                unavailable,
                db,
                storage,
                workspace,
                metrics,
                live: Mutex::new(HashMap::new()),
                own_users,
            }),
        }
    }

    /// Why the tool is not offered here, if it is not.
    pub fn unavailable(&self) -> Option<&str> {
        self.inner.unavailable.as_deref()
    }

    pub fn config(&self) -> &CodeInterpreterConfig {
        &self.inner.config
    }

    fn available(&self) -> Result<&Spec, ContainerError> {
        match (&self.inner.unavailable, &self.inner.spec) {
            (None, Some(spec)) => Ok(spec),
            (Some(why), _) => Err(ContainerError::Unavailable(why.clone())),
            (None, None) => Err(ContainerError::Unavailable("no sandbox".into())),
        }
    }

    /// Makes a container for `user` (and `chat`), with `file_ids` (the user's `/v1/files`)
    /// placed in it.
    pub async fn create(
        &self,
        user: &UserId,
        chat: Option<&ChatId>,
        name: &str,
        file_ids: &[FileId],
    ) -> Result<containers::Model, ContainerError> {
        self.available()?;
        let config = &self.inner.config;
        let owned = containers::Entity::find()
            .filter(containers::Column::UserId.eq(user))
            .count(&self.inner.db)
            .await?;
        if owned as usize >= config.max_containers_per_user {
            return Err(ContainerError::Limit(format!(
                "a user may have at most {} containers; delete one first",
                config.max_containers_per_user
            )));
        }
        if let Some(chat) = chat {
            let of_chat = containers::Entity::find()
                .filter(containers::Column::ChatId.eq(chat))
                .count(&self.inner.db)
                .await?;
            if of_chat as usize >= config.max_containers_per_chat {
                return Err(ContainerError::Limit(format!(
                    "a chat may have at most {} containers",
                    config.max_containers_per_chat
                )));
            }
        }
        let mut files = Vec::new();
        for id in file_ids {
            let file = self
                .inner
                .workspace
                .file_owned(user, id)
                .await?
                .ok_or_else(|| ContainerError::Invalid(format!("no file {id}")))?;
            files.push(file);
        }
        let now = Utc::now();
        let container = containers::ActiveModel {
            id: Set(ContainerId::generate()),
            user_id: Set(user.clone()),
            chat_id: Set(chat.cloned()),
            name: Set(if name.trim().is_empty() {
                "container".to_string()
            } else {
                name.chars().take(200).collect()
            }),
            expires_after_minutes: Set(config.idle_minutes as i32),
            created_at: Set(now),
            last_active_at: Set(now),
        }
        .insert(&self.inner.db)
        .await?;
        for file in files {
            let bytes = self.inner.workspace.read_stored(&file.storage_path).await?;
            self.add_file(&container, &file.filename, bytes).await?;
        }
        Ok(container)
    }

    /// Places in the container the chat's uploaded documents (its 50 most recent) that it does
    /// not hold yet, each as `/mnt/data/<its file name>`: "load this CSV" finds the CSV.
    pub async fn place_chat_documents(
        &self,
        container: &containers::Model,
        chat: &ChatId,
    ) -> Result<(), ContainerError> {
        let held: Vec<String> = self
            .files(container)
            .await?
            .into_iter()
            .map(|f| f.path)
            .collect();
        let limit = self.inner.config.container_mb * 1024 * 1024;
        for document in self.inner.workspace.list_recent(chat, 50).await? {
            let path = format!("{DATA}/{}", document.filename);
            if document.status == entities::documents::DocumentStatus::Uploading
                || document.size_bytes as u64 > limit
                || held.contains(&path)
            {
                continue;
            }
            match self
                .inner
                .workspace
                .read_stored(&document.storage_path)
                .await
            {
                Ok(bytes) => {
                    if let Err(err) = self.add_file(container, &document.filename, bytes).await {
                        tracing::warn!(container = %container.id, %err, "a chat's document was not placed in its container");
                    }
                }
                Err(err) => {
                    tracing::warn!(container = %container.id, %err, "a chat's document could not be read")
                }
            }
        }
        Ok(())
    }

    /// Places the user's `/v1/files` file `id` in the container.
    pub async fn add_user_file(
        &self,
        container: &containers::Model,
        user: &UserId,
        id: &FileId,
    ) -> Result<container_files::Model, ContainerError> {
        let file = self
            .inner
            .workspace
            .file_owned(user, id)
            .await?
            .ok_or_else(|| ContainerError::Invalid(format!("no file {id}")))?;
        let bytes = self.inner.workspace.read_stored(&file.storage_path).await?;
        self.add_file(container, &file.filename, bytes).await
    }

    /// The container `id` if `user`'s.
    pub async fn get_owned(
        &self,
        user: &UserId,
        id: &ContainerId,
    ) -> Result<containers::Model, ContainerError> {
        containers::Entity::find_by_id(id.clone())
            .filter(containers::Column::UserId.eq(user))
            .one(&self.inner.db)
            .await?
            .ok_or(ContainerError::NotFound)
    }

    /// The user's containers, newest first.
    pub async fn list(&self, user: &UserId) -> Result<Vec<containers::Model>, ContainerError> {
        Ok(containers::Entity::find()
            .filter(containers::Column::UserId.eq(user))
            .order_by_desc(containers::Column::CreatedAt)
            .all(&self.inner.db)
            .await?)
    }

    /// The chat's container used last, or a new one: a chat's calls share one container across
    /// its turns.
    pub async fn of_chat(
        &self,
        user: &UserId,
        chat: &ChatId,
    ) -> Result<containers::Model, ContainerError> {
        let found = containers::Entity::find()
            .filter(containers::Column::ChatId.eq(chat))
            .filter(containers::Column::UserId.eq(user))
            .order_by_desc(containers::Column::LastActiveAt)
            .one(&self.inner.db)
            .await?;
        match found {
            Some(container) => Ok(container),
            None => self.create(user, Some(chat), "chat", &[]).await,
        }
    }

    /// Whether the container's sandbox is running in this process.
    pub fn is_running(&self, id: &ContainerId) -> bool {
        self.lock_live().contains_key(id)
    }

    fn lock_live(&self) -> std::sync::MutexGuard<'_, HashMap<ContainerId, Live>> {
        self.inner
            .live
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Deletes the container: its sandbox, its files, its row.
    pub async fn delete(&self, user: &UserId, id: &ContainerId) -> Result<(), ContainerError> {
        let container = self.get_owned(user, id).await?;
        self.stop(&container.id).await;
        containers::Entity::delete_by_id(container.id.clone())
            .exec(&self.inner.db)
            .await?;
        let _ = self
            .inner
            .storage
            .delete_all(&format!("containers/{}/", container.id))
            .await;
        Ok(())
    }

    /// The ids of `chat`'s containers (read before the chat is deleted: its rows take theirs).
    pub async fn ids_of_chat(&self, chat: &ChatId) -> Result<Vec<ContainerId>, DbErr> {
        Ok(containers::Entity::find()
            .filter(containers::Column::ChatId.eq(chat))
            .all(&self.inner.db)
            .await?
            .into_iter()
            .map(|c| c.id)
            .collect())
    }

    /// Stops the sandboxes of a deleted chat's containers and removes their files (their rows
    /// went with the chat's).
    pub async fn forget(&self, ids: &[ContainerId]) {
        for id in ids {
            self.stop(id).await;
            let _ = self
                .inner
                .storage
                .delete_all(&format!("containers/{id}/"))
                .await;
        }
    }

    /// Stops the container's sandbox here, if it runs; its files stay.
    async fn stop(&self, id: &ContainerId) {
        let live = self.lock_live().remove(id);
        if let Some(live) = live {
            let mut slot = live.slot.lock().await;
            slot.evicted = true;
            self.release(&mut slot).await;
        }
    }

    async fn release(&self, slot: &mut Slot) {
        if let Some(mut sandbox) = slot.sandbox.take() {
            sandbox.kill().await;
            self.inner.metrics.sandbox_stopped();
        }
        // Its user is let go once the sandbox is dead.
        slot.uid = None;
    }

    /// The slot's sandbox is gone (killed on a timeout, or broken).
    fn lost(&self, slot: &mut Slot) {
        if slot.sandbox.take().is_some() {
            self.inner.metrics.sandbox_stopped();
        }
    }

    /// The container's files, oldest first.
    pub async fn files(
        &self,
        container: &containers::Model,
    ) -> Result<Vec<container_files::Model>, ContainerError> {
        Ok(container_files::Entity::find()
            .filter(container_files::Column::ContainerId.eq(container.id.clone()))
            .order_by_asc(container_files::Column::CreatedAt)
            .all(&self.inner.db)
            .await?)
    }

    pub async fn file(
        &self,
        container: &containers::Model,
        id: &ContainerFileId,
    ) -> Result<container_files::Model, ContainerError> {
        container_files::Entity::find_by_id(id.clone())
            .filter(container_files::Column::ContainerId.eq(container.id.clone()))
            .one(&self.inner.db)
            .await?
            .ok_or(ContainerError::FileNotFound)
    }

    /// A file's bytes.
    pub async fn content(&self, file: &container_files::Model) -> Result<Vec<u8>, ContainerError> {
        Ok(self
            .inner
            .storage
            .get(&storage_key(&file.container_id, &file.id))
            .await?)
    }

    /// Removes a file from the container (and from its sandbox, when it runs).
    pub async fn delete_file(
        &self,
        container: &containers::Model,
        id: &ContainerFileId,
    ) -> Result<(), ContainerError> {
        let file = self.file(container, id).await?;
        container_files::Entity::delete_by_id(file.id.clone())
            .exec(&self.inner.db)
            .await?;
        let _ = self
            .inner
            .storage
            .delete(&storage_key(&file.container_id, &file.id))
            .await;
        if let Some(slot) = self.slot_of(&container.id) {
            let mut slot = slot.lock().await;
            slot.known.remove(&file.path);
            if let Some(sandbox) = slot.sandbox.as_mut() {
                let code = format!(
                    "import os\ntry:\n    os.remove({})\nexcept OSError:\n    pass\n",
                    json!(file.path)
                );
                let _ = sandbox
                    .request(
                        &json!({"op": "exec", "code": code, "max_output": 100}),
                        self.call_timeout(),
                        1 << 20,
                    )
                    .await;
            }
        }
        Ok(())
    }

    /// Places `bytes` in the container as `/mnt/data/<filename>` (a file of the user's).
    pub async fn add_file(
        &self,
        container: &containers::Model,
        filename: &str,
        bytes: Vec<u8>,
    ) -> Result<container_files::Model, ContainerError> {
        let name = std::path::Path::new(filename)
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| !n.starts_with('.') && !n.is_empty())
            .ok_or_else(|| ContainerError::Invalid(format!("{filename:?} is not a file name")))?;
        let limit = self.inner.config.container_mb * 1024 * 1024;
        if bytes.len() as u64 > limit {
            return Err(ContainerError::Limit(format!(
                "a container file may be at most {} MB",
                self.inner.config.container_mb
            )));
        }
        let path = format!("{DATA}/{name}");
        let row = self
            .keep(container, &path, "user", Bytes::from(bytes.clone()))
            .await?;
        if let Some(slot) = self.slot_of(&container.id) {
            let mut slot = slot.lock().await;
            if let Some(sandbox) = slot.sandbox.as_mut() {
                match sandbox.put(name, &bytes).await {
                    Ok(()) => {}
                    Err(SandboxError::Refused(why)) => {
                        tracing::warn!(file = %row.id, %why, "a container file was not placed")
                    }
                    Err(err) => return Err(err.into()),
                }
                slot.known
                    .insert(path, (row.id.clone(), row.bytes as u64, 0));
            }
        }
        Ok(row)
    }

    /// Stores `bytes` as the file at `path` of the container: a new row, or the one already
    /// at that path with its new size.
    async fn keep(
        &self,
        container: &containers::Model,
        path: &str,
        source: &str,
        bytes: Bytes,
    ) -> Result<container_files::Model, ContainerError> {
        let existing = container_files::Entity::find()
            .filter(container_files::Column::ContainerId.eq(container.id.clone()))
            .filter(container_files::Column::Path.eq(path))
            .one(&self.inner.db)
            .await?;
        let size = bytes.len() as i64;
        match existing {
            Some(row) => {
                self.inner
                    .storage
                    .put(&storage_key(&container.id, &row.id), bytes)
                    .await?;
                let mut update: container_files::ActiveModel = row.into();
                update.bytes = Set(size);
                Ok(update.update(&self.inner.db).await?)
            }
            None => {
                let id = ContainerFileId::generate();
                self.inner
                    .storage
                    .put(&storage_key(&container.id, &id), bytes)
                    .await?;
                Ok(container_files::ActiveModel {
                    id: Set(id),
                    container_id: Set(container.id.clone()),
                    path: Set(path.to_string()),
                    bytes: Set(size),
                    source: Set(source.to_string()),
                    created_at: Set(Utc::now()),
                }
                .insert(&self.inner.db)
                .await?)
            }
        }
    }

    fn slot_of(&self, id: &ContainerId) -> Option<Arc<tokio::sync::Mutex<Slot>>> {
        self.lock_live().get(id).map(|live| Arc::clone(&live.slot))
    }

    fn call_timeout(&self) -> Duration {
        Duration::from_secs(self.inner.config.timeout_secs)
    }

    /// The container's slot, made (and a place for its sandbox taken) if it has none: the
    /// idle sandbox used longest ago is stopped when every place is taken.
    async fn slot(
        &self,
        container: &containers::Model,
    ) -> Result<Arc<tokio::sync::Mutex<Slot>>, ContainerError> {
        loop {
            let evict = {
                let mut live = self.lock_live();
                if let Some(found) = live.get_mut(&container.id) {
                    found.last_used = Instant::now();
                    return Ok(Arc::clone(&found.slot));
                }
                if live.len() < self.inner.config.max_containers {
                    let slot = Arc::new(tokio::sync::Mutex::new(Slot {
                        sandbox: None,
                        uid: None,
                        known: HashMap::new(),
                        evicted: false,
                    }));
                    live.insert(
                        container.id.clone(),
                        Live {
                            slot: Arc::clone(&slot),
                            last_used: Instant::now(),
                        },
                    );
                    return Ok(slot);
                }
                // The idle one used longest ago (a busy one's lock is held).
                live.iter()
                    .filter(|(_, l)| l.slot.try_lock().is_ok())
                    .min_by_key(|(_, l)| l.last_used)
                    .map(|(id, _)| id.clone())
            };
            match evict {
                Some(id) => self.stop(&id).await,
                None => return Err(ContainerError::Busy),
            }
        }
    }

    /// Starts the slot's sandbox, with the container's files put back in it.
    async fn start(
        &self,
        container: &containers::Model,
        slot: &mut Slot,
    ) -> Result<(), ContainerError> {
        let spec = self.available()?.clone();
        if self.inner.own_users && slot.uid.is_none() {
            slot.uid =
                Some(super::uids::take(self.inner.config.first_uid).ok_or(ContainerError::Busy)?);
        }
        self.lost(slot);
        let mut sandbox =
            Sandbox::start(&spec, slot.uid.as_ref().map(|l| l.uid), START_TIMEOUT).await?;
        slot.known.clear();
        for file in self.files(container).await? {
            let Some(name) = file.path.strip_prefix(&format!("{DATA}/")) else {
                continue;
            };
            let bytes = match self.content(&file).await {
                Ok(bytes) => bytes,
                Err(err) => {
                    tracing::warn!(file = %file.id, %err, "a container file could not be read back");
                    continue;
                }
            };
            match sandbox.put(name, &bytes).await {
                Ok(()) => {}
                Err(SandboxError::Refused(why)) => {
                    tracing::warn!(file = %file.id, %why, "a container file was not put back")
                }
                // Not the code's fault, whatever the sandbox did: not its time limit either.
                Err(err) => {
                    return Err(SandboxError::Start(format!(
                        "the container's files could not be put back: {err}"
                    ))
                    .into());
                }
            }
            slot.known
                .insert(file.path.clone(), (file.id.clone(), file.bytes as u64, 0));
        }
        // What the sandbox reports of the files put back is their state now.
        if let Ok(listing) = sandbox
            .request(&json!({"op": "list"}), self.call_timeout(), 1 << 20)
            .await
        {
            for file in listing["files"].as_array().into_iter().flatten() {
                if let (Some(path), Some(size), Some(mtime)) = (
                    file["path"].as_str(),
                    file["bytes"].as_u64(),
                    file["mtime_ns"].as_i64(),
                ) && let Some(known) = slot.known.get_mut(path)
                {
                    known.1 = size;
                    known.2 = mtime;
                }
            }
        }
        slot.sandbox = Some(sandbox);
        self.inner.metrics.sandbox_started();
        Ok(())
    }

    /// Runs `code` in the container, starting its sandbox if it has none; keeps the files it
    /// wrote. A call past the time limit (or one that ends its interpreter) is a `Sandbox`
    /// error: the sandbox is gone with everything it started, the files kept.
    pub async fn exec(
        &self,
        container: &containers::Model,
        code: &str,
    ) -> Result<Execution, ContainerError> {
        let config = &self.inner.config;
        let mut slot = loop {
            let slot = self.slot(container).await?;
            let slot = slot.lock_owned().await;
            if !slot.evicted {
                break slot;
            }
        };
        if let Some(live) = self.lock_live().get_mut(&container.id) {
            live.last_used = Instant::now();
        }
        if slot.sandbox.as_mut().is_none_or(|s| !s.is_alive())
            && let Err(err) = self.start(container, &mut slot).await
        {
            // Not running: out of the list, its place free.
            slot.evicted = true;
            self.lock_live().remove(&container.id);
            self.release(&mut slot).await;
            return Err(err);
        }
        let _ = containers::Entity::update_many()
            .col_expr(
                containers::Column::LastActiveAt,
                sea_orm::sea_query::Expr::value(Utc::now()),
            )
            .filter(containers::Column::Id.eq(container.id.clone()))
            .exec(&self.inner.db)
            .await;
        let max_answer = MAX_EXEC_ANSWER;
        let request = json!({"op": "exec", "code": code, "max_output": config.max_output_chars});
        let sandbox = slot.sandbox.as_mut().ok_or(ContainerError::Busy)?;
        let answer = match sandbox
            .request(&request, self.call_timeout(), max_answer)
            .await
        {
            Ok(answer) => answer,
            Err(err) => {
                let limit = match &err {
                    SandboxError::Timeout(_) => "time",
                    SandboxError::Memory(_) => "memory",
                    SandboxError::TooLarge(_) => "output",
                    _ => "ended",
                };
                self.inner.metrics.sandbox_limit(limit);
                self.lost(&mut slot);
                return Err(err.into());
            }
        };
        let mut execution = self.read_execution(&answer);
        if let Some(limit) = execution.limit {
            self.inner.metrics.sandbox_limit(limit);
        }
        execution.files = self
            .keep_changed(container, &mut slot, &answer["files"])
            .await;
        Ok(execution)
    }

    fn read_execution(&self, answer: &Value) -> Execution {
        let max = self.inner.config.max_output_chars;
        let mut logs = String::new();
        for key in ["stdout", "stderr", "raw"] {
            if let Some(text) = answer[key].as_str() {
                logs.push_str(text);
            }
        }
        let (kept, was_cut) = cut(&logs, max);
        let dropped = answer["dropped"].as_u64().unwrap_or(0);
        let mut logs = kept.to_string();
        if was_cut || dropped > 0 {
            logs.push_str(&format!(
                "\n[output truncated: only the first {max} characters are kept]"
            ));
        }
        let error = answer["error"].is_object().then(|| {
            let traceback = answer["error"]["traceback"].as_str().unwrap_or_default();
            if traceback.is_empty() {
                format!(
                    "{}: {}",
                    answer["error"]["ename"].as_str().unwrap_or("Error"),
                    answer["error"]["evalue"].as_str().unwrap_or_default()
                )
            } else {
                cut(traceback, max).0.to_string()
            }
        });
        let images = answer["images"]
            .as_array()
            .into_iter()
            .flatten()
            .take(8)
            .filter_map(Value::as_str)
            .filter_map(|b64| base64::engine::general_purpose::STANDARD.decode(b64).ok())
            .filter(|png| png.starts_with(b"\x89PNG"))
            .collect();
        Execution {
            logs,
            limit: limit_of(&answer["error"]),
            error,
            images,
            files: Vec::new(),
        }
    }

    /// Reads out of the sandbox and stores each file of `listing` that is new or changed.
    async fn keep_changed(
        &self,
        container: &containers::Model,
        slot: &mut Slot,
        listing: &Value,
    ) -> Vec<container_files::Model> {
        let limit = (self.inner.config.container_mb * 1024 * 1024).min(MAX_KEPT_FILE);
        let mut kept = Vec::new();
        for file in listing.as_array().into_iter().flatten().take(1000) {
            let (Some(path), Some(size), Some(mtime)) = (
                file["path"].as_str(),
                file["bytes"].as_u64(),
                file["mtime_ns"].as_i64(),
            ) else {
                continue;
            };
            if !path.starts_with(&format!("{DATA}/")) || path.len() > 1024 {
                continue;
            }
            if size > limit {
                tracing::warn!(container = %container.id, path, size, "a file larger than what is kept stays in its sandbox only");
                continue;
            }
            if slot
                .known
                .get(path)
                .is_some_and(|(_, s, m)| *s == size && *m == mtime)
            {
                continue;
            }
            let Some(sandbox) = slot.sandbox.as_mut() else {
                break;
            };
            let name = &path[DATA.len() + 1..];
            let get = json!({"op": "get", "path": name, "max_bytes": limit});
            let answer = match sandbox
                .request(&get, self.call_timeout(), (limit as usize) / 3 * 4 + 8192)
                .await
            {
                Ok(answer) => answer,
                Err(err) => {
                    tracing::warn!(container = %container.id, %err, "a container file could not be read");
                    self.lost(slot);
                    break;
                }
            };
            let Some(bytes) = answer["b64"]
                .as_str()
                .and_then(|b64| base64::engine::general_purpose::STANDARD.decode(b64).ok())
            else {
                continue;
            };
            match self
                .keep(container, path, "assistant", Bytes::from(bytes))
                .await
            {
                Ok(row) => {
                    slot.known
                        .insert(path.to_string(), (row.id.clone(), size, mtime));
                    kept.push(row);
                }
                Err(err) => {
                    tracing::warn!(container = %container.id, %err, "a container file could not be stored")
                }
            }
        }
        kept
    }

    /// Stops the sandboxes idle past `idle_minutes`, and deletes the containers unused for
    /// `retention_days`.
    pub async fn sweep(&self) {
        self.stop_idle(Duration::from_secs(
            u64::from(self.inner.config.idle_minutes) * 60,
        ))
        .await;
        let before =
            Utc::now() - chrono::Duration::days(i64::from(self.inner.config.retention_days));
        let old = containers::Entity::find()
            .filter(containers::Column::LastActiveAt.lt(before))
            .all(&self.inner.db)
            .await;
        for container in old.into_iter().flatten() {
            let _ = self.delete(&container.user_id, &container.id).await;
        }
    }

    /// Stops the sandboxes unused for `idle` (their Python state is gone; their files stay).
    pub async fn stop_idle(&self, idle: Duration) {
        let stale: Vec<ContainerId> = self
            .lock_live()
            .iter()
            .filter(|(_, live)| live.last_used.elapsed() >= idle)
            .map(|(id, _)| id.clone())
            .collect();
        for id in stale {
            self.stop(&id).await;
        }
    }

    /// How often `sweep` runs.
    pub fn sweep_period(&self) -> Duration {
        Duration::from_secs(60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exception_names_the_limit_it_means() {
        assert_eq!(
            limit_of(&json!({"ename": "MemoryError", "evalue": ""})),
            Some("memory")
        );
        assert_eq!(
            limit_of(&json!({"ename": "OSError", "evalue": "[Errno 27] File too large"})),
            Some("file_size")
        );
        assert_eq!(
            limit_of(&json!({"ename": "OSError", "evalue": "[Errno 28] No space left on device"})),
            Some("container_size")
        );
        assert_eq!(
            limit_of(&json!({"ename": "ValueError", "evalue": "x"})),
            None
        );
        assert_eq!(limit_of(&Value::Null), None);
    }

    #[test]
    fn output_is_cut_at_a_character_boundary() {
        assert_eq!(cut("héllo", 2), ("hé", true));
        assert_eq!(cut("hi", 5), ("hi", false));
    }
}
