//! One door for a turn: `Launcher::open` is the only way any surface begins one — the chat API,
//! `/v1/chat/completions`, `/v1/responses`, workflows and schedules. A `TurnRequest` says whose
//! turn it is, where it goes (`TurnTarget`, resolved by the surface from its request without
//! writing anything) and how it runs (`RunOptions`). The door checks and plans first, writing
//! nothing; only then does it create a new chat, store the request's images, import its
//! history and begin the run. So a refused request leaves no chat, message, attachment or run
//! behind, and an existing conversation unchanged. What goes wrong comes back as a
//! `LaunchError`, typed so that callers match on its kind (a missing chat, a database failure
//! — a 500, never a 404 —, a chat another process owns, …).

use std::sync::Arc;

use entities::ids::{AskCorrelationId, ChatId, MessageId};
use entities::messages::MessageRole;
use serde_json::Value;

use super::automations::launch_workflow_turn;
use super::launch::images::{PendingMessage, store_turn};
use super::launch::{
    Launcher, RunOptions, begin, chat_for_turn, default_agent, launch_chat_turn, launch_ephemeral,
    prepare,
};
use super::resume::{ToolResult, launch_resume, launch_tool_results};
use crate::auth::Principal;
use crate::chat::automations::WorkflowView;
use crate::chat::session::{ImportHistory, Turn};
use crate::error::{AppError, AppResult};
use crate::llm::wire::{ChatMessage, Role, ToolDefinition};
use crate::run::log::{RunLog, RunRegistry};
use crate::tools::mcp::remote::{RemoteServer, RemoteSession};

/// A turn someone asks for.
pub struct TurnRequest {
    pub principal: Principal,
    pub target: TurnTarget,
    pub options: RunOptions,
    /// When the door answers.
    pub answer: Answer,
}

/// When the door answers a turn's caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Answer {
    /// Once the turn is stored and its run started: every failure is the door's error.
    #[default]
    WhenDurable,
    /// Once its chat's session has taken the turn (it is planned and fits the chat's
    /// branches), before it is written, so that a stream's first bytes never wait on other
    /// chats' writes: for a caller that streams its run's log, where the run's `Started` comes
    /// only once the turn is durable, and a write that fails after the answer ends the log
    /// with `persistence_failed`. Only for a chat's turns (the chat API's and a `/v1` turn's)
    /// and only without a cluster, whose writes a fence may refuse for another process to
    /// take: other turns are answered when durable.
    WhenAccepted,
    /// Once the turn is stored and its run started, to a caller that then waits for the run's
    /// whole answer where it is (a `/v1/chat/completions` request without `stream`): the run
    /// runs beside it, on its arbiter (`Launcher::spawn`). Failures as `WhenDurable`.
    Whole,
}

/// How `begin` answers the door's caller, and so where the turn's run goes.
pub(super) enum Caller {
    /// Once the chat's session takes the turn (`Answer::WhenAccepted`).
    Early(EarlyAnswer),
    /// Once the turn is durable (`Answer::WhenDurable`).
    WhenDurable,
    /// Once the turn is durable, the caller then waiting beside the run (`Answer::Whole`).
    Whole,
}

/// A `/v1` turn's parts (`TurnTarget::Import`).
struct Import {
    chat: ChatSlot,
    parent: Option<MessageId>,
    history: Vec<(MessageRole, PendingMessage)>,
    last: PendingMessage,
}

/// The caller of a turn answered once its chat takes it (`Answer::WhenAccepted`).
pub(super) struct EarlyAnswer(tokio::sync::oneshot::Sender<Started>);

impl EarlyAnswer {
    /// What the session calls once it has taken the turn of `log`'s run in `chat_id`: the
    /// run is listed among `runs` from then on (a reloaded page re-attaches to it, a cancel
    /// reaches it), and the caller answered.
    pub(super) fn on_accepted(
        self,
        log: &Arc<RunLog>,
        chat_id: &ChatId,
        runs: RunRegistry,
    ) -> crate::chat::session::Accepted {
        let started = Started {
            log: Arc::clone(log),
            chat_id: Some(chat_id.clone()),
        };
        Box::new(move |user_message_id| {
            started.log.accepted_for(user_message_id);
            runs.insert(Arc::clone(&started.log));
            let _ = self.0.send(started);
        })
    }
}

