//! `/auth/...`: signing in and out, login links, users and API keys (`login`), and the signed-in
//! user's own account and sessions (`account`).

pub(in crate::http) mod account;
pub(in crate::http) mod login;

use actix_web::web;

/// Mounts `/auth`.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.configure(login::configure)
        .configure(account::configure);
}
