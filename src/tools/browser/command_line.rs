//! What a session's Chromium is started with: its command line (the switches, the profile,
//! the window, the sandbox, the memory bound, its own network sent to the session's sink) and
//! how the DevTools connection to it treats pages.

use std::time::Duration;

use chromiumoxide::handler::HandlerConfig;
use chromiumoxide::handler::viewport::Viewport;

use super::limits;
use super::sink::Sink;
use crate::config::BrowserConfig;

/// How much longer one DevTools command may wait than the action it is part of: the action's
/// own timeout ends it first, as a `timeout` error result rather than a failed command.
const COMMAND_TIMEOUT_MARGIN: Duration = Duration::from_secs(5);
/// Chromium's switches, besides the profile, the window, the sandbox and the memory bound
/// (named without their `--`). Headless, no extensions, no first-run or background work of
/// its own (updates, sync, metrics, phishing lists, crash reports, pings, network time,
/// translation, media routing), no popups past its blocker, dedicated workers' scripts fetched
/// by the page (not by the browser, round the interception): a page is all it does.
/// Its own network goes to the session's `Sink` (only requests the Fetch domain pauses,
/// answered by Colloquy, get anywhere; loopback is not exempt), no DNS prefetching,
/// no site isolation (so every frame is the one page's, and paused with it), no upgrade of
/// http to https behind the guard's back.
const SWITCHES: [(&str, &str); 32] = [
    ("headless", ""),
    ("hide-scrollbars", ""),
    ("mute-audio", ""),
    ("disable-extensions", ""),
    ("disable-background-networking", ""),
    ("enable-features", "NetworkService,NetworkServiceInProcess"),
    ("disable-background-timer-throttling", ""),
    ("disable-backgrounding-occluded-windows", ""),
    ("disable-breakpad", ""),
    ("disable-client-side-phishing-detection", ""),
    ("disable-component-extensions-with-background-pages", ""),
    ("disable-default-apps", ""),
    ("disable-dev-shm-usage", ""),
    ("disable-hang-monitor", ""),
    ("disable-ipc-flooding-protection", ""),
    ("disable-component-update", ""),
    ("disable-domain-reliability", ""),
    ("no-pings", ""),
    ("no-service-autorun", ""),
    ("disable-search-engine-choice-screen", ""),
    ("disable-prompt-on-repost", ""),
    ("disable-renderer-backgrounding", ""),
    ("disable-sync", ""),
    ("force-color-profile", "srgb"),
    ("metrics-recording-only", ""),
    ("no-first-run", ""),
    ("enable-automation", ""),
    ("password-store", "basic"),
    ("use-mock-keychain", ""),
    ("lang", "en_US"),
    ("dns-prefetch-disable", ""),
    (
        "disable-features",
        "TranslateUI,Translate,IsolateOrigins,site-per-process,HttpsUpgrades,\
         HttpsFirstBalancedModeAutoEnable,PlzDedicatedWorker,MediaRouter,DialMediaRouteProvider,\
         OptimizationHints,CertificateTransparencyComponentUpdater,NetworkTimeServiceQuerying,\
         AutofillServerCommunication,PreconnectToSearch",
    ),
];

/// The hosts Chromium asks by itself whatever its switches say (sign-in's account list on every
/// profile, component updates, network time, the default search engine's preconnect): no page's
/// request ever reaches them through Chromium's network (the Fetch domain answers every one), so
/// they are sent round the sink and resolve to nothing. Chromium's own network then has nowhere
/// to go, and anything that reaches the sink went round the interception.
const VENDOR_HOSTS: [&str; 5] = [
    "*.google.com",
    "*.googleapis.com",
    "*.gstatic.com",
    "*.gvt1.com",
    "*.duckduckgo.com",
];

/// The switches that send the vendor's hosts (`VENDOR_HOSTS`) nowhere: past the proxy (which
/// otherwise takes every host, loopback too) to a resolver that knows none of them.
fn vendor_switches() -> [String; 2] {
    let unresolved: Vec<String> = VENDOR_HOSTS
        .iter()
        .map(|host| format!("MAP {host} ~NOTFOUND"))
        .collect();
    [
        format!("--proxy-bypass-list=<-loopback>;{}", VENDOR_HOSTS.join(";")),
        format!("--host-resolver-rules={}", unresolved.join(", ")),
    ]
}

/// Chromium's command line for a session with profile `profile` and its own network sent to
/// `sink`, under `config`.
pub(super) fn command_line(
    profile: &std::path::Path,
    sink: &Sink,
    config: &BrowserConfig,
) -> Vec<String> {
    let mut args: Vec<String> = SWITCHES
        .iter()
        .map(|(key, value)| match *value {
            "" => format!("--{key}"),
            value => format!("--{key}={value}"),
        })
        .collect();
    args.push("--disable-gpu".into());
    args.push(format!("--proxy-server={}", sink.address()));
    args.extend(vendor_switches());
    args.push(format!("--user-data-dir={}", profile.display()));
    args.push(format!(
        "--window-size={},{}",
        config.viewport_width, config.viewport_height
    ));
    args.push(limits::heap_switch(config.max_memory_mb));
    // Chromium's sandbox refuses to start as root (containers); it runs without it there.
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        args.push("--no-sandbox".into());
        args.push("--disable-setuid-sandbox".into());
    }
    args
}

/// How the DevTools connection treats pages: certificate errors are errors, the viewport is
/// the configured one, a command waits as long as the action it is part of (and a margin).
pub(super) fn handler_config(config: &BrowserConfig) -> HandlerConfig {
    HandlerConfig {
        ignore_https_errors: false,
        viewport: Some(Viewport {
            width: config.viewport_width,
            height: config.viewport_height,
            device_scale_factor: Some(1.0),
            emulating_mobile: false,
            is_landscape: true,
            has_touch: false,
        }),
        request_timeout: Duration::from_secs(config.action_timeout_secs) + COMMAND_TIMEOUT_MARGIN,
        ..HandlerConfig::default()
    }
}
