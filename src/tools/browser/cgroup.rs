//! A cgroup (v2) of a session's own, where this server may make one: its Chromium is put in it
//! before it runs (`cgroup.procs`, written between fork and exec), and the kernel bounds the
//! whole session's memory (`memory.max`) and processes (`pids.max`). It needs cgroup v2 mounted
//! at `/sys/fs/cgroup`, the server's own cgroup delegating the `memory` and `pids` controllers
//! to its children, and the right to write there — seldom so in a container, so its absence is
//! normal: the session then has only `limits`' bound (the V8 heap cap and the watchdog, which
//! run either way).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::BrowserSessionId;

/// Where cgroup v2 is mounted.
const ROOT: &str = "/sys/fs/cgroup";
/// The whole session's memory, in multiples of `browser.max_memory_mb` (one process's bound):
/// its renderer at the bound, and the browser, network and GPU processes beside it.
const SESSION_MEMORY_FACTOR: u64 = 2;
/// Processes one session may run: Chromium runs about ten for a page; a few times that is
/// room, a page forking without end is not.
const MAX_PROCESSES: u64 = 64;
/// Attempts at removing a closed session's cgroup (it is busy until its last process is
/// reaped), and the pause between them.
const REMOVAL_ATTEMPTS: u32 = 10;
const REMOVAL_PAUSE: Duration = Duration::from_millis(100);

/// A session's cgroup, removed (once empty) by `remove`, or when dropped if it is empty then.
pub struct SessionCgroup {
    dir: PathBuf,
    procs: CString,
}

impl SessionCgroup {
    /// Makes session `id`'s cgroup under this process's own, bounded for `max_memory_mb`;
    /// `None` where cgroups cannot be used (see the module's doc).
    pub fn make(id: &BrowserSessionId, max_memory_mb: u64) -> Option<Self> {
        let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let base = Path::new(ROOT).join(own_v2_path(&own)?.trim_start_matches('/'));
        let delegated = std::fs::read_to_string(base.join("cgroup.subtree_control")).ok()?;
        let controllers: Vec<&str> = delegated.split_whitespace().collect();
        if !controllers.contains(&"memory") || !controllers.contains(&"pids") {
            return None;
        }
        let dir = base.join(format!("colloquy-{id}"));
        std::fs::create_dir(&dir).ok()?;
        let memory = max_memory_mb
            .saturating_mul(SESSION_MEMORY_FACTOR)
            .saturating_mul(1024 * 1024);
        let bounded = std::fs::write(dir.join("memory.max"), memory.to_string())
            .and_then(|()| std::fs::write(dir.join("pids.max"), MAX_PROCESSES.to_string()));
        let procs = CString::new(dir.join("cgroup.procs").as_os_str().as_bytes()).ok();
        match (bounded, procs) {
            (Ok(()), Some(procs)) => Some(Self { dir, procs }),
            _ => {
                let _ = std::fs::remove_dir(&dir);
                None
            }
        }
    }

    /// Its `cgroup.procs`, for the child to join between fork and exec.
    pub fn procs(&self) -> CString {
        self.procs.clone()
    }

    /// Removes it once its processes are gone (after the session's Chromium was killed).
    pub async fn remove(&self) {
        for _ in 0..REMOVAL_ATTEMPTS {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            tokio::time::sleep(REMOVAL_PAUSE).await;
        }
        tracing::warn!(cgroup = %self.dir.display(), "could not remove a browser session's cgroup");
    }
}

impl Drop for SessionCgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// This process's cgroup v2 path, from `/proc/self/cgroup` (its `0::` line).
fn own_v2_path(cgroups: &str) -> Option<&str> {
    cgroups.lines().find_map(|line| line.strip_prefix("0::"))
}

/// Moves the calling process into the cgroup whose `cgroup.procs` is `procs`. Runs between
/// fork and exec: only async-signal-safe calls.
pub fn join(procs: &CString) -> std::io::Result<()> {
    // SAFETY: open, write and close on a path and a buffer that outlive the calls.
    unsafe {
        let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // "0" is the writing process itself.
        let written = libc::write(fd, b"0".as_ptr().cast(), 1);
        libc::close(fd);
        if written != 1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_own_cgroup_is_its_v2_line() {
        let hybrid = "4:memory:/process_api/6e21\n1:cpu:/\n0::/system.slice/colloquy.service\n";
        assert_eq!(own_v2_path(hybrid), Some("/system.slice/colloquy.service"));
        assert_eq!(own_v2_path("4:memory:/x\n"), None);
    }
}
