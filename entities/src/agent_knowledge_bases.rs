//! `agent_knowledge_bases` table: the knowledge bases an agent searches (`knowledge_base_ids`
//! on the agent), each a chat made as a vector store, in the agent's order (`position`).

use sea_orm::entity::prelude::*;

use crate::ids::{AgentId, ChatId};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "agent_knowledge_bases")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub agent_id: AgentId,
    /// The knowledge base's chat (`chats.is_vector_store`).
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub chat_id: ChatId,
    /// Where the agent names it among its knowledge bases, from 0.
    pub position: i32,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::agents::Entity",
        from = "Column::AgentId",
        to = "super::agents::Column::Id",
        on_update = "NoAction",
        on_delete = "Cascade"
    )]
    Agents,
    #[sea_orm(
        belongs_to = "super::chats::Entity",
        from = "Column::ChatId",
        to = "super::chats::Column::Id",
        on_update = "NoAction",
        on_delete = "Cascade"
    )]
    Chats,
}

impl ActiveModelBehavior for ActiveModel {}
