//! Starting runs: turns a request (chat API or OpenAI API) into a persisted turn, a `RunLog`
//! registered for subscribers, and an `AgentRun` on the supervisor's arbiters. Shared by every
//! HTTP entry point so they all get the same governance.

use entities::ids::{ChatId, RunId};
use std::sync::Arc;

use crate::agent::kernel::{RunHandles, RunSpec};
use crate::agent::prompt;
use crate::auth::Principal;
use crate::chat::session::{BeginTurn, Recall, Turn};
use crate::config::{Config, ContextStrategy};
use crate::error::AppResult;
use crate::llm::wire::{ChatMessage, ChatRequest, Role};
use crate::run::log::RunLog;
use crate::supervisor::Spawn;
use crate::supervisor::turn::Caller;
use crate::tools::chat_context::{Parts, SessionSlot};

mod agent;
mod build;
mod catalog;
mod chat;
pub mod images;
mod options;
mod plan;
mod sql;
pub(super) mod tools;

pub(super) use agent::{agent_of, chat_for_turn, default_agent};
pub use agent::{agent_tool_definitions, check_enabled_tools};
pub use catalog::{CatalogTool, tool_catalog, unavailable_tools};
use chat::{document_context, documents_for_turn};
pub use options::{RunOptions, WebSearchOptions, check_message_length, check_message_lengths};
pub use plan::Refusal;
use plan::plan;
pub(super) use plan::with_requested;
pub use sql::check_sql_database;

/// What launching and resuming runs needs, and no more: built once at start-up beside
/// `AppState` (which holds one), so this floor never reaches up to the application's state.
#[derive(Clone)]
pub struct Launcher {
    pub config: Arc<Config>,
    pub db: sea_orm::DatabaseConnection,
    pub chats: crate::chat::Chats,
    pub llm: crate::llm::LlmClient,
    pub embedder: crate::retrieval::embed::SharedEmbedder,
    pub workspace: crate::documents::Workspace,
    /// Active chat sessions.
    pub sessions: crate::chat::registry::ChatRegistry,
    /// Live and recently finished runs.
    pub runs: crate::run::log::RunRegistry,
    pub supervisor: actix::Addr<super::ChatSupervisor>,
    pub tool_cache: crate::agent::tool_cache::ToolCache,
    /// Every research tool this server can offer; requests select from these.
    pub tools: Arc<Vec<crate::tools::SharedTool>>,
    /// Research tool calls per minute per project.
    pub rate_limiter: Arc<crate::agent::rate_limit::ToolRateLimiter>,
    /// ask_user, offered in every chat; also validates answers.
    pub ask_user: Arc<crate::tools::ask_user::AskUser>,
    /// Every user's agents.
    pub agents: crate::chat::agents::Agents,
    /// What `GET /metrics` reports.
    pub metrics: Arc<crate::metrics::Metrics>,
    /// The configured MCP servers, whose tools come and go with their connections.
    pub mcp: crate::tools::mcp::McpRegistry,
    /// The images attached to user messages.
    pub attachments: crate::chat::attachments::Attachments,
    /// The databases `execute_sql` may query (`[[sql.databases]]`).
    pub sql: crate::tools::sql::SqlDatabases,
    /// send_email's SMTP transport and rules; `None` without an `[email]` section.
    pub email: Option<Arc<crate::tools::email::Mailer>>,
    /// The browser sessions of `browser_action` and `analyze_page` (offered when Chromium is
    /// there: `Browsers::unavailable`).
    pub browsers: crate::tools::browser::Browsers,
    /// The code interpreter's containers (offered when bubblewrap and Python are there:
    /// `Containers::unavailable`).
    pub containers: crate::tools::code_interpreter::Containers,
    /// The SSRF-guarded fetcher (shared with the research tools): image URLs of `/v1`
    /// requests are fetched through it.
    pub fetcher: Arc<crate::tools::fetch::Fetcher>,
    /// The gate and connector of the remote MCP servers Responses requests name.
    pub remote_mcp: Arc<crate::tools::mcp::remote::RemoteMcp>,
    /// What turns read before they begin, kept between them (a process alone on its
    /// database).
    pub turn_cache: crate::chat::turn_cache::TurnCache,
}

