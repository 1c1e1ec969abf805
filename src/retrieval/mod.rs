//! Retrieval as plain Rust, no I/O but an index's own directory (and the test collection
//! `eval` is pointed at): `text`, `html` and `pdf`
//! (bounded extraction of untrusted bodies, for uploads and fetched pages alike), `extract`
//! (what a file is, a safe filename, its text), `chunk` (overlapping 1024-token windows, tokens
//! from `tokens`' fast cl100k_base encoder), `embed` (the embedders) and `index` (one chat's
//! hybrid index: words on disk through `analyzer` and `writer`, `vectors` in memory), `outline`
//! (a document's title and headings, and what each chunk is under), `same_fact` (whether a new
//! memory repeats an existing one), `eval`
//! (measuring search on a BEIR-format test collection). Storage,
//! queues and routes live in `crate::documents`.

mod analyzer;
pub mod chunk;
pub mod embed;
pub mod eval;
pub mod extract;
pub mod html;
pub mod index;
pub mod outline;
pub mod pdf;
pub mod same_fact;
pub mod text;
mod tokens;
pub mod vectors;
mod writer;

pub use analyzer::Stemming;
