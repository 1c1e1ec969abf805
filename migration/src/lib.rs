//! Colloquy's database migrations: one `create_x_table` migration per table, in
//! foreign-key dependency order, then the columns added since; run by [`Migrator`] on SQLite
//! and PostgreSQL alike.

pub use sea_orm_migration::prelude::*;

mod m20261121_000001_create_users_table;
mod m20261121_000002_create_api_keys_table;
mod m20261121_000003_create_login_sessions_table;
mod m20261121_000004_create_login_tokens_table;
mod m20261121_000005_create_agents_table;
mod m20261121_000006_create_chats_table;
mod m20261121_000007_create_messages_table;
mod m20261121_000008_create_runs_table;
mod m20261121_000009_create_pending_asks_table;
mod m20261121_000010_create_memories_table;
mod m20261121_000011_create_artifacts_table;
mod m20261121_000012_create_artifact_versions_table;
mod m20261121_000013_create_documents_table;
mod m20261121_000014_create_document_chunks_table;
mod m20261121_000015_create_uploads_table;
mod m20261123_000016_add_crash_recovery_columns;
mod m20261123_000017_add_run_tool_calls;
mod m20261123_000018_add_chat_context_strategy;
mod m20261124_000019_add_pending_ask_kind;
mod m20261124_000020_add_run_deep_think;
mod m20261124_000021_agent_defaults;
mod m20261125_000022_responses_files_vector_stores;
mod m20261126_000023_add_message_reasoning;
mod m20261126_000024_create_attachments_table;
mod m20261127_000025_create_agent_knowledge_bases_table;
mod m20261127_000027_add_agent_sql_database;
mod m20261127_000028_create_email_sends_table;
mod m20261128_000029_create_workflows_tables;
mod m20261128_000030_create_schedules_table;
mod m20261128_000031_create_schedule_firings_table;
mod m20261128_000033_add_chat_and_message_model;
mod m20261128_000034_add_user_default_model_and_disabled;
mod m20261128_000035_add_account_profile;
mod m20261129_000036_create_leases_tables;
mod m20261129_000037_add_user_time_zone;
mod m20261130_000038_add_agent_chat_tools_enabled;
mod m20261130_000039_email_sends_by_user;
mod m20261201_000040_add_chunk_headings;
mod m20261202_000041_add_lease_epoch;
mod m20261203_000042_create_containers;
mod m20261204_000043_create_chat_folders;
mod m20261205_000044_create_chat_shares;
mod m20261206_000045_index_chats_by_update;

/// Names of every table the migrations create, in creation order.
pub const TABLES: [&str; 26] = [
    "users",
    "api_keys",
    "login_sessions",
    "login_tokens",
    "agents",
    "chats",
    "messages",
    "runs",
    "pending_asks",
    "memories",
    "artifacts",
    "artifact_versions",
    "documents",
    "document_chunks",
    "uploads",
    "agent_knowledge_bases",
    "email_sends",
    "workflows",
    "workflow_versions",
    "workflow_runs",
    "schedules",
    "schedule_firings",
    "leases",
    "lease_handovers",
    "chat_folders",
    "chat_shares",
];

/// Applies (or rolls back) Colloquy's schema; `down` drops tables in reverse order.
pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m20261121_000001_create_users_table::Migration),
            Box::new(m20261121_000002_create_api_keys_table::Migration),
            Box::new(m20261121_000003_create_login_sessions_table::Migration),
            Box::new(m20261121_000004_create_login_tokens_table::Migration),
            Box::new(m20261121_000005_create_agents_table::Migration),
            Box::new(m20261121_000006_create_chats_table::Migration),
            Box::new(m20261121_000007_create_messages_table::Migration),
            Box::new(m20261121_000008_create_runs_table::Migration),
            Box::new(m20261121_000009_create_pending_asks_table::Migration),
            Box::new(m20261121_000010_create_memories_table::Migration),
            Box::new(m20261121_000011_create_artifacts_table::Migration),
            Box::new(m20261121_000012_create_artifact_versions_table::Migration),
            Box::new(m20261121_000013_create_documents_table::Migration),
            Box::new(m20261121_000014_create_document_chunks_table::Migration),
            Box::new(m20261121_000015_create_uploads_table::Migration),
            Box::new(m20261123_000016_add_crash_recovery_columns::Migration),
            Box::new(m20261123_000017_add_run_tool_calls::Migration),
            Box::new(m20261123_000018_add_chat_context_strategy::Migration),
            Box::new(m20261124_000019_add_pending_ask_kind::Migration),
            Box::new(m20261124_000020_add_run_deep_think::Migration),
            Box::new(m20261124_000021_agent_defaults::Migration),
            Box::new(m20261125_000022_responses_files_vector_stores::Migration),
            Box::new(m20261126_000023_add_message_reasoning::Migration),
            Box::new(m20261126_000024_create_attachments_table::Migration),
            Box::new(m20261127_000025_create_agent_knowledge_bases_table::Migration),
            Box::new(m20261127_000027_add_agent_sql_database::Migration),
            Box::new(m20261127_000028_create_email_sends_table::Migration),
            Box::new(m20261128_000029_create_workflows_tables::Migration),
            Box::new(m20261128_000030_create_schedules_table::Migration),
            Box::new(m20261128_000031_create_schedule_firings_table::Migration),
            Box::new(m20261128_000033_add_chat_and_message_model::Migration),
            Box::new(m20261128_000034_add_user_default_model_and_disabled::Migration),
            Box::new(m20261128_000035_add_account_profile::Migration),
            Box::new(m20261129_000036_create_leases_tables::Migration),
            Box::new(m20261129_000037_add_user_time_zone::Migration),
            Box::new(m20261130_000038_add_agent_chat_tools_enabled::Migration),
            Box::new(m20261130_000039_email_sends_by_user::Migration),
            Box::new(m20261201_000040_add_chunk_headings::Migration),
            Box::new(m20261202_000041_add_lease_epoch::Migration),
            Box::new(m20261203_000042_create_containers::Migration),
            Box::new(m20261204_000043_create_chat_folders::Migration),
            Box::new(m20261205_000044_create_chat_shares::Migration),
            Box::new(m20261206_000045_index_chats_by_update::Migration),
        ]
    }
}
