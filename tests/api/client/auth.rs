//! `/auth/...`: signing in and out, API keys, users, the caller's account and sessions.

use std::fmt::Display;

use reqwest::{Method, RequestBuilder};

use super::Client;

/// The `auth` routes, with one client's credentials.
#[derive(Clone, Copy)]
pub struct Auth<'a>(pub(super) Client<'a>);

// Every route has its method, whether or not a test calls it yet.
#[allow(dead_code)]
impl Auth<'_> {
    /// `POST /auth/login`: signs in with a username and password.
    pub fn login(&self) -> RequestBuilder {
        self.0.request(Method::POST, "/auth/login")
    }

    /// `POST /auth/logout`: signs out.
    pub fn logout(&self) -> RequestBuilder {
        self.0.request(Method::POST, "/auth/logout")
    }

    /// `GET /auth/me`: who the caller is.
    pub fn me(&self) -> RequestBuilder {
        self.0.request(Method::GET, "/auth/me")
    }

    /// `GET /auth/api-keys`: the caller's API keys.
    pub fn api_keys(&self) -> RequestBuilder {
        self.0.request(Method::GET, "/auth/api-keys")
    }

    /// `POST /auth/api-keys`: creates an API key.
    pub fn create_api_key(&self) -> RequestBuilder {
        self.0.request(Method::POST, "/auth/api-keys")
    }

    /// `DELETE /auth/api-keys/{key}`: revokes an API key.
    pub fn revoke_api_key(&self, key: impl Display) -> RequestBuilder {
        self.0
            .request(Method::DELETE, &format!("/auth/api-keys/{key}"))
    }

    /// `POST /auth/users`: creates a user (admins only).
    pub fn create_user(&self) -> RequestBuilder {
        self.0.request(Method::POST, "/auth/users")
    }

    /// `GET /auth/account`: the caller's account.
    pub fn account(&self) -> RequestBuilder {
        self.0.request(Method::GET, "/auth/account")
    }

    /// `PATCH /auth/account`: changes the caller's account.
    pub fn update_account(&self) -> RequestBuilder {
        self.0.request(Method::PATCH, "/auth/account")
    }

    /// `POST /auth/account/password`: changes the caller's password.
    pub fn change_password(&self) -> RequestBuilder {
        self.0.request(Method::POST, "/auth/account/password")
    }

    /// `GET /auth/sessions`: the caller's sessions.
    pub fn sessions(&self) -> RequestBuilder {
        self.0.request(Method::GET, "/auth/sessions")
    }

    /// `DELETE /auth/sessions/{session}`: ends one of the caller's sessions.
    pub fn end_session(&self, session: impl Display) -> RequestBuilder {
        self.0
            .request(Method::DELETE, &format!("/auth/sessions/{session}"))
    }
}
