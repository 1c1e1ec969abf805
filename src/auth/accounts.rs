//! `Accounts`: the queries behind authentication — users, API keys, login sessions and
//! one-time login links. Plain async functions over the database; no HTTP in here.

use chrono::{Duration, Utc};
use entities::ids::{ApiKeyId, LoginSessionId, LoginTokenId, UserId};
use entities::{api_keys, login_sessions, login_tokens, users};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};

use super::principal::Principal;
use super::secret::{hash_password, hash_token, new_token, verify_password_or_dummy};
use crate::config::AuthConfig;
use crate::db::Page;

/// Longest accepted username.
const MAX_USERNAME_CHARS: usize = 64;
/// Longest accepted password: argon2 is deliberately slow, so unbounded input is a DoS vector.
pub(super) const MAX_PASSWORD_CHARS: usize = 1_024;
/// Shortest password we accept from a person.
pub(super) const MIN_PASSWORD_CHARS: usize = 8;
/// How many characters of an API key are kept in clear to tell keys apart.
const KEY_PREFIX_CHARS: usize = 10;
/// `last_used_at` is written at most this often per key, keeping requests read-only.
const LAST_USED_GRANULARITY_SECS: i64 = 300;

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error(
        "username must be 1-{MAX_USERNAME_CHARS} characters of letters, digits, '.', '_' or '-'"
    )]
    InvalidUsername,
    #[error("password must be {MIN_PASSWORD_CHARS}-{MAX_PASSWORD_CHARS} characters")]
    InvalidPassword,
    #[error("a user named {0:?} already exists")]
    UsernameTaken(String),
    #[error("no user named {0:?}")]
    NoSuchUser(String),
    #[error("this login link was already used or has expired")]
    LinkSpent,
    /// A valid login link for an account an admin has disabled.
    #[error("this account is disabled; ask an admin to enable it")]
    AccountDisabled,
    #[error("the current password is not right")]
    WrongPassword,
    #[error(
        "display name must be at most {} characters, without control characters",
        super::profile::MAX_DISPLAY_NAME_CHARS
    )]
    InvalidDisplayName,
    /// Not an IANA time zone name.
    #[error("{0:?} is not a time zone; use an IANA name such as Europe/Paris or UTC")]
    InvalidTimeZone(String),
    /// The user holds `max` API keys already (`auth.max_api_keys_per_user`).
    #[error("a user may hold at most {max} API keys; revoke one first")]
    TooManyApiKeys { max: u64 },
    #[error("password hashing failed: {0}")]
    Hashing(String),
    #[error(transparent)]
    Database(#[from] DbErr),
}

/// A secret shown to its owner exactly once; only its hash is stored.
#[derive(Debug, Clone)]
pub struct IssuedSecret {
    pub id: String,
    pub secret: String,
}

pub struct NewUser<'a> {
    pub username: &'a str,
    pub password: Option<&'a str>,
    pub is_admin: bool,
}

/// How long a verified API key is trusted without asking the database again. Revocation
/// clears the cache, so it only saves a query per request.
const KEY_CACHE_TTL: std::time::Duration = std::time::Duration::from_secs(60);
/// Most API keys kept verified in memory.
const KEY_CACHE_CAPACITY: u64 = 10_000;

#[derive(Clone)]
pub struct Accounts {
    pub(super) db: DatabaseConnection,
    session_ttl: Duration,
    link_ttl: Duration,
    /// Verified API keys by hash.
    pub(super) key_cache: moka::future::Cache<String, Principal>,
    /// API keys one user may hold at once (`auth.max_api_keys_per_user`).
    max_api_keys_per_user: u64,
}

impl Accounts {
    /// The model `user` chose as their default (the model picker's), if any.
    pub async fn default_model(&self, user: &UserId) -> Result<Option<String>, DbErr> {
        Ok(users::Entity::find_by_id(user.clone())
            .one(&self.db)
            .await?
            .and_then(|u| u.default_model))
    }

    /// Sets (or, with `None`, clears) `user`'s default model; `false` when there is no such user.
    pub async fn set_default_model(
        &self,
        user: &UserId,
        model: Option<String>,
    ) -> Result<bool, DbErr> {
        let Some(found) = users::Entity::find_by_id(user.clone())
            .one(&self.db)
            .await?
        else {
            return Ok(false);
        };
        let mut active: users::ActiveModel = found.into();
        active.default_model = sea_orm::Set(model);
        active.update(&self.db).await?;
        Ok(true)
    }

