//! Chats: who owns them, their branch trees, and the actors that keep active chats in memory.
//! Every lookup is scoped to the owner, so a chat someone else owns is indistinguishable from
//! one that does not exist.
//!
//! By concern: `registry` (`ChatRegistry`: activating a chat's session on the supervisor's
//! arbiter pool, forgetting it when it stops), `session` (`ChatSession`, the single writer of
//! an active chat), `tree` (`BranchTree`, plain Rust), `persistence` (`Chats` and the queries
//! of a chat's messages and runs), `artifacts`, `memory`, `attachments` (images on user
//! messages), `asks` (pending ask_user questions and client tool calls), `agents` (and the
//! knowledge bases each searches), `knowledge_bases` (a user's named document collections),
//! `responses` (stored Responses API responses: rows, an ended run's outcome, `item_reference`
//! lookups), `export` (a chat's JSON and Markdown, an account's archive, an export imported back),
//! `recovery` (drafts, and runs a dead process left running), `writer` (`ChatWriter`: a chat's
//! writes, fenced by its lease's epoch with several processes) and `automations` (workflows and
//! schedules as stored data, and claiming a schedule's due time) and `shares` (read-only links
//! to a chat, stored as their tokens' hashes); `search` (`ChatSearch`: every user's messages in
//! a tantivy index of their own, searched across their chats).

pub mod agents;
pub mod artifacts;
pub mod attachments;
pub mod automations;
pub mod export;
pub mod group_commit;
pub mod knowledge_bases;
pub mod memory;
pub mod persistence;
pub mod recovery;
pub mod registry;
pub mod responses;
pub mod search;
pub mod session;
pub mod shares;
pub mod tree;
pub mod turn_cache;
pub mod writer;

pub use persistence::Chats;
pub use registry::SessionError;
pub mod asks;
