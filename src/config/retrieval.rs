//! What is retrieved into a chat's context: the `[retrieval]` section (what memories and
//! document passages share: the injection threshold), the `[memory]` section (memories and the
//! embedder) and the `[documents]` section (uploads, chunking, search and injection limits).

use std::path::PathBuf;

use serde::Deserialize;

/// What automatic injection of memories and document passages shares.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct RetrievalConfig {
    /// Least cosine similarity between the user's message and a memory or a document passage
    /// for it to be injected into the model's context. Both are compared by the same embedder
    /// in the same way, so one number means the same thing for both;
    /// `memory.injection_threshold` or `documents.injection_threshold` set one kind apart.
    pub injection_threshold: f32,
}

impl Default for RetrievalConfig {
    fn default() -> Self {
        Self {
            injection_threshold: 0.3,
        }
    }
}

/// The embedders Colloquy has (`memory.embedder`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmbedderKind {
    /// The upstream's `/embeddings`.
    #[serde(alias = "OpenAI", alias = "OPENAI")]
    OpenAi,
    /// all-MiniLM-L6-v2, run in-process.
    #[serde(alias = "MiniLM", alias = "MINILM")]
    MiniLm,
    /// Feature hashing: no model, lexical only.
    #[serde(alias = "HASH")]
    Hash,
}

/// Per-chat memory and the embedder.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct MemoryConfig {
    /// Which embedder makes vectors; `None` picks minilm when a model directory exists, else
    /// hash.
    pub embedder: Option<EmbedderKind>,
    /// Directory holding all-MiniLM-L6-v2's `model.safetensors` and `tokenizer.json`.
    pub minilm_dir: Option<PathBuf>,
    /// Cosine similarity at or above which a new memory counts as a duplicate; unset: the
    /// embedder's own (`Embedder::duplicate_threshold`, measured on
    /// `tests/data/memory-duplicates/` by `colloquy eval-duplicates`).
    pub duplicate_threshold: Option<f32>,
    /// Least similarity for a memory to be injected into the model's context; unset:
    /// `retrieval.injection_threshold` (`Config::memory_injection_threshold`).
    pub injection_threshold: Option<f32>,
    /// Most memories injected per user turn.
    pub max_injected: usize,
    /// Most memories one chat may hold.
    pub max_per_chat: usize,
    /// Longest memory in characters.
    pub max_content_chars: usize,
    /// Most memories recall_memory returns.
    pub recall_limit: usize,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        Self {
            embedder: None,
            minilm_dir: None,
            duplicate_threshold: None,
            injection_threshold: None,
            max_injected: 5,
            max_per_chat: 1_000,
            max_content_chars: 4_000,
            recall_limit: 10,
        }
    }
}

/// The document workspace (docs/spec.md#workspace-limits, #processing, #file_search). "spec":
/// the value given there.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct DocumentsConfig {
    /// Largest uploaded file in bytes (spec: 200 MB).
    pub max_file_bytes: u64,
    /// Documents per chat (spec: 50).
    pub max_files_per_chat: usize,
    /// Documents per knowledge base (a vector store): a collection shared by an agent's chats,
    /// so larger than one chat's uploads, but bounded, since a search opens its whole index.
    pub max_files_per_knowledge_base: usize,
    /// Knowledge bases (vector stores) one user may have: each is an index on disk that
    /// `search_knowledge` may open.
    pub max_knowledge_bases_per_user: usize,
    /// Extracted characters indexed per file (spec: 500,000).
    pub max_text_chars: usize,
    /// Tokens per chunk (spec: 1024).
    pub chunk_tokens: usize,
    /// Tokens shared by neighbouring chunks (spec: 128).
    pub chunk_overlap_tokens: usize,
    /// file_search results when the model asks for no number (spec: 5).
    pub default_search_results: usize,
    /// Least similarity for a chunk to be injected automatically; unset:
    /// `retrieval.injection_threshold` (`Config::document_injection_threshold`).
    pub injection_threshold: Option<f32>,
    /// Most chunks injected per user turn.
    pub max_injected_chunks: usize,
    /// Documents processed at once.
    pub processing_concurrency: usize,
    /// Seconds extracting one document's text may take; a file that needs longer (a hostile
    /// HTML or PDF structure) is marked `error` instead of holding a processing slot.
    pub extraction_budget_secs: u64,
    /// The language document words are read in: its stop words are dropped and its stems
    /// indexed beside the exact words, so "runs" finds "running" (`english`, the default, or
    /// `arabic`, `danish`, `dutch`, `finnish`, `french`, `german`, `greek`, `hungarian`,
    /// `italian`, `norwegian`, `portuguese`, `romanian`, `russian`, `spanish`, `swedish`,
    /// `tamil`, `turkish`); `none` indexes exact words only. Changing it rebuilds each chat's
    /// index when the chat next searches.
    pub stemming: StemmingLanguage,
}

/// The languages document words can be read in (`documents.stemming`), or none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StemmingLanguage {
    /// Exact words only, no stop words dropped.
    #[serde(alias = "off")]
    None,
    Arabic,
    Danish,
    Dutch,
    #[default]
    English,
    Finnish,
    French,
    German,
    Greek,
    Hungarian,
    Italian,
    Norwegian,
    Portuguese,
    Romanian,
    Russian,
    Spanish,
    Swedish,
    Tamil,
    Turkish,
}

impl Default for DocumentsConfig {
    fn default() -> Self {
        Self {
            max_file_bytes: 200 * 1000 * 1000,
            max_files_per_chat: 50,
            max_files_per_knowledge_base: 500,
            max_knowledge_bases_per_user: 50,
            max_text_chars: 500_000,
            chunk_tokens: 1024,
            chunk_overlap_tokens: 128,
            default_search_results: 5,
            injection_threshold: None,
            max_injected_chunks: 3,
            processing_concurrency: 2,
            extraction_budget_secs: 120,
            stemming: StemmingLanguage::default(),
        }
    }
}
