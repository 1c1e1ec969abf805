//! Knowledge bases: a user's named document collections, independent of any conversation. A
//! knowledge base is a chat made as a vector store (`chats.is_vector_store`, its name the
//! chat's title), so its documents live in the document workspace like any chat's (uploads,
//! tus, processing, the hybrid index). One object, two names: `kb_<chat id>` on the REST API
//! and `vs_<chat id>` on OpenAI's Vector Stores API; either is accepted wherever one is named.
//! This module owns the records (made within the per-user limit, found only for their owner,
//! renamed) and which knowledge bases an agent searches; deleting one, with its files and
//! index, is the caller's (through `Chats` and the workspace).

use std::fmt;

use chrono::{DateTime, Utc};
use entities::chats;
use entities::ids::{ChatId, UserId};
use sea_orm::{
    ColumnTrait, DatabaseConnection, DbErr, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::persistence::{ChatStoreError, Chats, parse_title};
use crate::db::Page;

/// A knowledge base's id: the id of the chat that holds its documents, shown as
/// `kb_<chat id>`; `vs_<chat id>` (its vector store id) names the same one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KnowledgeBaseId(ChatId);

impl KnowledgeBaseId {
    /// The prefix of the REST API's ids.
    pub const PREFIX: &'static str = "kb_";
    /// The prefix of the same object's OpenAI vector store id.
    pub const VECTOR_STORE_PREFIX: &'static str = "vs_";

    pub fn of(chat_id: &ChatId) -> Self {
        Self(chat_id.clone())
    }

    /// Reads `kb_<uuid>` or `vs_<uuid>`; anything else names no knowledge base.
    pub fn parse(raw: &str) -> Option<Self> {
        let rest = raw
            .strip_prefix(Self::PREFIX)
            .or_else(|| raw.strip_prefix(Self::VECTOR_STORE_PREFIX))?;
        ChatId::parse(rest).map(Self)
    }

    /// The chat that holds its documents.
    pub fn chat_id(&self) -> &ChatId {
        &self.0
    }

    /// Its id on OpenAI's Vector Stores API.
    pub fn vector_store_id(&self) -> String {
        format!("{}{}", Self::VECTOR_STORE_PREFIX, self.0)
    }
}

impl fmt::Display for KnowledgeBaseId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", Self::PREFIX, self.0)
    }
}

impl Serialize for KnowledgeBaseId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for KnowledgeBaseId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        Self::parse(&raw).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "{raw:?} is not a knowledge base id (kb_<id>, or its vector store id vs_<id>)"
            ))
        })
    }
}

/// A knowledge base as the API shows it, without its documents.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KnowledgeBase {
    pub id: KnowledgeBaseId,
    pub name: String,
    /// The same knowledge base on `/v1/vector_stores`.
    pub vector_store_id: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl From<&chats::Model> for KnowledgeBase {
    fn from(chat: &chats::Model) -> Self {
        let id = KnowledgeBaseId::of(&chat.id);
        Self {
            vector_store_id: id.vector_store_id(),
            id,
            name: chat.title.clone(),
            created_at: chat.created_at,
            updated_at: chat.updated_at,
        }
    }
}

/// Why a knowledge base could not be made, found or changed.
#[derive(Debug, thiserror::Error)]
pub enum KnowledgeBaseError {
    /// No such knowledge base, or someone else's (never said which).
    #[error("knowledge base {0} not found")]
    NotFound(String),
    #[error(
        "a user may have at most {max} knowledge bases (vector stores); delete one before \
         making another"
    )]
    TooMany { max: usize },
    #[error("name must be 1-{max} characters", max = super::persistence::MAX_TITLE_CHARS)]
    InvalidName,
    #[error(transparent)]
    Database(#[from] DbErr),
}

impl From<ChatStoreError> for KnowledgeBaseError {
    fn from(err: ChatStoreError) -> Self {
        match err {
            ChatStoreError::NotFound => Self::NotFound("that".into()),
            ChatStoreError::InvalidTitle => Self::InvalidName,
            ChatStoreError::Database(db) => Self::Database(db),
        }
    }
}

/// Every user's knowledge bases.
#[derive(Clone)]
pub struct KnowledgeBases {
    db: DatabaseConnection,
    chats: Chats,
    /// Knowledge bases one user may have (`documents.max_knowledge_bases_per_user`).
    max_per_user: usize,
}

