//! `save_memory` and `recall_memory` (docs/spec.md#memory): per-chat memory. The content is
//! embedded here, off the chat's mailbox; the chat's session checks for near-duplicates against its
//! matrix and persists.

use std::borrow::Cow;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::chat_context::{ChatContext, session_gone};
use super::schema::set_keyword;
use super::{ProgressKind, ToolError, ToolFuture, TypedTool, typed};
use crate::chat::memory::{
    self, CATEGORIES, Embedded, MemoryError, RecallMemories, SaveMemory, Saved,
    distinct_lookalikes, duplicate_check,
};
use crate::llm::wire::ToolDefinition;
use crate::retrieval::embed;

fn embed_failed(err: embed::EmbedError) -> ToolError {
    ToolError::new(
        "embedding_failed",
        err.to_string(),
        "Try again later; memory is unavailable until the embedder answers.",
    )
}

/// Embeds `text` with the chat's embedder.
pub async fn embed_text(ctx: &ChatContext, text: &str) -> Result<Embedded, embed::EmbedError> {
    let vector = embed::embed_one(ctx.embedder.as_ref(), text).await?;
    Ok(Embedded {
        vector,
        embedder: ctx.embedder.id().to_string(),
    })
}

/// Checks a category, or infers one (see `memory::infer_category`).
pub fn category_for(content: &str, category: Option<&str>) -> Result<String, String> {
    match category.map(str::trim).filter(|c| !c.is_empty()) {
        None => Ok(memory::infer_category(content).to_string()),
        Some(c) => {
            let c = c.to_ascii_lowercase();
            if CATEGORIES.contains(&c.as_str()) {
                Ok(c)
            } else {
                Err(format!("category must be one of {}", CATEGORIES.join(", ")))
            }
        }
    }
}

/// Checks a memory's content: not blank, within the limit; returns it trimmed.
pub fn checked_content(content: &str, max_chars: usize) -> Result<String, String> {
    let content = content.trim();
    if content.is_empty() {
        return Err("content must not be empty".into());
    }
    if content.chars().count() > max_chars {
        return Err(format!("content must be at most {max_chars} characters"));
    }
    Ok(content.to_string())
}

pub struct SaveMemoryTool(pub Arc<ChatContext>);

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SaveArgs {
    /// The fact, preference or instruction to remember, as a self-contained sentence.
    #[schemars(length(min = 1))]
    content: String,
    /// Omit to let the server infer it.
    #[schemars(extend("enum" = CATEGORIES))]
    category: Option<String>,
}

const SAVE_MEMORY: &str = "save_memory";
const SAVE_DESCRIPTION: &str = "Save a fact, preference or instruction to this chat's memory so \
    it is remembered in later turns. Near-duplicates of saved memories are not saved twice.";

/// The parameters derived from `SaveArgs` with the configured length of a memory.
fn save_parameters(mut parameters: Value, config: &crate::config::Config) -> Value {
    let max = config.memory.max_content_chars;
    set_keyword(&mut parameters, "/properties/content", "maxLength", max);
    parameters
}

impl SaveMemoryTool {
    /// The definition, from the limits in `config` (for listing tools without a chat).
    pub fn describe(config: &crate::config::Config) -> ToolDefinition {
        typed::definition::<SaveArgs>(SAVE_MEMORY, SAVE_DESCRIPTION, |derived| {
            save_parameters(derived, config)
        })
    }
}

impl TypedTool for SaveMemoryTool {
    type Args = SaveArgs;

