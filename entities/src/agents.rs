//! `agents` table: per-user presets (system prompt, model, tools) that chats can use.

use sea_orm::entity::prelude::*;

use crate::ids::{AgentId, UserId};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "agents")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: AgentId,
    #[sea_orm(column_type = "Text")]
    pub user_id: UserId,
    pub name: String,
    #[sea_orm(column_type = "Text", nullable)]
    pub system_prompt: Option<String>,
    pub model: Option<String>,
    /// Defaults to `true` in the database.
    pub tools_enabled: bool,
    /// Which tools the agent may use (JSON; shape defined by the application).
    pub enabled_tools: Option<Json>,
    /// The user's default agent, which chats get when they name none. Defaults to `false`.
    pub is_default: bool,
    /// The agent's custom tool entries (docs/spec.md#custom-tools-over-mcp): a JSON array of
    /// `{"type": "mcp", "config": {"server_id", "tool_name"}}`.
    pub custom_tools: Option<Json>,
    /// Whether its chats keep every chat's own tools when `enabled_tools` names none of them.
    /// Defaults to `true` in the database.
    pub chat_tools_enabled: bool,
    /// The `[[sql.databases]]` id its `execute_sql` queries; `None`: the only one declared.
    #[sea_orm(column_type = "Text", nullable)]
    pub sql_database: Option<String>,
    pub created_at: ChronoDateTimeUtc,
    pub updated_at: ChronoDateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::users::Entity",
        from = "Column::UserId",
        to = "super::users::Column::Id",
        on_update = "NoAction",
        on_delete = "Cascade"
    )]
    Users,
    #[sea_orm(has_many = "super::chats::Entity")]
    Chats,
}

impl Related<super::users::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Users.def()
    }
}

impl Related<super::chats::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Chats.def()
    }
}

/// An agent's knowledge bases, read beside it in one query.
impl Related<super::agent_knowledge_bases::Entity> for Entity {
    fn to() -> RelationDef {
        super::agent_knowledge_bases::Relation::Agents.def().rev()
    }
}

impl ActiveModelBehavior for ActiveModel {}