/// Where a turn goes.
pub enum TurnTarget {
    /// A turn of a stored chat the caller owns, as the chat API sends it (its images are the
    /// chat's attachments already).
    Chat { chat_id: ChatId, turn: Turn },
    /// A `/v1` turn: `history` (with its roles) added to the chat first, then `last` sent after
    /// `parent` (the active leaf when `None`). Their images are read and checked, and stored
    /// only once the turn is planned.
    Import {
        chat: ChatSlot,
        parent: Option<MessageId>,
        history: Vec<(MessageRole, PendingMessage)>,
        last: PendingMessage,
    },
    /// The answer to a question the chat's paused run waits on (an MCP call's approval), which
    /// continues it.
    Answer {
        chat_id: ChatId,
        correlation_id: AskCorrelationId,
        answer: Value,
    },
    /// The results of the chat's waiting client tool calls, which continue its paused run.
    ToolResults {
        chat_id: ChatId,
        results: Vec<ToolResult>,
        client_tools: Vec<ToolDefinition>,
    },
    /// No stored chat: the messages are the whole context.
    Unstored(Vec<ChatMessage>),
    /// A run of `workflow` with `input`.
    Workflow {
        chat: ChatSlot,
        workflow: WorkflowView,
        input: Value,
    },
}

/// The chat a turn goes to.
pub enum ChatSlot {
    /// A chat the caller owns.
    Existing(ChatId),
    /// A chat made for this turn, once it is planned. `ephemeral`: kept
    /// `http.v1_chat_retention_days` unless someone opens it in the UI.
    New {
        title: Option<String>,
        ephemeral: bool,
    },
}

/// A turn begun: its run's log (subscribers may follow it at once) and its chat, if stored.
pub struct Started {
    pub log: Arc<RunLog>,
    pub chat_id: Option<ChatId>,
}

/// Why a turn did not begin.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The request cannot run as asked (a check, a plan's refusal, a limit); nothing was stored.
    #[error(transparent)]
    Refused(AppError),
    /// The chat (or what the request names) is not the caller's or does not exist.
    #[error("{0} not found")]
    NotFound(&'static str),
    /// Another process owns the chat: the request goes there.
    #[error("the chat is served by another process")]
    OwnedElsewhere(AppError),
    /// The model is unknown, or its server is down.
    #[error(transparent)]
    Model(AppError),
    /// The database failed.
    #[error(transparent)]
    Database(AppError),
    /// What the request continues has expired.
    #[error("{0}")]
    Gone(String),
    /// The chat's state does not allow the turn now.
    #[error("{0}")]
    Conflict(String),
}

impl From<AppError> for LaunchError {
    fn from(err: AppError) -> Self {
        match err {
            AppError::NotFound(what) => Self::NotFound(what),
            AppError::OwnedElsewhere { .. } => Self::OwnedElsewhere(err),
            AppError::Upstream { .. } => Self::Model(err),
            AppError::Database(_) | AppError::Unavailable(_) | AppError::Internal(_) => {
                Self::Database(err)
            }
            AppError::Gone(message) => Self::Gone(message),
            AppError::Conflict(message) => Self::Conflict(message),
            other => Self::Refused(other),
        }
    }
}

impl LaunchError {
    /// The error as a client is told it.
    pub fn into_app_error(self) -> AppError {
        match self {
            Self::Refused(err)
            | Self::OwnedElsewhere(err)
            | Self::Model(err)
            | Self::Database(err) => err,
            Self::NotFound(what) => AppError::NotFound(what),
            Self::Gone(message) => AppError::Gone(message),
            Self::Conflict(message) => AppError::Conflict(message),
        }
    }
}

