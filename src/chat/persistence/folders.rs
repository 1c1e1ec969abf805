//! A user's folders of chats (`ChatFolders`): list, create, rename, delete, one level deep.
//! Every query filters by owner, so another user's folder is never found. Deleting a folder
//! moves its chats out of it (they stay, unfiled) in the same transaction; putting a chat in
//! a folder is `Chats::organize`, which checks the folder with `get_owned`.

use chrono::Utc;
use entities::ids::{ChatFolderId, UserId};
use entities::{chat_folders, chats};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QueryOrder,
    Set, TransactionTrait,
};

/// Longest folder name in characters: a sidebar row's worth, with room to spare.
pub const MAX_FOLDER_NAME_CHARS: usize = 80;
/// Most folders one user may have: more than a sidebar can usefully show, and a bound on
/// what a list call returns (it is never paged).
pub const MAX_FOLDERS_PER_USER: u64 = 100;

/// Why a folder could not be found, made or changed.
#[derive(Debug, thiserror::Error)]
pub enum FolderError {
    /// No such folder, or someone else's (never said which).
    #[error("folder not found")]
    NotFound,
    #[error("a folder's name must be 1-{MAX_FOLDER_NAME_CHARS} characters")]
    InvalidName,
    #[error("you already have a folder named \"{0}\"")]
    NameTaken(String),
    #[error("you have {MAX_FOLDERS_PER_USER} folders, the most allowed; delete one first")]
    TooMany,
    #[error(transparent)]
    Database(#[from] DbErr),
}

/// Checks and trims a folder's name.
pub fn parse_folder_name(raw: &str) -> Result<String, FolderError> {
    let name = raw.trim();
    if name.is_empty() || name.chars().count() > MAX_FOLDER_NAME_CHARS || name.contains('\n') {
        return Err(FolderError::InvalidName);
    }
    Ok(name.to_string())
}

#[derive(Clone)]
pub struct ChatFolders {
    db: DatabaseConnection,
}

impl ChatFolders {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }

    /// The owner's folders, in their order.
    pub async fn list(&self, owner: &UserId) -> Result<Vec<chat_folders::Model>, DbErr> {
        chat_folders::Entity::find()
            .filter(chat_folders::Column::UserId.eq(owner))
            .order_by_asc(chat_folders::Column::Position)
            .order_by_asc(chat_folders::Column::CreatedAt)
            .all(&self.db)
            .await
    }

    /// The folder if `owner` owns it; `NotFound` otherwise (also for someone else's).
    pub async fn get_owned(
        &self,
        owner: &UserId,
        id: &ChatFolderId,
    ) -> Result<chat_folders::Model, FolderError> {
        chat_folders::Entity::find_by_id(id.clone())
            .filter(chat_folders::Column::UserId.eq(owner))
            .one(&self.db)
            .await?
            .ok_or(FolderError::NotFound)
    }

    /// Makes a folder (last in the owner's order), counted and named under the owner's lock
    /// (`db::lock_user`), so racing requests pass neither the cap nor the unique name.
    pub async fn create(
        &self,
        owner: &UserId,
        name: String,
    ) -> Result<chat_folders::Model, FolderError> {
        let txn = crate::db::lock_user(&self.db, owner).await?;
        let existing = chat_folders::Entity::find()
            .filter(chat_folders::Column::UserId.eq(owner))
            .all(&txn)
            .await?;
        if existing.len() as u64 >= MAX_FOLDERS_PER_USER {
            return Err(FolderError::TooMany);
        }
        if existing.iter().any(|folder| same_name(&folder.name, &name)) {
            return Err(FolderError::NameTaken(name));
        }
        let position = existing
            .iter()
            .map(|folder| folder.position)
            .max()
            .map_or(0, |last| last + 1);
        let folder = chat_folders::ActiveModel {
            id: Set(ChatFolderId::generate()),
            user_id: Set(owner.clone()),
            name: Set(name),
            position: Set(position),
            created_at: Set(Utc::now()),
        }
        .insert(&txn)
        .await?;
        txn.commit().await?;
        Ok(folder)
    }

    /// Renames one of the owner's folders (to a name none of their other folders has).
    pub async fn rename(
        &self,
        owner: &UserId,
        id: &ChatFolderId,
        name: String,
    ) -> Result<chat_folders::Model, FolderError> {
        let txn = crate::db::lock_user(&self.db, owner).await?;
        let existing = chat_folders::Entity::find()
            .filter(chat_folders::Column::UserId.eq(owner))
            .all(&txn)
            .await?;
        let folder = existing
            .iter()
            .find(|folder| &folder.id == id)
            .cloned()
            .ok_or(FolderError::NotFound)?;
        if existing
            .iter()
            .any(|other| &other.id != id && same_name(&other.name, &name))
        {
            return Err(FolderError::NameTaken(name));
        }
        let mut active: chat_folders::ActiveModel = folder.into();
        active.name = Set(name);
        let folder = active.update(&txn).await?;
        txn.commit().await?;
        Ok(folder)
    }

    /// Deletes one of the owner's folders; its chats stay, in no folder. Returns how many
    /// chats were moved out.
    pub async fn delete(&self, owner: &UserId, id: &ChatFolderId) -> Result<u64, FolderError> {
        let txn = self.db.begin().await?;
        let deleted = chat_folders::Entity::delete_many()
            .filter(chat_folders::Column::Id.eq(id))
            .filter(chat_folders::Column::UserId.eq(owner))
            .exec(&txn)
            .await?;
        if deleted.rows_affected == 0 {
            return Err(FolderError::NotFound);
        }
        let moved = chats::Entity::update_many()
            .col_expr(chats::Column::FolderId, Expr::value(None::<String>))
            .filter(chats::Column::UserId.eq(owner))
            .filter(chats::Column::FolderId.eq(id))
            .exec(&txn)
            .await?;
        txn.commit().await?;
        Ok(moved.rows_affected)
    }
}

/// Whether two folder names would look the same in the sidebar (case aside).
fn same_name(a: &str, b: &str) -> bool {
    a.to_lowercase() == b.to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_name_is_trimmed_and_bounded() {
        assert_eq!(parse_folder_name("  Work  ").unwrap(), "Work");
        for bad in ["", "   ", "two\nlines"] {
            assert!(matches!(
                parse_folder_name(bad),
                Err(FolderError::InvalidName)
            ));
        }
        let longest = "é".repeat(MAX_FOLDER_NAME_CHARS);
        assert_eq!(parse_folder_name(&longest).unwrap(), longest);
        assert!(parse_folder_name(&format!("{longest}x")).is_err());
    }

    #[test]
    fn folder_names_match_regardless_of_case() {
        assert!(same_name("Work", "work"));
        assert!(!same_name("Work", "Works"));
    }
}
