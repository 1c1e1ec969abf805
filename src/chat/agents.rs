//! Agents (docs/spec.md#agents): a user's named chat configurations — system prompt, model, whether tools
//! are on, which tools (`enabled_tools`), custom MCP tool entries, and the declared database its
//! `execute_sql` queries (`sql_database`). Every user has a default agent (id `agent_<user id>`,
//! made when first needed); every chat belongs to one. The knowledge bases an agent searches
//! (`knowledge_base_ids`) are rows of their own (`knowledge`).

mod knowledge;

use chrono::Utc;
use entities::agents;
use entities::ids::{AgentId, UserId};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Set, TransactionTrait,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::knowledge_bases::KnowledgeBaseId;
use crate::config::AgentConfig;
use crate::db::Page;

/// Longest agent name, in characters.
pub const MAX_NAME_CHARS: usize = 100;
/// Longest system prompt, in characters.
pub const MAX_PROMPT_CHARS: usize = 20_000;
/// Longest model name, in characters.
pub const MAX_MODEL_CHARS: usize = 200;
/// Most tool names in `enabled_tools`, and most custom tool entries.
pub const MAX_TOOLS: usize = 64;
/// Longest tool or server name, in characters.
pub const MAX_TOOL_NAME_CHARS: usize = 64;
/// Most knowledge bases one agent searches: each is an index a `search_knowledge` call opens.
pub const MAX_KNOWLEDGE_BASES: usize = 20;

/// A custom tool entry (docs/spec.md#custom-tools-over-mcp): an MCP server's tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CustomTool {
    #[serde(rename = "type")]
    pub kind: String,
    pub config: McpToolRef,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpToolRef {
    pub server_id: String,
    pub tool_name: String,
}

/// An agent as the API shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Agent {
    pub id: AgentId,
    pub name: String,
    pub system_prompt: Option<String>,
    pub model: Option<String>,
    pub tools_enabled: bool,
    /// `None`: every tool the request turns on.
    pub enabled_tools: Option<Vec<String>>,
    /// Whether its chats keep the tools every chat has (artifacts, memory, ask_user,
    /// file_search) that `enabled_tools` does not name; `true` unless turned off.
    pub chat_tools_enabled: bool,
    pub custom_tools: Vec<CustomTool>,
    /// The knowledge bases `search_knowledge` searches, in order (`kb_<id>`).
    pub knowledge_base_ids: Vec<KnowledgeBaseId>,
    /// The `[[sql.databases]]` id `execute_sql` queries; `None`: the only one declared.
    pub sql_database: Option<String>,
    pub is_default: bool,
    pub created_at: chrono::DateTime<Utc>,
    pub updated_at: chrono::DateTime<Utc>,
}

