//! What a person changes about their own account (the account page, `http::account`): the
//! display name, the time zone (an IANA name; their schedules' default), the password (the
//! current one required; every other session signed out), and their login sessions (listed,
//! one signed out). Queries over `Accounts`' database; no HTTP in here.

use chrono::{DateTime, Utc};
use entities::ids::{LoginSessionId, UserId};
use entities::{login_sessions, users};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use super::accounts::{Accounts, AuthError, MAX_PASSWORD_CHARS, MIN_PASSWORD_CHARS};
use super::secret::{hash_password, hash_token, verify_password_or_dummy};

/// Longest display name, in characters.
pub const MAX_DISPLAY_NAME_CHARS: usize = 100;
/// Longest `User-Agent` kept for a session: enough to tell browsers apart.
const MAX_USER_AGENT_CHARS: usize = 300;
/// Most sessions listed: a person has a few browsers, not thousands.
const MAX_SESSIONS_LISTED: u64 = 100;
/// `last_seen_at` is written at most this often per session, keeping most requests read-only.
const LAST_SEEN_GRANULARITY_SECS: i64 = 300;

/// One of a user's login sessions, as the account page lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SessionView {
    pub id: LoginSessionId,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub last_seen_at: Option<DateTime<Utc>>,
    pub user_agent: Option<String>,
    /// The session the request listing them came with.
    pub current: bool,
}

/// A `User-Agent` as stored: cut to `MAX_USER_AGENT_CHARS`, control characters dropped.
pub(super) fn short_user_agent(raw: &str) -> String {
    raw.chars()
        .filter(|c| !c.is_control())
        .take(MAX_USER_AGENT_CHARS)
        .collect()
}

/// A display name as stored: trimmed; empty means none (the username is shown).
fn parse_display_name(raw: Option<&str>) -> Result<Option<String>, AuthError> {
    let Some(name) = raw.map(str::trim).filter(|name| !name.is_empty()) else {
        return Ok(None);
    };
    if name.chars().count() > MAX_DISPLAY_NAME_CHARS || name.chars().any(char::is_control) {
        return Err(AuthError::InvalidDisplayName);
    }
    Ok(Some(name.to_string()))
}

/// A time zone as stored: an IANA name (`Europe/Paris`), trimmed; empty means none (UTC).
pub fn parse_time_zone(raw: Option<&str>) -> Result<Option<String>, AuthError> {
    let Some(zone) = raw.map(str::trim).filter(|zone| !zone.is_empty()) else {
        return Ok(None);
    };
    match zone.parse::<chrono_tz::Tz>() {
        Ok(tz) => Ok(Some(tz.name().to_string())),
        Err(_) => Err(AuthError::InvalidTimeZone(zone.chars().take(100).collect())),
    }
}

impl Accounts {
    /// The user's row (their display name among it).
    pub async fn user(&self, id: &UserId) -> Result<Option<users::Model>, DbErr> {
        self.user_by_id(id).await
    }

    /// Sets (or, with `None` or blank, clears) the user's display name.
    pub async fn set_display_name(
        &self,
        id: &UserId,
        raw: Option<&str>,
    ) -> Result<Option<String>, AuthError> {
        let name = parse_display_name(raw)?;
        users::Entity::update_many()
            .col_expr(users::Column::DisplayName, Expr::value(name.clone()))
            .filter(users::Column::Id.eq(id))
            .exec(&self.db)
            .await?;
        Ok(name)
    }

    /// Sets (or, with `None` or blank, clears: UTC) the user's time zone.
    pub async fn set_time_zone(
        &self,
        id: &UserId,
        raw: Option<&str>,
    ) -> Result<Option<String>, AuthError> {
        let zone = parse_time_zone(raw)?;
        users::Entity::update_many()
            .col_expr(users::Column::TimeZone, Expr::value(zone.clone()))
            .filter(users::Column::Id.eq(id))
            .exec(&self.db)
            .await?;
        Ok(zone)
    }

    /// Changes the user's password after checking the current one, and signs out every session
    /// but `keep` (the one the change was made from; `None`, from an API key: all of them).
    /// Returns how many sessions were signed out. API keys are not touched: they are revoked
    /// one by one on the same page.
    pub async fn change_password(
        &self,
        id: &UserId,
        current: &str,
        new: &str,
        keep: Option<&LoginSessionId>,
    ) -> Result<u64, AuthError> {
        let length = new.chars().count();
        if !(MIN_PASSWORD_CHARS..=MAX_PASSWORD_CHARS).contains(&length) {
            return Err(AuthError::InvalidPassword);
        }
        if current.chars().count() > MAX_PASSWORD_CHARS {
            return Err(AuthError::WrongPassword);
        }
        let user = self.user_by_id(id).await?.ok_or(AuthError::WrongPassword)?;
        let stored = user.password_hash.clone();
        let (current, new) = (current.to_string(), new.to_string());
        let hashed = tokio::task::spawn_blocking(move || {
            if !verify_password_or_dummy(&current, stored.as_deref()) {
                return Err(AuthError::WrongPassword);
            }
            hash_password(&new).map_err(|err| AuthError::Hashing(err.to_string()))
        })
        .await
        .map_err(|err| AuthError::Hashing(err.to_string()))??;
        users::Entity::update_many()
            .col_expr(users::Column::PasswordHash, Expr::value(hashed))
            .filter(users::Column::Id.eq(id))
            .exec(&self.db)
            .await?;
        let mut others =
            login_sessions::Entity::delete_many().filter(login_sessions::Column::UserId.eq(id));
        if let Some(keep) = keep {
            others = others.filter(login_sessions::Column::Id.ne(keep.clone()));
        }
        Ok(others.exec(&self.db).await?.rows_affected)
    }

