//! The knowledge bases an agent searches: rows of `agent_knowledge_bases` (both sides cascade,
//! so a deleted knowledge base leaves no name behind), read beside the agent and replaced
//! whole when an agent is saved with `knowledge_base_ids`. Each must be the owner's: another
//! user's is `KnowledgeBaseNotFound`, exactly as one that does not exist.

use entities::agent_knowledge_bases as links;
use entities::ids::{AgentId, ChatId, UserId};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    Set,
};

use super::{Agent, AgentError, AgentFields, Agents};
use crate::chat::knowledge_bases::{KnowledgeBaseId, KnowledgeBases};

impl Agents {
    /// The first agent `select` finds, with the knowledge bases it searches, in one query (a
    /// left join): each turn reads its agent this way.
    pub(super) async fn one_with_knowledge_bases(
        &self,
        select: sea_orm::Select<entities::agents::Entity>,
    ) -> Result<Option<Agent>, DbErr> {
        let found = select
            .find_with_related(links::Entity)
            .order_by_asc(entities::agents::Column::Id)
            .order_by_asc(links::Column::Position)
            .all(&self.db)
            .await?;
        Ok(found.into_iter().next().map(|(row, bases)| {
            let mut agent = Agent::from(row);
            agent.knowledge_base_ids = bases
                .iter()
                .map(|row| KnowledgeBaseId::of(&row.chat_id))
                .collect();
            agent
        }))
    }

    /// The agent with the knowledge bases it searches.
    pub(super) async fn with_knowledge_bases(&self, mut agent: Agent) -> Result<Agent, DbErr> {
        agent.knowledge_base_ids = self
            .links_of(std::slice::from_ref(&agent.id))
            .await?
            .into_iter()
            .map(|row| KnowledgeBaseId::of(&row.chat_id))
            .collect();
        Ok(agent)
    }

    /// Agents with the knowledge bases each searches, in one query.
    pub(super) async fn all_with_knowledge_bases(
        &self,
        mut agents: Vec<Agent>,
    ) -> Result<Vec<Agent>, DbErr> {
        let ids: Vec<AgentId> = agents.iter().map(|a| a.id.clone()).collect();
        let rows = self.links_of(&ids).await?;
        for agent in &mut agents {
            agent.knowledge_base_ids = rows
                .iter()
                .filter(|row| row.agent_id == agent.id)
                .map(|row| KnowledgeBaseId::of(&row.chat_id))
                .collect();
        }
        Ok(agents)
    }

    /// The knowledge base rows of `agents`, each agent's in its order.
    async fn links_of(&self, agents: &[AgentId]) -> Result<Vec<links::Model>, DbErr> {
        if agents.is_empty() {
            return Ok(Vec::new());
        }
        links::Entity::find()
            .filter(links::Column::AgentId.is_in(agents.iter().cloned()))
            .order_by_asc(links::Column::AgentId)
            .order_by_asc(links::Column::Position)
            .all(&self.db)
            .await
    }

    /// The knowledge bases `fields` names, once each, checked to be `user`'s; `None` when it
    /// names none (they stay as they are).
    pub(super) async fn check_knowledge_bases(
        &self,
        user: &UserId,
        fields: &AgentFields,
    ) -> Result<Option<Vec<KnowledgeBaseId>>, AgentError> {
        let Some(named) = &fields.knowledge_base_ids else {
            return Ok(None);
        };
        let mut unique: Vec<KnowledgeBaseId> = Vec::with_capacity(named.len());
        for id in named {
            if !unique.contains(id) {
                unique.push(id.clone());
            }
        }
        let chats: Vec<ChatId> = unique.iter().map(|id| id.chat_id().clone()).collect();
        // The limit on knowledge bases per user does not matter for looking them up.
        let owned = KnowledgeBases::new(self.db.clone(), 0)
            .owned_among(user, &chats)
            .await?;
        if let Some(missing) = unique
            .iter()
            .find(|id| !owned.iter().any(|chat| chat.id == *id.chat_id()))
        {
            return Err(AgentError::KnowledgeBaseNotFound(missing.clone()));
        }
        Ok(Some(unique))
    }

    /// Replaces the agent's knowledge bases with `bases` (checked), in their order.
    pub(super) async fn store_knowledge_bases(
        db: &impl ConnectionTrait,
        agent: &AgentId,
        bases: &[KnowledgeBaseId],
    ) -> Result<(), DbErr> {
        links::Entity::delete_many()
            .filter(links::Column::AgentId.eq(agent))
            .exec(db)
            .await?;
        for (position, base) in bases.iter().enumerate() {
            links::ActiveModel {
                agent_id: Set(agent.clone()),
                chat_id: Set(base.chat_id().clone()),
                position: Set(position as i32),
            }
            .insert(db)
            .await?;
        }
        Ok(())
    }
}