impl Launcher {
    /// Begins the turn `request` asks for, or says why not; a refused turn writes nothing.
    /// Answered when `request.answer` says (see `Answer`).
    pub async fn open(&self, request: TurnRequest) -> Result<Started, LaunchError> {
        // Only a chat's turn is taken by a session before it is written.
        let in_a_chat = matches!(
            request.target,
            TurnTarget::Chat { .. } | TurnTarget::Import { .. }
        );
        if request.answer != Answer::WhenAccepted || !in_a_chat || self.sessions.cluster().is_some()
        {
            let caller = match request.answer {
                Answer::Whole => Caller::Whole,
                Answer::WhenDurable | Answer::WhenAccepted => Caller::WhenDurable,
            };
            return self.open_turn(request, caller).await;
        }
        let (early, accepted) = tokio::sync::oneshot::channel();
        let door = self.clone();
        // The turn goes on whether or not its caller is still there.
        let opening = tokio::spawn(async move {
            door.open_turn(request, Caller::Early(EarlyAnswer(early)))
                .await
        });
        let Ok(started) = accepted.await else {
            // Never taken by a session: refused, or a kind of turn answered when durable.
            return opening.await.unwrap_or_else(|err| {
                Err(LaunchError::Database(AppError::internal(anyhow::anyhow!(
                    "a turn's opening ended: {err}"
                ))))
            });
        };
        let log = Arc::clone(&started.log);
        tokio::spawn(async move {
            let failed = match opening.await {
                Ok(Ok(_)) => return,
                Ok(Err(err)) => format!("{err:?}"),
                Err(err) => err.to_string(),
            };
            // Taken but not stored: its stream, already answered, is told so and ends.
            tracing::error!(run_id = %log.run_id, err = %failed, "a turn taken by its chat could not be stored");
            log.push(crate::run::events::RunEvent::Finished {
                stop_reason: entities::stop_reason::StopReason::Interrupted,
                assistant_message_id: None,
                usage: Default::default(),
                research_usage: None,
                iterations: 0,
                error: Some(crate::run::events::RunError::new(
                    crate::run::events::RunErrorKind::PersistenceFailed,
                    "the message could not be saved",
                )),
            });
        });
        Ok(started)
    }

    /// `open`, answering `caller` as it says.
    async fn open_turn(
        &self,
        request: TurnRequest,
        caller: Caller,
    ) -> Result<Started, LaunchError> {
        let TurnRequest {
            principal,
            target,
            options,
            answer: _,
        } = request;
        let principal = &principal;
        let mut options = options;
        if !options.remote_mcp.is_empty() {
            let servers = std::mem::take(&mut options.remote_mcp);
            options.mcp_sessions = self.connect_remote(servers).await?;
        }
        let started = match target {
            TurnTarget::Chat { chat_id, turn } => {
                let log =
                    launch_chat_turn(self, principal, &chat_id, turn, options, caller).await?;
                Started {
                    log,
                    chat_id: Some(chat_id),
                }
            }
            TurnTarget::Import {
                chat,
                parent,
                history,
                last,
            } => {
                let import = Import {
                    chat,
                    parent,
                    history,
                    last,
                };
                self.open_import(principal, import, options, caller).await?
            }
            TurnTarget::Answer {
                chat_id,
                correlation_id,
                answer,
            } => {
                let log = launch_resume(
                    self,
                    principal,
                    Some(&chat_id),
                    &correlation_id,
                    answer,
                    options.mcp_sessions,
                )
                .await?;
                Started {
                    log,
                    chat_id: Some(chat_id),
                }
            }
            TurnTarget::ToolResults {
                chat_id,
                results,
                client_tools,
            } => {
                let log = launch_tool_results(
                    self,
                    principal,
                    &chat_id,
                    results,
                    client_tools,
                    options.mcp_sessions,
                )
                .await?;
                Started {
                    log,
                    chat_id: Some(chat_id),
                }
            }
            TurnTarget::Unstored(messages) => Started {
                log: launch_ephemeral(self, principal, messages, options).await?,
                chat_id: None,
            },
            TurnTarget::Workflow {
                chat,
                workflow,
                input,
            } => self.open_workflow(principal, chat, workflow, input).await?,
        };
        Ok(started)
    }

