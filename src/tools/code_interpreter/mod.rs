//! `code_interpreter`: Python run in a sandboxed container (`sandbox`: bubblewrap around the
//! host's CPython; `containers`: containers with state, files and limits). A chat's calls share
//! the chat's container across turns (a variable set in one call is there in the next while it
//! lives); a Responses request names a container or asks for one (`"container": {"type":
//! "auto", "file_ids": [...]}`).
//!
//! Each call emits `x_code_interpreter.output` (its container, logs, the figures it drew as
//! PNG data URLs under `IMAGES_KEY`, the files it wrote), which the Responses encoder makes the
//! `code_interpreter_call` item's outputs and `container_file_citation`s from, and the chat's
//! UI shows. The model reads the logs, the error and the files' names, never the pictures'
//! bytes. In a stored chat each figure is also kept with the answer, as a generated picture is.

pub mod containers;
pub mod sandbox;
mod uids;

use std::borrow::Cow;
use std::sync::Arc;

use base64::Engine;
use entities::ids::{ContainerId, FileId};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ProgressKind, ToolError, ToolFuture, TypedTool};
use crate::chat::attachments::{Attachments, ImagePart};
use crate::run::log::RunLog;
use crate::tools::chat_context::Parts;
pub use containers::{ContainerError, Containers, Execution};

pub const CODE_INTERPRETER: &str = "code_interpreter";

/// What a server needs to offer it (said when an agent names it on a server without).
pub const NEEDS: &str = "bubblewrap and Python on the host ([code_interpreter])";

/// The event each call emits when it has run.
pub const OUTPUT_EVENT: &str = "x_code_interpreter.output";

/// The key of `OUTPUT_EVENT`'s payload that carries the figures (PNG data URLs): read by the
/// Responses encoder and the UI, left out of `x_metadata`.
pub const IMAGES_KEY: &str = "x_images";

/// The id of the output item of the model's call `call_id`.
pub fn item_id(call_id: &str) -> String {
    format!("ci_{call_id}")
}

/// Longest code one call may carry, in characters.
const MAX_CODE_CHARS: usize = 100_000;

/// Which container a run's calls use.
#[derive(Debug, Clone, PartialEq)]
pub enum Choice {
    /// The chat's (made on first use, reused across turns), or a new one for a run without a
    /// chat; with these files of the user's placed in it.
    Auto { file_ids: Vec<FileId> },
    /// A container the user made (`POST /v1/containers`) or an earlier response used.
    Named(ContainerId),
}

impl Choice {
    /// A Responses tool's `container`: a container id, or `{"type": "auto", "file_ids"}`.
    pub fn parse(container: &Value) -> Result<Self, String> {
        match container {
            Value::Null => Ok(Self::Auto {
                file_ids: Vec::new(),
            }),
            Value::String(id) => ContainerId::parse(id)
                .map(Self::Named)
                .ok_or_else(|| format!("code_interpreter.container {id:?} is not a container id")),
            Value::Object(fields) => {
                if fields.get("type").and_then(Value::as_str) != Some("auto") {
                    return Err("code_interpreter.container.type must be \"auto\"".into());
                }
                let ids = match fields.get("file_ids") {
                    None | Some(Value::Null) => Vec::new(),
                    Some(Value::Array(ids)) if ids.len() <= 50 => ids
                        .iter()
                        .map(|id| {
                            id.as_str().map(FileId::from_string).ok_or_else(|| {
                                "code_interpreter.container.file_ids must be strings".to_string()
                            })
                        })
                        .collect::<Result<_, _>>()?,
                    Some(_) => {
                        return Err(
                            "code_interpreter.container.file_ids must be at most 50 file ids"
                                .into(),
                        );
                    }
                };
                Ok(Self::Auto { file_ids: ids })
            }
            _ => Err("code_interpreter.container must be a container id or an object".into()),
        }
    }

    /// The `container` field this choice was parsed from.
    pub fn to_value(&self) -> Value {
        match self {
            Self::Auto { file_ids } => json!({"type": "auto", "file_ids": file_ids}),
            Self::Named(id) => json!(id),
        }
    }
}

pub struct CodeInterpreterTool {
    containers: Containers,
    log: Arc<RunLog>,
    choice: Choice,
    /// The container this run's calls use, once the first call found or made it.
    container: Arc<tokio::sync::OnceCell<entities::containers::Model>>,
    /// In a stored chat: where figures are kept (attachments of the chat, parts of the answer).
    keep: Option<(Attachments, Parts)>,
    /// Whether the copy was built for a request's `container` (kept across a pause).
    requested: bool,
}

