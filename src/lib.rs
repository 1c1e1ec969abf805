//! Colloquy: a self-hosted, stateful chat session engine with an OpenAI-compatible API.
//!
//! Layout, from the top floor down (a module imports only from its floor or below; the
//! `architecture` test holds it to that, and ARCHITECTURE.md draws the map):
//! - `cli`        the `serve`, `migrate`, `create-user` and `create-api-key` subcommands.
//! - `startup`    `Application`: bind, migrate, bootstrap the admin, mount routes, serve.
//! - `http`       the routes, one file per resource; the `Principal` extractor.
//! - `state`      `AppState`, what handlers can reach.
//! - `supervisor` `ChatSupervisor` (spawns runs) and `launch` (request → turn → run).
//! - `agent`      `AgentRun` and its governed loop, context fitting, prompt assembly.
//! - `tools`      one file per server-side tool, and the selection rules.
//! - `chat`       one `ChatSession` actor per active chat, its registry, the branch tree.
//! - `documents`  the document service: records, the processing queue, per-chat indexes.
//! - `auth`       users, API keys, login sessions and links, `Principal`.
//! - `run`        what a run reports: `RunEvent`, `StopReason`, the run log.
//! - `llm`        the upstream OpenAI-compatible client: wire types, stream decoding, retries.
//! - `retrieval`  text extraction (HTML, PDF), chunking, embedders, the per-chat hybrid index.
//! - `config`     defaults → TOML file → `COLLOQUY_*` environment; every limit is a field here.
//! - `error`      `AppError`, the one mapping from failures to HTTP statuses and stable codes.
//! - `db`         connecting (SQLite WAL or PostgreSQL) and migrating.
//! - `cluster`    several processes on one PostgreSQL: chat and job leases.
//! - `ssrf`       which addresses a fetch may reach.
//! - `storage`    where files live: the data directory or an S3-compatible store.
//! - `telemetry`  tracing subscriber set-up.
//! - `allocator`  the process's allocator (jemalloc), its heap figures, giving memory back.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod agent;
pub mod allocator;
pub mod auth;
pub mod chat;
pub mod cli;
pub mod cluster;
pub mod config;
pub mod db;
pub mod documents;
pub mod error;
pub mod http;
pub mod llm;
pub mod metrics;
pub mod os_limits;
pub mod retrieval;
pub mod run;
pub mod ssrf;
pub mod startup;
pub mod state;
pub mod storage;
pub mod supervisor;
pub mod telemetry;
pub mod tools;

#[cfg(test)]
mod architecture;
