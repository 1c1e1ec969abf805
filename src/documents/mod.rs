//! The document workspace (seed 002) as plain Rust, no I/O but the index's own directory:
//! `extract` (what a file is, a safe filename, its text), `chunk` (overlapping 1024-token
//! windows, tokens from `tokens`' fast cl100k_base encoder) and `index` (one chat's hybrid
//! index: words on disk through `analyzer` and `writer`, `vectors` in memory). Storage,
//! queues and routes live in `workspace`.

mod analyzer;
pub mod chunk;
pub mod extract;
pub mod html;
pub mod index;
pub mod pdf;
pub mod text;
mod tokens;
mod vectors;
mod writer;