impl From<agents::Model> for Agent {
    fn from(row: agents::Model) -> Self {
        Self {
            enabled_tools: row
                .enabled_tools
                .and_then(|v| serde_json::from_value(v).ok()),
            custom_tools: row
                .custom_tools
                .and_then(|v| serde_json::from_value(v).ok())
                .unwrap_or_default(),
            // Rows of their own, filled in by `Agents` (`knowledge`).
            knowledge_base_ids: Vec::new(),
            id: row.id,
            name: row.name,
            system_prompt: row.system_prompt,
            model: row.model,
            tools_enabled: row.tools_enabled,
            chat_tools_enabled: row.chat_tools_enabled,
            sql_database: row.sql_database,
            is_default: row.is_default,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

/// What a create or an update sets; `None` leaves a field as it is (an update) or at its
/// default (a create). `Some(None)` clears a nullable field.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentFields {
    pub name: Option<String>,
    #[serde(default, with = "serde_with_null")]
    pub system_prompt: Option<Option<String>>,
    #[serde(default, with = "serde_with_null")]
    pub model: Option<Option<String>>,
    pub tools_enabled: Option<bool>,
    #[serde(default, with = "serde_with_null")]
    pub enabled_tools: Option<Option<Vec<String>>>,
    pub chat_tools_enabled: Option<bool>,
    pub custom_tools: Option<Vec<CustomTool>>,
    /// Each must be one of the owner's knowledge bases (else `KnowledgeBaseNotFound`).
    pub knowledge_base_ids: Option<Vec<KnowledgeBaseId>>,
    #[serde(default, with = "serde_with_null")]
    pub sql_database: Option<Option<String>>,
}

/// `Some(None)` for an explicit `null`, `None` for a missing field.
mod serde_with_null {
    use serde::{Deserialize, Deserializer};

    pub fn deserialize<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
    where
        D: Deserializer<'de>,
        T: Deserialize<'de>,
    {
        Option::<T>::deserialize(deserializer).map(Some)
    }
}

/// Why agent fields were refused.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("{0}")]
    Invalid(String),
    #[error("agent not found")]
    NotFound,
    #[error("{0}")]
    Conflict(String),
    /// The owner has `max` agents already (`agent.max_agents_per_user`).
    #[error("a user may have at most {max} agents; delete one first")]
    TooMany { max: u64 },
    /// A knowledge base the owner does not have (someone else's is not told apart).
    #[error("knowledge base {0} not found")]
    KnowledgeBaseNotFound(KnowledgeBaseId),
    #[error("database error: {0}")]
    Database(#[from] DbErr),
}

fn invalid(message: impl Into<String>) -> AgentError {
    AgentError::Invalid(message.into())
}

impl AgentFields {
    /// Checks every field that is set.
    pub fn check(&self) -> Result<(), AgentError> {
        if let Some(name) = &self.name {
            let chars = name.trim().chars().count();
            if chars == 0 || chars > MAX_NAME_CHARS {
                return Err(invalid(format!(
                    "name must be 1-{MAX_NAME_CHARS} characters"
                )));
            }
        }
        if let Some(Some(prompt)) = &self.system_prompt
            && prompt.chars().count() > MAX_PROMPT_CHARS
        {
            return Err(invalid(format!(
                "system_prompt may have at most {MAX_PROMPT_CHARS} characters"
            )));
        }
        if let Some(Some(model)) = &self.model
            && (model.trim().is_empty() || model.chars().count() > MAX_MODEL_CHARS)
        {
            return Err(invalid(format!(
                "model must be 1-{MAX_MODEL_CHARS} characters, or null for the server's default"
            )));
        }
        let name_ok = |name: &str| {
            !name.is_empty()
                && name.len() <= MAX_TOOL_NAME_CHARS
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        };
        if let Some(Some(tools)) = &self.enabled_tools {
            if tools.len() > MAX_TOOLS {
                return Err(invalid(format!(
                    "enabled_tools may name at most {MAX_TOOLS} tools"
                )));
            }
            if let Some(bad) = tools.iter().find(|t| !name_ok(t)) {
                return Err(invalid(format!(
                    "enabled_tools: {bad:?} is not a tool name (letters, digits, '_' and '-', \
                     at most {MAX_TOOL_NAME_CHARS})"
                )));
            }
        }
        if let Some(bases) = &self.knowledge_base_ids
            && bases.len() > MAX_KNOWLEDGE_BASES
        {
            return Err(invalid(format!(
                "knowledge_base_ids may name at most {MAX_KNOWLEDGE_BASES} knowledge bases"
            )));
        }
        if let Some(Some(database)) = &self.sql_database
            && !name_ok(database)
        {
            return Err(invalid(
                "sql_database must be a declared database's id (letters, digits, '_' and '-'), \
                 or null for the only one declared",
            ));
        }
        if let Some(custom) = &self.custom_tools {
            if custom.len() > MAX_TOOLS {
                return Err(invalid(format!(
                    "custom_tools may have at most {MAX_TOOLS} entries"
                )));
            }
            for entry in custom {
                if entry.kind != "mcp" {
                    return Err(invalid(format!(
                        "custom_tools: type {:?} is not supported; use \"mcp\"",
                        entry.kind
                    )));
                }
                if !name_ok(&entry.config.server_id) || !name_ok(&entry.config.tool_name) {
                    return Err(invalid(
                        "custom_tools: server_id and tool_name must be names (letters, digits, \
                         '_' and '-')",
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The agents of every user.
#[derive(Clone)]
pub struct Agents {
    db: DatabaseConnection,
    /// Agents one user may have (their default agent counts).
    max_per_user: u64,
}

impl Agents {
    /// The registry, with the default cap (`agent.max_agents_per_user`'s default).
    pub fn new(db: DatabaseConnection) -> Self {
        Self {
            db,
            max_per_user: AgentConfig::default().max_agents_per_user,
        }
    }

    /// The registry, capping each user at `max_per_user` agents.
    pub fn with_max_per_user(self, max_per_user: u64) -> Self {
        Self {
            max_per_user,
            ..self
        }
    }

    fn default_id(user: &UserId) -> AgentId {
        AgentId::from_string(format!("agent_{user}"))
    }

    /// The user's default agent, made on first need.
    pub async fn default_for(&self, user: &UserId) -> Result<Agent, DbErr> {
        let default = agents::Entity::find()
            .filter(agents::Column::UserId.eq(user))
            .filter(agents::Column::IsDefault.eq(true));
        if let Some(agent) = self.one_with_knowledge_bases(default).await? {
            return Ok(agent);
        }
        // Made now. What turns keep (`chat::turn_cache`) stays current: none of it can have
        // been read without it.
        let now = Utc::now();
        let made = agents::ActiveModel {
            id: Set(Self::default_id(user)),
            user_id: Set(user.clone()),
            name: Set("Default".into()),
            system_prompt: Set(None),
            model: Set(None),
            tools_enabled: Set(true),
            enabled_tools: Set(None),
            chat_tools_enabled: Set(true),
            is_default: Set(true),
            custom_tools: Set(None),
            sql_database: Set(None),
            created_at: Set(now),
            updated_at: Set(now),
        }
        .insert(&self.db)
        .await;
        match made {
            Ok(row) => Ok(row.into()),
            // Made at the same moment by another request.
            Err(_) => agents::Entity::find_by_id(Self::default_id(user))
                .one(&self.db)
                .await?
                .map(Agent::from)
                .ok_or(DbErr::RecordNotFound("the default agent".into())),
        }
    }

    /// The user's agents, the default first, then by name.
    pub async fn list(&self, user: &UserId, page: Page) -> Result<(Vec<Agent>, u64), DbErr> {
        self.default_for(user).await?;
        let owned = agents::Entity::find().filter(agents::Column::UserId.eq(user));
        let total = sea_orm::PaginatorTrait::count(owned.clone(), &self.db).await?;
        let agents = owned
            .order_by_desc(agents::Column::IsDefault)
            .order_by_asc(agents::Column::Name)
            .order_by_asc(agents::Column::Id)
            .offset(page.offset)
            .limit(page.limit)
            .all(&self.db)
            .await?
            .into_iter()
            .map(Agent::from)
            .collect();
        Ok((self.all_with_knowledge_bases(agents).await?, total))
    }

    /// The agent if `user` owns it; `NotFound` for anyone else's.
    pub async fn get_owned(&self, user: &UserId, id: &AgentId) -> Result<Agent, AgentError> {
        let owned = agents::Entity::find_by_id(id.clone()).filter(agents::Column::UserId.eq(user));
        self.one_with_knowledge_bases(owned)
            .await?
            .ok_or(AgentError::NotFound)
    }

    pub async fn create(&self, user: &UserId, fields: AgentFields) -> Result<Agent, AgentError> {
        // What turns keep of it is stale once this returns (`chat::turn_cache`).
        let _changed = crate::chat::turn_cache::Changed;
        fields.check()?;
        let Some(name) = fields.name.as_deref().map(str::trim) else {
            return Err(invalid("name is required"));
        };
        self.default_for(user).await?;
        let bases = self.check_knowledge_bases(user, &fields).await?;
        // Counted and stored under the owner's lock, so racing creates cannot pass the cap.
        let txn = crate::db::lock_user(&self.db, user).await?;
        let count = sea_orm::PaginatorTrait::count(
            agents::Entity::find().filter(agents::Column::UserId.eq(user)),
            &txn,
        )
        .await?;
        if count >= self.max_per_user {
            return Err(AgentError::TooMany {
                max: self.max_per_user,
            });
        }
        let now = Utc::now();
        let row = agents::ActiveModel {
            id: Set(AgentId::generate()),
            user_id: Set(user.clone()),
            name: Set(name.to_string()),
            system_prompt: Set(fields.system_prompt.flatten()),
            model: Set(fields.model.flatten()),
            tools_enabled: Set(fields.tools_enabled.unwrap_or(true)),
            enabled_tools: Set(fields.enabled_tools.flatten().map(Value::from)),
            chat_tools_enabled: Set(fields.chat_tools_enabled.unwrap_or(true)),
            is_default: Set(false),
            custom_tools: Set(fields.custom_tools.map(|c| serde_json::json!(c))),
            sql_database: Set(fields.sql_database.flatten()),
            created_at: Set(now),
            updated_at: Set(now),
        }
        .insert(&txn)
        .await?;
        if let Some(bases) = &bases {
            Self::store_knowledge_bases(&txn, &row.id, bases).await?;
        }
        txn.commit().await?;
        let mut agent = Agent::from(row);
        agent.knowledge_base_ids = bases.unwrap_or_default();
        Ok(agent)
    }

    pub async fn update(
        &self,
        user: &UserId,
        id: &AgentId,
        fields: AgentFields,
    ) -> Result<Agent, AgentError> {
        // What turns keep of it is stale once this returns (`chat::turn_cache`).
        let _changed = crate::chat::turn_cache::Changed;
        fields.check()?;
        let row = agents::Entity::find_by_id(id.clone())
            .filter(agents::Column::UserId.eq(user))
            .one(&self.db)
            .await?
            .ok_or(AgentError::NotFound)?;
        let bases = self.check_knowledge_bases(user, &fields).await?;
        let mut active: agents::ActiveModel = row.into();
        if let Some(name) = fields.name {
            active.name = Set(name.trim().to_string());
        }
        if let Some(prompt) = fields.system_prompt {
            active.system_prompt = Set(prompt);
        }
        if let Some(model) = fields.model {
            active.model = Set(model);
        }
        if let Some(on) = fields.tools_enabled {
            active.tools_enabled = Set(on);
        }
        if let Some(tools) = fields.enabled_tools {
            active.enabled_tools = Set(tools.map(Value::from));
        }
        if let Some(on) = fields.chat_tools_enabled {
            active.chat_tools_enabled = Set(on);
        }
        if let Some(custom) = fields.custom_tools {
            active.custom_tools = Set(Some(serde_json::json!(custom)));
        }
        if let Some(database) = fields.sql_database {
            active.sql_database = Set(database);
        }
        active.updated_at = Set(Utc::now());
        let txn = self.db.begin().await?;
        let row = active.update(&txn).await?;
        if let Some(bases) = &bases {
            Self::store_knowledge_bases(&txn, &row.id, bases).await?;
        }
        txn.commit().await?;
        Ok(self.with_knowledge_bases(row.into()).await?)
    }

    /// Deletes an agent; its chats move to the user's default agent. The default agent itself
    /// cannot be deleted.
    pub async fn delete(&self, user: &UserId, id: &AgentId) -> Result<(), AgentError> {
        // What turns keep of it is stale once this returns (`chat::turn_cache`).
        let _changed = crate::chat::turn_cache::Changed;
        let agent = self.get_owned(user, id).await?;
        if agent.is_default {
            return Err(AgentError::Conflict(
                "the default agent cannot be deleted; its chats need it".into(),
            ));
        }
        let fallback = self.default_for(user).await?;
        entities::chats::Entity::update_many()
            .col_expr(
                entities::chats::Column::AgentId,
                sea_orm::sea_query::Expr::value(fallback.id),
            )
            .filter(entities::chats::Column::AgentId.eq(id))
            .exec(&self.db)
            .await?;
        agents::Entity::delete_by_id(id.clone())
            .exec(&self.db)
            .await?;
        Ok(())
    }
}
