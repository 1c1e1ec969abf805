//! One browser session: a headless Chromium process of its own, with a profile directory of
//! its own (deleted when it closes), one page whose every request goes through the SSRF gate
//! (`interception`), downloads denied, its memory bounded (`limits`), started so that it dies
//! with the server (`process`), with the command line `command_line` gives it. It knows whether its Chromium is still there and whether its
//! page crashed; it does not know about chats' caps or idle time (`pool`).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use chromiumoxide::Page;
use chromiumoxide::browser::Browser;
use chromiumoxide::cdp::browser_protocol::browser::{
    SetDownloadBehaviorBehavior, SetDownloadBehaviorParams,
};
use chromiumoxide::cdp::browser_protocol::{inspector, target};
use entities::ids::ChatId;
use futures_util::StreamExt;

use super::cgroup::SessionCgroup;
use super::command_line::{command_line, handler_config};
use super::interception::{Gate, Refusals};
use super::limits::{self, Crash};
use super::process::ChromiumProcess;
use super::sink::{Bypasses, Sink};
use super::{BrowserError, BrowserSessionId};
use crate::config::BrowserConfig;

/// How long Chromium may take to start and print its DevTools address.
const LAUNCH_TIMEOUT: Duration = Duration::from_secs(20);
/// How often a running action looks whether its Chromium is still there.
const DEATH_POLL: Duration = Duration::from_millis(250);
/// Attempts at deleting a closed session's profile, and the pause between them: enough for
/// Chromium's helper processes to end after its own.
const PROFILE_REMOVAL_ATTEMPTS: u32 = 10;
const PROFILE_REMOVAL_PAUSE: Duration = Duration::from_millis(200);
/// How long a closing Chromium is given before it is killed.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(3);
/// A live session.
pub struct BrowserSession {
    pub id: BrowserSessionId,
    pub chat_id: ChatId,
    pub page: Page,
    pub refusals: Refusals,
    browser: tokio::sync::Mutex<Browser>,
    process: ChromiumProcess,
    _sink: Sink,
    alive: Arc<AtomicBool>,
    crash: Crash,
    profile: PathBuf,
    last_used: std::sync::Mutex<Instant>,
    /// One action at a time: a page is one thing to look at.
    pub busy: tokio::sync::Mutex<()>,
}

impl BrowserSession {
    /// Starts Chromium with a fresh profile under `profiles` and opens its page.
    pub async fn open(
        id: BrowserSessionId,
        chat_id: ChatId,
        chromium: &std::path::Path,
        profiles: &std::path::Path,
        config: &BrowserConfig,
        gate: &Gate,
        bypasses: &Bypasses,
    ) -> Result<Self, BrowserError> {
        let profile = profiles.join(id.as_str());
        tokio::fs::create_dir_all(&profile)
            .await
            .map_err(|err| BrowserError::Launch(format!("cannot make its profile: {err}")))?;
        let sink = Sink::open(&id, bypasses)
            .await
            .map_err(|err| BrowserError::Launch(format!("cannot open its proxy sink: {err}")))?;
        match Self::launch(id, chat_id, chromium, profile.clone(), sink, config, gate).await {
            Ok(session) => Ok(session),
            Err(err) => {
                let _ = tokio::fs::remove_dir_all(&profile).await;
                Err(err)
            }
        }
    }

    async fn launch(
        id: BrowserSessionId,
        chat_id: ChatId,
        chromium: &std::path::Path,
        profile: PathBuf,
        sink: Sink,
        config: &BrowserConfig,
        gate: &Gate,
    ) -> Result<Self, BrowserError> {
        let args = command_line(&profile, &sink, config);
        let cgroup = SessionCgroup::make(&id, config.max_memory_mb);
        let (process, address) = ChromiumProcess::start(chromium, &args, cgroup, LAUNCH_TIMEOUT)
            .await
            .map_err(BrowserError::Launch)?;
        let (browser, mut handler) = Browser::connect_with_config(address, handler_config(config))
            .await
            .map_err(|err| BrowserError::Launch(err.to_string()))?;
        let alive = Arc::new(AtomicBool::new(true));
        let flag = Arc::clone(&alive);
        // The connection's events: when they end, Chromium is gone.
        tokio::spawn(async move {
            while handler.next().await.is_some() {}
            flag.store(false, Ordering::SeqCst);
        });
        let crash = Crash::default();
        let refusals = Refusals::default();
        // A failure here drops `process`, which kills its process group.
        let page = ready(&browser, gate, &refusals, &crash)
            .await
            .map_err(|err| BrowserError::Launch(err.to_string()))?;
        limits::watch(
            process.pid(),
            config.max_memory_mb,
            Arc::clone(&alive),
            crash.clone(),
        );
        Ok(Self {
            id,
            chat_id,
            page,
            refusals,
            browser: tokio::sync::Mutex::new(browser),
            process,
            _sink: sink,
            alive,
            crash,
            profile,
            last_used: std::sync::Mutex::new(Instant::now()),
            busy: tokio::sync::Mutex::new(()),
        })
    }