/// The research tools (those that report progress: docs/spec.md#research-events) this
/// server offers.
fn research_tools(launcher: &Launcher) -> Vec<crate::tools::SharedTool> {
    launcher
        .tools
        .iter()
        .filter(|tool| tool.progress().is_some())
        .cloned()
        .collect()
}

/// Whether the request asked for Deep Think (`web_search_options.x_deep_think`).
fn deep_think(options: &RunOptions) -> bool {
    options.web_search.as_ref().and_then(|w| w.x_deep_think) == Some(true)
}

/// `tools` as the request's `search_context_size` asks (web_search with more or less page
/// text); the configured budget (`medium`) when it names none.
fn sized(
    tools: Vec<crate::tools::SharedTool>,
    options: &RunOptions,
) -> Vec<crate::tools::SharedTool> {
    let Some(web_search) = options.web_search.as_ref() else {
        return tools;
    };
    tools
        .into_iter()
        .map(|tool| match web_search.search_context_size {
            Some(size) => tool.sized(size).unwrap_or(tool),
            None => tool,
        })
        .map(|tool| match &web_search.user_location {
            Some(location) => tool.located(location).unwrap_or(tool),
            None => tool,
        })
        .collect()
}

/// Where a stored turn's run goes (`Launcher::spawn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Placement {
    /// The run arbiters.
    RunArbiters,
    /// The arbiter of the caller, which waits there for the run's whole answer.
    BesideCaller,
}

/// What differs from one run to the next; `Launcher::assemble` adds what every run shares.
pub(super) struct RunPlan {
    pub(super) log: Arc<RunLog>,
    pub(super) template: ChatRequest,
    pub(super) messages: Vec<ChatMessage>,
    pub(super) tools: Vec<crate::tools::SharedTool>,
    pub(super) max_iterations: u32,
    pub(super) chat: Option<crate::agent::kernel::ChatLink>,
    pub(super) resume: Option<crate::agent::kernel::ResumePoint>,
    pub(super) completes_ask: Option<entities::ids::AskCorrelationId>,
    pub(super) project: String,
    pub(super) parts: Parts,
    pub(super) context_strategy: crate::config::ContextStrategy,
    pub(super) client_tools: Vec<crate::llm::wire::ToolDefinition>,
}

impl Launcher {
    /// Every server-side tool a request may select now: the built-in ones and the tools the MCP
    /// servers have listed (a down server's answer `mcp_unavailable`).
    pub fn available_tools(&self) -> Vec<crate::tools::SharedTool> {
        let mut available = self.tools.as_ref().clone();
        available.extend(self.mcp.tools());
        available
    }

    /// What every run on this server shares.
    pub(super) fn run_handles(&self) -> RunHandles {
        RunHandles {
            llm: self.llm.clone(),
            limits: self.config.agent.clone(),
            cache: self.tool_cache.clone(),
            ask_expiry: std::time::Duration::from_secs(self.config.ask_user.expiry_hours * 3600),
            rate_limiter: self.rate_limiter.clone(),
            metrics: self.metrics.clone(),
            attachments: Some(self.attachments.clone()),
            // The browser's screenshots are the images tools return.
            tool_images: match self.config.browser.screenshots_to_model {
                Some(false) => None,
                always_or_per_model => Some(crate::agent::images::ShownImages {
                    sources: vec![std::sync::Arc::new(self.browsers.screenshots().clone())],
                    per_model: always_or_per_model.is_none(),
                }),
            },
        }
    }

    /// The one place a run's set-up is put together, for new and resumed runs alike.
    pub(super) fn assemble(&self, plan: RunPlan) -> RunSpec {
        let mut spec = RunSpec::new(
            self.run_handles(),
            plan.log,
            plan.template,
            plan.messages,
            plan.tools,
        );
        spec.max_iterations = plan.max_iterations;
        spec.chat = plan.chat;
        spec.resume = plan.resume;
        spec.completes_ask = plan.completes_ask;
        spec.project = plan.project;
        spec.parts = plan.parts;
        spec.context_strategy = plan.context_strategy;
        spec.client_tools = plan.client_tools;
        spec
    }

