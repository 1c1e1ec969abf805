//! What a stored turn reads before it begins, kept between turns: a chat (for what a turn
//! uses of it: its owner, agent, model and context strategy), the chat's agent with its
//! knowledge bases, the chat's most recent documents, and each user's default agent (what a
//! new chat starts with). So a following turn of a chat reads nothing before its writes, and
//! a new chat's first turn reads nothing before it is stored (issue 48).
//!
//! Nothing kept is ever older than the database, by one generation: every write of what is
//! kept (a chat's settings, an agent or its knowledge bases, a document, a chat deleted) bumps
//! it once it is committed (`Changed`, a guard that bumps as its function returns), and an
//! entry is used only while the generation is the one seen *before* its rows were read. A write
//! that lands while a turn reads makes what it read stale at once. Such writes are rare next to
//! turns (a user edits an agent, uploads a document), and after one each chat reads once more.
//! A turn's own writes (its messages, the active leaf) change nothing kept.
//!
//! Only a process alone on its database keeps entries (SQLite): with several processes on one
//! PostgreSQL another may change an agent or a document and this one would not hear of it, so
//! there every turn reads (`TurnCache::disabled`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use entities::ids::{ChatId, UserId};

use crate::chat::agents::Agent;

/// Bumped by every write of what entries hold, in any part of the process (one for every
/// `TurnCache`: ids are unique, so one cache's entries are only made stale by another's
/// writes, never wrong).
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// Chats (and users) kept at most; past it the cache starts again.
const MAX_ENTRIES: usize = 10_000;

/// Bumps the generation when dropped: made at the start of a function that writes what the
/// cache keeps, so that the bump comes after its transaction committed (or rolled back),
/// whichever way it returns.
#[must_use = "the generation is bumped when the guard is dropped"]
pub struct Changed;

impl Drop for Changed {
    fn drop(&mut self) {
        GENERATION.fetch_add(1, Ordering::SeqCst);
    }
}

/// The generation now: take it before reading what is to be kept.
pub fn generation() -> u64 {
    GENERATION.load(Ordering::SeqCst)
}

/// What a chat's turns read, as it was at `generation`.
#[derive(Clone)]
pub struct ChatEntry {
    pub chat: entities::chats::Model,
    /// The chat's agent, once a turn resolved it.
    pub agent: Option<Agent>,
    /// The chat's most recent documents (and whether it has searchable ones), once read.
    pub documents: Option<(Vec<entities::documents::Model>, bool)>,
}

struct Stamped<T> {
    generation: u64,
    value: T,
}

#[derive(Default)]
struct Entries {
    chats: HashMap<ChatId, Stamped<ChatEntry>>,
    default_agents: HashMap<UserId, Stamped<Agent>>,
}

/// The process's kept turn reads (cheap to clone: one shared map).
#[derive(Clone)]
pub struct TurnCache {
    entries: Option<Arc<Mutex<Entries>>>,
}

impl TurnCache {
    /// A cache that keeps entries (a process alone on its database).
    pub fn enabled() -> Self {
        Self {
            entries: Some(Arc::default()),
        }
    }

    /// A cache that keeps nothing: every turn reads.
    pub fn disabled() -> Self {
        Self { entries: None }
    }

    fn with<R>(&self, f: impl FnOnce(&mut Entries) -> R) -> Option<R> {
        let entries = self.entries.as_ref()?;
        let mut entries = entries.lock().unwrap_or_else(PoisonError::into_inner);
        Some(f(&mut entries))
    }

    /// `owner`'s chat `chat_id` as kept, if it still is current.
    pub fn chat(&self, owner: &UserId, chat_id: &ChatId) -> Option<ChatEntry> {
        self.read(owner, chat_id, |entry| Some(entry.clone()))
    }

    /// What `pick` takes of `owner`'s kept chat `chat_id`, if it still is current (without
    /// copying the rest of the entry).
    pub fn read<R>(
        &self,
        owner: &UserId,
        chat_id: &ChatId,
        pick: impl FnOnce(&ChatEntry) -> Option<R>,
    ) -> Option<R> {
        let now = generation();
        self.with(|entries| {
            entries
                .chats
                .get(chat_id)
                .filter(|kept| kept.generation == now && &kept.value.chat.user_id == owner)
                .and_then(|kept| pick(&kept.value))
        })
        .flatten()
    }

    /// Keeps `chat` as read at `generation` (taken before it was read).
    pub fn keep_chat(&self, generation: u64, chat: entities::chats::Model) {
        self.update_chat(generation, chat.id.clone(), |entry| match entry {
            Some(entry) => entry.chat = chat,
            None => {
                *entry = Some(ChatEntry {
                    chat,
                    agent: None,
                    documents: None,
                })
            }
        });
    }

    /// Keeps a chat just made as it was written at `generation` (taken before anything of it
    /// was read): its row, no documents (nobody knew its id) and, when given, its agent.
    pub fn keep_new_chat(
        &self,
        generation: u64,
        chat: entities::chats::Model,
        agent: Option<Agent>,
    ) {
        self.update_chat(generation, chat.id.clone(), |entry| {
            *entry = Some(ChatEntry {
                chat,
                agent,
                documents: Some((Vec::new(), false)),
            })
        });
    }

