//! `chats` table: conversations owned by a user, optionally bound to an agent.

use sea_orm::entity::prelude::*;

use crate::ids::{AgentId, ChatFolderId, ChatId, MessageId, UserId};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "chats")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: ChatId,
    #[sea_orm(column_type = "Text")]
    pub user_id: UserId,
    /// Set to `NULL` by the database when the agent is deleted.
    #[sea_orm(column_type = "Text", nullable)]
    pub agent_id: Option<AgentId>,
    pub title: String,
    /// Id of the message at the tip of the active branch. Not a foreign key (that would
    /// make a cycle with `messages.chat_id`), so it may dangle; check before use.
    pub active_leaf_id: Option<MessageId>,
    /// Defaults to `false` in the database.
    pub ephemeral: bool,
    /// Which embedder produced this chat's vectors (memories, document chunks).
    pub embedder: Option<String>,
    /// `drop` or `summarize`: what happens to history that outgrows the model's context.
    /// `NULL` means the server's default (`agent.context_strategy`).
    pub context_strategy: Option<String>,
    /// The rolling summary of the oldest turns (see `agent::summary`), or `NULL`.
    pub history_summary: Option<Json>,
    /// A conversation's or vector store's `metadata` (OpenAI's map of strings), or `NULL`.
    pub metadata: Option<Json>,
    /// Made by `POST /v1/vector_stores`: a store of documents, kept out of the chat list.
    pub is_vector_store: bool,
    /// The model its next turn asks for (the model picker's choice); `NULL`: the agent's,
    /// else the server's default.
    pub model: Option<String>,
    /// When its owner pinned it (pinned chats list first, latest pin first); `NULL`: not pinned.
    pub pinned_at: Option<ChronoDateTimeUtc>,
    /// When its owner archived it (out of the chat list, still searchable); `NULL`: not archived.
    pub archived_at: Option<ChronoDateTimeUtc>,
    /// The owner's folder it is in (`chat_folders.id`; not a foreign key, see migration 000043).
    #[sea_orm(column_type = "Text", nullable)]
    pub folder_id: Option<ChatFolderId>,
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
    #[sea_orm(
        belongs_to = "super::agents::Entity",
        from = "Column::AgentId",
        to = "super::agents::Column::Id",
        on_update = "NoAction",
        on_delete = "SetNull"
    )]
    Agents,
    #[sea_orm(has_many = "super::messages::Entity")]
    Messages,
    #[sea_orm(has_many = "super::runs::Entity")]
    Runs,
    #[sea_orm(has_many = "super::pending_asks::Entity")]
    PendingAsks,
    #[sea_orm(has_many = "super::memories::Entity")]
    Memories,
    #[sea_orm(has_many = "super::artifacts::Entity")]
    Artifacts,
    #[sea_orm(has_many = "super::documents::Entity")]
    Documents,
    #[sea_orm(has_many = "super::document_chunks::Entity")]
    DocumentChunks,
    #[sea_orm(has_many = "super::uploads::Entity")]
    Uploads,
}

impl Related<super::users::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Users.def()
    }
}

impl Related<super::agents::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Agents.def()
    }
}

impl Related<super::messages::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Messages.def()
    }
}

impl Related<super::runs::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Runs.def()
    }
}

impl Related<super::pending_asks::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::PendingAsks.def()
    }
}

impl Related<super::memories::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Memories.def()
    }
}

impl Related<super::artifacts::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Artifacts.def()
    }
}

impl Related<super::documents::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Documents.def()
    }
}

impl Related<super::document_chunks::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::DocumentChunks.def()
    }
}

impl Related<super::uploads::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Uploads.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
