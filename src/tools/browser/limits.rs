//! The memory bound on a session's Chromium (`browser.max_memory_mb`): V8's heap is capped
//! (`--js-flags=--max-old-space-size`, so a page's script runs out of heap and its renderer
//! dies), and a watchdog reads the resident memory of every process of the session's process
//! group from `/proc` and kills one past the bound (an allocation V8 does not count, such as a
//! typed array's, is caught there). Either way the page is gone, and the crash is recorded
//! (`Crash`) for the action running to report as `page_crashed`. Where the server may make
//! cgroups, the kernel bounds the whole session as well (`cgroup`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often the watchdog reads the processes' memory: a page allocating fast grows by a few
/// hundred MB in this time at most.
const WATCH_EVERY: Duration = Duration::from_millis(250);
/// The share of `max_memory_mb` V8's old space may take (in percent): the rest is the
/// renderer's own memory (its DOM, images, code).
const HEAP_SHARE_PERCENT: u64 = 75;
/// The least heap V8 is given, whatever the bound: below it no ordinary page runs.
const MIN_HEAP_MB: u64 = 32;

/// Why a session's page crashed, once it did.
#[derive(Debug, Clone, Default)]
pub struct Crash(Arc<Mutex<Option<String>>>);

impl Crash {
    /// Records why the page crashed (the first reason stays).
    pub fn record(&self, why: impl Into<String>) {
        let mut reason = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if reason.is_none() {
            *reason = Some(why.into());
        }
    }

    pub fn reason(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Chromium's switch capping V8's heap for a bound of `max_memory_mb`.
pub fn heap_switch(max_memory_mb: u64) -> String {
    let heap = (max_memory_mb * HEAP_SHARE_PERCENT / 100).max(MIN_HEAP_MB);
    format!("--js-flags=--max-old-space-size={heap}")
}

/// Watches the process group `group` until `alive` is cleared: a process whose resident
/// memory passes `max_memory_mb` is killed and the crash recorded in `crash`.
pub fn watch(group: u32, max_memory_mb: u64, alive: Arc<AtomicBool>, crash: Crash) {
    let limit = max_memory_mb.saturating_mul(1024 * 1024);
    tokio::spawn(async move {
        while alive.load(Ordering::SeqCst) {
            for (pid, rss) in members(group) {
                if rss > limit {
                    crash.record(format!(
                        "a Chromium process of the page used {} MB, more than the {max_memory_mb} MB allowed",
                        rss / (1024 * 1024)
                    ));
                    kill(pid);
                }
            }
            tokio::time::sleep(WATCH_EVERY).await;
        }
    });
}

/// The processes of group `group` with their resident memory in bytes.
fn members(group: u32) -> Vec<(u32, u64)> {
    // SAFETY: sysconf has no preconditions.
    let page = u64::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
    super::process::processes()
        .into_iter()
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (pgrp, pages) = group_and_rss(&stat)?;
            (pgrp == group).then_some((pid, pages * page))
        })
        .collect()
}

/// A `/proc/<pid>/stat` line's process group and resident pages (fields 5 and 24; the
/// command name before them may hold spaces and parentheses, so fields count from its end).
fn group_and_rss(stat: &str) -> Option<(u32, u64)> {
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some((fields.get(2)?.parse().ok()?, fields.get(21)?.parse().ok()?))
}

fn kill(pid: u32) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: kill has no memory effects; the process is one of the session's Chromium.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_gives_its_group_and_resident_pages() {
        let stat = "4862 (chromium (x) y) S 4822 4800 4800 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 \
                    9 0 100 2000000 1234 18446744073709551615";
        assert_eq!(group_and_rss(stat), Some((4800, 1234)));
        assert_eq!(group_and_rss("garbage"), None);
    }

    #[test]
    fn the_heap_is_a_share_of_the_bound() {
        assert_eq!(heap_switch(1024), "--js-flags=--max-old-space-size=768");
        assert_eq!(heap_switch(8), "--js-flags=--max-old-space-size=32");
    }
}
