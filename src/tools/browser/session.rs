//! One browser session: a headless Chromium process of its own, with a profile directory of
//! its own (deleted when it closes), one page whose every request goes through the SSRF gate
//! (`interception`), downloads denied. It knows whether its Chromium is still there; it does
//! not know about chats' caps or idle time (`pool`).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use chromiumoxide::Page;
use chromiumoxide::browser::{Browser, BrowserConfig as LaunchConfig};
use chromiumoxide::cdp::browser_protocol::browser::{
    SetDownloadBehaviorBehavior, SetDownloadBehaviorParams,
};
use chromiumoxide::handler::viewport::Viewport;
use entities::ids::ChatId;
use futures_util::StreamExt;

use super::interception::{Gate, Refusals};
use super::{BrowserError, BrowserSessionId};
use crate::config::BrowserConfig;

/// How long Chromium may take to start and print its DevTools address.
const LAUNCH_TIMEOUT: Duration = Duration::from_secs(20);
/// How much longer one DevTools command may wait than the action it is part of: the action's
/// own timeout ends it first, as a `timeout` error result rather than a failed command.
const COMMAND_TIMEOUT_MARGIN: Duration = Duration::from_secs(5);
/// How often a running action looks whether its Chromium is still there.
const DEATH_POLL: Duration = Duration::from_millis(250);
/// Attempts at deleting a closed session's profile, and the pause between them: enough for
/// Chromium's helper processes to end after its own.
const PROFILE_REMOVAL_ATTEMPTS: u32 = 10;
const PROFILE_REMOVAL_PAUSE: Duration = Duration::from_millis(200);
/// How long a closing Chromium is given before it is killed.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(3);
/// Chromium's switches beyond chromiumoxide's defaults (named without their `--`): its own
/// network goes to a proxy that does not exist (only requests the Fetch domain pauses, answered
/// by Colloquy, get anywhere; loopback is not exempt), no DNS prefetching, no site isolation (so
/// every frame is the one page's, and paused with it), no upgrade of http to https behind the
/// guard's back.
const SWITCHES: [(&str, &str); 4] = [
    ("proxy-server", "http://127.0.0.1:9"),
    ("proxy-bypass-list", "<-loopback>"),
    (
        "disable-features",
        "IsolateOrigins,site-per-process,HttpsUpgrades,HttpsFirstBalancedModeAutoEnable",
    ),
    ("disable-gpu", ""),
];

/// The Chromium processes this process started and has not closed: killed when this process
/// exits (an `atexit` handler), since a server that returns from `main` (or a test binary that
/// ends) drops no session, and a Chromium left running would outlive it.
static RUNNING: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());
static AT_EXIT: std::sync::Once = std::sync::Once::new();

extern "C" fn kill_running() {
    let running = RUNNING.lock().map(|pids| pids.clone()).unwrap_or_default();
    for pid in running {
        if let Ok(pid) = libc::pid_t::try_from(pid) {
            // SAFETY: kill has no memory effects; the pid is a Chromium this process started.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

fn remember(pid: u32) {
    AT_EXIT.call_once(|| {
        // SAFETY: registers a plain function with no arguments, as atexit requires.
        unsafe { libc::atexit(kill_running) };
    });
    if let Ok(mut running) = RUNNING.lock() {
        running.push(pid);
    }
}

fn forget(pid: u32) {
    if let Ok(mut running) = RUNNING.lock() {
        running.retain(|p| *p != pid);
    }
}

/// Ends a Chromium whose session could not be set up.
async fn abandon(browser: &mut Browser, pid: Option<u32>) {
    let _ = browser.kill().await;
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, browser.wait()).await;
    if let Some(pid) = pid {
        forget(pid);
    }
}

/// A live session.
pub struct BrowserSession {
    pub id: BrowserSessionId,
    pub chat_id: ChatId,
    pub page: Page,
    pub refusals: Refusals,
    browser: tokio::sync::Mutex<Browser>,
    alive: Arc<AtomicBool>,
    profile: PathBuf,
    pid: Option<u32>,
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
    ) -> Result<Self, BrowserError> {
        let profile = profiles.join(id.as_str());
        tokio::fs::create_dir_all(&profile)
            .await
            .map_err(|err| BrowserError::Launch(format!("cannot make its profile: {err}")))?;
        match Self::launch(id, chat_id, chromium, profile.clone(), config, gate).await {
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
        config: &BrowserConfig,
        gate: &Gate,
    ) -> Result<Self, BrowserError> {
        let mut builder = LaunchConfig::builder()
            .chrome_executable(chromium)
            .user_data_dir(&profile)
            .launch_timeout(LAUNCH_TIMEOUT)
            .request_timeout(
                Duration::from_secs(config.action_timeout_secs) + COMMAND_TIMEOUT_MARGIN,
            )
            .respect_https_errors()
            .viewport(Viewport {
                width: config.viewport_width,
                height: config.viewport_height,
                device_scale_factor: Some(1.0),
                emulating_mobile: false,
                is_landscape: true,
                has_touch: false,
            })
            .window_size(config.viewport_width, config.viewport_height)
            .arg("dns-prefetch-disable");
        for (key, value) in SWITCHES {
            builder = match value {
                "" => builder.arg(key),
                value => builder.arg((key, value)),
            };
        }
        // Chromium's sandbox refuses to start as root (containers); it runs without it there.
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } == 0 {
            builder = builder.no_sandbox();
        }
        let launch = builder.build().map_err(BrowserError::Launch)?;
        let (mut browser, mut handler) = Browser::launch(launch)
            .await
            .map_err(|err| BrowserError::Launch(err.to_string()))?;
        let alive = Arc::new(AtomicBool::new(true));
        let flag = Arc::clone(&alive);
        // The connection's events: when they end, Chromium is gone.
        tokio::spawn(async move {
            while handler.next().await.is_some() {}
            flag.store(false, Ordering::SeqCst);
        });
        let pid = browser.get_mut_child().and_then(|child| child.inner.id());
        if let Some(pid) = pid {
            remember(pid);
        }
        let ready = async {
            browser
                .execute(SetDownloadBehaviorParams::new(
                    SetDownloadBehaviorBehavior::Deny,
                ))
                .await?;
            let page = browser.new_page("about:blank").await?;
            chromiumoxide::Result::Ok(page)
        };
        let ready: chromiumoxide::Result<Page> = ready.await;
        let page = match ready {
            Ok(page) => page,
            Err(err) => {
                abandon(&mut browser, pid).await;
                return Err(BrowserError::Launch(err.to_string()));
            }
        };
        let refusals = Refusals::default();
        if let Err(err) = gate.intercept(&page, refusals.clone()).await {
            abandon(&mut browser, pid).await;
            return Err(BrowserError::Launch(err.to_string()));
        }
        Ok(Self {
            id,
            chat_id,
            page,
            refusals,
            browser: tokio::sync::Mutex::new(browser),
            alive,
            profile,
            pid,
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
        let exited = match self.browser.try_lock() {
            Ok(mut browser) => matches!(browser.try_wait(), Ok(Some(_)) | Err(_)),
            Err(_) => false,
        };
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

    /// The Chromium process's id (for diagnostics and tests).
    pub fn pid(&self) -> Option<u32> {
        self.pid
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
        let _ = browser.kill().await;
        let _ = tokio::time::timeout(CLOSE_TIMEOUT, browser.wait()).await;
        if let Some(pid) = self.pid {
            forget(pid);
        }
        self.alive.store(false, Ordering::SeqCst);
        remove_profile(&self.profile).await;
    }
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