impl KnowledgeBases {
    pub fn new(db: DatabaseConnection, max_per_user: usize) -> Self {
        Self {
            chats: Chats::new(db.clone()),
            db,
            max_per_user,
        }
    }

    fn owned_query(owner: &UserId) -> sea_orm::Select<chats::Entity> {
        chats::Entity::find()
            .filter(chats::Column::UserId.eq(owner))
            .filter(chats::Column::IsVectorStore.eq(true))
    }

    /// Makes one for `owner` (a vector store's `metadata` beside), refused past the per-user
    /// limit: counted and stored under the owner's lock (`db::lock_user`), so racing creates
    /// cannot pass it.
    pub async fn create(
        &self,
        owner: &UserId,
        name: Option<String>,
        metadata: Option<Value>,
    ) -> Result<chats::Model, KnowledgeBaseError> {
        if let Some(name) = &name {
            parse_title(name)?;
        }
        let draft = self.chats.draft_vector_store(owner, name, metadata).await?;
        let txn = crate::db::lock_user(&self.db, owner).await?;
        let held = Self::owned_query(owner).count(&txn).await?;
        if held >= self.max_per_user as u64 {
            return Err(KnowledgeBaseError::TooMany {
                max: self.max_per_user,
            });
        }
        let chat = Chats::insert_on(&txn, draft).await?;
        txn.commit().await?;
        Ok(chat)
    }

    /// One page of the owner's knowledge bases, newest first, and how many they have in all.
    pub async fn list(
        &self,
        owner: &UserId,
        page: Page,
    ) -> Result<(Vec<chats::Model>, u64), DbErr> {
        let total = Self::owned_query(owner).count(&self.db).await?;
        let bases = self
            .chats
            .vector_stores(owner, page.limit, page.offset)
            .await?;
        Ok((bases, total))
    }

    /// The knowledge base if `owner` has it; `NotFound` for anyone else's, for a chat that is
    /// not a knowledge base, and for none at all.
    pub async fn get_owned(
        &self,
        owner: &UserId,
        id: &KnowledgeBaseId,
    ) -> Result<chats::Model, KnowledgeBaseError> {
        Self::owned_query(owner)
            .filter(chats::Column::Id.eq(id.chat_id()))
            .one(&self.db)
            .await?
            .ok_or_else(|| KnowledgeBaseError::NotFound(id.to_string()))
    }

    /// Renames one of the owner's knowledge bases.
    pub async fn rename(
        &self,
        owner: &UserId,
        id: &KnowledgeBaseId,
        name: &str,
    ) -> Result<chats::Model, KnowledgeBaseError> {
        let chat = self.get_owned(owner, id).await?;
        self.chats
            .set_metadata(owner, &chat.id, Some(name.to_string()), None)
            .await
            .map_err(|err| match err {
                ChatStoreError::NotFound => KnowledgeBaseError::NotFound(id.to_string()),
                other => other.into(),
            })
    }

    /// Those of `ids` that are knowledge bases `owner` has, in the order given.
    pub async fn owned_among(
        &self,
        owner: &UserId,
        ids: &[ChatId],
    ) -> Result<Vec<chats::Model>, DbErr> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut found = Self::owned_query(owner)
            .filter(chats::Column::Id.is_in(ids.iter().cloned()))
            .order_by_asc(chats::Column::Id)
            .all(&self.db)
            .await?;
        found.sort_by_key(|chat| ids.iter().position(|id| *id == chat.id));
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_knowledge_base_id_is_its_chat_behind_either_prefix() {
        let chat = ChatId::generate();
        let id = KnowledgeBaseId::of(&chat);
        assert_eq!(id.to_string(), format!("kb_{chat}"));
        assert_eq!(id.vector_store_id(), format!("vs_{chat}"));
        assert_eq!(
            KnowledgeBaseId::parse(&format!("kb_{chat}")),
            Some(id.clone())
        );
        assert_eq!(
            KnowledgeBaseId::parse(&format!("vs_{chat}")),
            Some(id.clone())
        );
        assert_eq!(serde_json::to_value(&id).unwrap(), format!("kb_{chat}"));
        for bad in ["", "kb_", "kb_nope", chat.as_str(), &format!("xx_{chat}")] {
            assert_eq!(KnowledgeBaseId::parse(bad), None, "{bad}");
        }
        let refused = serde_json::from_value::<KnowledgeBaseId>(serde_json::json!("kb_1"));
        assert!(
            refused
                .unwrap_err()
                .to_string()
                .contains("not a knowledge base id")
        );
    }
}
