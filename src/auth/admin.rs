//! What an admin does to accounts: list them, switch one off or on, make or unmake an admin,
//! and delete one with everything it owns (the database cascades from `users`). An admin never
//! does these to their own account, so a server always keeps the admin who acts on it.

use entities::ids::UserId;
use entities::{login_sessions, users};
use sea_orm::{ActiveModelTrait, ColumnTrait, DbErr, EntityTrait, QueryFilter, QueryOrder, Set};

use super::Accounts;

/// Most accounts one listing returns.
pub const MAX_LISTED_USERS: u64 = 1_000;

/// Why an admin's change to an account was refused.
#[derive(Debug, thiserror::Error)]
pub enum AccountChangeError {
    #[error("no such user")]
    NotFound,
    #[error("you cannot {0} your own account")]
    OwnAccount(&'static str),
    #[error("type the username {0:?} to confirm the deletion")]
    Unconfirmed(String),
    #[error(transparent)]
    Database(#[from] DbErr),
}

/// A change to an account's standing; `None` keeps what it is.
#[derive(Debug, Default, Clone, Copy)]
pub struct AccountChange {
    pub disabled: Option<bool>,
    pub is_admin: Option<bool>,
}

impl Accounts {
    /// Every account, oldest first.
    pub async fn list_users(&self) -> Result<Vec<users::Model>, DbErr> {
        use sea_orm::QuerySelect;
        users::Entity::find()
            .order_by_asc(users::Column::CreatedAt)
            .limit(MAX_LISTED_USERS)
            .all(&self.db)
            .await
    }

    /// Applies `change` to `target` on `actor`'s behalf. Disabling ends the account's
    /// sessions; its keys stop working at once (the key cache is cleared).
    pub async fn change_account(
        &self,
        actor: &UserId,
        target: &UserId,
        change: AccountChange,
    ) -> Result<users::Model, AccountChangeError> {
        if actor == target {
            if change.disabled == Some(true) {
                return Err(AccountChangeError::OwnAccount("disable"));
            }
            if change.is_admin == Some(false) {
                return Err(AccountChangeError::OwnAccount("take admin rights from"));
            }
        }
        let user = self
            .user(target)
            .await?
            .ok_or(AccountChangeError::NotFound)?;
        let mut active: users::ActiveModel = user.into();
        if let Some(disabled) = change.disabled {
            active.disabled = Set(disabled);
        }
        if let Some(is_admin) = change.is_admin {
            active.is_admin = Set(is_admin);
        }
        let user = active.update(&self.db).await?;
        if change.disabled == Some(true) {
            login_sessions::Entity::delete_many()
                .filter(login_sessions::Column::UserId.eq(target.clone()))
                .exec(&self.db)
                .await?;
        }
        // Cached keys carry the old standing (admin or not, enabled or not).
        self.key_cache.invalidate_all();
        Ok(user)
    }

    /// Deletes `target` and every row it owns, when `confirmation` is its username.
    pub async fn delete_account(
        &self,
        actor: &UserId,
        target: &UserId,
        confirmation: &str,
    ) -> Result<users::Model, AccountChangeError> {
        let user = self.check_deletion(actor, target, confirmation).await?;
        users::Entity::delete_by_id(target.clone())
            .exec(&self.db)
            .await?;
        self.key_cache.invalidate_all();
        Ok(user)
    }

    /// Whether `actor` may delete `target` with `confirmation` (its username); the account.
    pub async fn check_deletion(
        &self,
        actor: &UserId,
        target: &UserId,
        confirmation: &str,
    ) -> Result<users::Model, AccountChangeError> {
        if actor == target {
            return Err(AccountChangeError::OwnAccount("delete"));
        }
        let user = self
            .user(target)
            .await?
            .ok_or(AccountChangeError::NotFound)?;
        if confirmation != user.username {
            return Err(AccountChangeError::Unconfirmed(user.username));
        }
        Ok(user)
    }
}
