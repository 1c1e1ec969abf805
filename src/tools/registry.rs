//! The table of tools: every built-in tool family, once, with its names, where it comes from,
//! what configuration it needs, what it is built for, how a run comes to have it and whether it
//! pauses. Everything that asks "which tools are there" reads this table: the names an MCP
//! server may not take (`reserved_names`), the names an agent's `enabled_tools` may use, the
//! tool catalog, and the per-run assembly (`supervisor::launch::tools`), which builds each
//! family by its `Kind`.
//!
//! Adding a tool: its file beside this one, and one entry here (with a `Kind`, which the
//! assembly's `build` must then handle: the compiler says where).

use serde::Serialize;

/// Which family an entry is: what the assembly builds it by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    WebSearch,
    FetchUrl,
    Calculator,
    CodeSearch,
    GitlabCodeSearch,
    Artifacts,
    Memory,
    AskUser,
    FileSearch,
    Automation,
    BrowseUrl,
    SearchKnowledge,
    ExecuteSql,
    Browser,
    SendEmail,
    GenerateImage,
    CodeInterpreter,
}

/// Where a tool comes from (the catalog's `origin`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Web search, page fetching, the calculator, code search.
    Research,
    /// Every chat's own tools: artifacts, memory, ask_user, file_search.
    Chat,
    /// What a server's configuration or an agent adds: `browse_url`, `search_knowledge`,
    /// `execute_sql`, `send_email`, `generate_image`, the browser.
    Platform,
    /// The workflow and schedule tools.
    Automation,
    /// A configured MCP server's tool (never in this table: its names are the server's).
    Mcp,
}

/// What a family's tools are built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Built once at start-up, shared by every run.
    Server,
    /// Built per run, over its stored chat.
    Chat,
    /// Built per run, from the run's agent (its database, knowledge bases, identity).
    Agent,
}

/// How a run comes to have a family's tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    /// Chosen by the request (`x_tools`), by the agent's `enabled_tools`, or by Deep Think.
    Requested,
    /// In every stored chat (docs/spec.md#which-tools-a-run-has), unless the agent turns its
    /// chat tools off (`chat_tools_enabled: false`) and does not name them.
    InChat,
    /// In a stored chat with searchable documents, or whose request's `x_tools` names it.
    WithDocuments,
    /// When the agent's `enabled_tools` names it (each name by itself).
    Named,
    /// When the agent's `enabled_tools` or the request's `x_tools` names any of them: all of
    /// them together (the browser's two tools share sessions).
    NamedTogether,
    /// When the agent names it, or has knowledge bases and names no list.
    Knowledge,
}

/// One family of built-in tools.
#[derive(Debug, Clone, Copy)]
pub struct Family {
    pub kind: Kind,
    /// The names its tools are called by.
    pub names: &'static [&'static str],
    pub origin: Origin,
    pub scope: Scope,
    /// The setting a server needs to offer it (`None`: always offered), said when an agent
    /// names it on a server without.
    pub needs: Option<&'static str>,
    /// What it does, in a few words a person reads (the agent form, a chat's opt-in tools);
    /// the model reads its definition's description instead.
    pub summary: &'static str,
    /// What a server must have for it, in a person's words ("Chromium", "a database"), shown
    /// beside the tool; `None`: nothing beyond Colloquy.
    pub requires: Option<&'static str>,
    pub offer: Offer,
    /// Whether a call may pause its run until the user replies.
    pub pauses: bool,
    /// Whether a Deep Think run has it when the request or the agent names it (its sub-tasks
    /// may then use it); the other named families are left out of Deep Think.
    pub in_deep_think: bool,
}

const fn family(
    kind: Kind,
    names: &'static [&'static str],
    origin: Origin,
    scope: Scope,
    offer: Offer,
    summary: &'static str,
) -> Family {
    Family {
        kind,
        names,
        origin,
        scope,
        needs: None,
        summary,
        requires: None,
        offer,
        pauses: false,
        in_deep_think: false,
    }
}

