//! The document workspace (seed 002): extraction, chunking and the per-chat hybrid index.

pub mod chunk;
pub mod extract;
pub mod index;
