//! `Accounts::acting_as`: the `Principal` that background work (a schedule's firing) acts as,
//! made from the account as it stands now. A disabled or deleted account acts no more; nothing
//! outside `auth` makes a `Principal` from a `users` row.

use entities::ids::UserId;
use sea_orm::DbErr;

use super::Accounts;
use super::principal::Principal;

/// Why background work may not act as an account.
#[derive(Debug, thiserror::Error)]
pub enum ActingAsError {
    #[error("the account is disabled")]
    Disabled,
    #[error("the account no longer exists")]
    Gone,
    #[error(transparent)]
    Database(#[from] DbErr),
}

impl Accounts {
    /// `user` as a principal for work done in their name without a request (no API key).
    pub async fn acting_as(&self, user: &UserId) -> Result<Principal, ActingAsError> {
        let user = self.user_by_id(user).await?.ok_or(ActingAsError::Gone)?;
        if user.disabled {
            return Err(ActingAsError::Disabled);
        }
        Ok(Principal::new(&user, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::{AccountChange, NewUser};
    use crate::config::Config;

    async fn accounts() -> (tempfile::TempDir, Accounts) {
        let dir = tempfile::tempdir().unwrap();
        let config = Config {
            data_dir: dir.path().to_path_buf(),
            ..Config::default()
        };
        let db = crate::db::connect(&config).await.unwrap();
        crate::db::migrate(&db).await.unwrap();
        (dir, Accounts::new(db, 1, 1))
    }

    async fn user(accounts: &Accounts, username: &str, is_admin: bool) -> UserId {
        accounts
            .create_user(NewUser {
                username,
                password: None,
                is_admin,
            })
            .await
            .unwrap()
            .id
    }

    #[tokio::test]
    async fn an_enabled_account_is_acted_as_and_a_disabled_or_deleted_one_is_refused() {
        let (_dir, accounts) = accounts().await;
        let admin = user(&accounts, "admin", true).await;
        let ada = user(&accounts, "ada", false).await;

        let principal = accounts.acting_as(&ada).await.unwrap();
        assert_eq!(principal.user_id(), &ada);
        assert_eq!(principal.username(), "ada");
        assert!(!principal.is_admin());
        assert_eq!(principal.api_key_id(), None);

        let disable = AccountChange {
            disabled: Some(true),
            is_admin: None,
        };
        accounts
            .change_account(&admin, &ada, disable)
            .await
            .unwrap();
        assert!(matches!(
            accounts.acting_as(&ada).await,
            Err(ActingAsError::Disabled)
        ));

        let enable = AccountChange {
            disabled: Some(false),
            is_admin: None,
        };
        accounts.change_account(&admin, &ada, enable).await.unwrap();
        assert!(accounts.acting_as(&ada).await.is_ok());

        accounts.delete_account(&admin, &ada, "ada").await.unwrap();
        assert!(matches!(
            accounts.acting_as(&ada).await,
            Err(ActingAsError::Gone)
        ));
        assert!(matches!(
            accounts.acting_as(&UserId::from_string("nobody")).await,
            Err(ActingAsError::Gone)
        ));
    }
}
