//! A run's tools, assembled from the table of tools (`tools::registry`): which families a run
//! gets is the table's `Offer` read against the request and the agent (`for_request`, and
//! `after_pause` for a paused run that resumes); how each family is built for the run is
//! `build`, one arm per `Kind`. What an agent's chats can call (`for_agent_listing`), the
//! catalog and the check of an agent's `enabled_tools` are the same assembly, so what is listed
//! is what runs get. A run's tools never have two of one name (`ToolSet`): the built-in ones
//! come first, and an MCP server's tool by a built-in name is not offered.

use std::sync::Arc;

use entities::ids::{ChatId, RunId, UserId};

use super::{Launcher, RunOptions, deep_think};
use crate::chat::agents::Agent;
use crate::chat::knowledge_bases::KnowledgeBases;
use crate::run::log::RunLog;
use crate::tools::chat_context::{ChatContext, Parts, SessionSlot};
use crate::tools::registry::{self, FAMILIES, Family, Kind, Offer, Scope};
use crate::tools::{self, SharedTool};

/// What a run's tools are built for: its log (whose chat and owner), its project, its agent
/// and, in a stored chat, the chat's session and the parts its tools share.
pub(in crate::supervisor) struct Setting<'a> {
    pub launcher: &'a Launcher,
    pub log: &'a Arc<RunLog>,
    pub project: &'a str,
    pub agent: Option<&'a Agent>,
    /// The chat's tools' shared context, in a stored chat.
    chat: Option<Arc<ChatContext>>,
}

impl<'a> Setting<'a> {
    /// A run of `log` (in its stored chat when `session` is given).
    pub(in crate::supervisor) fn new(
        launcher: &'a Launcher,
        log: &'a Arc<RunLog>,
        project: &'a str,
        agent: Option<&'a Agent>,
        session: Option<(SessionSlot, Parts)>,
    ) -> Self {
        let chat = session
            .zip(log.chat_id.clone())
            .map(|((session, parts), chat_id)| {
                Arc::new(ChatContext {
                    chat_id,
                    session,
                    log: log.clone(),
                    parts,
                    embedder: launcher.embedder.clone(),
                    config: launcher.config.clone(),
                })
            });
        Self {
            launcher,
            log,
            project,
            agent,
            chat,
        }
    }

    fn chat_id(&self) -> Option<&ChatId> {
        self.chat.as_ref().map(|chat| &chat.chat_id)
    }

    /// The agent's `enabled_tools`, when it names its tools.
    fn named(&self) -> Option<&'a [String]> {
        self.agent.and_then(|a| a.enabled_tools.as_deref())
    }

    fn names(&self, name: &str) -> bool {
        self.named()
            .is_some_and(|named| named.iter().any(|n| n == name))
    }
}

/// A run's tools, each name once: a tool whose name is taken is not added.
#[derive(Default)]
struct ToolSet(Vec<SharedTool>);

impl ToolSet {
    fn add(&mut self, tool: SharedTool) {
        if self.0.iter().any(|t| t.name() == tool.name()) {
            tracing::debug!(
                tool = tool.name(),
                "a second tool by one name is not offered"
            );
            return;
        }
        self.0.push(tool);
    }

    fn extend(&mut self, tools: impl IntoIterator<Item = SharedTool>) {
        for tool in tools {
            self.add(tool);
        }
    }
}

/// What a run asks of the table beyond its setting.
struct Ask<'a> {
    /// The research tools chosen (by `x_tools`, the agent's list or Deep Think).
    research: Vec<SharedTool>,
    /// Deep Think: research tools (and the chat's own) only.
    deep_think: bool,
    /// The request's `x_tools`, when its tools are on.
    x_tools: Option<&'a [String]>,
    /// Whether file_search is offered: the chat has searchable documents, or `x_tools` names it.
    documents: bool,
}

/// The tools a new run gets: none when the agent's tools or the message's `enableTools` are
/// off (but for Deep Think, which always researches).
pub(in crate::supervisor) fn for_request(
    setting: &Setting,
    options: &RunOptions,
    documents: bool,
) -> Vec<SharedTool> {
    let deep_think = deep_think(options);
    let agent_on = setting.agent.is_none_or(|a| a.tools_enabled);
    if !deep_think && (!agent_on || options.enable_tools == Some(false)) {
        return Vec::new();
    }
    let x_tools = options
        .web_search
        .as_ref()
        .filter(|_| options.tools_enabled)
        .and_then(|w| w.x_tools.as_deref());
    let ask = Ask {
        research: requested_research(setting, options, deep_think),
        deep_think,
        x_tools,
        documents: documents || x_tools.is_some_and(|n| n.iter().any(|n| n == "file_search")),
    };
    assemble(setting, ask)
}

