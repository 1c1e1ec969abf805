//! The `[browser]` section: where Chromium is, and the limits on the browser sessions
//! `browser_action` and `analyze_page` drive (how many, how long idle, how long an action,
//! how large a screenshot or a response a page loads).

use std::path::PathBuf;

use serde::Deserialize;

/// The browser tools' Chromium and limits.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct BrowserConfig {
    /// Offer the browser tools at all (when Chromium is found).
    pub enabled: bool,
    /// The Chromium (or Chrome) executable; `None` looks for `chromium`,
    /// `chromium-browser`, `google-chrome` on `PATH`.
    pub chromium_path: Option<PathBuf>,
    /// Seconds a session may sit unused before it is closed (its Chromium ends and its
    /// profile is deleted): a session holds a whole browser process.
    pub idle_timeout_secs: u64,
    /// Sessions one chat may hold open at once.
    pub max_sessions_per_chat: usize,
    /// Sessions the whole server may hold open at once: each is a Chromium process of its
    /// own (a few hundred MB of memory).
    pub max_sessions: usize,
    /// Seconds one action (a navigation with the page's load, a click, a screenshot…) may
    /// take before it is an error result.
    pub action_timeout_secs: u64,
    /// Longest `wait {ms}` an action may ask for, in milliseconds (and how long
    /// `wait {selector}` waits for the element at most).
    pub max_wait_ms: u64,
    /// Largest screenshot stored, in bytes (a full-page PNG of a long page grows large).
    pub max_screenshot_bytes: usize,
    /// Largest response body a page may load through the SSRF guard, per request.
    pub max_response_bytes: usize,
    /// Most memory (resident, in MB) any one of a session's Chromium processes may use: a
    /// page's JavaScript heap is capped below it, and a process past it is killed, its page
    /// reported crashed (`page_crashed`) and its session closed.
    pub max_memory_mb: u64,
    /// Whether the model is shown each screenshot (an image after the tool results) besides
    /// the `[image displayed above]` its context holds either way. Unset (the default): per
    /// model — shown until the model's server says it cannot read images, then that call is
    /// made again without them and the model is not shown any more. `true`: always (a model
    /// that cannot read them fails the run, as an attached image does); `false`: never.
    pub screenshots_to_model: Option<bool>,
    /// The page's viewport, in CSS pixels.
    pub viewport_width: u32,
    pub viewport_height: u32,
}

impl Default for BrowserConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            chromium_path: None,
            idle_timeout_secs: 300,
            max_sessions_per_chat: 2,
            max_sessions: 8,
            action_timeout_secs: 30,
            max_wait_ms: 10_000,
            max_screenshot_bytes: 8 * 1024 * 1024,
            max_response_bytes: 10 * 1024 * 1024,
            max_memory_mb: 1024,
            screenshots_to_model: None,
            viewport_width: 1280,
            viewport_height: 800,
        }
    }
}
