//! Re-exports every table's `Entity` under its table name in PascalCase.

pub use super::agent_knowledge_bases::Entity as AgentKnowledgeBases;
pub use super::agents::Entity as Agents;
pub use super::api_keys::Entity as ApiKeys;
pub use super::artifact_versions::Entity as ArtifactVersions;
pub use super::artifacts::Entity as Artifacts;
pub use super::attachments::Entity as Attachments;
pub use super::chats::Entity as Chats;
pub use super::document_chunks::Entity as DocumentChunks;
pub use super::documents::Entity as Documents;
pub use super::email_sends::Entity as EmailSends;
pub use super::files::Entity as Files;
pub use super::login_sessions::Entity as LoginSessions;
pub use super::login_tokens::Entity as LoginTokens;
pub use super::memories::Entity as Memories;
pub use super::messages::Entity as Messages;
pub use super::pending_asks::Entity as PendingAsks;
pub use super::responses::Entity as Responses;
pub use super::runs::Entity as Runs;
pub use super::uploads::Entity as Uploads;
pub use super::users::Entity as Users;