    /// Connects a request's remote MCP servers for its run, each checked (allow-list, SSRF
    /// guard) before any is connected to; nothing is written either way.
    async fn connect_remote(
        &self,
        servers: Vec<RemoteServer>,
    ) -> AppResult<Vec<Arc<RemoteSession>>> {
        // Every server checked, its name resolved too, before any is connected to.
        for server in &servers {
            self.remote_mcp.check_resolved(server).await?;
        }
        let opened = futures_util::future::join_all(
            servers
                .into_iter()
                .map(|server| self.remote_mcp.open(server)),
        )
        .await;
        opened
            .into_iter()
            .map(|opened| opened.map_err(AppError::from))
            .collect()
    }

    /// A `/v1` turn: planned against the chat (a draft, when new) before the chat is made, the
    /// images stored and the history imported.
    async fn open_import(
        &self,
        principal: &Principal,
        import: Import,
        mut options: RunOptions,
        caller: Caller,
    ) -> AppResult<Started> {
        let Import {
            chat,
            parent,
            history,
            last,
        } = import;
        for (role, message) in &history {
            let role = match role {
                MessageRole::User => Role::User,
                MessageRole::Assistant => Role::Assistant,
                MessageRole::System => Role::System,
                MessageRole::Tool => Role::Tool,
            };
            super::launch::check_message_length(&self.config, role, &message.text)?;
        }
        // What this turn reads, it reads at this generation (`chat::turn_cache`).
        let at = crate::chat::turn_cache::generation();
        // The agent a new chat starts with, when read here (not given by the request).
        let mut new_agent = None;
        let (chat, fresh) = match chat {
            ChatSlot::Existing(chat_id) => {
                let chat = chat_for_turn(self, principal.user_id(), &chat_id).await?;
                // Owned here before anything is stored (a request forwarded to the owner
                // stores once).
                self.sessions.claim(&chat.id).await?;
                (chat, false)
            }
            ChatSlot::New { title, ephemeral } => {
                // The agent read for the draft is the turn's: it is not read again. The chat
                // starts with the model the request names.
                let requested = options
                    .template
                    .as_ref()
                    .map(|t| t.model.clone())
                    .filter(|m| !m.is_empty());
                let agent = match options.agent.take() {
                    Some(agent) => agent,
                    None => {
                        let agent = default_agent(self, principal.user_id()).await?;
                        new_agent = Some(agent.clone());
                        agent
                    }
                };
                let (draft, agent) = self
                    .chats
                    .draft_for(
                        principal.user_id(),
                        title,
                        ephemeral,
                        None,
                        Some(agent),
                        requested,
                    )
                    .await?;
                options.agent = Some(agent);
                (draft, true)
            }
        };
        let mut prepared = prepare(
            self,
            principal,
            chat.clone(),
            fresh,
            Some((&last.text, last.images.len())),
            options,
        )
        .await?;
        // Planned: from here on the turn is written. A new chat whose turn brings only text is
        // stored by the turn's own transaction, on SQLite (one commit, not two; with several
        // processes its lease is taken first, which needs its row).
        let with_turn = fresh
            && history.is_empty()
            && last.images.is_empty()
            && self.sessions.group_commit().is_some();
        if with_turn {
            prepared.store_chat_with_turn(chat.clone());
        } else if fresh {
            self.insert_chat(chat.clone()).await?;
        }
        let chat_id = prepared.chat_id().clone();
        let run_id = prepared.run_id().clone();
        let begun = async {
            let stored = store_turn(self, principal, &chat_id, history, last).await?;
            let session = if fresh && matches!(caller, Caller::Whole) {
                self.sessions.new_session_here(&chat_id).await?
            } else if fresh {
                self.sessions.new_session(&chat_id).await?
            } else {
                self.sessions.session(&chat_id).await?
            };
            let opening = fresh && parent.is_none() && stored.history.is_empty();
            if !stored.history.is_empty() {
                session
                    .send(ImportHistory {
                        messages: stored.history,
                    })
                    .await??;
            }
            // A new chat's first message is made here: its turn's start is then known without
            // asking the session (`begin`).
            let turn = if opening {
                Turn::Opening {
                    node: Box::new(crate::chat::session::opening_message(
                        &stored.content,
                        &stored.images,
                        &run_id,
                    )?),
                }
            } else {
                Turn::Send {
                    parent_id: parent,
                    content: stored.content,
                    images: stored.images,
                }
            };
            begin(self, principal, prepared, session, turn, caller).await
        }
        .await;
        match begun {
            Ok(log) => {
                if fresh {
                    // What the chat's next turn reads is what was just written: the chat, its
                    // agent and no documents (nobody knew its id), unless something kept
                    // changed since this turn began reading.
                    self.turn_cache.keep_new_chat(at, chat, new_agent);
                }
                Ok(Started {
                    log,
                    chat_id: Some(chat_id),
                })
            }
            Err(err) => {
                if with_turn {
                    // Its row went with the turn's transaction; its session goes too.
                    if let Err(err) = self.forget_any_chat(&chat_id).await {
                        tracing::warn!(%chat_id, %err, "could not let go of the chat of a turn that failed");
                    }
                } else if fresh {
                    self.discard(principal, &chat_id).await;
                }
                Err(err)
            }
        }
    }