impl Family {
    const fn needs(mut self, setting: &'static str) -> Self {
        self.needs = Some(setting);
        self
    }

    const fn requires(mut self, what: &'static str) -> Self {
        self.requires = Some(what);
        self
    }

    const fn pausing(mut self) -> Self {
        self.pauses = true;
        self
    }

    const fn in_deep_think(mut self) -> Self {
        self.in_deep_think = true;
        self
    }

    /// Whether `name` is one of this family's.
    pub fn has(&self, name: &str) -> bool {
        self.names.contains(&name)
    }

    /// The name a chat's settings turn this family on by (a request's `x_tools` naming it), if
    /// a chat may: a research tool, or a family offered when a request names any of it (its
    /// first name stands for all of it).
    pub fn opt_in_name(&self) -> Option<&'static str> {
        match self.offer {
            Offer::Requested | Offer::NamedTogether => self.names.first().copied(),
            Offer::InChat | Offer::WithDocuments | Offer::Named | Offer::Knowledge => None,
        }
    }
}

use Offer::*;
use Origin::{Automation, Chat, Platform, Research};

/// Every built-in tool family, in the order a run's tools are offered.
pub const FAMILIES: &[Family] = &[
    family(
        Kind::WebSearch,
        &["web_search"],
        Research,
        Scope::Server,
        Requested,
        "Searches the web and reads the top results.",
    )
    .requires("a search engine"),
    family(
        Kind::FetchUrl,
        &["fetch_url"],
        Research,
        Scope::Server,
        Requested,
        "Reads a web page's text.",
    ),
    family(
        Kind::Calculator,
        &["calculator"],
        Research,
        Scope::Server,
        Requested,
        "Does exact arithmetic.",
    ),
    family(
        Kind::CodeSearch,
        &["code_search"],
        Research,
        Scope::Server,
        Requested,
        "Searches code on GitHub.",
    )
    .requires("a GitHub token")
    .needs("tools.github_token"),
    family(
        Kind::GitlabCodeSearch,
        &["gitlab_code_search"],
        Research,
        Scope::Server,
        Requested,
        "Searches code on a GitLab server.",
    )
    .requires("a GitLab server")
    .needs("tools.gitlab_api_url"),
    family(
        Kind::Artifacts,
        &["create_artifact", "update_artifact"],
        Chat,
        Scope::Chat,
        InChat,
        "Creates and updates documents, code and diagrams beside the chat.",
    ),
    family(
        Kind::Memory,
        &["save_memory", "recall_memory"],
        Chat,
        Scope::Chat,
        InChat,
        "Remembers facts about you across chats.",
    ),
    family(
        Kind::AskUser,
        &["ask_user"],
        Chat,
        Scope::Chat,
        InChat,
        "Asks you a question and waits for the answer.",
    )
    .pausing(),
    family(
        Kind::FileSearch,
        &["file_search"],
        Chat,
        Scope::Chat,
        WithDocuments,
        "Searches the chat's documents.",
    ),
    family(
        Kind::Automation,
        &["execute_workflow", "create_schedule", "get_schedule_info"],
        Automation,
        Scope::Chat,
        Named,
        "Runs workflows and sets up schedules.",
    ),
    family(
        Kind::BrowseUrl,
        &["browse_url"],
        Platform,
        Scope::Server,
        Named,
        "Reads a web page's text (fetch_url by another name).",
    ),
    family(
        Kind::SearchKnowledge,
        &["search_knowledge"],
        Platform,
        Scope::Agent,
        Knowledge,
        "Searches the agent's knowledge bases.",
    ),
    family(
        Kind::ExecuteSql,
        &["execute_sql"],
        Platform,
        Scope::Agent,
        Named,
        "Runs read-only SQL queries on a database.",
    )
    .requires("a database")
    .needs(super::sql::EXECUTE_SQL_NEEDS),
    family(
        Kind::Browser,
        &["browser_action", "analyze_page"],
        Platform,
        Scope::Chat,
        NamedTogether,
        "Drives a real browser: opens pages, clicks, types and takes screenshots.",
    )
    .requires("Chromium")
    .needs(super::browser::NEEDS),
    family(
        Kind::SendEmail,
        &["send_email"],
        Platform,
        Scope::Agent,
        Named,
        "Sends email to the recipients this server allows.",
    )
    .requires("SMTP")
    .needs(super::email::NEEDS)
    .pausing(),
    family(
        Kind::GenerateImage,
        &["generate_image"],
        Platform,
        Scope::Agent,
        Named,
        "Draws images from a description.",
    )
    .requires("an image model")
    .needs(super::image_generation::NEEDS),
    family(
        Kind::CodeInterpreter,
        &[super::code_interpreter::CODE_INTERPRETER],
        Platform,
        Scope::Chat,
        NamedTogether,
        "Runs Python in a sandbox: computes, draws charts, makes files.",
    )
    .requires("a sandbox (bubblewrap and Python)")
    .needs(super::code_interpreter::NEEDS)
    .in_deep_think(),
];

