//! The chat domain's database access, by concern: the chats themselves (`Chats`: creating,
//! listing, renaming and deleting a user's chats; every query filters by owner, so nothing
//! here hands out another user's row), a chat's messages and its history summary
//! (`messages`; also deleting a branch's last message, a conversation item), its runs (`runs`:
//! recorded, ended, paused, resumed), and what OpenAI's stateful APIs keep on a chat (`openai`:
//! a conversation's or vector store's `metadata`, chats made as vector stores), and how the
//! owner organises them (`folders`; a chat's pin, archive and folder are set by `organize`).

mod folders;
mod messages;
mod openai;
mod runs;

use chrono::Utc;
use entities::chats;
use entities::ids::{ChatFolderId, ChatId, UserId};
use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, DbErr, EntityTrait, Order, QueryFilter,
    QueryOrder, QuerySelect, Set,
};

use crate::config::ContextStrategy;

pub use folders::{
    ChatFolders, FolderError, MAX_FOLDER_NAME_CHARS, MAX_FOLDERS_PER_USER, parse_folder_name,
};
pub use messages::{
    HistorySummary, delete_leaf, history_summary, insert_nodes, load_messages, set_active_leaf,
    store_history_summary, store_messages, updated_now,
};
pub use runs::{
    FinishedRun, MAX_RECORDED_TOOL_CALLS, NewRun, RunRecord, ToolCallRecord, append_tool_calls,
    begin_turn, complete_turn, finish_run, insert_run, pause_run, resume_run, run_records,
    save_deep_think,
};

/// Longest chat title in characters.
pub const MAX_TITLE_CHARS: usize = 200;
/// Title of a chat created without one.
const DEFAULT_TITLE: &str = "New chat";

/// Why a chat could not be found, named or changed.
#[derive(Debug, thiserror::Error)]
pub enum ChatStoreError {
    /// No such chat, or someone else's (never said which).
    #[error("chat not found")]
    NotFound,
    #[error("title must be 1-{MAX_TITLE_CHARS} characters")]
    InvalidTitle,
    #[error(transparent)]
    Database(#[from] DbErr),
}

/// Which of the owner's chats a list shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatListView {
    /// The chats not archived: pinned first (latest pin first), then most recently updated.
    Active,
    /// Only the archived ones, most recently archived first.
    Archived,
}

/// How `Chats::organize` changes a chat's place in its owner's list; what is `None` stays.
#[derive(Debug, Clone, Default)]
pub struct Placement {
    pub pinned: Option<bool>,
    pub archived: Option<bool>,
    /// `Some(None)`: out of any folder; `Some(Some(id))`: into that folder, which the caller
    /// checked is the owner's.
    pub folder: Option<Option<ChatFolderId>>,
}

impl Placement {
    pub fn is_empty(&self) -> bool {
        self.pinned.is_none() && self.archived.is_none() && self.folder.is_none()
    }
}

/// Checks and trims a title.
pub fn parse_title(raw: &str) -> Result<String, ChatStoreError> {
    let title = raw.trim();
    if title.is_empty() || title.chars().count() > MAX_TITLE_CHARS {
        return Err(ChatStoreError::InvalidTitle);
    }
    Ok(title.to_string())
}

#[derive(Clone)]
pub struct Chats {
    db: DatabaseConnection,
}