    /// The id of the live session whose token is `token`, if any.
    pub async fn session_id(&self, token: &str) -> Result<Option<LoginSessionId>, DbErr> {
        Ok(login_sessions::Entity::find()
            .filter(login_sessions::Column::TokenHash.eq(hash_token(token)))
            .one(&self.db)
            .await?
            .map(|session| session.id))
    }

    /// The user's live sessions, most recently started first; `current` marks `current_id`.
    pub async fn list_sessions(
        &self,
        id: &UserId,
        current_id: Option<&LoginSessionId>,
    ) -> Result<Vec<SessionView>, DbErr> {
        let rows = login_sessions::Entity::find()
            .filter(login_sessions::Column::UserId.eq(id))
            .filter(login_sessions::Column::ExpiresAt.gt(Utc::now()))
            .order_by_desc(login_sessions::Column::CreatedAt)
            .limit(MAX_SESSIONS_LISTED)
            .all(&self.db)
            .await?;
        Ok(rows
            .into_iter()
            .map(|row| SessionView {
                current: current_id == Some(&row.id),
                id: row.id,
                created_at: row.created_at,
                expires_at: row.expires_at,
                last_seen_at: row.last_seen_at,
                user_agent: row.user_agent,
            })
            .collect())
    }

    /// Signs out one of the user's sessions; `false` if they have no such session.
    pub async fn end_session_by_id(
        &self,
        user: &UserId,
        session: &LoginSessionId,
    ) -> Result<bool, DbErr> {
        let result = login_sessions::Entity::delete_many()
            .filter(login_sessions::Column::Id.eq(session.clone()))
            .filter(login_sessions::Column::UserId.eq(user))
            .exec(&self.db)
            .await?;
        Ok(result.rows_affected == 1)
    }

    /// Notes that `session` was used now, at most once per `LAST_SEEN_GRANULARITY_SECS`.
    pub(super) async fn seen(&self, session: &login_sessions::Model) -> Result<(), DbErr> {
        let now = Utc::now();
        let stale = session
            .last_seen_at
            .is_none_or(|at| (now - at).num_seconds() > LAST_SEEN_GRANULARITY_SECS);
        if stale {
            login_sessions::Entity::update_many()
                .col_expr(login_sessions::Column::LastSeenAt, Expr::value(now))
                .filter(login_sessions::Column::Id.eq(session.id.clone()))
                .exec(&self.db)
                .await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_zone_is_an_iana_name_and_blank_means_utc() {
        assert_eq!(
            parse_time_zone(Some(" Europe/Paris ")).unwrap().as_deref(),
            Some("Europe/Paris")
        );
        assert_eq!(parse_time_zone(Some("")).unwrap(), None);
        assert_eq!(parse_time_zone(None).unwrap(), None);
        for wrong in ["Mars/Base", "+02:00", "Europe/Pa ris"] {
            assert!(
                matches!(
                    parse_time_zone(Some(wrong)),
                    Err(AuthError::InvalidTimeZone(_))
                ),
                "{wrong}"
            );
        }
    }

    #[test]
    fn a_blank_display_name_is_none_and_a_long_one_is_refused() {
        assert_eq!(parse_display_name(Some("  ")).unwrap(), None);
        assert_eq!(
            parse_display_name(Some(" Ada ")).unwrap(),
            Some("Ada".into())
        );
        let long = "x".repeat(MAX_DISPLAY_NAME_CHARS + 1);
        assert!(matches!(
            parse_display_name(Some(&long)),
            Err(AuthError::InvalidDisplayName)
        ));
        assert!(parse_display_name(Some("a\u{7}b")).is_err());
    }

    #[test]
    fn a_user_agent_is_kept_short_and_without_control_characters() {
        let long = format!("Mozilla\n{}", "x".repeat(1000));
        let kept = short_user_agent(&long);
        assert!(!kept.contains('\n'));
        assert_eq!(kept.chars().count(), MAX_USER_AGENT_CHARS);
    }
}
