//! Authentication and identity: users with argon2 password hashes, API keys and login-session
//! tokens stored only as SHA-256 hashes, one-time login links, and the `Principal` extractor
//! every protected handler takes. Ownership checks (a chat is its owner's) use `Principal`.
//! Browser sessions are held to their own origin (`origin`); failed password logins are limited
//! per account and per address (`throttle`).
//!
//! Beside it: `accounts` (the queries), `secret` (bearer secrets hashed with SHA-256,
//! passwords with argon2; a dummy hash is checked for unknown users, so timing tells nothing),
//! `bootstrap` (the first admin), `principal` (`Principal`; extracted in `http::principal`),
//! `acting` (`Accounts::acting_as`: the principal of background work, refused for a disabled or
//! deleted account),
//! `profile` (what a person changes about their own account: display name, password, sessions),
//! `admin` (an admin's changes to accounts).

mod accounts;
mod acting;
mod admin;
mod bootstrap;
mod origin;
mod principal;
mod profile;
mod secret;
mod throttle;

pub use accounts::{Accounts, AuthError, IssuedSecret, NewUser};
pub use acting::ActingAsError;
pub use admin::{AccountChange, AccountChangeError, MAX_LISTED_USERS};
pub use bootstrap::bootstrap_admin;
pub use origin::{CrossSiteError, check_same_origin};
pub use principal::{LEGACY_SESSION_COOKIE, Principal, SESSION_COOKIE, session_token};
pub use profile::{MAX_DISPLAY_NAME_CHARS, SessionView, parse_time_zone};
pub use secret::hash_token;
pub use throttle::{LoginAttempt, LoginThrottle, Throttled, ThrottledBy};
