//! `Chats`: creating, listing, renaming and deleting a user's chats in the database. Every
//! query filters by owner; nothing here hands out another user's row.

use chrono::Utc;
use entities::chats;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Set,
};

use crate::error::{AppError, AppResult};

/// Longest chat title in characters.
pub const MAX_TITLE_CHARS: usize = 200;
/// Title of a chat created without one.
const DEFAULT_TITLE: &str = "New chat";

/// A chat's id, parsed once from the outside world.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ChatId(String);

impl ChatId {
    pub fn new() -> Self {
        Self(uuid::Uuid::now_v7().to_string())
    }

    /// Accepts only a UUID, so a malformed id is a 404 without touching the database.
    pub fn parse(raw: &str) -> Option<Self> {
        uuid::Uuid::parse_str(raw)
            .ok()
            .map(|id| Self(id.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for ChatId {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Display for ChatId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Checks and trims a title.
pub fn parse_title(raw: &str) -> AppResult<String> {
    let title = raw.trim();
    if title.is_empty() || title.chars().count() > MAX_TITLE_CHARS {
        return Err(AppError::invalid(format!(
            "title must be 1-{MAX_TITLE_CHARS} characters"
        )));
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
        owner: &str,
        title: Option<String>,
        ephemeral: bool,
    ) -> Result<chats::Model, DbErr> {
        let now = Utc::now();
        chats::ActiveModel {
            id: Set(ChatId::new().0),
            user_id: Set(owner.to_string()),
            agent_id: Set(None),
            title: Set(title.unwrap_or_else(|| DEFAULT_TITLE.to_string())),
            active_leaf_id: Set(None),
            ephemeral: Set(ephemeral),
            embedder: Set(None),
            created_at: Set(now),
            updated_at: Set(now),
        }
        .insert(&self.db)
        .await
    }

    /// The chat if `owner` owns it; `NotFound` otherwise (also for someone else's chat).
    pub async fn get_owned(&self, owner: &str, id: &str) -> AppResult<chats::Model> {
        let id = ChatId::parse(id).ok_or(AppError::NotFound("chat"))?;
        chats::Entity::find_by_id(id.0)
            .filter(chats::Column::UserId.eq(owner))
            .one(&self.db)
            .await?
            .ok_or(AppError::NotFound("chat"))
    }

    /// The owner's chats, most recently updated first.
    pub async fn list(&self, owner: &str, limit: u64) -> Result<Vec<chats::Model>, DbErr> {
        chats::Entity::find()
            .filter(chats::Column::UserId.eq(owner))
            .filter(chats::Column::Ephemeral.eq(false))
            .order_by_desc(chats::Column::UpdatedAt)
            .limit(limit)
            .all(&self.db)
            .await
    }

    pub async fn rename(&self, owner: &str, id: &str, title: String) -> AppResult<chats::Model> {
        let chat = self.get_owned(owner, id).await?;
        let mut active: chats::ActiveModel = chat.into();
        active.title = Set(title);
        active.updated_at = Set(Utc::now());
        Ok(active.update(&self.db).await?)
    }

    /// Deletes the chat and, through foreign keys, everything in it.
    pub async fn delete(&self, owner: &str, id: &str) -> AppResult<()> {
        let chat = self.get_owned(owner, id).await?;
        chats::Entity::delete_by_id(chat.id).exec(&self.db).await?;
        Ok(())
    }
}