    /// A workflow's run: its steps and input checked before a chat is made for it.
    async fn open_workflow(
        &self,
        principal: &Principal,
        chat: ChatSlot,
        workflow: WorkflowView,
        input: Value,
    ) -> AppResult<Started> {
        let steps = workflow.checked_steps()?;
        crate::agent::workflow::check_input(&steps, &input).map_err(|m| {
            AppError::InvalidWithCode {
                code: "missing_input",
                message: m,
            }
        })?;
        let (chat_id, fresh) = match chat {
            ChatSlot::Existing(chat_id) => (chat_id, false),
            ChatSlot::New { title, ephemeral } => {
                let made = self
                    .chats
                    .create_with(principal.user_id(), title, ephemeral, None, None)
                    .await?;
                (made.id, true)
            }
        };
        match launch_workflow_turn(self, principal, &chat_id, workflow, input).await {
            Ok(log) => Ok(Started {
                log,
                chat_id: Some(chat_id),
            }),
            Err(err) => {
                if fresh {
                    self.discard(principal, &chat_id).await;
                }
                Err(err)
            }
        }
    }

    /// Stores a new chat's row: on SQLite with the turns' writes (the group commit), so that
    /// it neither waits on their transaction nor holds it up.
    async fn insert_chat(&self, chat: entities::chats::Model) -> Result<(), sea_orm::DbErr> {
        match self.sessions.group_commit() {
            Some(group) => {
                group
                    .write(move |txn| {
                        Box::pin(async move {
                            crate::chat::Chats::insert_on(txn, chat).await?;
                            Ok(())
                        })
                    })
                    .await
            }
            None => self.chats.insert(chat).await.map(drop),
        }
    }

    /// Makes a chat for `owner` (the chat API's `POST /chats`) with `agent` (else the owner's
    /// default) and `model` (else its agent's, else the owner's default). What its first turn
    /// would read back is kept as it was just written — the chat, its agent and no documents
    /// (`chat::turn_cache`) — and its session will start empty (`ChatRegistry::made_empty`).
    pub async fn create_chat(
        &self,
        owner: &entities::ids::UserId,
        title: Option<String>,
        context_strategy: Option<crate::config::ContextStrategy>,
        agent: Option<crate::chat::agents::Agent>,
        model: Option<String>,
    ) -> Result<entities::chats::Model, sea_orm::DbErr> {
        let at = crate::chat::turn_cache::generation();
        let (draft, agent) = self
            .chats
            .draft_for(owner, title, false, context_strategy, agent, model)
            .await?;
        let chat = self.chats.insert(draft).await?;
        self.sessions.made_empty(&chat.id);
        self.turn_cache.keep_new_chat(at, chat.clone(), Some(agent));
        Ok(chat)
    }

    /// Deletes a chat made for a turn that then failed.
    async fn discard(&self, principal: &Principal, chat_id: &ChatId) {
        if let Err(err) = self.forget_chat(principal.user_id(), chat_id).await {
            tracing::warn!(%chat_id, %err, "could not delete the chat of a turn that failed");
        }
    }
}
