//! What a run in a chat is given beyond its messages: the chat's own tools (artifacts, memory,
//! ask_user, and file_search when there are documents), and, in its context, the chat's
//! documents with the passages and the memories most relevant to the user's message.

use std::sync::Arc;

use entities::ids::ChatId;

use super::Launcher;
use crate::agent::prompt;
use crate::run::log::RunLog;
use crate::tools;
use crate::tools::chat_context::{ChatContext, Parts};
use crate::tools::file_search::FileSearchTool;

/// The names of the tools `chat_tools` gives.
pub const CHAT_TOOL_NAMES: [&str; 6] = [
    "create_artifact",
    "update_artifact",
    "save_memory",
    "recall_memory",
    "ask_user",
    "file_search",
];

/// The tools every chat has (docs/spec.md#which-tools-a-run-has): artifacts, memory and
/// ask_user.
pub(in crate::supervisor) fn chat_tools(
    launcher: &Launcher,
    chat_id: ChatId,
    session: crate::tools::chat_context::SessionSlot,
    log: &Arc<RunLog>,
    parts: &Parts,
    documents: bool,
) -> Vec<tools::SharedTool> {
    use crate::tools::artifacts::{CreateArtifactTool, UpdateArtifactTool};
    use crate::tools::memory::{RecallMemoryTool, SaveMemoryTool};
    let ctx = Arc::new(ChatContext {
        chat_id,
        session,
        log: log.clone(),
        parts: parts.clone(),
        embedder: launcher.embedder.clone(),
        config: launcher.config.clone(),
    });
    let mut tools: Vec<tools::SharedTool> = vec![
        Arc::new(CreateArtifactTool(ctx.clone())),
        Arc::new(UpdateArtifactTool(ctx.clone())),
        Arc::new(SaveMemoryTool(ctx.clone())),
        Arc::new(RecallMemoryTool(ctx.clone())),
        launcher.ask_user.clone(),
    ];
    if documents {
        // file_search is offered when the chat has (searchable) documents
        // (docs/spec.md#which-tools-a-run-has).
        tools.push(Arc::new(FileSearchTool::new(
            ctx,
            launcher.workspace.clone(),
        )));
    }
    debug_assert!(tools.iter().all(|t| CHAT_TOOL_NAMES.contains(&t.name())));
    tools
}

/// Files named in the system prompt, the most recent first; the others are counted. Enough
/// for a model to refer to a chat's documents by name, and a bound on the prompt (and on the
/// work of each turn) whatever the chat holds.
pub const MAX_LISTED_FILES: u64 = 50;

/// What the model is told about the chat's documents: at most `MAX_LISTED_FILES` of them by
/// name (and how many more there are), and, when some are `searchable`, the passages most
/// relevant to the user's message (docs/spec.md#automatic-context-injection).
pub(super) async fn document_context(
    launcher: &Launcher,
    chat_id: &ChatId,
    message: &str,
    searchable: bool,
) -> (prompt::FileList, Vec<prompt::Passage>) {
    let workspace = &launcher.workspace;
    let listed = workspace.list_recent(chat_id, MAX_LISTED_FILES + 1).await;
    let mut listed = match listed {
        Ok(rows) => rows,
        Err(err) => {
            tracing::warn!(%err, "could not list the chat's documents");
            return (prompt::FileList::default(), Vec::new());
        }
    };
    let mut files = prompt::FileList::default();
    if listed.len() as u64 > MAX_LISTED_FILES {
        listed.truncate(MAX_LISTED_FILES as usize);
        files.more = match workspace.count(chat_id).await {
            Ok(count) => count.saturating_sub(MAX_LISTED_FILES),
            Err(err) => {
                tracing::warn!(%err, "could not count the chat's documents");
                1
            }
        };
    }
    files.listed = listed.into_iter().map(Into::into).collect();
    let limits = &launcher.config.documents;
    let threshold = launcher.config.document_injection_threshold();
    let mut passages = Vec::new();
    if searchable && limits.max_injected_chunks > 0 && !message.trim().is_empty() {
        match workspace
            .search(chat_id, message, limits.max_injected_chunks)
            .await
        {
            Ok(found) => passages.extend(
                found
                    .hits
                    .into_iter()
                    .filter(|h| h.similarity >= threshold)
                    .map(|h| prompt::Passage {
                        filename: h.filename,
                        text: h.text,
                    }),
            ),
            Err(err) => tracing::warn!(%err, "could not search the chat's documents"),
        }
    }
    (files, passages)
}

/// The chat's memories relevant to the user's message, for the model's context (passive
/// injection): at least `Config::memory_injection_threshold` similar, at most
/// `memory.max_injected`.
/// Failing to embed only means nothing is injected.
pub(super) async fn relevant_memories(
    launcher: &Launcher,
    session: &actix::Addr<crate::chat::session::ChatSession>,
    message: &str,
) -> Vec<crate::chat::memory::Memory> {
    use crate::chat::memory::{Embedded, RecallMemories};
    let limits = &launcher.config.memory;
    if limits.max_injected == 0 || message.trim().is_empty() {
        return Vec::new();
    }
    let vector = match crate::retrieval::embed::embed_one(launcher.embedder.as_ref(), message).await
    {
        Ok(vector) => vector,
        Err(err) => {
            tracing::warn!(%err, "could not embed the message for memory injection");
            return Vec::new();
        }
    };
    let query = Embedded {
        vector,
        embedder: launcher.embedder.id().to_string(),
    };
    session
        .send(RecallMemories {
            query,
            limit: limits.max_injected,
            min_relevance: launcher.config.memory_injection_threshold(),
        })
        .await
        .map(|ranked| ranked.into_iter().map(|(m, _)| m).collect())
        .unwrap_or_default()
}

/// The definitions of the tools every chat has, for listing them without a chat.
pub(in crate::supervisor) fn chat_tool_definitions(
    launcher: &Launcher,
) -> Vec<crate::llm::wire::ToolDefinition> {
    use crate::tools::Tool;
    let config = &launcher.config;
    vec![
        crate::tools::artifacts::CreateArtifactTool::describe(config),
        crate::tools::artifacts::UpdateArtifactTool::describe(config),
        crate::tools::memory::SaveMemoryTool::describe(config),
        crate::tools::memory::RecallMemoryTool::describe(config),
        launcher.ask_user.definition(),
        FileSearchTool::describe(config),
    ]
}