    /// The one spawn path: registers the run's log (so clients can subscribe at once), counts
    /// the run and spawns it, for every kind of run alike.
    ///
    /// A run of the agentic loop in no chat (`store: false`) writes nothing and has no session
    /// to keep apart from: it runs on the arbiter its request arrived on (an HTTP worker),
    /// where its events are read, with no hop to the supervisor and on to a run arbiter and
    /// back. So does a stored turn's run whose caller waits there for its whole answer
    /// (`Placement::BesideCaller`): it reaches its chat's session from there as from anywhere.
    /// A stream's stored run goes to the run arbiters, so that thousands of streams' runs never
    /// hold up the workers that answer new requests. Its tools' CPU work leaves the arbiter as
    /// every tool's does (the blocking pool).
    pub(in crate::supervisor) fn spawn(&self, spawn: Spawn) {
        self.spawn_placed(spawn, Placement::RunArbiters);
    }

    fn spawn_placed(&self, spawn: Spawn, placement: Placement) {
        self.metrics.run_started(spawn.kind());
        self.runs.insert(spawn.log().clone());
        match (spawn, actix::Arbiter::try_current()) {
            // Through the arbiter's queue, so that it starts inside the arbiter's own task set
            // even when the caller is a task spawned outside it.
            (Spawn::Run(spec), Some(here))
                if spec.log.chat_id.is_none() || placement == Placement::BesideCaller =>
            {
                use actix::Actor;
                crate::agent::loop_actor::AgentRun::start_in_arbiter(&here, move |_| {
                    crate::agent::loop_actor::AgentRun::new(*spec)
                });
            }
            (spawn, _) => self.supervisor.do_send(spawn),
        }
    }

    /// Spawns one run of the agentic loop.
    pub(super) fn start(&self, spec: RunSpec) {
        self.spawn(Spawn::Run(Box::new(spec)));
    }

    /// Starts `spec` as the request asked: an ordinary run (placed as `placement` says), or
    /// Deep Think.
    fn start_requested(&self, mut spec: RunSpec, options: &RunOptions, placement: Placement) {
        if !deep_think(options) {
            return self.spawn_placed(Spawn::Run(Box::new(spec)), placement);
        }
        // The research tools, and the named tools a Deep Think run may have (the code
        // interpreter): the report is saved by Deep Think itself.
        let kept: Vec<_> = spec
            .tools
            .iter()
            .filter(|t| {
                crate::tools::registry::family_of(t.name()).is_some_and(|f| f.in_deep_think)
            })
            .cloned()
            .collect();
        spec.tools = sized(research_tools(self), options);
        spec.tools.extend(kept);
        let question = spec
            .messages
            .iter()
            .rev()
            .find(|m| m.role == Role::User)
            .map(|m| m.text())
            .unwrap_or_default();
        self.start_deep_think(spec, question, None);
    }

    /// Registers a Deep Think run's log and spawns its planner; `checkpoint` continues one a
    /// restart cut off.
    pub(super) fn start_deep_think(
        &self,
        spec: RunSpec,
        question: String,
        checkpoint: Option<crate::agent::deep_think::Checkpoint>,
    ) {
        let spec = crate::agent::deep_think::DeepThinkSpec {
            run: spec,
            question,
            config: self.config.deep_think.clone(),
            max_artifact_bytes: self.config.artifacts.max_content_bytes,
            checkpoint,
            subtasks: self.supervisor.clone().recipient(),
        };
        self.spawn(Spawn::DeepThink(Box::new(spec)));
    }
}

/// The request's model, else the chat's (its picker's choice), else the agent's, else the
/// server's default.
fn model_of(
    launcher: &Launcher,
    options: &RunOptions,
    chat: Option<&entities::chats::Model>,
) -> String {
    options
        .template
        .as_ref()
        .map(|t| t.model.clone())
        .filter(|m| !m.is_empty())
        .or_else(|| chat.and_then(|c| c.model.clone()))
        .or_else(|| options.agent.as_ref().and_then(|a| a.model.clone()))
        .unwrap_or_else(|| launcher.llm.default_model().to_string())
}

