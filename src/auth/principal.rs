//! `Principal`: who is acting (a user, and the API key if one was used), and the session
//! cookie's names. Made only by authentication: `http::principal` extracts it from a request,
//! and `Accounts::acting_as` makes one for background work from an enabled account. Its fields
//! are private, so nothing else can make one from a `users` row.

use actix_web::HttpRequest;
use entities::ids::{ApiKeyId, UserId};

/// Name of the login-session cookie.
pub const SESSION_COOKIE: &str = "session";
/// The session cookie's name before it was `session` (the spec's documents API examples send
/// `session`, docs/spec.md#documents-api);
/// still read, so an upgrade signs nobody out.
pub const LEGACY_SESSION_COOKIE: &str = "colloquy_session";

/// The browser session token a request carries, under either cookie name.
pub fn session_token(req: &HttpRequest) -> Option<String> {
    req.cookie(SESSION_COOKIE)
        .or_else(|| req.cookie(LEGACY_SESSION_COOKIE))
        .map(|c| c.value().to_string())
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    user_id: UserId,
    username: String,
    is_admin: bool,
    /// The API key used, if the request came with one.
    api_key_id: Option<ApiKeyId>,
}

impl Principal {
    pub(super) fn new(user: &entities::users::Model, api_key_id: Option<ApiKeyId>) -> Self {
        Self {
            user_id: user.id.clone(),
            username: user.username.clone(),
            is_admin: user.is_admin,
            api_key_id,
        }
    }

    /// A principal made up for a unit test, with no account behind it.
    #[cfg(test)]
    pub fn for_test(user_id: UserId, username: &str, is_admin: bool) -> Self {
        Self {
            user_id,
            username: username.to_string(),
            is_admin,
            api_key_id: None,
        }
    }

    pub fn user_id(&self) -> &UserId {
        &self.user_id
    }

    pub fn username(&self) -> &str {
        &self.username
    }

    pub fn is_admin(&self) -> bool {
        self.is_admin
    }

    /// The API key used, if the request came with one.
    pub fn api_key_id(&self) -> Option<&ApiKeyId> {
        self.api_key_id.as_ref()
    }

    /// The "project" that rate limits count against: the API key, or the user in a browser.
    pub fn project(&self) -> &str {
        self.api_key_id
            .as_ref()
            .map_or(self.user_id.as_str(), ApiKeyId::as_str)
    }
}