    /// Whether its Chromium still answers.
    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst)
    }

    /// Whether its Chromium has exited (looked at now; a session being closed is taken as
    /// alive until it is).
    pub fn exited(&self) -> bool {
        if !self.is_alive() {
            return true;
        }
        let exited = self.process.exited();
        if exited {
            self.alive.store(false, Ordering::SeqCst);
        }
        exited
    }

    /// Resolves when its Chromium has exited (looked at every `DEATH_POLL`): an action races
    /// it, so a command Chromium will never answer does not wait out the action's timeout.
    pub async fn died(&self) {
        while !self.exited() {
            tokio::time::sleep(DEATH_POLL).await;
        }
    }

    /// Resolves when its page has crashed (looked at every `DEATH_POLL`), with why: an action
    /// races it as it races `died`.
    pub async fn crash_noticed(&self) -> String {
        loop {
            if let Some(why) = self.crashed() {
                return why;
            }
            tokio::time::sleep(DEATH_POLL).await;
        }
    }

    /// Runs `work` (an action on the page) within `timeout`, ending it early when Chromium dies
    /// (`SessionEnded`) or the page crashes (`PageCrashed`); the session counts as used.
    pub async fn within<T>(
        &self,
        timeout: Duration,
        work: impl std::future::Future<Output = Result<T, BrowserError>>,
    ) -> Result<T, BrowserError> {
        let result = tokio::select! {
            done = tokio::time::timeout(timeout, work) => {
                done.map_err(|_| BrowserError::Timeout(timeout.as_secs()))?
            }
            () = self.died() => Err(BrowserError::SessionEnded(self.id.to_string())),
            why = self.crash_noticed() => Err(self.crash_error(why)),
        };
        self.touch();
        result
    }

    /// The error telling that its page crashed, and why.
    pub fn crash_error(&self, why: String) -> BrowserError {
        BrowserError::PageCrashed {
            session: self.id.to_string(),
            why,
        }
    }

    /// The Chromium process's id (for diagnostics and tests).
    pub fn pid(&self) -> Option<u32> {
        Some(self.process.pid())
    }

    /// Why its page crashed, if it did (its renderer died, or a process passed the memory
    /// bound): the session is of no more use.
    pub fn crashed(&self) -> Option<String> {
        self.crash.reason()
    }

    pub fn touch(&self) {
        *self.last_used.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    }

    pub fn idle_for(&self) -> Duration {
        self.last_used
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .elapsed()
    }

    /// Ends Chromium (politely, then by force) and deletes the profile.
    pub async fn close(&self) {
        let mut browser = self.browser.lock().await;
        if self.is_alive()
            && tokio::time::timeout(CLOSE_TIMEOUT, browser.close())
                .await
                .is_err()
        {
            tracing::debug!(session = %self.id, "Chromium did not close in time; killing it");
        }
        drop(browser);
        self.process.kill_within(CLOSE_TIMEOUT).await;
        self.alive.store(false, Ordering::SeqCst);
        remove_profile(&self.profile).await;
    }
}

/// Readies a new Chromium: downloads denied, its page opened with every request through
/// `gate`, and a crash of the page recorded in `crash`.
async fn ready(
    browser: &Browser,
    gate: &Gate,
    refusals: &Refusals,
    crash: &Crash,
) -> chromiumoxide::Result<Page> {
    browser
        .execute(SetDownloadBehaviorParams::new(
            SetDownloadBehaviorBehavior::Deny,
        ))
        .await?;
    let page = browser.new_page("about:blank").await?;
    watch_crashes(browser, &page, crash).await?;
    gate.intercept(&page, refusals.clone()).await?;
    Ok(page)
}

/// Records in `crash` when `page`'s renderer dies: the page's own `Inspector.targetCrashed`,
/// or the browser's `Target.targetCrashed` naming the page.
async fn watch_crashes(browser: &Browser, page: &Page, crash: &Crash) -> chromiumoxide::Result<()> {
    let mut inspected = page
        .event_listener::<inspector::EventTargetCrashed>()
        .await?;
    page.execute(inspector::EnableParams::default()).await?;
    let mut targets = browser
        .event_listener::<target::EventTargetCrashed>()
        .await?;
    let page_target = page.target_id().clone();
    let crash = crash.clone();
    tokio::spawn(async move {
        let crashed = async {
            loop {
                tokio::select! {
                    event = inspected.next() => return event.is_some(),
                    event = targets.next() => match event {
                        Some(event) if event.target_id == page_target => return true,
                        Some(_) => {}
                        None => return false,
                    },
                }
            }
        };
        if crashed.await {
            crash.record("the page's renderer crashed (it may have run out of memory)");
        }
    });
    Ok(())
}

/// Deletes a closed session's profile. Chromium's helper processes may still be writing into
/// it a moment after the browser's own process ended, so a failed attempt is tried again.
async fn remove_profile(profile: &std::path::Path) {
    for attempt in 1..=PROFILE_REMOVAL_ATTEMPTS {
        match tokio::fs::remove_dir_all(profile).await {
            Ok(()) => return,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return,
            Err(err) if attempt == PROFILE_REMOVAL_ATTEMPTS => {
                tracing::warn!(profile = %profile.display(), %err, "could not delete a browser profile");
            }
            Err(_) => tokio::time::sleep(PROFILE_REMOVAL_PAUSE).await,
        }
    }
}
