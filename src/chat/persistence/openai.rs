//! What OpenAI's stateful APIs keep on a chat: a conversation's or vector store's `metadata`,
//! and the chats made as vector stores.

use chrono::Utc;
use entities::chats;
use entities::ids::{ChatId, UserId};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};
use serde_json::Value;

use super::{ChatStoreError, Chats, parse_title};

impl Chats {
    /// A chat made as a vector store (`POST /v1/vector_stores`), named `name`.
    pub async fn create_vector_store(
        &self,
        owner: &UserId,
        name: Option<String>,
        metadata: Option<Value>,
    ) -> Result<chats::Model, ChatStoreError> {
        let title = name.map(|n| parse_title(&n)).transpose()?;
        let chat = self.create(owner, title, false).await?;
        let mut active: chats::ActiveModel = chat.into();
        active.is_vector_store = Set(true);
        active.metadata = Set(metadata);
        Ok(active.update(&self.db).await?)
    }

    /// Sets the chat's `metadata`, and its title when `name` is given.
    pub async fn set_metadata(
        &self,
        owner: &UserId,
        id: &ChatId,
        name: Option<String>,
        metadata: Option<Value>,
    ) -> Result<chats::Model, ChatStoreError> {
        let chat = self.get_owned(owner, id).await?;
        let mut active: chats::ActiveModel = chat.into();
        if let Some(name) = name {
            active.title = Set(parse_title(&name)?);
        }
        if let Some(metadata) = metadata {
            active.metadata = Set(Some(metadata));
        }
        active.updated_at = Set(Utc::now());
        Ok(active.update(&self.db).await?)
    }

    /// The owner's chats made as vector stores, newest first.
    pub async fn vector_stores(
        &self,
        owner: &UserId,
        limit: u64,
    ) -> Result<Vec<chats::Model>, DbErr> {
        chats::Entity::find()
            .filter(chats::Column::UserId.eq(owner))
            .filter(chats::Column::IsVectorStore.eq(true))
            .order_by_desc(chats::Column::CreatedAt)
            .limit(limit)
            .all(&self.db)
            .await
    }
}