    fn name(&self) -> &'static str {
        SAVE_MEMORY
    }

    fn description(&self) -> Cow<'_, str> {
        SAVE_DESCRIPTION.into()
    }

    fn parameters(&self, derived: Value) -> Value {
        save_parameters(derived, &self.0.config)
    }

    fn progress(&self) -> Option<ProgressKind> {
        None
    }

    fn call_message(&self, _args: Option<&SaveArgs>) -> String {
        "Saving a memory".into()
    }

    fn call(&self, args: SaveArgs) -> ToolFuture {
        let ctx = Arc::clone(&self.0);
        Box::pin(async move {
            let limits = &ctx.config.memory;
            let content = checked_content(&args.content, limits.max_content_chars)
                .map_err(ToolError::invalid_arguments)?;
            let category = category_for(&content, args.category.as_deref())
                .map_err(ToolError::invalid_arguments)?;
            let embedded = embed_text(&ctx, &content).await.map_err(embed_failed)?;
            let session = ctx.session()?;
            let check = duplicate_check(limits, ctx.embedder.as_ref());
            let distinct =
                distinct_lookalikes(session, ctx.embedder.as_ref(), &content, &embedded, check)
                    .await;
            let saved = session
                .send(SaveMemory {
                    content,
                    category,
                    embedded,
                    duplicate_threshold: check.threshold,
                    distinct,
                    max_per_chat: limits.max_per_chat,
                })
                .await
                .map_err(session_gone)?
                .map_err(|err| match err {
                    MemoryError::Full(max) => ToolError::new(
                        "memory_full",
                        format!("this chat already holds {max} memories, the most allowed"),
                        "Tell the user memory is full; they can delete memories they no longer need.",
                    ),
                    other => ToolError::new(
                        "storage_failed",
                        other.to_string(),
                        "Try again.",
                    ),
                })?;
            Ok(match saved {
                Saved::Saved(m) => json!({
                    "status": "saved", "memory_id": m.id, "content": m.content,
                    "category": m.category,
                }),
                Saved::Duplicate(m, similarity) => json!({
                    "status": "duplicate", "memory_id": m.id, "content": m.content,
                    "category": m.category, "similarity": similarity,
                }),
            })
        })
    }
}

pub struct RecallMemoryTool(pub Arc<ChatContext>);

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallArgs {
    /// What to look for, in natural language.
    #[schemars(length(min = 1))]
    query: String,
}

const RECALL_MEMORY: &str = "recall_memory";
const RECALL_DESCRIPTION: &str = "Search this chat's saved memories (facts, preferences, \
    instructions) by meaning. Returns the best matches with a relevance from 0 to 1.";

/// The parameters derived from `RecallArgs` with the configured length of a query.
fn recall_parameters(mut parameters: Value, config: &crate::config::Config) -> Value {
    let max = config.memory.max_content_chars;
    set_keyword(&mut parameters, "/properties/query", "maxLength", max);
    parameters
}

impl RecallMemoryTool {
    /// The definition, from the limits in `config` (for listing tools without a chat).
    pub fn describe(config: &crate::config::Config) -> ToolDefinition {
        typed::definition::<RecallArgs>(RECALL_MEMORY, RECALL_DESCRIPTION, |derived| {
            recall_parameters(derived, config)
        })
    }
}

impl TypedTool for RecallMemoryTool {
    type Args = RecallArgs;

    fn name(&self) -> &'static str {
        RECALL_MEMORY
    }

    fn description(&self) -> Cow<'_, str> {
        RECALL_DESCRIPTION.into()
    }

    fn parameters(&self, derived: Value) -> Value {
        recall_parameters(derived, &self.0.config)
    }

    fn progress(&self) -> Option<ProgressKind> {
        None
    }

    fn call_message(&self, _args: Option<&RecallArgs>) -> String {
        "Recalling memories".into()
    }

    fn call(&self, args: RecallArgs) -> ToolFuture {
        let ctx = Arc::clone(&self.0);
        Box::pin(async move {
            let query = checked_content(&args.query, ctx.config.memory.max_content_chars)
                .map_err(ToolError::invalid_arguments)?;
            let embedded = embed_text(&ctx, &query).await.map_err(embed_failed)?;
            let ranked = ctx
                .session()?
                .send(RecallMemories {
                    query: embedded,
                    limit: ctx.config.memory.recall_limit,
                    min_relevance: f32::MIN_POSITIVE,
                })
                .await
                .map_err(session_gone)?;
            let memories: Vec<Value> = ranked
                .into_iter()
                .map(|(m, relevance)| {
                    json!({
                        "id": m.id,
                        "content": m.content,
                        "category": m.category,
                        "relevance": (relevance * 1000.0).round() / 1000.0,
                        "created_at": m.created_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                    })
                })
                .collect();
            Ok(json!({ "memories": memories }))
        })
    }
}