impl CodeInterpreterTool {
    pub fn new(containers: Containers, log: Arc<RunLog>, choice: Choice) -> Self {
        Self {
            containers,
            log,
            choice,
            container: Arc::new(tokio::sync::OnceCell::new()),
            keep: None,
            requested: false,
        }
    }

    /// This copy as a request asked for it.
    pub fn requested_by_request(mut self) -> Self {
        self.requested = true;
        self
    }

    /// In a stored chat: figures kept as attachments of the chat and parts of the answer.
    pub fn keeping(mut self, attachments: Attachments, parts: Parts) -> Self {
        if self.log.chat_id.is_some() {
            self.keep = Some((attachments, parts));
        }
        self
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Python 3 code to run. Variables persist between calls; files are under /mnt/data
    /// (files the user gave are there); print what you need to see; figures drawn with
    /// matplotlib are shown to the user.
    #[schemars(length(min = 1, max = MAX_CODE_CHARS))]
    code: String,
}

impl From<ContainerError> for ToolError {
    fn from(err: ContainerError) -> Self {
        use sandbox::SandboxError;
        match err {
            ContainerError::Sandbox(SandboxError::Timeout(secs)) => ToolError::new(
                "code_interpreter_timeout",
                format!(
                    "the code ran past the time limit of {secs} s and was stopped with \
                     everything it started; the interpreter restarts on the next call \
                     (variables are gone; the files kept from earlier calls are put back)"
                ),
                "Make the code faster, or split the work into smaller calls.",
            ),
            ContainerError::Sandbox(SandboxError::Memory(mb)) => ToolError::new(
                "code_interpreter_memory_limit",
                format!(
                    "the code's processes together used more than {mb} MB of memory and were \
                     stopped; the interpreter restarts on the next call (variables are gone, \
                     files in /mnt/data are kept)"
                ),
                "Use less memory: work on the data in parts.",
            ),
            ContainerError::Sandbox(SandboxError::TooLarge(bytes)) => ToolError::new(
                "code_interpreter_output_limit",
                format!(
                    "the call's answer (output, figures and files) was larger than {bytes} \
                     bytes; the interpreter was stopped"
                ),
                "Print less, and write large results to files.",
            ),
            ContainerError::Sandbox(SandboxError::Ended(why)) => ToolError::new(
                "code_interpreter_ended",
                format!(
                    "the interpreter ended during the call ({why}): it may have run out of \
                     memory or been killed; it restarts on the next call with its files"
                ),
                "Use less memory, and do not end the interpreter's own process.",
            ),
            ContainerError::Busy => ToolError::new(
                "code_interpreter_busy",
                err.to_string(),
                "Try again in a moment.",
            ),
            other => ToolError::new(
                "code_interpreter_failed",
                other.to_string(),
                "Tell the user the code could not be run.",
            ),
        }
    }
}

impl CodeInterpreterTool {
    async fn container(&self) -> Result<entities::containers::Model, ToolError> {
        let containers = &self.containers;
        let log = &self.log;
        let choice = &self.choice;
        self.container
            .get_or_try_init(|| async move {
                let user = &log.owner_id;
                match (choice, &log.chat_id) {
                    (Choice::Named(id), _) => Ok(containers.get_owned(user, id).await?),
                    (Choice::Auto { file_ids }, Some(chat)) => {
                        let container = containers.of_chat(user, chat).await?;
                        containers.place_chat_documents(&container, chat).await?;
                        for id in file_ids {
                            containers.add_user_file(&container, user, id).await?;
                        }
                        Ok(container)
                    }
                    (Choice::Auto { file_ids }, None) => {
                        Ok(containers.create(user, None, "auto", file_ids).await?)
                    }
                }
            })
            .await
            .cloned()
            .map_err(|err: ContainerError| err.into())
    }
}

/// Keeps a figure as an attachment of the run's chat and a part of its answer.
async fn keep_figure(log: &RunLog, attachments: &Attachments, parts: &Parts, png: Vec<u8>) {
    let Some(chat_id) = log.chat_id.as_ref() else {
        return;
    };
    match attachments.store(chat_id, &log.owner_id, png).await {
        Ok(row) => parts.upsert(
            ImagePart {
                attachment_id: row.id.clone(),
                mime_type: row.mime_type.clone(),
                detail: None,
            }
            .to_part(),
        ),
        Err(err) => {
            tracing::warn!(run_id = %log.run_id, %err, "a figure could not be kept in the chat")
        }
    }
}

impl TypedTool for CodeInterpreterTool {
    type Args = Args;

