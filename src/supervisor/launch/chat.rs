//! What a run in a chat is given in its context beyond its messages: the chat's documents with
//! the passages and the memories most relevant to the user's message. (The chat's own tools
//! are the table of tools': `tools`.)

use entities::ids::ChatId;

use super::Launcher;
use crate::agent::prompt;

/// Files named in the system prompt, the most recent first; the others are counted. Enough
/// for a model to refer to a chat's documents by name, and a bound on the prompt (and on the
/// work of each turn) whatever the chat holds.
pub const MAX_LISTED_FILES: u64 = 50;

/// The chat's most recent documents, at most `MAX_LISTED_FILES` + 1 (so that the listing
/// knows there are more), and whether it has searchable ones: one of those is, or (only when
/// there are more) the database finds one among the older ones. Read once per turn, and kept
/// from the chat's last turn while nothing kept changed (`chat::turn_cache`; a document
/// written makes them stale). A chat just made has none, and is not asked. A failed read
/// means none (and is not kept).
pub(super) async fn documents_for_turn(
    launcher: &Launcher,
    chat: &entities::chats::Model,
    fresh: bool,
) -> (Vec<entities::documents::Model>, bool) {
    if fresh {
        return (Vec::new(), false);
    }
    let cache = &launcher.turn_cache;
    if let Some(kept) = cache.read(&chat.user_id, &chat.id, |entry| entry.documents.clone()) {
        return kept;
    }
    let at = crate::chat::turn_cache::generation();
    let read = async {
        let recent = launcher
            .workspace
            .list_recent(&chat.id, MAX_LISTED_FILES + 1)
            .await?;
        let searchable = recent.iter().any(|document| document.searchable)
            || (recent.len() as u64 > MAX_LISTED_FILES
                && launcher.workspace.has_searchable(&chat.id).await?);
        Ok::<_, sea_orm::DbErr>((recent, searchable))
    };
    match read.await {
        Ok((recent, searchable)) => {
            cache.keep_documents(at, &chat.id, recent.clone(), searchable);
            (recent, searchable)
        }
        Err(err) => {
            tracing::warn!(%err, "could not read the chat's documents");
            (Vec::new(), false)
        }
    }
}

/// What the model is told about the chat's documents (`listed`, from `recent_documents`): at
/// most `MAX_LISTED_FILES` of them by name (and how many more there are), and, when some are
/// `searchable`, the passages most relevant to the user's message
/// (docs/spec.md#automatic-context-injection).
pub(super) async fn document_context(
    launcher: &Launcher,
    chat_id: &ChatId,
    listed: Vec<entities::documents::Model>,
    message: &str,
    searchable: bool,
) -> (prompt::FileList, Vec<prompt::Passage>) {
    let workspace = &launcher.workspace;
    let mut listed = listed;
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
