//! Colloquy: a self-hosted, stateful chat session engine with an OpenAI-compatible API.
//!
//! Layout, in reading order:
//! - `config`     defaults → TOML file → `COLLOQUY_*` environment; every limit is a field here.
//! - `startup`    `Application`: bind, migrate, bootstrap the admin, mount routes, serve.
//! - `cli`        the `serve`, `migrate`, `create-user` and `create-api-key` subcommands.
//! - `state`      `AppState`, what handlers can reach.
//! - `error`      `AppError`, the one mapping from failures to HTTP statuses and stable codes.
//! - `telemetry`  tracing subscriber set-up.
//! - `db`         connecting (SQLite WAL or PostgreSQL) and migrating.
//! - `auth`       users, API keys, login sessions and links; the `Principal` extractor.
//! - `chat`       chats and their stored state, always scoped to the owner.
//! - `llm`        the upstream OpenAI-compatible client: wire types, stream decoding, retries.
//! - `http`       the routes, one file per resource.

pub mod auth;
pub mod chat;
pub mod cli;
pub mod config;
pub mod db;
pub mod error;
pub mod http;
pub mod llm;
pub mod startup;
pub mod state;
pub mod telemetry;
