//! `Browsers`: every open browser session, by id and by owning chat. It opens sessions within
//! the caps (per chat, per server), hands a chat only its own, forgets a session whose
//! Chromium died, and sweeps: sessions idle past `browser.idle_timeout_secs` or whose chat is
//! gone are closed, and a deleted chat's screenshots are removed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use entities::ids::ChatId;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QuerySelect};

use super::interception::Gate;
use super::profiles::ProcessProfiles;
use super::screenshots::Screenshots;
use super::session::BrowserSession;
use super::sink::Bypasses;
use super::{BrowserError, BrowserSessionId};
use crate::config::{BrowserConfig, Config};
use crate::ssrf::{AllowList, Guard, HostResolver, SystemResolver};
use crate::storage::Storage;

/// Names Chromium goes by on `PATH`, looked for in this order.
const CHROMIUM_NAMES: [&str; 4] = [
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
];
/// Closed sessions remembered, for a navigate that names one: the latest ones.
const REMEMBERED_ENDED: usize = 256;
/// Longest pause between two sweeps: idle sessions close within this much of their time.
const MAX_SWEEP_EVERY: Duration = Duration::from_secs(30);

/// The server's browser sessions.
#[derive(Clone)]
pub struct Browsers {
    inner: Arc<Inner>,
}

struct Inner {
    config: BrowserConfig,
    /// The executable and this process's profiles folder, or why there are none.
    chromium: Result<(PathBuf, ProcessProfiles), String>,
    gate: Gate,
    screenshots: Screenshots,
    /// Requests that reached a session's sink instead of the interception (none should).
    bypasses: Bypasses,
    state: Mutex<Sessions>,
}

#[derive(Default)]
struct Sessions {
    open: HashMap<BrowserSessionId, Arc<BrowserSession>>,
    /// Sessions being opened, by chat: counted against the caps before Chromium starts.
    starting: Vec<ChatId>,
    /// Sessions closed lately (idle, dead), so a navigate naming one opens a new one.
    ended: Vec<(BrowserSessionId, ChatId)>,
}

impl Sessions {
    fn count_for(&self, chat: &ChatId) -> usize {
        self.open.values().filter(|s| &s.chat_id == chat).count()
            + self.starting.iter().filter(|c| *c == chat).count()
    }

    fn total(&self) -> usize {
        self.open.len() + self.starting.len()
    }
}

impl Browsers {
    /// The sessions `config` allows, with names resolved by the system; screenshots are kept
    /// in `storage`.
    pub fn new(config: &Config, storage: Storage) -> Result<Self, BrowserError> {
        Self::with_resolver(config, storage, Arc::new(SystemResolver))
    }

