//! Chats: who owns them, their branch trees, and the actors that keep active chats in memory.
//! Every lookup is scoped to the owner, so a chat someone else owns is indistinguishable from
//! one that does not exist.

pub mod agents;
pub mod artifacts;
pub mod attachments;
pub mod knowledge_bases;
pub mod memory;
pub mod persistence;
pub mod recovery;
pub mod registry;
pub mod responses;
pub mod session;
pub mod tree;

pub use persistence::Chats;
pub mod asks;
