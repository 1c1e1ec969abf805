//! `AppState`: what every handler can reach — the configuration, the database, the accounts
//! and the upstream model client. Built once in `startup`; cheap to clone.

use std::sync::Arc;

use sea_orm::DatabaseConnection;

use crate::auth::Accounts;
use crate::chat::Chats;
use crate::config::Config;
use crate::llm::LlmClient;

#[derive(Clone)]
pub struct AppState {
    pub config: Arc<Config>,
    pub db: DatabaseConnection,
    pub accounts: Accounts,
    pub chats: Chats,
    pub llm: LlmClient,
}
