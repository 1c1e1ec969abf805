//! sea-orm entities for Colloquy's schema, one module per table (see the `migration`
//! crate for the DDL). Ids are application-generated UUID strings, each table's its own type
//! ([`ids`]). Statuses and roles are enums stored through sea-orm beside their tables
//! (`MessageRole`, `RunStatus`, `DocumentStatus`, `UploadStatus`, `AskStatus`, `AskKind`).

pub use sea_orm;

pub mod agent_knowledge_bases;
pub mod agents;
pub mod api_keys;
pub mod artifact_versions;
pub mod artifacts;
pub mod attachments;
pub mod chat_folders;
pub mod chat_shares;
pub mod chats;
pub mod container_files;
pub mod containers;
pub mod document_chunks;
pub mod documents;
pub mod email_sends;
pub mod files;
pub mod ids;
pub mod login_sessions;
pub mod login_tokens;
pub mod memories;
pub mod messages;
pub mod pending_asks;
pub mod prelude;
pub mod responses;
pub mod runs;
pub mod schedule_firings;
pub mod schedules;
pub mod stop_reason;
pub mod uploads;
pub mod users;
pub mod workflow_runs;
pub mod workflow_versions;
pub mod workflows;
