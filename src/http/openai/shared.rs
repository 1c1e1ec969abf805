//! What the `/v1` resources share, so that none imports another for it: OpenAI's list object and
//! its paging (`ListQuery`), `metadata`'s limits, and the ids of vector stores (a chat's
//! documents: `vs_<chat id>`, or its knowledge base's `kb_<id>`).

use entities::ids::ChatId;

use crate::chat::knowledge_bases::KnowledgeBaseId;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::error::{AppError, AppResult};

/// Most `metadata` pairs, and their sizes (OpenAI's limits).
const MAX_METADATA_PAIRS: usize = 16;
const MAX_METADATA_KEY: usize = 64;
const MAX_METADATA_VALUE: usize = 512;

/// OpenAI's list paging: `limit` (1-100, default 20), `order` (`asc`, or `desc` by default),
/// `after` (an item id).
#[derive(Deserialize)]
pub struct ListQuery {
    pub limit: Option<usize>,
    pub order: Option<String>,
    pub after: Option<String>,
}

impl ListQuery {
    /// The page size asked for: 1-100, 20 by default.
    pub fn limit(&self) -> AppResult<usize> {
        let limit = self.limit.unwrap_or(20);
        if !(1..=100).contains(&limit) {
            return Err(AppError::invalid("limit must be 1-100"));
        }
        Ok(limit)
    }

    /// Whether the newest come first (`desc`, the default) or the oldest (`asc`).
    pub fn newest_first(&self) -> AppResult<bool> {
        match self.order.as_deref() {
            None | Some("desc") => Ok(true),
            Some("asc") => Ok(false),
            Some(_) => Err(AppError::invalid("order must be asc or desc")),
        }
    }

    /// One page of `items` (oldest first) as an OpenAI list object.
    pub fn page(&self, mut items: Vec<Value>) -> AppResult<Value> {
        let limit = self.limit()?;
        if self.newest_first()? {
            items.reverse();
        }
        if let Some(after) = &self.after {
            let at = items
                .iter()
                .position(|item| item["id"] == after.as_str())
                .ok_or_else(|| AppError::invalid(format!("after names no item: {after}")))?;
            items.drain(..=at);
        }
        let has_more = items.len() > limit;
        items.truncate(limit);
        Ok(list_object(items, has_more))
    }
}

/// OpenAI's list object of `items`.
pub fn list_object(items: Vec<Value>, has_more: bool) -> Value {
    json!({
        "object": "list",
        "first_id": items.first().map(|i| i["id"].clone()),
        "last_id": items.last().map(|i| i["id"].clone()),
        "has_more": has_more,
        "data": items,
    })
}

/// OpenAI's `metadata`: at most 16 pairs of strings, keys of at most 64 characters and values
/// of at most 512.
pub fn check_metadata(metadata: &Map<String, Value>) -> AppResult<()> {
    if metadata.len() > MAX_METADATA_PAIRS {
        return Err(AppError::invalid(format!(
            "metadata holds at most {MAX_METADATA_PAIRS} pairs"
        )));
    }
    for (key, value) in metadata {
        let fits = key.chars().count() <= MAX_METADATA_KEY
            && value
                .as_str()
                .is_some_and(|v| v.chars().count() <= MAX_METADATA_VALUE);
        if !fits {
            return Err(AppError::invalid(format!(
                "metadata {key:?}: keys are at most {MAX_METADATA_KEY} characters and values \
                 strings of at most {MAX_METADATA_VALUE}"
            )));
        }
    }
    Ok(())
}

/// The vector store id of a chat's documents.
pub fn store_id(chat_id: &ChatId) -> String {
    format!("vs_{chat_id}")
}

/// The chat behind a vector store id (or the same knowledge base's `kb_` id).
pub fn chat_of(store_id: &str) -> Option<ChatId> {
    store_id
        .strip_prefix("vs_")
        .or_else(|| store_id.strip_prefix(KnowledgeBaseId::PREFIX))
        .filter(|id| !id.is_empty())
        .map(ChatId::from_string)
}

/// The 404 of a vector store the caller has none of (such as the spec examples' `vs_abc123`): how
/// to make one and fill it, since a client that names a store it never created needs exactly that.
pub fn unknown_store(id: &str) -> AppError {
    AppError::NotFoundWithHelp(format!(
        "vector store {id:?} not found. Create one with POST /v1/vector_stores (its id is in the \
         answer), upload a file with POST /v1/files (purpose \"assistants\"), then add it with \
         POST /v1/vector_stores/{{vector_store_id}}/files and {{\"file_id\": ...}}. Every chat's \
         documents are also a vector store: vs_<chat id>."
    ))
}
