//! Planning a run: everything a request asks of it (tools, `tool_choice`, Deep Think's rules,
//! `max_iterations`, the agent's tools) is checked here, before anything is stored, and comes
//! back as a `Plan` or a typed `Refusal`. Planning writes nothing; beginning the turn (which
//! saves the user message and a `running` run row) comes only after a plan.

use std::sync::Arc;

use entities::ids::MessageId;

use super::{Launcher, RunOptions, RunPlan, deep_think, sized};
use crate::config::ContextStrategy;
use crate::llm::wire::{ChatMessage, ChatRequest, ToolDefinition};
use crate::run::log::RunLog;
use crate::tools;
use crate::tools::Tool;
use crate::tools::chat_context::{Parts, SessionSlot};
use crate::tools::file_search::FileSearchTool;

/// Why a request cannot run; nothing of it is stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("max_iterations must be at least 1")]
    NoIterations,
    #[error(
        "x_deep_think cannot be combined with client tools: Deep Think runs its own research \
         tools"
    )]
    DeepThinkWithClientTools,
    #[error(
        "the client tool {0} has the name of one of Colloquy's server-side tools (or of another \
         client tool); rename it"
    )]
    ClientToolNameTaken(String),
    #[error("tool_choice \"required\" needs tools: enable them with web_search_options")]
    RequiredWithoutTools,
    #[error("tool_choice names {0}, which is not among this request's tools")]
    ToolChoiceNotOffered(String),
    #[error(
        "the MCP tool {0} waits for approval, which needs a stored response: leave store on, \
         or set require_approval to \"never\" for it"
    )]
    ApprovalNeedsStore(String),
}

/// A request's run, checked and ready to begin: what the launcher needs beyond the messages,
/// which only exist once the turn is begun.
pub(in crate::supervisor) struct Plan {
    pub(in crate::supervisor) log: Arc<RunLog>,
    pub(in crate::supervisor) template: ChatRequest,
    pub(in crate::supervisor) tools: Vec<tools::SharedTool>,
    pub(in crate::supervisor) max_iterations: u32,
    pub(in crate::supervisor) session: Option<SessionSlot>,
    pub(in crate::supervisor) project: String,
    pub(in crate::supervisor) parts: Parts,
    pub(in crate::supervisor) client_tools: Vec<ToolDefinition>,
    /// The remote MCP servers' tool listings, told at the start of the run.
    pub(in crate::supervisor) listings: Vec<serde_json::Value>,
}

impl Plan {
    /// Tells the run's log what the remote MCP servers listed (after its `Started`).
    /// Whether `announce` tells nothing (no remote MCP server's tools to list).
    pub(in crate::supervisor) fn announces_nothing(&self) -> bool {
        self.listings.is_empty()
    }

    pub(in crate::supervisor) fn announce(&self) {
        for listing in &self.listings {
            self.log
                .emit(tools::mcp::remote::LIST_TOOLS_EVENT, listing.clone());
        }
    }

    /// The run, once its turn is begun: the model's messages and (in a chat) the user message
    /// it answers.
    pub(super) fn into_run(
        self,
        messages: Vec<ChatMessage>,
        user_message: Option<MessageId>,
        context_strategy: ContextStrategy,
    ) -> RunPlan {
        RunPlan {
            log: self.log,
            template: self.template,
            messages,
            tools: self.tools,
            max_iterations: self.max_iterations,
            chat: self
                .session
                .and_then(|slot| slot.get().cloned())
                .zip(user_message)
                .map(|(session, user_message)| crate::agent::kernel::ChatLink {
                    session,
                    user_message,
                }),
            resume: None,
            completes_ask: None,
            project: self.project,
            parts: self.parts,
            context_strategy,
            client_tools: self.client_tools,
        }
    }
}

