//! Search inside chats: every user's messages (their own and the answers, on every branch) in
//! a tantivy index of their own under `<data_dir>/chat_search/users/<user_id>/`, ranked by
//! BM25, each hit with a snippet whose matching words are marked.
//!
//! By concern: `index` (`MessageIndex`, one user's index: plain Rust), `indexer` (the one task
//! that writes the indexes, on a thread of its own: it takes the changes the chat's writers
//! report, a batch at a time, and catches up from the database what it was not told). Here:
//! `ChatSearch`, the handle the writers report to and searches go through, and `SearchQuery`.
//!
//! The database is the truth and the index a copy that may lag: a search checks its hits
//! against the database (the message still there, in a chat of the searcher's), so a message
//! deleted by another process is never shown, and is then dropped from the index.

pub mod index;
mod indexer;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use dashmap::DashMap;
use entities::ids::{ChatId, MessageId, UserId};
use entities::messages::MessageRole;
use entities::{chats, messages};
use sea_orm::{ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QuerySelect};
use tokio::sync::mpsc;

use crate::retrieval::Stemming;
pub use index::{MessageHit, MessageIndex, MessageIndexError, Snippet};

/// Longest query, in characters: a few words to find, not a document.
pub const MAX_QUERY_CHARS: usize = 200;
/// Most results one search returns: a list to pick from, not an export.
pub const MAX_RESULTS: usize = 50;
/// Results when the request names no limit.
pub const DEFAULT_RESULTS: usize = 20;
/// Extra hits read beyond the limit, standing in for those the database check drops (messages
/// deleted since they were indexed).
const SPARE_HITS: usize = 10;
/// Changes waiting for the indexer at most. A change that does not fit is not lost: the
/// indexer's catch-up finds it in the database.
const MAX_PENDING_CHANGES: usize = 10_000;

/// What the indexer is told; the chat writers' reports.
#[derive(Debug)]
enum Change {
    /// Messages of the chat were stored or removed: index what it lacks, drop what is gone.
    Chat(ChatId),
    /// A turn stored these messages: added as they are (the owner, when known, saves a read).
    /// `updated_at`: the chat's `updated_at` the turn's write set.
    Stored {
        chat_id: ChatId,
        owner: Option<UserId>,
        messages: Vec<index::IndexedMessage>,
        updated_at: DateTime<Utc>,
    },
    /// The chat was deleted: drop its messages from its owner's index.
    ChatDeleted { owner: UserId, chat_id: ChatId },
    /// The account was deleted: drop its index.
    UserDeleted(UserId),
    /// Hits a search found deleted: drop them.
    Stale {
        owner: UserId,
        messages: Vec<MessageId>,
    },
}

/// Why a search query was refused, with a stable code each.
#[derive(Debug, thiserror::Error)]
pub enum SearchQueryError {
    #[error("q must name something to search for")]
    Empty,
    #[error("q must be at most {MAX_QUERY_CHARS} characters")]
    TooLong,
    #[error("limit must be 1-{MAX_RESULTS}")]
    Limit,
}

impl SearchQueryError {
    /// The code clients match on.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Empty => "empty_query",
            Self::TooLong => "query_too_long",
            Self::Limit => "invalid_limit",
        }
    }
}

/// A search as asked: the words (trimmed, not empty, not too long) and how many results.
#[derive(Debug, Clone)]
pub struct SearchQuery {
    text: String,
    limit: usize,
}

impl SearchQuery {
    pub fn parse(text: &str, limit: Option<usize>) -> Result<Self, SearchQueryError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(SearchQueryError::Empty);
        }
        if text.chars().count() > MAX_QUERY_CHARS {
            return Err(SearchQueryError::TooLong);
        }
        let limit = limit.unwrap_or(DEFAULT_RESULTS);
        if !(1..=MAX_RESULTS).contains(&limit) {
            return Err(SearchQueryError::Limit);
        }
        Ok(Self {
            text: text.to_string(),
            limit,
        })
    }
}

/// A message a search found, in one of the searcher's chats.
#[derive(Debug, Clone)]
pub struct FoundMessage {
    pub chat_id: ChatId,
    pub chat_title: String,
    pub message_id: MessageId,
    pub role: String,
    pub created_at: DateTime<Utc>,
    pub score: f32,
    pub snippet: Snippet,
}

