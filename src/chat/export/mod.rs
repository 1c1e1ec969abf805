//! A chat taken out and brought back: the JSON export (`colloquy.chat` version 1: the whole
//! message tree with its branches, the artifacts with every version, the memories, the runs'
//! usage, the chat's metadata), the Markdown of the visible branch, an account's chats as one
//! zip archive, and a JSON export imported as a new chat.
//!
//! Reading goes to the database (what a chat's session stored); an import writes a chat no one
//! can know yet, in one transaction, before any session of it can exist, so the single-writer
//! rule holds. Documents and images are files, not carried: an import says what it left out.
//!
//! Here: the format's types. Beside it: `read` (a stored chat → its export), `markdown`,
//! `archive` (the zip), `plan` (an import checked in full, new ids given) and `import`
//! (the checked import written in one transaction).

mod archive;
mod import;
mod markdown;
mod plan;
mod read;

use chrono::{DateTime, Utc};
use entities::messages::MessageRole;
use entities::stop_reason::StopReason;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use archive::{ArchiveError, MAX_ARCHIVE_CHATS, archive};
pub use import::{ImportError, ImportLimits, Imported, MAX_IMPORT_BYTES, import_chat};
pub use markdown::to_markdown;
pub use read::export_chat;

/// `format` of a chat export.
pub const FORMAT: &str = "colloquy.chat";
/// The export format's version; an import refuses any other.
pub const VERSION: u32 = 1;

/// A chat as exported. Ids are the exporting server's, as strings: an import makes new ones.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChatExport {
    pub format: String,
    pub version: u32,
    pub exported_at: DateTime<Utc>,
    pub chat: ExportedChat,
    /// Every message of every branch, in creation order (`seq`).
    pub messages: Vec<ExportedMessage>,
    #[serde(default)]
    pub artifacts: Vec<ExportedArtifact>,
    #[serde(default)]
    pub memories: Vec<ExportedMemory>,
    /// What each run did (read only: an import does not bring runs back).
    #[serde(default)]
    pub runs: Vec<ExportedRun>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExportedChat {
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub agent: Option<ExportedAgent>,
    #[serde(default)]
    pub context_strategy: Option<String>,
    /// The model the chat's next turn goes to (the picker's choice), if one was chosen.
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub metadata: Option<Value>,
    /// The tip of the branch the chat shows.
    #[serde(default)]
    pub active_leaf_id: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExportedAgent {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub model: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExportedMessage {
    pub id: String,
    #[serde(default)]
    pub parent_id: Option<String>,
    pub role: MessageRole,
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub parts: Option<Value>,
    #[serde(default)]
    pub tool_calls: Option<Value>,
    #[serde(default)]
    pub tool_call_id: Option<String>,
    #[serde(default)]
    pub stop_reason: Option<StopReason>,
    #[serde(default)]
    pub reasoning: Option<crate::chat::tree::Reasoning>,
    /// The model that wrote an answer.
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub run_id: Option<String>,
    pub seq: i64,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExportedArtifact {
    pub id: String,
    pub identifier: String,
    pub title: String,
    pub mime_type: String,
    #[serde(default)]
    pub language: Option<String>,
    #[serde(default)]
    pub message_id: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Every version, oldest first (1, 2, …).
    pub versions: Vec<ExportedVersion>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExportedVersion {
    pub version: i32,
    pub content: String,
    #[serde(default)]
    pub message_id: Option<String>,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExportedMemory {
    pub content: String,
    pub category: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExportedRun {
    pub id: String,
    pub status: String,
    #[serde(default)]
    pub stop_reason: Option<StopReason>,
    pub iterations: i32,
    pub input_tokens: i64,
    pub output_tokens: i64,
    #[serde(default)]
    pub options: Option<Value>,
    #[serde(default)]
    pub tool_calls: Option<Value>,
    pub created_at: DateTime<Utc>,
    #[serde(default)]
    pub finished_at: Option<DateTime<Utc>>,
}

/// A file name for an export of a chat titled `title`: its ASCII letters and digits, dashes
/// between, then its id.
pub fn file_stem(title: &str, id: &str) -> String {
    let mut stem = String::new();
    for c in title
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || c.is_whitespace() || *c == '-')
    {
        if c.is_ascii_alphanumeric() {
            stem.push(c.to_ascii_lowercase());
        } else if !stem.ends_with('-') && !stem.is_empty() {
            stem.push('-');
        }
        if stem.chars().count() >= 60 {
            break;
        }
    }
    let stem = stem.trim_end_matches('-');
    if stem.is_empty() {
        id.to_string()
    } else {
        format!("{stem}-{id}")
    }
}