/// Refuses a model no configured server serves (a 400 naming the ones there are), before
/// anything is stored.
async fn check_model(launcher: &Launcher, principal: &Principal, model: &str) -> AppResult<()> {
    launcher
        .llm
        .check_model(model)
        .await
        .map_err(|err| crate::error::AppError::upstream(err, principal.is_admin()))
}

/// A turn in a stored chat, checked and planned, nothing written yet: what `begin` needs.
pub(in crate::supervisor) struct Prepared {
    chat: entities::chats::Model,
    options: RunOptions,
    log: Arc<RunLog>,
    plan: plan::Plan,
    /// The chat's session, filled when the turn begins (a new chat has none before).
    slot: SessionSlot,
    /// The chat's most recent documents, read as the turn was planned.
    documents: Vec<entities::documents::Model>,
    searchable: bool,
    context_strategy: ContextStrategy,
    history_budget: Option<u64>,
    /// A new chat the turn's first transaction stores (`store_chat_with_turn`).
    store_chat: Option<entities::chats::Model>,
}

impl Prepared {
    pub(in crate::supervisor) fn chat_id(&self) -> &ChatId {
        &self.chat.id
    }

    pub(in crate::supervisor) fn run_id(&self) -> &RunId {
        &self.log.run_id
    }

    /// Has the turn's first transaction store `chat` (a new chat, not stored yet) before its
    /// message: one commit for both.
    pub(in crate::supervisor) fn store_chat_with_turn(&mut self, chat: entities::chats::Model) {
        self.store_chat = Some(chat);
    }
}

/// Checks and plans a turn in `chat` (the caller's; `fresh`: a draft not stored yet) that
/// brings `message` (a user message's text and how many images, when the turn brings one).
/// Writes nothing: a refusal leaves everything as it was.
pub(in crate::supervisor) async fn prepare(
    launcher: &Launcher,
    principal: &Principal,
    chat: entities::chats::Model,
    fresh: bool,
    message: Option<(&str, usize)>,
    options: RunOptions,
) -> AppResult<Prepared> {
    let mut options = options;
    if options.agent.is_none() {
        options.agent = Some(agent_of(launcher, &chat).await?);
    }
    if let Some((content, images)) = message {
        check_message_length(&launcher.config, Role::User, content)?;
        launcher.attachments.check_count(images)?;
    }
    let model = model_of(launcher, &options, Some(&chat));
    check_model(launcher, principal, &model).await?;
    let slot = SessionSlot::default();
    if !fresh {
        slot.bind(launcher.sessions.session(&chat.id).await?);
    }
    let log = Arc::new(
        RunLog::new(
            RunId::generate(),
            Some(chat.id.clone()),
            principal.user_id().clone(),
            model,
        )
        .owned_by_admin(principal.is_admin()),
    );
    let (documents, searchable) = documents_for_turn(launcher, &chat, fresh).await;
    // Everything is checked before the turn begins: a refused request stores nothing.
    let plan = plan(
        launcher,
        principal.project(),
        log.clone(),
        &options,
        Some(slot.clone()),
        searchable,
    )?;
    let context_strategy = crate::chat::persistence::context_strategy_of(
        &chat,
        launcher.config.agent.context_strategy,
    );
    // History beyond the whole window cannot be sent; a summary would need it.
    let history_budget = match context_strategy {
        ContextStrategy::Drop => launcher.llm.known_context_length(&log.model).map(u64::from),
        ContextStrategy::Summarize => None,
    };
    Ok(Prepared {
        chat,
        options,
        log,
        plan,
        slot,
        documents,
        searchable,
        context_strategy,
        history_budget,
        store_chat: None,
    })
}