    pub fn new(db: DatabaseConnection, session_ttl_hours: u64, link_ttl_minutes: u64) -> Self {
        Self {
            db,
            session_ttl: Duration::hours(session_ttl_hours as i64),
            link_ttl: Duration::minutes(link_ttl_minutes as i64),
            key_cache: moka::future::Cache::builder()
                .max_capacity(KEY_CACHE_CAPACITY)
                .time_to_live(KEY_CACHE_TTL)
                .build(),
            max_api_keys_per_user: AuthConfig::default().max_api_keys_per_user,
        }
    }

    /// These accounts, letting one user hold at most `max` API keys.
    pub fn with_max_api_keys_per_user(self, max: u64) -> Self {
        Self {
            max_api_keys_per_user: max,
            ..self
        }
    }

    pub fn session_ttl(&self) -> Duration {
        self.session_ttl
    }

    pub async fn count_users(&self) -> Result<u64, DbErr> {
        users::Entity::find().count(&self.db).await
    }

    pub async fn create_user(&self, new: NewUser<'_>) -> Result<users::Model, AuthError> {
        let username_ok = !new.username.is_empty()
            && new.username.chars().count() <= MAX_USERNAME_CHARS
            && new
                .username
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        if !username_ok {
            return Err(AuthError::InvalidUsername);
        }
        let password_hash = match new.password {
            Some(password) => {
                let length = password.chars().count();
                if !(MIN_PASSWORD_CHARS..=MAX_PASSWORD_CHARS).contains(&length) {
                    return Err(AuthError::InvalidPassword);
                }
                Some(hash_password_off_thread(password.to_string()).await?)
            }
            None => None,
        };
        if self.find_user(new.username).await?.is_some() {
            return Err(AuthError::UsernameTaken(new.username.to_string()));
        }
        let user = users::ActiveModel {
            id: Set(UserId::generate()),
            username: Set(new.username.to_string()),
            password_hash: Set(password_hash),
            is_admin: Set(new.is_admin),
            default_model: Set(None),
            disabled: Set(false),
            created_at: Set(Utc::now()),
            display_name: Set(None),
            time_zone: Set(None),
        };
        Ok(user.insert(&self.db).await?)
    }

    pub async fn find_user(&self, username: &str) -> Result<Option<users::Model>, DbErr> {
        users::Entity::find()
            .filter(users::Column::Username.eq(username))
            .one(&self.db)
            .await
    }

    pub(super) async fn user_by_id(&self, id: &UserId) -> Result<Option<users::Model>, DbErr> {
        users::Entity::find_by_id(id.clone()).one(&self.db).await
    }

    /// The user if the password matches; `None` for an unknown user, a user without a password
    /// or a wrong password alike — and all three take the same argon2 work, so the time taken
    /// does not tell which usernames exist.
    pub async fn verify_login(
        &self,
        username: &str,
        password: &str,
    ) -> Result<Option<users::Model>, AuthError> {
        if password.chars().count() > MAX_PASSWORD_CHARS {
            return Ok(None);
        }
        let user = self.find_user(username).await?;
        let stored = user.as_ref().and_then(|user| user.password_hash.clone());
        let password = password.to_string();
        let matches = tokio::task::spawn_blocking(move || {
            verify_password_or_dummy(&password, stored.as_deref())
        })
        .await
        .map_err(|err| AuthError::Hashing(err.to_string()))?;
        Ok(user.filter(|user| matches && !user.disabled))
    }

    /// Creates a new API key for a user and returns it (the only time it is visible); refused
    /// once they hold `max_api_keys_per_user`, counted and stored under their lock
    /// (`db::lock_user`) so racing requests cannot pass the cap.
    pub async fn issue_api_key(
        &self,
        user_id: &UserId,
        name: &str,
    ) -> Result<IssuedSecret, AuthError> {
        let secret = new_token("cq_");
        let txn = crate::db::lock_user(&self.db, user_id).await?;
        let held = api_keys::Entity::find()
            .filter(api_keys::Column::UserId.eq(user_id))
            .filter(api_keys::Column::RevokedAt.is_null())
            .count(&txn)
            .await?;
        if held >= self.max_api_keys_per_user {
            return Err(AuthError::TooManyApiKeys {
                max: self.max_api_keys_per_user,
            });
        }
        let id = Self::store_api_key(&txn, user_id, name, &secret).await?;
        txn.commit().await?;
        Ok(IssuedSecret {
            id: id.into_string(),
            secret,
        })
    }

