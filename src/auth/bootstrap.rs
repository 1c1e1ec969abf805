//! First start: with no users at all, create the admin and print a one-time login link (as
//! Jupyter prints its token URL). With `auth.bootstrap_api_key` set, that key is stored for
//! the admin so automated deployments can call the API at once.

use secrecy::ExposeSecret;

use super::accounts::{Accounts, AuthError, NewUser};
use crate::config::Config;

/// Returns the login URL when an admin was created now, `None` when users already existed.
pub async fn bootstrap_admin(
    accounts: &Accounts,
    config: &Config,
    public_url: &str,
) -> Result<Option<String>, AuthError> {
    if accounts.count_users().await? > 0 {
        if let Some(key) = &config.auth.bootstrap_api_key {
            // Keep the configured key working for the admin on later starts too.
            if let Some(admin) = accounts.find_user(&config.auth.admin_username).await? {
                accounts
                    .import_api_key(&admin.id, "bootstrap", key.expose_secret())
                    .await?;
            }
        }
        return Ok(None);
    }
    let admin = accounts
        .create_user(NewUser {
            username: &config.auth.admin_username,
            password: None,
            is_admin: true,
        })
        .await?;
    if let Some(key) = &config.auth.bootstrap_api_key {
        accounts
            .import_api_key(&admin.id, "bootstrap", key.expose_secret())
            .await?;
    }
    let link = accounts.issue_login_link(&admin.id).await?;
    Ok(Some(format!("{public_url}/login?token={}", link.secret)))
}