/// Plans the run `options` ask for, in `session`'s chat when there is one (`documents`: the
/// chat has searchable documents). Pure: it stores nothing and starts nothing.
pub(in crate::supervisor) fn plan(
    launcher: &Launcher,
    project: &str,
    log: Arc<RunLog>,
    options: &RunOptions,
    session: Option<SessionSlot>,
    documents: bool,
) -> Result<Plan, Refusal> {
    let max_iterations = max_iterations(launcher, options)?;
    if deep_think(options) && !options.client_tools.is_empty() {
        return Err(Refusal::DeepThinkWithClientTools);
    }
    let template = options
        .template
        .clone()
        .unwrap_or_else(|| ChatRequest::new(log.model.clone(), Vec::new()));
    let parts = Parts::default();
    let setting = super::tools::Setting::new(
        launcher,
        &log,
        project,
        options.agent.as_ref(),
        session.clone().map(|session| (session, parts.clone())),
    );
    let mut tools = super::tools::for_request(&setting, options, documents);
    // The stores the request named replace the chat's own documents; a request's limits
    // make a copy of the chat's own search that keeps them.
    let limited = options.file_search_limits != Default::default();
    let stores = match (&options.file_search, &log.chat_id) {
        (Some(stores), _) => Some(stores.clone()),
        (None, Some(chat)) if limited && tools.iter().any(|t| t.name() == "file_search") => {
            Some(vec![chat.clone()])
        }
        _ => None,
    };
    let requested: Vec<tools::Requested> =
        stores
            .map(|stores| tools::Requested::FileSearch {
                stores,
                limits: options.file_search_limits,
            })
            .into_iter()
            .chain(
                options
                    .image_generation
                    .clone()
                    .map(|fields| tools::Requested::ImageGeneration { fields }),
            )
            .chain(options.code_interpreter.as_ref().map(|choice| {
                tools::Requested::CodeInterpreter {
                    container: choice.to_value(),
                }
            }))
            .collect();
    with_requested(launcher, &log, &parts, &mut tools, &requested);
    let mut tools = sized(tools, options);
    // The remote MCP servers' tools, named clear of every other tool and client function.
    let taken: Vec<String> = tools
        .iter()
        .map(|t| t.name().to_string())
        .chain(options.client_tools.iter().map(|t| t.function.name.clone()))
        .collect();
    let (remote, made, listings) = tools::mcp::remote::tools_of(&options.mcp_sessions, &taken);
    if log.chat_id.is_none()
        && let Some(waits) = made.iter().find(|tool| tool.pauses())
    {
        return Err(Refusal::ApprovalNeedsStore(waits.tool_name().to_string()));
    }
    tools.extend(remote);
    let mut names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    for tool in &options.client_tools {
        let name = tool.function.name.as_str();
        if names.contains(&name) {
            return Err(Refusal::ClientToolNameTaken(name.to_string()));
        }
        names.push(name);
    }
    check_tool_choice(template.tool_choice.as_ref(), &names)?;
    Ok(Plan {
        log,
        template,
        tools,
        max_iterations,
        session,
        project: project.to_string(),
        parts,
        client_tools: options.client_tools.clone(),
        listings,
    })
}

fn max_iterations(launcher: &Launcher, options: &RunOptions) -> Result<u32, Refusal> {
    let limits = &launcher.config.agent;
    match options.web_search.as_ref().and_then(|w| w.max_iterations) {
        None => Ok(limits.max_iterations),
        Some(0) => Err(Refusal::NoIterations),
        Some(n) => Ok(n.min(limits.max_iterations_ceiling)),
    }
}

/// A `tool_choice` that forces a tool needs that tool (or any, for `required`) to be offered;
/// `tools` names every tool the request offers.
fn check_tool_choice(choice: Option<&serde_json::Value>, tools: &[&str]) -> Result<(), Refusal> {
    let Some(choice) = choice else {
        return Ok(());
    };
    if choice == "required" && tools.is_empty() {
        return Err(Refusal::RequiredWithoutTools);
    }
    if let Some(name) = choice["function"]["name"].as_str()
        && !tools.contains(&name)
    {
        return Err(Refusal::ToolChoiceNotOffered(name.to_string()));
    }
    Ok(())
}

/// Puts in `tools` the copies `requested` asks for in place of the server's own: file_search
/// over the named stores within their limits, generate_image with an `image_generation`
/// tool's fields (on a server with an image server; the request was refused before
/// otherwise). For a new run's request and a paused run's checkpoint alike.
pub(in crate::supervisor) fn with_requested(
    launcher: &Launcher,
    log: &Arc<RunLog>,
    parts: &Parts,
    tools: &mut Vec<tools::SharedTool>,
    requested: &[tools::Requested],
) {
    use crate::tools::image_generation::{GENERATE_IMAGE, ImageGenerationTool};
    for wanted in requested {
        match wanted {
            tools::Requested::FileSearch { stores, limits } => {
                tools.retain(|t| t.name() != "file_search");
                tools.push(Arc::new(
                    FileSearchTool::over_stores(
                        log.clone(),
                        launcher.config.clone(),
                        launcher.workspace.clone(),
                        stores.clone(),
                    )
                    .limited(*limits),
                ));
            }
            tools::Requested::ImageGeneration { fields } => {
                let Some(images) = &launcher.config.images else {
                    continue;
                };
                tools.retain(|t| t.name() != GENERATE_IMAGE);
                tools.push(Arc::new(
                    ImageGenerationTool::new(log.clone(), images.clone(), fields.clone())
                        .keeping(launcher.attachments.clone(), parts.clone()),
                ));
            }
            tools::Requested::CodeInterpreter { container } => {
                use crate::tools::code_interpreter::{
                    CODE_INTERPRETER, Choice, CodeInterpreterTool,
                };
                let (Ok(choice), None) =
                    (Choice::parse(container), launcher.containers.unavailable())
                else {
                    continue;
                };
                tools.retain(|t| t.name() != CODE_INTERPRETER);
                tools.push(Arc::new(
                    CodeInterpreterTool::new(launcher.containers.clone(), log.clone(), choice)
                        .requested_by_request()
                        .keeping(launcher.attachments.clone(), parts.clone()),
                ));
            }
        }
    }
}