    /// Stores a key chosen elsewhere (the bootstrap key); a key already stored is left as is.
    pub async fn import_api_key(
        &self,
        user_id: &UserId,
        name: &str,
        key: &str,
    ) -> Result<(), DbErr> {
        let exists = api_keys::Entity::find()
            .filter(api_keys::Column::KeyHash.eq(hash_token(key)))
            .one(&self.db)
            .await?
            .is_some();
        if !exists {
            Self::store_api_key(&self.db, user_id, name, key).await?;
        }
        Ok(())
    }

    async fn store_api_key(
        db: &impl ConnectionTrait,
        user_id: &UserId,
        name: &str,
        key: &str,
    ) -> Result<ApiKeyId, DbErr> {
        let id = ApiKeyId::generate();
        api_keys::ActiveModel {
            id: Set(id.clone()),
            user_id: Set(user_id.clone()),
            name: Set(name.to_string()),
            key_hash: Set(hash_token(key)),
            key_prefix: Set(key.chars().take(KEY_PREFIX_CHARS).collect()),
            created_at: Set(Utc::now()),
            last_used_at: Set(None),
            revoked_at: Set(None),
        }
        .insert(db)
        .await?;
        Ok(id)
    }

    /// One page of the user's API keys (revoked ones left out), oldest first, and how many
    /// they hold in all.
    pub async fn list_api_keys(
        &self,
        user_id: &UserId,
        page: Page,
    ) -> Result<(Vec<api_keys::Model>, u64), DbErr> {
        let held = api_keys::Entity::find()
            .filter(api_keys::Column::UserId.eq(user_id))
            .filter(api_keys::Column::RevokedAt.is_null());
        let total = held.clone().count(&self.db).await?;
        let keys = held
            .order_by_asc(api_keys::Column::CreatedAt)
            .order_by_asc(api_keys::Column::Id)
            .offset(page.offset)
            .limit(page.limit)
            .all(&self.db)
            .await?;
        Ok((keys, total))
    }

    /// Revokes one of the user's keys; `false` if they have no such key.
    pub async fn revoke_api_key(&self, user_id: &UserId, key_id: &ApiKeyId) -> Result<bool, DbErr> {
        let result = api_keys::Entity::update_many()
            .col_expr(api_keys::Column::RevokedAt, Expr::value(Utc::now()))
            .filter(api_keys::Column::Id.eq(key_id))
            .filter(api_keys::Column::UserId.eq(user_id))
            .filter(api_keys::Column::RevokedAt.is_null())
            .exec(&self.db)
            .await?;
        self.key_cache.invalidate_all();
        Ok(result.rows_affected == 1)
    }

    pub async fn authenticate_api_key(&self, key: &str) -> Result<Option<Principal>, DbErr> {
        let hash = hash_token(key);
        if let Some(principal) = self.key_cache.get(&hash).await {
            return Ok(Some(principal));
        }
        let principal = self.lookup_api_key(&hash).await?;
        if let Some(principal) = &principal {
            self.key_cache.insert(hash, principal.clone()).await;
        }
        Ok(principal)
    }

    async fn lookup_api_key(&self, hash: &str) -> Result<Option<Principal>, DbErr> {
        let found = api_keys::Entity::find()
            .filter(api_keys::Column::KeyHash.eq(hash))
            .filter(api_keys::Column::RevokedAt.is_null())
            .find_also_related(users::Entity)
            .one(&self.db)
            .await?;
        let Some((key, Some(user))) = found else {
            return Ok(None);
        };
        if user.disabled {
            return Ok(None);
        }
        let now = Utc::now();
        let stale = key
            .last_used_at
            .is_none_or(|at| (now - at).num_seconds() > LAST_USED_GRANULARITY_SECS);
        if stale {
            api_keys::Entity::update_many()
                .col_expr(api_keys::Column::LastUsedAt, Expr::value(now))
                .filter(api_keys::Column::Id.eq(key.id.clone()))
                .exec(&self.db)
                .await?;
        }
        Ok(Some(Principal::new(&user, Some(key.id))))
    }