/// The research tools a request chose: every one for Deep Think (docs/spec.md#deep-think);
/// those an agent that names its tools names (docs/spec.md#which-tools-a-run-has); else, when
/// the request turns its tools on, `x_tools`'s choice (`tools::select`).
fn requested_research(
    setting: &Setting,
    options: &RunOptions,
    deep_think: bool,
) -> Vec<SharedTool> {
    let launcher = setting.launcher;
    if deep_think {
        return super::research_tools(launcher);
    }
    if let Some(named) = setting.named() {
        let mut chosen = launcher.available_tools();
        chosen.retain(|t| t.progress().is_some() && named.iter().any(|n| n == t.name()));
        return chosen;
    }
    if !options.tools_enabled {
        return Vec::new();
    }
    let requested = options
        .web_search
        .as_ref()
        .and_then(|w| w.x_tools.as_deref());
    tools::select(&launcher.available_tools(), requested)
}

/// The chosen research tools, then each family the table offers this run, then the agent's
/// custom MCP tools.
fn assemble(setting: &Setting, ask: Ask) -> Vec<SharedTool> {
    let mut set = ToolSet::default();
    set.extend(ask.research.iter().cloned());
    for family in FAMILIES.iter().filter(|f| f.offer != Offer::Requested) {
        if !offered(setting, &ask, family) {
            continue;
        }
        let keep_all = !by_name_only(setting, family);
        set.extend(
            build(setting, family.kind)
                .into_iter()
                .filter(|tool| keep_all || setting.names(tool.name())),
        );
    }
    if !ask.deep_think
        && let Some(agent) = setting.agent
    {
        set.extend(custom_tools(setting.launcher, agent));
    }
    set.0
}

/// Whether `family` is offered to the run `ask` describes.
fn offered(setting: &Setting, ask: &Ask, family: &Family) -> bool {
    let names_any =
        |names: Option<&[String]>| names.is_some_and(|names| names.iter().any(|n| family.has(n)));
    let in_chat = setting.chat.is_some();
    let chat_tools_on = setting.agent.is_none_or(|a| a.chat_tools_enabled);
    match family.offer {
        Offer::Requested => false,
        Offer::InChat => in_chat && (chat_tools_on || names_any(setting.named())),
        Offer::WithDocuments => {
            in_chat && ask.documents && (chat_tools_on || names_any(setting.named()))
        }
        _ if ask.deep_think && !family.in_deep_think => false,
        Offer::Named => names_any(setting.named()),
        Offer::NamedTogether => names_any(setting.named()) || names_any(ask.x_tools),
        Offer::Knowledge => setting.agent.is_some_and(offers_knowledge),
    }
}

/// Whether only the tools of `family` the agent names are offered (each name by itself), not
/// the whole family.
fn by_name_only(setting: &Setting, family: &Family) -> bool {
    match family.offer {
        Offer::Named => true,
        Offer::InChat | Offer::WithDocuments => {
            setting.agent.is_some_and(|a| !a.chat_tools_enabled)
        }
        Offer::Requested | Offer::NamedTogether | Offer::Knowledge => false,
    }
}

/// Whether the agent's chats are offered `search_knowledge`: it names it, or names no list and
/// has knowledge bases.
fn offers_knowledge(agent: &Agent) -> bool {
    match &agent.enabled_tools {
        Some(named) => named
            .iter()
            .any(|name| registry::entry(Kind::SearchKnowledge).has(name)),
        None => !agent.knowledge_base_ids.is_empty(),
    }
}