    /// With names resolved by `resolver` (tests map names to any address).
    pub fn with_resolver(
        config: &Config,
        storage: Storage,
        resolver: Arc<dyn HostResolver>,
    ) -> Result<Self, BrowserError> {
        let browser = config.browser.clone();
        let allow = AllowList::parse(&config.tools.ssrf_allow_list)
            .map_err(|err| BrowserError::Unavailable(err.to_string()))?;
        let gate = Gate::new(
            Arc::new(Guard::new(allow)),
            resolver,
            Duration::from_secs(browser.action_timeout_secs),
            browser.max_response_bytes,
        )
        .map_err(|err| BrowserError::Unavailable(err.to_string()))?;
        let chromium = if browser.enabled {
            find_chromium(browser.chromium_path.as_deref())
        } else {
            Err("browser.enabled is false".to_string())
        };
        // This process's own profiles folder (another process sharing the data directory
        // keeps its own), made only when sessions can be opened.
        let chromium = chromium.and_then(|path| {
            ProcessProfiles::claim(&config.data_dir.join("browser"))
                .map(|profiles| (path, profiles))
                .map_err(|err| format!("cannot make the browser profiles folder: {err}"))
        });
        Ok(Self {
            inner: Arc::new(Inner {
                screenshots: Screenshots::new(storage, browser.max_screenshot_bytes),
                config: browser,
                chromium,
                gate,
                bypasses: Bypasses::default(),
                state: Mutex::new(Sessions::default()),
            }),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Sessions> {
        self.inner
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Why the tools are not offered, if they are not.
    pub fn unavailable(&self) -> Option<&str> {
        self.inner.chromium.as_ref().err().map(String::as_str)
    }

    pub fn config(&self) -> &BrowserConfig {
        &self.inner.config
    }

    pub fn gate(&self) -> &Gate {
        &self.inner.gate
    }

    pub fn screenshots(&self) -> &Screenshots {
        &self.inner.screenshots
    }

    /// This process's profiles folder, when sessions can be opened: a session's profile is
    /// the folder named by its id.
    pub fn profiles(&self) -> Option<&Path> {
        self.inner
            .chromium
            .as_ref()
            .ok()
            .map(|(_, profiles)| profiles.dir())
    }

    /// Opens a session for `chat`, within the caps.
    pub async fn open(&self, chat: &ChatId) -> Result<Arc<BrowserSession>, BrowserError> {
        let (chromium, profiles) = self
            .inner
            .chromium
            .as_ref()
            .map_err(|why| BrowserError::Unavailable(why.clone()))?;
        {
            let mut state = self.state();
            let per_chat = self.inner.config.max_sessions_per_chat;
            if state.count_for(chat) >= per_chat {
                return Err(BrowserError::ChatCap { max: per_chat });
            }
            let max = self.inner.config.max_sessions;
            if state.total() >= max {
                return Err(BrowserError::ServerCap { max });
            }
            state.starting.push(chat.clone());
        }
        let id = BrowserSessionId::generate();
        let opened = BrowserSession::open(
            id.clone(),
            chat.clone(),
            chromium,
            profiles.dir(),
            &self.inner.config,
            &self.inner.gate,
            &self.inner.bypasses,
        )
        .await;
        let mut state = self.state();
        if let Some(at) = state.starting.iter().position(|c| c == chat) {
            state.starting.remove(at);
        }
        let session = Arc::new(opened?);
        state.open.insert(id, Arc::clone(&session));
        tracing::info!(session = %session.id, chat = %chat, "browser session opened");
        Ok(session)
    }

    /// `chat`'s session `id`: another chat's is unknown to it. A session whose Chromium died is
    /// closed and reported as ended.
    pub async fn get(&self, chat: &ChatId, id: &str) -> Result<Arc<BrowserSession>, BrowserError> {
        let unknown = || BrowserError::UnknownSession(id.to_string());
        let id = BrowserSessionId::parse(id).ok_or_else(unknown)?;
        let session = self
            .state()
            .open
            .get(&id)
            .filter(|s| &s.chat_id == chat)
            .cloned()
            .ok_or_else(unknown)?;
        if session.exited() {
            self.close(&session.id).await;
            return Err(BrowserError::SessionEnded(id.to_string()));
        }
        if let Some(why) = session.crashed() {
            self.close(&session.id).await;
            return Err(session.crash_error(why));
        }
        session.touch();
        Ok(session)
    }

    /// Closes a session (no-op when it is not open).
    pub async fn close(&self, id: &BrowserSessionId) {
        let session = {
            let mut state = self.state();
            let session = state.open.remove(id);
            if let Some(session) = &session {
                if state.ended.len() == REMEMBERED_ENDED {
                    state.ended.remove(0);
                }
                state.ended.push((id.clone(), session.chat_id.clone()));
            }
            session
        };
        if let Some(session) = session {
            session.close().await;
            tracing::info!(session = %id, "browser session closed");
        }
    }

    /// Closes a deleted chat's sessions and removes its screenshots (the sweep would, later).
    pub async fn forget(&self, chat: &ChatId) {
        for id in self.sessions_of(chat) {
            self.close(&id).await;
        }
        self.inner.screenshots.forget(chat).await;
    }

    /// Whether `id` was one of `chat`'s sessions, closed since.
    pub fn ended(&self, chat: &ChatId, id: &str) -> bool {
        self.state()
            .ended
            .iter()
            .any(|(ended, owner)| ended.as_str() == id && owner == chat)
    }

    /// The open sessions of `chat`.
    pub fn sessions_of(&self, chat: &ChatId) -> Vec<BrowserSessionId> {
        self.state()
            .open
            .values()
            .filter(|s| &s.chat_id == chat)
            .map(|s| s.id.clone())
            .collect()
    }

    /// The requests (their first line) that went round the interception to a session's proxy
    /// sink: none should (diagnostics and tests).
    pub fn bypassed(&self) -> Vec<String> {
        self.inner.bypasses.list()
    }

    /// The Chromium process of a session (diagnostics and tests).
    pub fn pid_of(&self, id: &BrowserSessionId) -> Option<u32> {
        self.state().open.get(id).and_then(|s| s.pid())
    }

    /// Closes sessions idle too long, dead, or whose chat is gone; removes the screenshots
    /// of chats that are gone. Returns how many sessions were closed.
    pub async fn sweep(&self, db: &DatabaseConnection) -> usize {
        let idle = Duration::from_secs(self.inner.config.idle_timeout_secs);
        let sessions: Vec<Arc<BrowserSession>> = self.state().open.values().cloned().collect();
        let chats: Vec<ChatId> = sessions.iter().map(|s| s.chat_id.clone()).collect();
        let existing = existing_chats(db, chats).await;
        let mut closed = 0;
        for session in sessions {
            let gone = existing
                .as_ref()
                .is_ok_and(|existing| !existing.contains(&session.chat_id));
            if gone || session.exited() || session.idle_for() >= idle {
                self.close(&session.id).await;
                closed += 1;
            }
        }
        self.inner.screenshots.sweep(db).await;
        closed
    }

    /// How often idle sessions are looked for: half the idle time, within 1-30 s.
    pub fn sweep_period(&self) -> Duration {
        Duration::from_secs(self.inner.config.idle_timeout_secs / 2)
            .clamp(Duration::from_secs(1), MAX_SWEEP_EVERY)
    }
}

/// Which of `chats` still exist; an error leaves every session as it is.
pub(super) async fn existing_chats(
    db: &DatabaseConnection,
    chats: Vec<ChatId>,
) -> Result<Vec<ChatId>, sea_orm::DbErr> {
    if chats.is_empty() {
        return Ok(Vec::new());
    }
    entities::chats::Entity::find()
        .select_only()
        .column(entities::chats::Column::Id)
        .filter(entities::chats::Column::Id.is_in(chats))
        .into_tuple::<ChatId>()
        .all(db)
        .await
}

/// The Chromium executable: `configured` if it is a file, else the first of
/// `CHROMIUM_NAMES` on `PATH`.
fn find_chromium(configured: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(path) = configured {
        return if path.is_file() {
            Ok(path.to_path_buf())
        } else {
            Err(format!(
                "browser.chromium_path {} is not a file",
                path.display()
            ))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in CHROMIUM_NAMES {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    Err(format!(
        "no Chromium found on PATH (looked for {}); set browser.chromium_path",
        CHROMIUM_NAMES.join(", ")
    ))
}
