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
//! - `chat`       chats: the supervisor, one `ChatSession` actor per active chat, the branch tree.
//! - `agent`      runs: `AgentRun` and its governed loop, events, the run log, prompt assembly.
//! - `tools`      one file per server-side tool, and the selection rules.
//! - `embed`      embedders (openai, minilm, hash) turning text into comparable vectors.
//! - `documents`  the document workspace: extraction, chunking, the per-chat hybrid index.
//! - `llm`        the upstream OpenAI-compatible client: wire types, stream decoding, retries.
//! - `workspace`  the document service: records, the processing queue, per-chat indexes.
//! - `http`       the routes, one file per resource.

pub mod agent;
pub mod auth;
pub mod chat;
pub mod cli;
pub mod config;
pub mod db;
pub mod documents;
pub mod embed;
pub mod error;
pub mod http;
pub mod llm;
pub mod run;
pub mod startup;
pub mod state;
pub mod supervisor;
pub mod telemetry;
pub mod tools;
pub mod workspace;

#[cfg(test)]
mod architecture;
