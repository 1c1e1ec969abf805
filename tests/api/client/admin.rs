//! `/admin/api/...`: the admin's user management and the server's status.

use std::fmt::Display;

use reqwest::{Method, RequestBuilder};

use super::Client;

/// The `admin` routes, with one client's credentials.
#[derive(Clone, Copy)]
pub struct Admin<'a>(pub(super) Client<'a>);

// Every route has its method, whether or not a test calls it yet.
#[allow(dead_code)]
impl Admin<'_> {
    /// `GET /admin/api/users`: lists users.
    pub fn users(&self) -> RequestBuilder {
        self.0.request(Method::GET, "/admin/api/users")
    }

    /// `POST /admin/api/users`: creates a user.
    pub fn create_user(&self) -> RequestBuilder {
        self.0.request(Method::POST, "/admin/api/users")
    }

    /// `PATCH /admin/api/users/{user}`: changes a user.
    pub fn update_user(&self, user: impl Display) -> RequestBuilder {
        self.0
            .request(Method::PATCH, &format!("/admin/api/users/{user}"))
    }

    /// `DELETE /admin/api/users/{user}`: deletes a user.
    pub fn delete_user(&self, user: impl Display) -> RequestBuilder {
        self.0
            .request(Method::DELETE, &format!("/admin/api/users/{user}"))
    }

    /// `POST /admin/api/users/{user}/login-link`: makes a sign-in link for a user.
    pub fn login_link(&self, user: impl Display) -> RequestBuilder {
        self.0
            .request(Method::POST, &format!("/admin/api/users/{user}/login-link"))
    }

    /// `GET /admin/api/status`: the server's status.
    pub fn status(&self) -> RequestBuilder {
        self.0.request(Method::GET, "/admin/api/status")
    }
}