/// Begins a prepared turn in its chat's `session` (stored by now): the user message and the run
/// row are saved, and the run starts.
pub(in crate::supervisor) async fn begin(
    launcher: &Launcher,
    principal: &Principal,
    prepared: Prepared,
    session: actix::Addr<crate::chat::session::ChatSession>,
    turn: Turn,
    caller: super::turn::Caller,
) -> AppResult<Arc<RunLog>> {
    let Prepared {
        chat,
        options,
        log,
        plan,
        slot,
        documents,
        searchable,
        context_strategy,
        history_budget,
        store_chat,
    } = prepared;
    slot.bind(session.clone());
    let (on_accepted, placement) = match caller {
        Caller::Early(early) => (
            Some(early.on_accepted(&log, &chat.id, launcher.runs.clone())),
            Placement::RunArbiters,
        ),
        Caller::WhenDurable => (None, Placement::RunArbiters),
        Caller::Whole => (None, Placement::BesideCaller),
    };
    // A caller answered only once the turn is durable waits for its write anyway: the run
    // starts as soon as the session has taken the turn, its first model call going out while
    // the turn is written, and it tells nothing until the turn is durable (`RunSpec::written`).
    // Not for a stream answered early (its log is the caller's already), Deep Think, a run
    // that announces remote tools first, or with a cluster, whose writes a fence may refuse
    // for another process to take (the model would be asked for nothing).
    let overlap = on_accepted.is_none()
        && !deep_think(&options)
        && plan.announces_nothing()
        && launcher.sessions.cluster().is_none();
    // A new chat's opening message: its start is known here, so the run need not wait for
    // the session to take it (a session that had a message would refuse it, failing the write).
    let (turn, opening) = match (turn, overlap) {
        (Turn::Opening { node }, true) => {
            let (node, started) = crate::chat::session::opening_start(*node, history_budget)
                .await
                .map_err(crate::error::AppError::from)?;
            let node = Box::new(node);
            (Turn::Opening { node }, Some(started))
        }
        (turn, _) => (turn, None),
    };
    let (taken, on_taken) = match overlap && opening.is_none() {
        true => {
            let (taken, on_taken) = tokio::sync::oneshot::channel();
            (Some(taken), Some(on_taken))
        }
        false => (None, None),
    };
    let begun = Box::pin(
        session.send(BeginTurn {
            turn,
            run_id: log.run_id.clone(),
            user_id: principal.user_id().clone(),
            options: options
                .web_search
                .as_ref()
                .and_then(|w| serde_json::to_value(w).ok()),
            history_budget,
            new_chat: store_chat,
            recall: (launcher.config.memory.max_injected > 0).then(|| Recall {
                limit: launcher.config.memory.max_injected,
                min_relevance: launcher.config.memory_injection_threshold(),
            }),
            taken,
            on_accepted,
        }),
    );
    use futures_util::future::{Either, select};
    let (started, writing) = match (opening, on_taken) {
        (Some(opening), _) => (opening, Some(begun)),
        (None, None) => (begun.await??, None),
        (None, Some(on_taken)) => match select(on_taken, begun).await {
            Either::Left((Ok(taken), begun)) => (taken, Some(begun)),
            // Refused before it was taken, or written before it was seen taken.
            Either::Left((Err(_), begun)) => (begun.await??, None),
            Either::Right((written, _)) => (written??, None),
        },
    };
    let told = |started: &crate::chat::session::TurnStarted, plan: Option<&plan::Plan>| {
        log.push(crate::run::events::RunEvent::Started {
            user_message_id: Some(started.user_message_id.clone()),
        });
        if let Some(plan) = plan {
            plan.announce();
        }
        for correlation_id in &started.cancelled_asks {
            log.push(crate::run::events::RunEvent::Extension {
                event_type: "x_ask_user.cancelled".into(),
                payload: serde_json::json!({"correlation_id": correlation_id,
                    "reason": "the conversation moved on before the question was answered"}),
            });
        }
    };
    if writing.is_none() {
        told(&started, Some(&plan));
    }
    let user_text = started
        .context
        .last()
        .and_then(|node| node.content.clone())
        .unwrap_or_default();
    let (files, passages) =
        document_context(launcher, &chat.id, documents, &user_text, searchable).await;
    let agent_prompt = options
        .agent
        .as_ref()
        .and_then(|a| a.system_prompt.as_deref());
    let base = agent_prompt.or(launcher.config.agent.system_prompt.as_deref());
    let with_instructions = match (base, options.instructions.as_deref()) {
        (Some(base), Some(extra)) => Some(format!("{base}\n\n{extra}")),
        (None, Some(extra)) => Some(extra.to_string()),
        (base, None) => base.map(str::to_string),
    };
    let system = prompt::system_with_context(
        with_instructions.as_deref(),
        &started.memories,
        &files,
        &passages,
    );
    let messages = prompt::assemble(system.as_deref(), &started.context);
    let user_message_id = started.user_message_id.clone();
    let mut spec =
        launcher.assemble(plan.into_run(messages, Some(user_message_id), context_strategy));
    spec.history_left_out = prompt::left_out_messages(&started.context, &started.left_out);
    let Some(writing) = writing else {
        launcher.start_requested(spec, &options, placement);
        return Ok(log);
    };
    let (written, on_written) = tokio::sync::oneshot::channel();
    spec.written = Some(on_written);
    launcher.start_requested(spec, &options, placement);
    // A write that fails drops `written`: the run ends, never stored, and the caller is told.
    let durable = writing.await??;
    told(&durable, None);
    let _ = written.send(());
    Ok(log)
}