/// Why a search failed (the server's fault, never the query's).
#[derive(Debug, thiserror::Error)]
pub enum ChatSearchError {
    #[error(transparent)]
    Index(#[from] MessageIndexError),
    #[error(transparent)]
    Database(#[from] DbErr),
    #[error("the search task failed: {0}")]
    Task(String),
}

/// What the handle and the indexer share: where the indexes are and those open.
struct Shared {
    root: PathBuf,
    stemming: Stemming,
    /// Between two catch-ups with the database (`[search] catch_up_interval_ms`).
    catch_up_every: std::time::Duration,
    db: DatabaseConnection,
    open: DashMap<UserId, Arc<MessageIndex>>,
    /// Changes not queued (the queue full): until a catch-up after the last of them, the
    /// indexer does not take a turn's report for all its chat has (`indexer::Indexer::apply`).
    dropped: std::sync::atomic::AtomicU64,
}

impl Shared {
    fn user_dir(&self, user: &UserId) -> PathBuf {
        self.root.join("users").join(user.as_str())
    }

    /// The user's index for reading: `None` while nothing of theirs was indexed.
    fn reader(&self, user: &UserId) -> Result<Option<Arc<MessageIndex>>, MessageIndexError> {
        if let Some(index) = self.open.get(user) {
            return Ok(Some(index.clone()));
        }
        let Some(index) = MessageIndex::open_existing(&self.user_dir(user), self.stemming)? else {
            return Ok(None);
        };
        Ok(Some(
            self.open
                .entry(user.clone())
                .or_insert_with(|| Arc::new(index))
                .clone(),
        ))
    }
}

/// The handle to search and to report changes; cheap to clone. The indexer stops when the
/// last clone is dropped.
#[derive(Clone)]
pub struct ChatSearch {
    shared: Arc<Shared>,
    changes: mpsc::Sender<Change>,
}

impl ChatSearch {
    /// Starts the indexer (a thread of its own) on the indexes under `data_dir`; it first
    /// catches up with the database.
    pub fn start(
        db: DatabaseConnection,
        data_dir: &std::path::Path,
        stemming: Stemming,
        config: &crate::config::SearchConfig,
    ) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            root: data_dir.join("chat_search"),
            stemming,
            catch_up_every: std::time::Duration::from_millis(config.catch_up_interval_ms.max(100)),
            db,
            open: DashMap::new(),
            dropped: std::sync::atomic::AtomicU64::new(0),
        });
        let (changes, queue) = mpsc::channel(MAX_PENDING_CHANGES);
        indexer::start(shared.clone(), queue)?;
        Ok(Self { shared, changes })
    }

    fn tell(&self, change: Change) {
        if let Err(err) = self.changes.try_send(change) {
            // The catch-up finds stored messages; a search drops deleted ones.
            self.shared
                .dropped
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            tracing::debug!(%err, "chat search: change not queued");
        }
    }

    /// Messages of `chat_id` were stored or removed (a turn, an edit, a pruned branch).
    pub fn chat_changed(&self, chat_id: &ChatId) {
        self.tell(Change::Chat(chat_id.clone()));
    }

    /// A turn stored these messages in `chat_id` (of `owner`, when the writer knows it), and
    /// set the chat's `updated_at` to `updated_at`: they are indexed as they are, without
    /// reading them back, and the next catch-up need not read the chat while that stays its
    /// `updated_at`.
    pub fn messages_stored(
        &self,
        chat_id: &ChatId,
        owner: Option<&UserId>,
        nodes: &[crate::chat::tree::MessageNode],
        updated_at: DateTime<Utc>,
    ) {
        let messages: Vec<index::IndexedMessage> = nodes
            .iter()
            .filter(|node| matches!(node.role, MessageRole::User | MessageRole::Assistant))
            .filter_map(|node| {
                let text = node
                    .content
                    .as_ref()
                    .filter(|text| !text.trim().is_empty())?;
                Some(index::IndexedMessage {
                    id: node.id.clone(),
                    chat_id: chat_id.clone(),
                    role: node.role,
                    text: text.clone(),
                    created_at: node.created_at,
                })
            })
            .collect();
        if messages.is_empty() {
            return;
        }
        self.tell(Change::Stored {
            chat_id: chat_id.clone(),
            owner: owner.cloned(),
            messages,
            updated_at,
        });
    }

    /// `owner`'s chat `chat_id` was deleted.
    pub fn chat_deleted(&self, owner: &UserId, chat_id: &ChatId) {
        self.tell(Change::ChatDeleted {
            owner: owner.clone(),
            chat_id: chat_id.clone(),
        });
    }

    /// The account `user` was deleted (or is about to be, its chats gone).
    pub fn user_deleted(&self, user: &UserId) {
        self.tell(Change::UserDeleted(user.clone()));
    }

    /// `owner`'s chat's owner, for a deletion about to happen.
    pub async fn owner_of(&self, chat_id: &ChatId) -> Result<Option<UserId>, DbErr> {
        chats::Entity::find_by_id(chat_id.clone())
            .select_only()
            .column(chats::Column::UserId)
            .into_tuple()
            .one(&self.shared.db)
            .await
    }

    /// `user`'s messages that best match `query`, best first; only messages still stored, in
    /// chats `user` owns.
    pub async fn search(
        &self,
        user: &UserId,
        query: &SearchQuery,
    ) -> Result<Vec<FoundMessage>, ChatSearchError> {
        let Some(index) = self.shared.reader(user)? else {
            return Ok(Vec::new());
        };
        let (text, depth) = (query.text.clone(), query.limit + SPARE_HITS);
        let hits = tokio::task::spawn_blocking(move || index.search(&text, depth))
            .await
            .map_err(|err| ChatSearchError::Task(err.to_string()))??;
        if hits.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<MessageId> = hits.iter().map(|hit| hit.message_id.clone()).collect();
        let stored: HashMap<MessageId, (ChatId, String)> = messages::Entity::find()
            .select_only()
            .column(messages::Column::Id)
            .column(messages::Column::ChatId)
            .column(chats::Column::Title)
            .inner_join(chats::Entity)
            .filter(messages::Column::Id.is_in(ids))
            .filter(chats::Column::UserId.eq(user.clone()))
            .into_tuple::<(MessageId, ChatId, String)>()
            .all(&self.shared.db)
            .await?
            .into_iter()
            .map(|(id, chat_id, title)| (id, (chat_id, title)))
            .collect();
        let mut found = Vec::with_capacity(query.limit);
        let mut stale = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for hit in hits {
            let Some((chat_id, title)) = stored.get(&hit.message_id) else {
                stale.push(hit.message_id);
                continue;
            };
            if found.len() < query.limit && seen.insert(hit.message_id.clone()) {
                found.push(FoundMessage {
                    chat_id: chat_id.clone(),
                    chat_title: title.clone(),
                    message_id: hit.message_id,
                    role: hit.role,
                    created_at: hit.created_at,
                    score: hit.score,
                    snippet: hit.snippet,
                });
            }
        }
        if !stale.is_empty() {
            self.tell(Change::Stale {
                owner: user.clone(),
                messages: stale,
            });
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_is_trimmed_and_held_to_its_limits() {
        let query = SearchQuery::parse("  lighthouse ", None).unwrap();
        assert_eq!(
            (query.text.as_str(), query.limit),
            ("lighthouse", DEFAULT_RESULTS)
        );
        let codes = [
            SearchQuery::parse(" \n ", None),
            SearchQuery::parse(&"a".repeat(MAX_QUERY_CHARS + 1), None),
            SearchQuery::parse("a", Some(0)),
            SearchQuery::parse("a", Some(MAX_RESULTS + 1)),
        ]
        .map(|parsed| parsed.unwrap_err().code());
        assert_eq!(
            codes,
            [
                "empty_query",
                "query_too_long",
                "invalid_limit",
                "invalid_limit"
            ]
        );
        assert!(SearchQuery::parse(&"é".repeat(MAX_QUERY_CHARS), Some(MAX_RESULTS)).is_ok());
    }
}