    fn name(&self) -> &'static str {
        CODE_INTERPRETER
    }

    fn description(&self) -> Cow<'_, str> {
        format!(
            "Run Python 3 code in a sandbox with numpy, pandas and matplotlib (no network). \
             State persists between calls; files live in /mnt/data, where the user's files \
             are; files you write there are given to the user. Each call may run {} s.",
            self.containers.config().timeout_secs
        )
        .into()
    }

    fn progress(&self) -> Option<ProgressKind> {
        None
    }

    fn call_message(&self, _: Option<&Args>) -> String {
        "Running code".into()
    }

    /// Its own time limit, a sandbox's start and the files read back: the loop leaves the
    /// ending of a call to the sandbox's limit.
    fn time_limit(&self) -> Option<std::time::Duration> {
        Some(std::time::Duration::from_secs(
            self.containers.config().timeout_secs * 2 + 30,
        ))
    }

    fn requested(&self) -> Option<crate::tools::Requested> {
        self.requested
            .then(|| crate::tools::Requested::CodeInterpreter {
                container: self.choice.to_value(),
            })
    }

    fn call(&self, args: Args) -> ToolFuture {
        let call_id = format!("call_{}", uuid::Uuid::now_v7().simple());
        self.call_with_id(&call_id, args)
    }

    fn call_with_id(&self, call_id: &str, args: Args) -> ToolFuture {
        let call_id = call_id.to_string();
        let this = Self {
            containers: self.containers.clone(),
            log: Arc::clone(&self.log),
            choice: self.choice.clone(),
            container: Arc::clone(&self.container),
            keep: self.keep.clone(),
            requested: self.requested,
        };
        Box::pin(async move {
            if args.code.trim().is_empty() || args.code.chars().count() > MAX_CODE_CHARS {
                return Err(ToolError::invalid_arguments(format!(
                    "code must be 1-{MAX_CODE_CHARS} characters"
                )));
            }
            let container = this.container().await?;
            // In a task of its own: a call the run gives up on (cancelled) still ends its
            // exchange with the sandbox, by its answer or by the sandbox's time limit, so the
            // container's next call never reads this one's answer.
            let containers = this.containers.clone();
            let running = container.clone();
            let code = args.code;
            let execution = tokio::spawn(async move { containers.exec(&running, &code).await })
                .await
                .map_err(|err| {
                    ToolError::new(
                        "code_interpreter_failed",
                        format!("the call stopped: {err}"),
                        "Try again.",
                    )
                })??;
            let images: Vec<String> = execution
                .images
                .iter()
                .map(|png| {
                    format!(
                        "data:image/png;base64,{}",
                        base64::engine::general_purpose::STANDARD.encode(png)
                    )
                })
                .collect();
            let files: Vec<Value> = execution
                .files
                .iter()
                .map(|f| {
                    json!({"file_id": f.id, "path": f.path, "bytes": f.bytes,
                           "filename": f.path.rsplit('/').next().unwrap_or_default()})
                })
                .collect();
            this.log.emit(
                OUTPUT_EVENT,
                json!({
                    "call_id": call_id,
                    "item_id": item_id(&call_id),
                    "container_id": container.id,
                    "logs": execution.logs,
                    "error": execution.error,
                    "limit": execution.limit,
                    "files": files,
                    IMAGES_KEY: images,
                }),
            );
            if let Some((attachments, parts)) = &this.keep {
                for png in execution.images {
                    keep_figure(&this.log, attachments, parts, png).await;
                }
            }
            let mut result = json!({
                "container_id": container.id,
                "logs": execution.logs,
                "files": files,
            });
            if let Some(error) = &execution.error {
                result["error"] = json!(error);
            }
            if let Some(limit) = execution.limit {
                result["limit"] = json!(limit);
            }
            if !images.is_empty() {
                result["figures"] = json!(format!(
                    "{} figure(s) drawn; the user sees them with your answer",
                    images.len()
                ));
            }
            Ok(result)
        })
    }
}
