//! Chats: who owns them, and their stored state. Every lookup is scoped to the owner, so a
//! chat someone else owns is indistinguishable from one that does not exist.

pub mod persistence;

pub use persistence::{ChatId, Chats};
