//! `AppState`: what every handler can reach — the configuration, the database, accounts, the
//! upstream client, the chat registry and supervisor, live runs, and the tools. Built once in
//! `startup`; cheap to clone.

use std::sync::Arc;

use sea_orm::DatabaseConnection;

use crate::auth::Accounts;
use crate::chat::Chats;
use crate::chat::registry::ChatRegistry;
use crate::config::Config;
use crate::llm::LlmClient;
use crate::run::log::RunRegistry;
use crate::supervisor::launch::Launcher;

#[derive(Clone)]
pub struct AppState {
    /// Starts and resumes runs, and holds the handles handlers share with it (reached through
    /// the accessors below, so there is one copy of each).
    pub launcher: Launcher,
    pub accounts: Accounts,
    /// Failed password logins, per account and per client address.
    pub login_throttle: Arc<crate::auth::LoginThrottle>,
}

impl AppState {
    pub fn config(&self) -> &Config {
        &self.launcher.config
    }

    pub fn db(&self) -> &DatabaseConnection {
        &self.launcher.db
    }

    pub fn chats(&self) -> &Chats {
        &self.launcher.chats
    }

    /// The upstream model client.
    pub fn llm(&self) -> &LlmClient {
        &self.launcher.llm
    }

    /// Makes the vectors of memories and document chunks.
    pub fn embedder(&self) -> &crate::retrieval::embed::SharedEmbedder {
        &self.launcher.embedder
    }

    /// Documents: records, processing and the per-chat indexes.
    pub fn workspace(&self) -> &crate::documents::Workspace {
        &self.launcher.workspace
    }

    /// Active chat sessions.
    pub fn sessions(&self) -> &ChatRegistry {
        &self.launcher.sessions
    }

    /// Live and recently finished runs.
    pub fn runs(&self) -> &RunRegistry {
        &self.launcher.runs
    }

    /// Every user's knowledge bases (chats made as vector stores), within the per-user cap.
    pub fn knowledge_bases(&self) -> crate::chat::knowledge_bases::KnowledgeBases {
        crate::chat::knowledge_bases::KnowledgeBases::new(
            self.launcher.db.clone(),
            self.config().documents.max_knowledge_bases_per_user,
        )
    }

    /// The configured MCP servers and their health.
    pub fn mcp(&self) -> &crate::tools::mcp::McpRegistry {
        &self.launcher.mcp
    }
}
