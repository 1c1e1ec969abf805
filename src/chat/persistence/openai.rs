//! What OpenAI's stateful APIs keep on a chat: a conversation's or vector store's `metadata`,
//! and the chats made as vector stores.

use chrono::Utc;
use entities::chats;
use entities::ids::{ChatId, UserId};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, Condition, DbErr, EntityTrait, Order, QueryFilter, QueryOrder,
    QuerySelect, Set,
};
use serde_json::Value;

use super::{ChatStoreError, Chats, parse_title};

impl Chats {
    /// The chat `POST /v1/vector_stores` (or `/api/knowledge_bases`) would make, named
    /// `name`, not stored yet (`Chats::insert_on` stores it).
    pub async fn draft_vector_store(
        &self,
        owner: &UserId,
        name: Option<String>,
        metadata: Option<Value>,
    ) -> Result<chats::Model, ChatStoreError> {
        let title = name.map(|n| parse_title(&n)).transpose()?;
        let mut draft = self.draft(owner, title, false, None, None).await?;
        draft.is_vector_store = true;
        draft.metadata = metadata;
        Ok(draft)
    }

    /// Sets the chat's `metadata`, and its title when `name` is given.
    pub async fn set_metadata(
        &self,
        owner: &UserId,
        id: &ChatId,
        name: Option<String>,
        metadata: Option<Value>,
    ) -> Result<chats::Model, ChatStoreError> {
        // What turns keep of it is stale once this returns (`chat::turn_cache`).
        let _changed = crate::chat::turn_cache::Changed;
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

    /// The owner's chats made as vector stores, newest first: `limit` of them after skipping
    /// `offset`.
    pub async fn vector_stores(
        &self,
        owner: &UserId,
        limit: u64,
        offset: u64,
    ) -> Result<Vec<chats::Model>, DbErr> {
        chats::Entity::find()
            .filter(chats::Column::UserId.eq(owner))
            .filter(chats::Column::IsVectorStore.eq(true))
            .order_by_desc(chats::Column::CreatedAt)
            .order_by_desc(chats::Column::Id)
            .offset(offset)
            .limit(limit)
            .all(&self.db)
            .await
    }

    /// One page of the owner's vector stores in `order` of creation (the id breaking ties):
    /// at most `limit` of them, those after `after` (a store of theirs) when it is given.
    /// Keyset paging, so a page costs the same however deep it is and a store made meanwhile
    /// neither repeats nor skips one.
    pub async fn vector_stores_after(
        &self,
        owner: &UserId,
        order: Order,
        after: Option<&chats::Model>,
        limit: u64,
    ) -> Result<Vec<chats::Model>, DbErr> {
        let mut query = chats::Entity::find()
            .filter(chats::Column::UserId.eq(owner))
            .filter(chats::Column::IsVectorStore.eq(true));
        if let Some(after) = after {
            use chats::Column::{CreatedAt, Id};
            let at = after.created_at;
            let id = after.id.clone();
            let beyond = match order {
                Order::Asc => Condition::any()
                    .add(CreatedAt.gt(at))
                    .add(Condition::all().add(CreatedAt.eq(at)).add(Id.gt(id))),
                _ => Condition::any()
                    .add(CreatedAt.lt(at))
                    .add(Condition::all().add(CreatedAt.eq(at)).add(Id.lt(id))),
            };
            query = query.filter(beyond);
        }
        query
            .order_by(chats::Column::CreatedAt, order.clone())
            .order_by(chats::Column::Id, order)
            .limit(limit)
            .all(&self.db)
            .await
    }
}