    pub async fn start_session(&self, user_id: &UserId) -> Result<IssuedSecret, DbErr> {
        self.start_session_from(user_id, None).await
    }

    /// `start_session`, remembering the browser it was started from (`User-Agent`).
    pub async fn start_session_from(
        &self,
        user_id: &UserId,
        user_agent: Option<&str>,
    ) -> Result<IssuedSecret, DbErr> {
        let secret = new_token("cqs_");
        let id = LoginSessionId::generate();
        let now = Utc::now();
        login_sessions::ActiveModel {
            id: Set(id.clone()),
            user_id: Set(user_id.clone()),
            token_hash: Set(hash_token(&secret)),
            created_at: Set(now),
            expires_at: Set(now + self.session_ttl),
            last_seen_at: Set(None),
            user_agent: Set(user_agent.map(super::profile::short_user_agent)),
        }
        .insert(&self.db)
        .await?;
        Ok(IssuedSecret {
            id: id.into_string(),
            secret,
        })
    }

    pub async fn authenticate_session(&self, token: &str) -> Result<Option<Principal>, DbErr> {
        let found = login_sessions::Entity::find()
            .filter(login_sessions::Column::TokenHash.eq(hash_token(token)))
            .filter(login_sessions::Column::ExpiresAt.gt(Utc::now()))
            .find_also_related(users::Entity)
            .one(&self.db)
            .await?;
        let Some((session, Some(user))) = found else {
            return Ok(None);
        };
        if user.disabled {
            return Ok(None);
        }
        self.seen(&session).await?;
        Ok(Some(Principal::new(&user, None)))
    }

    pub async fn end_session(&self, token: &str) -> Result<(), DbErr> {
        login_sessions::Entity::delete_many()
            .filter(login_sessions::Column::TokenHash.eq(hash_token(token)))
            .exec(&self.db)
            .await?;
        Ok(())
    }

    /// A one-time login link token for a user (printed on first start, or by the CLI).
    pub async fn issue_login_link(&self, user_id: &UserId) -> Result<IssuedSecret, DbErr> {
        let secret = new_token("cql_");
        let id = LoginTokenId::generate();
        let now = Utc::now();
        login_tokens::ActiveModel {
            id: Set(id.clone()),
            user_id: Set(user_id.clone()),
            token_hash: Set(hash_token(&secret)),
            created_at: Set(now),
            expires_at: Set(now + self.link_ttl),
            used_at: Set(None),
        }
        .insert(&self.db)
        .await?;
        Ok(IssuedSecret {
            id: id.into_string(),
            secret,
        })
    }

    /// Spends a login link: one conditional UPDATE, so two concurrent clicks cannot both win.
    pub async fn redeem_login_link(&self, token: &str) -> Result<users::Model, AuthError> {
        let hash = hash_token(token);
        let now = Utc::now();
        let spent = login_tokens::Entity::update_many()
            .col_expr(login_tokens::Column::UsedAt, Expr::value(now))
            .filter(login_tokens::Column::TokenHash.eq(hash.clone()))
            .filter(login_tokens::Column::UsedAt.is_null())
            .filter(login_tokens::Column::ExpiresAt.gt(now))
            .exec(&self.db)
            .await?;
        if spent.rows_affected != 1 {
            return Err(AuthError::LinkSpent);
        }
        let link = login_tokens::Entity::find()
            .filter(login_tokens::Column::TokenHash.eq(hash))
            .one(&self.db)
            .await?
            .ok_or(AuthError::LinkSpent)?;
        let user = self
            .user_by_id(&link.user_id)
            .await?
            .ok_or(AuthError::LinkSpent)?;
        if user.disabled {
            return Err(AuthError::AccountDisabled);
        }
        Ok(user)
    }
}

async fn hash_password_off_thread(password: String) -> Result<String, AuthError> {
    tokio::task::spawn_blocking(move || hash_password(&password))
        .await
        .map_err(|err| AuthError::Hashing(err.to_string()))?
        .map_err(|err| AuthError::Hashing(err.to_string()))
}