/// The family `name` belongs to, if it is a built-in tool's.
pub fn family_of(name: &str) -> Option<&'static Family> {
    FAMILIES.iter().find(|family| family.has(name))
}

/// The entry of `kind`: `FAMILIES` lists one entry per kind, in `Kind`'s order (a test holds
/// it to that).
pub fn entry(kind: Kind) -> &'static Family {
    &FAMILIES[kind as usize]
}

/// Every built-in tool's name: none of them may be another tool's (an MCP server's tool by
/// one of these names is offered prefixed with its server's id).
pub fn reserved_names() -> impl Iterator<Item = &'static str> {
    FAMILIES
        .iter()
        .flat_map(|family| family.names.iter().copied())
}

/// Whether `name` is a built-in tool's.
pub fn is_builtin(name: &str) -> bool {
    family_of(name).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_name_is_in_two_families() {
        let mut names: Vec<&str> = reserved_names().collect();
        let count = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), count, "a name in two families");
    }

    #[test]
    fn every_kind_has_one_entry_in_its_place() {
        for (place, family) in FAMILIES.iter().enumerate() {
            assert_eq!(family.kind as usize, place, "{:?}", family.kind);
            assert_eq!(entry(family.kind).kind, family.kind);
        }
        assert_eq!(
            Kind::CodeInterpreter as usize + 1,
            FAMILIES.len(),
            "the last kind is last"
        );
    }

    #[test]
    fn the_spec_s_always_present_chat_tools_are_offered_in_every_chat() {
        for name in [
            "create_artifact",
            "update_artifact",
            "save_memory",
            "recall_memory",
            "ask_user",
        ] {
            let family = family_of(name).unwrap();
            assert_eq!(family.offer, InChat, "{name}");
            assert_eq!(family.origin, Chat, "{name}");
        }
        assert!(family_of("ask_user").unwrap().pauses);
        assert!(!family_of("calculator").unwrap().pauses);
    }

    #[test]
    fn every_family_says_what_it_does_and_one_a_server_must_configure_what_it_requires() {
        for family in FAMILIES {
            assert!(family.summary.ends_with('.'), "{:?}", family.kind);
            if family.needs.is_some() {
                assert!(family.requires.is_some(), "{:?}", family.kind);
            }
        }
        assert_eq!(entry(Kind::Browser).requires, Some("Chromium"));
        assert_eq!(entry(Kind::Browser).opt_in_name(), Some("browser_action"));
        assert_eq!(entry(Kind::WebSearch).opt_in_name(), Some("web_search"));
        assert_eq!(entry(Kind::ExecuteSql).opt_in_name(), None);
    }
}