    /// Keeps `agent` as the agent of the kept chat `chat_id`, read at `generation`.
    pub fn keep_agent(&self, generation: u64, chat_id: &ChatId, agent: Agent) {
        self.update_chat(generation, chat_id.clone(), |entry| {
            if let Some(entry) = entry {
                entry.agent = Some(agent);
            }
        });
    }

    /// Keeps the kept chat `chat_id`'s recent documents, read at `generation`.
    pub fn keep_documents(
        &self,
        generation: u64,
        chat_id: &ChatId,
        documents: Vec<entities::documents::Model>,
        searchable: bool,
    ) {
        self.update_chat(generation, chat_id.clone(), |entry| {
            if let Some(entry) = entry {
                entry.documents = Some((documents, searchable));
            }
        });
    }

    /// Changes the entry of `chat_id` if it is at `generation` (or makes one, when `update`
    /// fills an empty one); an entry of another generation is dropped first.
    fn update_chat(
        &self,
        generation: u64,
        chat_id: ChatId,
        update: impl FnOnce(&mut Option<ChatEntry>),
    ) {
        if self::generation() != generation {
            return;
        }
        self.with(|entries| {
            if entries.chats.len() >= MAX_ENTRIES && !entries.chats.contains_key(&chat_id) {
                entries.chats.clear();
            }
            let mut entry = entries
                .chats
                .remove(&chat_id)
                .filter(|kept| kept.generation == generation)
                .map(|kept| kept.value);
            update(&mut entry);
            if let Some(value) = entry {
                entries.chats.insert(chat_id, Stamped { generation, value });
            }
        });
    }

    /// `user`'s default agent as kept, if it still is current.
    pub fn default_agent(&self, user: &UserId) -> Option<Agent> {
        let now = generation();
        self.with(|entries| {
            entries
                .default_agents
                .get(user)
                .filter(|kept| kept.generation == now)
                .map(|kept| kept.value.clone())
        })
        .flatten()
    }

    /// Keeps `user`'s default agent, read at `generation`.
    pub fn keep_default_agent(&self, generation: u64, user: &UserId, agent: Agent) {
        if self::generation() != generation {
            return;
        }
        self.with(|entries| {
            if entries.default_agents.len() >= MAX_ENTRIES {
                entries.default_agents.clear();
            }
            entries.default_agents.insert(
                user.clone(),
                Stamped {
                    generation,
                    value: agent,
                },
            );
        });
    }

    /// Forgets a chat (deleted).
    pub fn forget(&self, chat_id: &ChatId) {
        self.with(|entries| entries.chats.remove(chat_id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chat(id: &str, owner: &str) -> entities::chats::Model {
        let now = chrono::Utc::now();
        entities::chats::Model {
            id: ChatId::from_string(id),
            user_id: UserId::from_string(owner),
            agent_id: None,
            title: "t".into(),
            active_leaf_id: None,
            ephemeral: false,
            embedder: None,
            context_strategy: None,
            history_summary: None,
            metadata: None,
            is_vector_store: false,
            model: None,
            pinned_at: None,
            archived_at: None,
            folder_id: None,
            created_at: now,
            updated_at: now,
        }
    }

    #[test]
    fn a_kept_chat_is_served_to_its_owner_until_anything_kept_changes() {
        let cache = TurnCache::enabled();
        let owner = UserId::from_string("usr_a");
        let id = ChatId::from_string("chat_kept");
        // Other tests of this process write too: tried until no write came between.
        let mut served = false;
        for _ in 0..1_000 {
            let at = generation();
            cache.keep_chat(at, chat("chat_kept", "usr_a"));
            served = cache.chat(&owner, &id).is_some();
            if served || generation() == at {
                break;
            }
        }
        assert!(served, "kept at the current generation, yet not served");
        // Not to anyone else.
        assert!(cache.chat(&UserId::from_string("usr_b"), &id).is_none());
        drop(Changed);
        assert!(cache.chat(&owner, &id).is_none(), "a write made it stale");
    }

    #[test]
    fn what_was_read_before_a_write_is_not_kept() {
        let cache = TurnCache::enabled();
        let owner = UserId::from_string("usr_a");
        let before = generation();
        // A write lands between the read of the generation and the keeping.
        drop(Changed);
        cache.keep_chat(before, chat("chat_raced", "usr_a"));
        assert!(
            cache
                .chat(&owner, &ChatId::from_string("chat_raced"))
                .is_none()
        );
    }

    #[test]
    fn a_disabled_cache_keeps_nothing() {
        let cache = TurnCache::disabled();
        cache.keep_chat(generation(), chat("chat_off", "usr_a"));
        assert!(
            cache
                .chat(
                    &UserId::from_string("usr_a"),
                    &ChatId::from_string("chat_off")
                )
                .is_none()
        );
    }
}