impl Chats {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }

    pub async fn create(
        &self,
        owner: &UserId,
        title: Option<String>,
        ephemeral: bool,
    ) -> Result<chats::Model, DbErr> {
        self.create_with(owner, title, ephemeral, None, None).await
    }

    /// `create`, with the chat's context strategy (`None`: the server's default) and agent
    /// (`None`: the owner's default agent; the caller checked that `agent` is the owner's).
    pub async fn create_with(
        &self,
        owner: &UserId,
        title: Option<String>,
        ephemeral: bool,
        context_strategy: Option<ContextStrategy>,
        agent: Option<entities::ids::AgentId>,
    ) -> Result<chats::Model, DbErr> {
        let draft = self
            .draft(owner, title, ephemeral, context_strategy, agent)
            .await?;
        self.insert(draft).await
    }

    /// The chat `create_with` would make, not stored yet (`insert` stores it): a turn that
    /// opens a new chat is planned against it before anything is written. Only reads (but for
    /// the owner's default agent, made once when first needed).
    pub async fn draft(
        &self,
        owner: &UserId,
        title: Option<String>,
        ephemeral: bool,
        context_strategy: Option<ContextStrategy>,
        agent: Option<entities::ids::AgentId>,
    ) -> Result<chats::Model, DbErr> {
        let agent = match agent {
            Some(agent) => Some(
                entities::agents::Entity::find_by_id(agent.clone())
                    .one(&self.db)
                    .await?
                    .map(super::agents::Agent::from)
                    .ok_or_else(|| DbErr::RecordNotFound(format!("agent {agent}")))?,
            ),
            None => None,
        };
        let (draft, _) = self
            .draft_for(owner, title, ephemeral, context_strategy, agent, None)
            .await?;
        Ok(draft)
    }

    /// `draft` with the agent already read (the owner's default agent when `None`), which is
    /// returned beside the chat: a turn planned against the draft needs it, and reads it once.
    /// `model`: the model the turn that makes the chat asked for, which the chat then starts
    /// with.
    pub async fn draft_for(
        &self,
        owner: &UserId,
        title: Option<String>,
        ephemeral: bool,
        context_strategy: Option<ContextStrategy>,
        agent: Option<super::agents::Agent>,
        model: Option<String>,
    ) -> Result<(chats::Model, super::agents::Agent), DbErr> {
        let agent = match agent {
            Some(agent) => agent,
            None => {
                super::agents::Agents::new(self.db.clone())
                    .default_for(owner)
                    .await?
            }
        };
        // A new chat starts with the model its turn asked for, else its agent's, else its
        // owner's chosen default.
        let model = match model.or_else(|| agent.model.clone()) {
            Some(model) => Some(model),
            None => entities::users::Entity::find_by_id(owner.clone())
                .one(&self.db)
                .await?
                .and_then(|user| user.default_model),
        };
        let now = Utc::now();
        let chat = chats::Model {
            id: ChatId::generate(),
            user_id: owner.clone(),
            agent_id: Some(agent.id.clone()),
            title: title.unwrap_or_else(|| DEFAULT_TITLE.to_string()),
            active_leaf_id: None,
            ephemeral,
            embedder: None,
            context_strategy: context_strategy.map(|s| s.as_str().to_string()),
            history_summary: None,
            metadata: None,
            is_vector_store: false,
            model,
            pinned_at: None,
            archived_at: None,
            folder_id: None,
            created_at: now,
            updated_at: now,
        };
        Ok((chat, agent))
    }

    /// Stores a chat `draft` made.
    pub async fn insert(&self, draft: chats::Model) -> Result<chats::Model, DbErr> {
        Self::insert_on(&self.db, draft).await
    }

    /// `insert`, on `db` (a transaction the caller holds).
    pub async fn insert_on(
        db: &impl sea_orm::ConnectionTrait,
        draft: chats::Model,
    ) -> Result<chats::Model, DbErr> {
        // Every column is the draft's: it is what was stored, not read back (no `RETURNING`).
        let row = chats::ActiveModel {
            id: Set(draft.id.clone()),
            user_id: Set(draft.user_id.clone()),
            agent_id: Set(draft.agent_id.clone()),
            title: Set(draft.title.clone()),
            active_leaf_id: Set(draft.active_leaf_id.clone()),
            ephemeral: Set(draft.ephemeral),
            embedder: Set(draft.embedder.clone()),
            context_strategy: Set(draft.context_strategy.clone()),
            history_summary: Set(draft.history_summary.clone()),
            metadata: Set(draft.metadata.clone()),
            is_vector_store: Set(draft.is_vector_store),
            model: Set(draft.model.clone()),
            pinned_at: Set(draft.pinned_at),
            archived_at: Set(draft.archived_at),
            folder_id: Set(draft.folder_id.clone()),
            created_at: Set(draft.created_at),
            updated_at: Set(draft.updated_at),
        };
        chats::Entity::insert(row)
            .exec_without_returning(db)
            .await?;
        Ok(draft)
    }

    /// The chat if `owner` owns it; `NotFound` otherwise (also for someone else's chat).
    pub async fn get_owned(
        &self,
        owner: &UserId,
        id: &ChatId,
    ) -> Result<chats::Model, ChatStoreError> {
        chats::Entity::find_by_id(id.clone())
            .filter(chats::Column::UserId.eq(owner))
            .one(&self.db)
            .await?
            .ok_or(ChatStoreError::NotFound)
    }

    /// The owner's chats `view` shows, in its order, at most `limit` of them.
    pub async fn list(
        &self,
        owner: &UserId,
        view: ChatListView,
        limit: u64,
    ) -> Result<Vec<chats::Model>, DbErr> {
        let query = chats::Entity::find()
            .filter(chats::Column::UserId.eq(owner))
            .filter(chats::Column::Ephemeral.eq(false))
            .filter(chats::Column::IsVectorStore.eq(false));
        let query = match view {
            // `IS NULL` first, not `NULLS LAST`: SQLite and PostgreSQL sort NULLs differently.
            ChatListView::Active => query
                .filter(chats::Column::ArchivedAt.is_null())
                .order_by(Expr::col(chats::Column::PinnedAt).is_null(), Order::Asc)
                .order_by_desc(chats::Column::PinnedAt),
            ChatListView::Archived => query
                .filter(chats::Column::ArchivedAt.is_not_null())
                .order_by_desc(chats::Column::ArchivedAt),
        };
        query
            .order_by_desc(chats::Column::UpdatedAt)
            .order_by_desc(chats::Column::Id)
            .limit(limit)
            .all(&self.db)
            .await
    }

    /// Pins or unpins, archives or restores, and files a chat the owner owns; a chat already
    /// pinned (or archived) keeps the time it was. Its `updated_at` is left alone: organising
    /// a chat is not news in it.
    pub async fn organize(
        &self,
        owner: &UserId,
        id: &ChatId,
        placement: Placement,
    ) -> Result<chats::Model, ChatStoreError> {
        // What turns keep of it is stale once this returns (`chat::turn_cache`).
        let _changed = crate::chat::turn_cache::Changed;
        let chat = self.get_owned(owner, id).await?;
        let now = Utc::now();
        let pinned_at = match placement.pinned {
            Some(true) => chat.pinned_at.or(Some(now)),
            Some(false) => None,
            None => chat.pinned_at,
        };
        let archived_at = match placement.archived {
            Some(true) => chat.archived_at.or(Some(now)),
            Some(false) => None,
            None => chat.archived_at,
        };
        let folder_id = placement.folder.unwrap_or_else(|| chat.folder_id.clone());
        let mut active: chats::ActiveModel = chat.into();
        active.pinned_at = Set(pinned_at);
        active.archived_at = Set(archived_at);
        active.folder_id = Set(folder_id);
        Ok(active.update(&self.db).await?)
    }

    /// Renames the chat and/or sets its context strategy; what is `None` stays as it is.
    pub async fn update(
        &self,
        owner: &UserId,
        id: &ChatId,
        title: Option<String>,
        context_strategy: Option<ContextStrategy>,
    ) -> Result<chats::Model, ChatStoreError> {
        // What turns keep of it is stale once this returns (`chat::turn_cache`).
        let _changed = crate::chat::turn_cache::Changed;
        let chat = self.get_owned(owner, id).await?;
        let mut active: chats::ActiveModel = chat.into();
        if let Some(title) = title {
            active.title = Set(title);
            active.updated_at = Set(Utc::now());
        }
        if let Some(strategy) = context_strategy {
            active.context_strategy = Set(Some(strategy.as_str().to_string()));
        }
        Ok(active.update(&self.db).await?)
    }

    /// Moves a chat the owner owns to another of their agents (checked by the caller).
    pub async fn set_agent(
        &self,
        owner: &UserId,
        id: &ChatId,
        agent: entities::ids::AgentId,
    ) -> Result<chats::Model, ChatStoreError> {
        // What turns keep of it is stale once this returns (`chat::turn_cache`).
        let _changed = crate::chat::turn_cache::Changed;
        let chat = self.get_owned(owner, id).await?;
        let mut active: chats::ActiveModel = chat.into();
        active.agent_id = Set(Some(agent));
        Ok(active.update(&self.db).await?)
    }

    /// Sets the model a chat's next turns ask for (checked by the caller).
    pub async fn set_model(
        &self,
        owner: &UserId,
        id: &ChatId,
        model: String,
    ) -> Result<chats::Model, ChatStoreError> {
        // What turns keep of it is stale once this returns (`chat::turn_cache`).
        let _changed = crate::chat::turn_cache::Changed;
        let chat = self.get_owned(owner, id).await?;
        let mut active: chats::ActiveModel = chat.into();
        active.model = Set(Some(model));
        Ok(active.update(&self.db).await?)
    }

    /// Keeps a chat made by a `/v1` request (someone opened it in the UI): it joins the chat
    /// list and is no longer swept.
    pub async fn keep(&self, chat: chats::Model) -> Result<chats::Model, DbErr> {
        // What turns keep of it is stale once this returns (`chat::turn_cache`).
        let _changed = crate::chat::turn_cache::Changed;
        if !chat.ephemeral {
            return Ok(chat);
        }
        let mut active: chats::ActiveModel = chat.into();
        active.ephemeral = Set(false);
        active.update(&self.db).await
    }

    /// Chats made by `/v1` requests and not used since `before`, at most `limit` of them.
    pub async fn unused_api_chats(
        &self,
        before: chrono::DateTime<Utc>,
        limit: u64,
    ) -> Result<Vec<ChatId>, DbErr> {
        let rows = chats::Entity::find()
            .filter(chats::Column::Ephemeral.eq(true))
            .filter(chats::Column::UpdatedAt.lt(before))
            .limit(limit)
            .all(&self.db)
            .await?;
        Ok(rows.into_iter().map(|chat| chat.id).collect())
    }

    /// The ids of every chat `owner` has (vector stores and knowledge bases included).
    pub async fn ids_of(&self, owner: &UserId) -> Result<Vec<ChatId>, DbErr> {
        use sea_orm::QuerySelect;
        chats::Entity::find()
            .select_only()
            .column(chats::Column::Id)
            .filter(chats::Column::UserId.eq(owner.clone()))
            .into_tuple()
            .all(&self.db)
            .await
    }

    /// Deletes the chat's row and, through foreign keys, everything in it. Only
    /// `supervisor::lifecycle` calls it: a chat is more than its rows.
    pub async fn delete_row(&self, id: &ChatId) -> Result<(), DbErr> {
        chats::Entity::delete_by_id(id.clone())
            .exec(&self.db)
            .await?;
        Ok(())
    }
}

/// The context strategy a chat row names, or `default` when it names none.
pub fn context_strategy_of(chat: &chats::Model, default: ContextStrategy) -> ContextStrategy {
    chat.context_strategy
        .as_deref()
        .and_then(ContextStrategy::parse)
        .unwrap_or(default)
}