/// Starts a turn in a stored chat the caller owns (the chat API's turns: their images are the
/// chat's attachments already).
pub(in crate::supervisor) async fn launch_chat_turn(
    launcher: &Launcher,
    principal: &Principal,
    chat_id: &ChatId,
    turn: Turn,
    options: RunOptions,
    caller: super::turn::Caller,
) -> AppResult<Arc<RunLog>> {
    let chat = chat_for_turn(launcher, principal.user_id(), chat_id).await?;
    let message = match &turn {
        Turn::Send {
            content, images, ..
        }
        | Turn::Edit {
            content, images, ..
        } => Some((content.as_str(), images.len())),
        Turn::Regenerate { .. } => None,
        // Made only by the turn that makes its chat (`open_import`), never for a stored chat.
        Turn::Opening { .. } => {
            return Err(crate::error::AppError::Conflict(
                "an opening message is given only with the chat it opens".into(),
            ));
        }
    };
    let prepared = prepare(launcher, principal, chat, false, message, options).await?;
    let session = prepared
        .slot
        .get()
        .cloned()
        .ok_or_else(|| crate::error::AppError::internal(anyhow::anyhow!("no session")))?;
    begin(launcher, principal, prepared, session, turn, caller).await
}

/// Starts a run over messages given whole, in no stored chat (OpenAI API without a chat).
pub(in crate::supervisor) async fn launch_ephemeral(
    launcher: &Launcher,
    principal: &Principal,
    mut messages: Vec<ChatMessage>,
    options: RunOptions,
) -> AppResult<Arc<RunLog>> {
    check_message_lengths(&launcher.config, &messages)?;
    let model = model_of(launcher, &options, None);
    check_model(launcher, principal, &model).await?;
    // An agent's system prompt, unless the client sent its own.
    if let Some(prompt) = options.agent.as_ref().and_then(|a| a.system_prompt.clone())
        && !messages
            .iter()
            .any(|m| matches!(m.role, Role::System | Role::Developer))
    {
        messages.insert(0, ChatMessage::system(prompt));
    }
    let log = Arc::new(
        RunLog::new(RunId::generate(), None, principal.user_id().clone(), model)
            .owned_by_admin(principal.is_admin()),
    );
    let plan = plan(
        launcher,
        principal.project(),
        log.clone(),
        &options,
        None,
        false,
    )?;
    log.push(crate::run::events::RunEvent::Started {
        user_message_id: None,
    });
    plan.announce();
    let context_strategy = launcher.config.agent.context_strategy;
    let spec = launcher.assemble(plan.into_run(messages, None, context_strategy));
    launcher.start_requested(spec, &options, Placement::RunArbiters);
    Ok(log)
}

#[cfg(test)]
mod tests;
