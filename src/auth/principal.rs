//! `Principal`: who is making a request (a user, and the API key if one was used), and the
//! session cookie's names. `http::principal` extracts it from each request.

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
    pub user_id: UserId,
    pub username: String,
    pub is_admin: bool,
    /// The API key used, if the request came with one.
    pub api_key_id: Option<ApiKeyId>,
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

    /// The "project" that rate limits count against: the API key, or the user in a browser.
    pub fn project(&self) -> &str {
        self.api_key_id
            .as_ref()
            .map_or(self.user_id.as_str(), ApiKeyId::as_str)
    }
}