/// The tools of a paused run that resumes: those named in `had` (the ones it had), built again
/// for the chat's agent as it is now, and the chat's own (file_search when it had it or
/// `documents`).
pub(in crate::supervisor) fn after_pause(
    setting: &Setting,
    had: &[String],
    documents: bool,
) -> Vec<SharedTool> {
    let had = |name: &str| had.iter().any(|n| n == name);
    let mut set = ToolSet::default();
    set.extend(
        setting
            .launcher
            .available_tools()
            .into_iter()
            .filter(|tool| registry::family_of(tool.name()).is_none() && had(tool.name())),
    );
    for family in FAMILIES {
        let wanted = |name: &str| {
            had(name)
                || (setting.chat.is_some()
                    && match family.offer {
                        Offer::InChat => true,
                        Offer::WithDocuments => documents,
                        _ => false,
                    })
        };
        if !family.names.iter().any(|name| wanted(name)) {
            continue;
        }
        set.extend(
            build(setting, family.kind)
                .into_iter()
                .filter(|tool| wanted(tool.name())),
        );
    }
    set.0
}

/// The tools of `kind` this run can have; none where its setting lacks what they need (a
/// stored chat, an agent, the server's configuration).
fn build(setting: &Setting, kind: Kind) -> Vec<SharedTool> {
    let launcher = setting.launcher;
    let chat = setting.chat.as_ref();
    match kind {
        Kind::WebSearch
        | Kind::FetchUrl
        | Kind::Calculator
        | Kind::CodeSearch
        | Kind::GitlabCodeSearch => server_tools(launcher, kind),
        Kind::Artifacts => chat.map_or_else(Vec::new, |chat| {
            use crate::tools::artifacts::{CreateArtifactTool, UpdateArtifactTool};
            vec![
                Arc::new(CreateArtifactTool(chat.clone())) as SharedTool,
                Arc::new(UpdateArtifactTool(chat.clone())),
            ]
        }),
        Kind::Memory => chat.map_or_else(Vec::new, |chat| {
            use crate::tools::memory::{RecallMemoryTool, SaveMemoryTool};
            vec![
                Arc::new(SaveMemoryTool(chat.clone())) as SharedTool,
                Arc::new(RecallMemoryTool(chat.clone())),
            ]
        }),
        Kind::AskUser => chat
            .map(|_| launcher.ask_user.clone() as SharedTool)
            .into_iter()
            .collect(),
        Kind::FileSearch => chat
            .map(|chat| {
                Arc::new(crate::tools::file_search::FileSearchTool::new(
                    chat.clone(),
                    launcher.workspace.clone(),
                )) as SharedTool
            })
            .into_iter()
            .collect(),
        Kind::Automation => match (setting.chat_id(), setting.agent) {
            (Some(_), agent) => crate::supervisor::automations::automation_tools(
                launcher,
                setting.log,
                setting.project,
                agent,
            ),
            (None, _) => Vec::new(),
        },
        Kind::BrowseUrl => server_tools(launcher, Kind::FetchUrl)
            .into_iter()
            .map(|fetch| Arc::new(tools::alias::Alias::browse_url(fetch)) as SharedTool)
            .collect(),
        Kind::SearchKnowledge => setting
            .agent
            .map(|agent| {
                Arc::new(tools::search_knowledge::SearchKnowledgeTool::new(
                    launcher.config.clone(),
                    launcher.workspace.clone(),
                    KnowledgeBases::new(
                        launcher.db.clone(),
                        launcher.config.documents.max_knowledge_bases_per_user,
                    ),
                    setting.log.owner_id.clone(),
                    agent.knowledge_base_ids.clone(),
                    setting.log.chat_id.clone(),
                )) as SharedTool
            })
            .into_iter()
            .collect(),
        Kind::ExecuteSql => setting
            .agent
            .and_then(|agent| {
                launcher.sql.tool(
                    agent.sql_database.as_deref(),
                    launcher.config.agent.max_tool_result_chars,
                )
            })
            .into_iter()
            .collect(),
        Kind::Browser => match setting.chat_id() {
            Some(chat_id) if launcher.browsers.unavailable().is_none() => {
                use crate::tools::browser::{AnalyzePage, BrowserAction};
                let browsers = launcher.browsers.clone();
                vec![
                    Arc::new(BrowserAction::new(browsers.clone(), chat_id.clone())) as SharedTool,
                    Arc::new(AnalyzePage::new(browsers, chat_id.clone())),
                ]
            }
            _ => Vec::new(),
        },
        Kind::SendEmail => match (&launcher.email, setting.agent) {
            // A send that waits for the user's yes needs a chat to ask in.
            (Some(mailer), Some(agent)) if !mailer.confirm() || setting.chat.is_some() => {
                vec![Arc::new(tools::email::SendEmail::new(
                    mailer.clone(),
                    setting.log.owner_id.clone(),
                    agent.id.clone(),
                ))]
            }
            _ => Vec::new(),
        },
        Kind::GenerateImage => launcher
            .config
            .images
            .as_ref()
            .map(|images| {
                let tool = tools::image_generation::ImageGenerationTool::new(
                    setting.log.clone(),
                    images.clone(),
                    serde_json::Map::new(),
                );
                let tool = match &setting.chat {
                    Some(chat) => tool.keeping(launcher.attachments.clone(), chat.parts.clone()),
                    None => tool,
                };
                Arc::new(tool) as SharedTool
            })
            .into_iter()
            .collect(),
        Kind::CodeInterpreter => match &setting.chat {
            Some(chat) if launcher.containers.unavailable().is_none() => {
                use crate::tools::code_interpreter::{Choice, CodeInterpreterTool};
                let tool = CodeInterpreterTool::new(
                    launcher.containers.clone(),
                    setting.log.clone(),
                    Choice::Auto {
                        file_ids: Vec::new(),
                    },
                )
                .keeping(launcher.attachments.clone(), chat.parts.clone());
                vec![Arc::new(tool) as SharedTool]
            }
            _ => Vec::new(),
        },
    }
}

