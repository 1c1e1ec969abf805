//! `Principal`: who is making a request, extracted from `Authorization: Bearer <api key>` or the
//! session cookie. A request with neither, or with ones that match nothing, is refused with 401
//! before any handler runs. A bad bearer token never falls back to the cookie. A cookie request
//! that changes data must come from Colloquy's own pages (`origin`), or it is refused with 403.

use std::future::Future;
use std::pin::Pin;

use actix_web::http::header::AUTHORIZATION;
use actix_web::{FromRequest, HttpRequest, dev::Payload, web};

use super::origin::check_same_origin;
use crate::error::AppError;
use crate::state::AppState;

/// Name of the login-session cookie.
pub const SESSION_COOKIE: &str = "session";
/// The session cookie's name before it was `session` (seed 002's examples send `session`);
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
    pub user_id: String,
    pub username: String,
    pub is_admin: bool,
    /// The API key used, if the request came with one.
    pub api_key_id: Option<String>,
}

impl Principal {
    pub(super) fn new(user: &entities::users::Model, api_key_id: Option<String>) -> Self {
        Self {
            user_id: user.id.clone(),
            username: user.username.clone(),
            is_admin: user.is_admin,
            api_key_id,
        }
    }

    /// The "project" that rate limits count against: the API key, or the user in a browser.
    pub fn project(&self) -> &str {
        self.api_key_id.as_deref().unwrap_or(&self.user_id)
    }
}

impl FromRequest for Principal {
    type Error = AppError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = req.app_data::<web::Data<AppState>>().cloned();
        let bearer = req
            .headers()
            .get(AUTHORIZATION)
            .map(|value| value.to_str().unwrap_or_default().to_string());
        let cookie = session_token(req);
        // Checked before the session is looked up: a forged request costs no query.
        let cross_site = match (&state, &bearer, &cookie) {
            (Some(state), None, Some(_)) if !req.method().is_safe() => {
                check_same_origin(req, state.config.public_url.as_deref()).err()
            }
            _ => None,
        };
        Box::pin(async move {
            if let Some(err) = cross_site {
                return Err(err.into());
            }
            let state = state.ok_or_else(|| AppError::internal(anyhow::anyhow!("no app state")))?;
            let accounts = &state.accounts;
            let principal = match (bearer, cookie) {
                (Some(header), _) => {
                    let token = header
                        .strip_prefix("Bearer ")
                        .or_else(|| header.strip_prefix("bearer "))
                        .map(str::trim)
                        .filter(|t| !t.is_empty())
                        .ok_or(AppError::Unauthenticated)?;
                    accounts.authenticate_api_key(token).await?
                }
                (None, Some(token)) => accounts.authenticate_session(&token).await?,
                (None, None) => None,
            };
            principal.ok_or(AppError::Unauthenticated)
        })
    }
}