/// The server's own instances of a `Scope::Server` family (research tools are built once, at
/// start-up; code search only with its settings).
fn server_tools(launcher: &Launcher, kind: Kind) -> Vec<SharedTool> {
    let family = registry::entry(kind);
    debug_assert_eq!(family.scope, Scope::Server);
    launcher
        .tools
        .iter()
        .filter(|tool| family.has(tool.name()))
        .cloned()
        .collect()
}

/// The MCP tools an agent's `custom_tools` entries name, those whose server listed them.
fn custom_tools(launcher: &Launcher, agent: &Agent) -> Vec<SharedTool> {
    agent
        .custom_tools
        .iter()
        .filter_map(|entry| {
            launcher
                .mcp
                .tool(&entry.config.server_id, &entry.config.tool_name)
        })
        .collect()
}

/// The tools `agent`'s chats (of `owner`) can call now (`GET /api/agents/{id}/chat/tools`):
/// every research tool a request may choose (those it names, when it names its tools), the
/// chat's own, and those the table offers it; none when its tools are off.
pub(in crate::supervisor) fn for_agent_listing(
    launcher: &Launcher,
    owner: &UserId,
    agent: &Agent,
) -> Vec<SharedTool> {
    if !agent.tools_enabled {
        return Vec::new();
    }
    let log = Arc::new(RunLog::new(
        RunId::generate(),
        Some(ChatId::generate()),
        owner.clone(),
        String::new(),
    ));
    let setting = Setting::new(
        launcher,
        &log,
        "",
        Some(agent),
        Some((SessionSlot::default(), Parts::default())),
    );
    let mut research = launcher.available_tools();
    research.retain(|t| {
        t.progress().is_some() && (setting.named().is_none() || setting.names(t.name()))
    });
    let ask = Ask {
        research,
        deep_think: false,
        x_tools: None,
        documents: true,
    };
    assemble(&setting, ask)
}

/// Every tool an agent may name on this server, as a chat of an agent naming them all would
/// have them: the built-in ones this server configures, then the MCP servers'.
/// (Their definitions do not depend on whose chat it is: none of them runs.)
pub(in crate::supervisor) fn every_nameable(launcher: &Launcher) -> Vec<SharedTool> {
    let mut named: Vec<String> = registry::reserved_names().map(str::to_string).collect();
    named.extend(launcher.mcp.tools().iter().map(|t| t.name().to_string()));
    let now = chrono::Utc::now();
    let everything = Agent {
        id: entities::ids::AgentId::generate(),
        name: String::new(),
        system_prompt: None,
        model: None,
        tools_enabled: true,
        enabled_tools: Some(named),
        chat_tools_enabled: true,
        custom_tools: Vec::new(),
        knowledge_base_ids: Vec::new(),
        sql_database: None,
        is_default: false,
        created_at: now,
        updated_at: now,
    };
    for_agent_listing(launcher, &UserId::from_string("catalog"), &everything)
}
