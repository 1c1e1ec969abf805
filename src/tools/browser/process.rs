//! A session's Chromium process, started so that it dies with the server: from one
//! long-lived thread (the parent-death signal fires when the *thread* that spawned a child
//! ends, so never from a worker thread that may come and go), with `PR_SET_PDEATHSIG`
//! `SIGKILL` set between fork and exec, in a process group of its own (its zygote, renderers
//! and helpers are in it, and a kill reaches them all), in the session's cgroup when there is
//! one (`cgroup`). A server killed with `kill -9` takes
//! its Chromiums with it: the browser process by the signal, its helpers when their pipe to it
//! closes. A server that returns from `main` kills them in an `atexit` handler; one that starts
//! finds what an earlier run of its data directory left (`kill_leftovers`, by the profile
//! folder on their command lines, so an unrelated process with a reused pid is never hit).

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use super::cgroup::{self, SessionCgroup};

/// How often a closing Chromium is looked at until it has exited.
const EXIT_POLL: Duration = Duration::from_millis(50);

/// One Chromium browser process and its process group.
pub struct ChromiumProcess {
    pid: u32,
    child: Mutex<Child>,
    cgroup: Option<SessionCgroup>,
}

/// What the launcher thread is asked: a command to spawn, and where to send the child.
type Job = (
    Command,
    tokio::sync::oneshot::Sender<std::io::Result<Child>>,
);

/// The thread that spawns every Chromium, for as long as this process lives.
static LAUNCHER: OnceLock<Mutex<mpsc::Sender<Job>>> = OnceLock::new();

fn launcher() -> &'static Mutex<mpsc::Sender<Job>> {
    LAUNCHER.get_or_init(|| {
        let (jobs, queue) = mpsc::channel::<Job>();
        let spawned = std::thread::Builder::new()
            .name("chromium-launcher".into())
            .spawn(move || {
                for (mut command, reply) in queue {
                    let _ = reply.send(command.spawn());
                }
            });
        if let Err(err) = spawned {
            tracing::error!(%err, "cannot start the Chromium launcher thread");
        }
        Mutex::new(jobs)
    })
}

impl ChromiumProcess {
    /// Starts `executable` with `args` (and a DevTools port of its own choosing), in `cgroup`
    /// if there is one; returns it with its DevTools WebSocket address, once it printed one
    /// within `timeout`.
    pub async fn start(
        executable: &Path,
        args: &[String],
        cgroup: Option<SessionCgroup>,
        timeout: Duration,
    ) -> Result<(Self, String), String> {
        let mut command = Command::new(executable);
        command
            .args(args)
            .arg("--remote-debugging-port=0")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0);
        let parent = std::process::id();
        let procs = cgroup.as_ref().map(SessionCgroup::procs);
        // SAFETY: the hook only makes async-signal-safe calls (prctl, getppid, open, write).
        unsafe {
            command.pre_exec(move || {
                die_with_parent(parent)?;
                if let Some(procs) = &procs {
                    // Without it the session still has `limits`' bound.
                    let _ = cgroup::join(procs);
                }
                Ok(())
            });
        }
        let (reply, child) = tokio::sync::oneshot::channel();
        launcher()
            .lock()
            .map_err(|_| "the Chromium launcher is gone".to_string())?
            .send((command, reply))
            .map_err(|_| "the Chromium launcher is gone".to_string())?;
        let mut child = child
            .await
            .map_err(|_| "the Chromium launcher is gone".to_string())?
            .map_err(|err| err.to_string())?;
        let pid = child.id();
        remember(pid);
        let stderr = child.stderr.take();
        let process = Self {
            pid,
            child: Mutex::new(child),
            cgroup,
        };
        let Some(stderr) = stderr else {
            process.kill().await;
            return Err("Chromium's stderr was not piped".into());
        };
        match tokio::time::timeout(timeout, devtools_address(stderr)).await {
            Ok(Ok(address)) => Ok((process, address)),
            Ok(Err(err)) => {
                process.kill().await;
                Err(err)
            }
            Err(_) => {
                process.kill().await;
                Err(format!(
                    "Chromium printed no DevTools address within {timeout:?}"
                ))
            }
        }
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Whether the browser process has exited (and is reaped).
    pub fn exited(&self) -> bool {
        match self.child.try_lock() {
            Ok(mut child) => matches!(child.try_wait(), Ok(Some(_)) | Err(_)),
            Err(_) => false,
        }
    }

    /// Kills its whole process group, waits (at most `bound`) for the browser process, and
    /// removes its cgroup.
    pub async fn kill_within(&self, bound: Duration) {
        kill_group(self.pid);
        let deadline = tokio::time::Instant::now() + bound;
        while !self.exited() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(EXIT_POLL).await;
        }
        forget(self.pid);
        if let Some(cgroup) = &self.cgroup {
            cgroup.remove().await;
        }
    }

    async fn kill(&self) {
        self.kill_within(Duration::from_secs(3)).await;
    }
}

impl Drop for ChromiumProcess {
    fn drop(&mut self) {
        if !self.exited() {
            kill_group(self.pid);
        }
        forget(self.pid);
    }
}

/// Set in the child between fork and exec: SIGKILL when the thread that spawned it ends;
/// and if the parent is already gone (it died before this ran), fail the exec.
pub(crate) fn die_with_parent(parent: u32) -> std::io::Result<()> {
    // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number and has no memory effects.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: getppid has no preconditions.
    let now = unsafe { libc::getppid() };
    if u32::try_from(now).ok() != Some(parent) {
        return Err(std::io::Error::other(
            "the server exited while Chromium started",
        ));
    }
    Ok(())
}

/// Reads Chromium's stderr on a thread of its own until the DevTools address, then keeps
/// draining it (so Chromium never blocks on a full pipe) until every process holding it ends.
async fn devtools_address(stderr: std::process::ChildStderr) -> Result<String, String> {
    let (found, address) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("chromium-stderr".into())
        .spawn(move || {
            let mut found = Some(found);
            let mut printed = String::new();
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                match (found.take(), address_in(&line)) {
                    (Some(found), Some(address)) => {
                        let _ = found.send(Ok(address));
                    }
                    (Some(waiting), None) => {
                        printed.push_str(&line);
                        printed.push('\n');
                        found = Some(waiting);
                    }
                    (None, _) => tracing::trace!(line, "Chromium"),
                }
            }
            if let Some(found) = found {
                let _ = found.send(Err(format!(
                    "Chromium exited before it printed its DevTools address: {printed}"
                )));
            }
        })
        .map_err(|err| err.to_string())?;
    address
        .await
        .map_err(|_| "Chromium's stderr reader ended".to_string())?
}

/// The DevTools WebSocket address a line of Chromium's stderr announces, if it does.
fn address_in(line: &str) -> Option<String> {
    let (_, address) = line.rsplit_once("listening on ")?;
    let address = address.trim();
    (address.starts_with("ws") && address.contains("devtools/browser")).then(|| address.into())
}

/// SIGKILL to every process of the group `pid` leads.
fn kill_group(pid: u32) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: kill has no memory effects; the group is a Chromium this process started.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
}

/// The Chromium process groups this process started and has not closed: killed when this
/// process exits (an `atexit` handler), since a server that returns from `main` (or a test
/// binary that ends) drops no session, and a Chromium left running would outlive it.
static RUNNING: Mutex<Vec<u32>> = Mutex::new(Vec::new());
static AT_EXIT: std::sync::Once = std::sync::Once::new();

extern "C" fn kill_running() {
    let running = RUNNING.lock().map(|pids| pids.clone()).unwrap_or_default();
    for pid in running {
        kill_group(pid);
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

/// Kills every process whose command line names a profile under `folder` (a profiles folder
/// whose server is gone): what an earlier run left, if Chromium outlived it. Only processes
/// whose command line carries the folder are touched, never a pid that was merely reused.
/// Says whether none is left running there (waiting briefly for the killed ones to go): a
/// folder is removed only then, and otherwise swept again at the next start.
pub fn kill_leftovers(folder: &Path) -> bool {
    let needle = format!("--user-data-dir={}/", folder.display());
    for _ in 0..20 {
        let Some(running) = running_on(&needle) else {
            return false;
        };
        if running.is_empty() {
            return true;
        }
        for pid in running {
            tracing::warn!(pid, folder = %folder.display(), "killing a Chromium left by an earlier run");
            // SAFETY: kill has no memory effects; the process is a Chromium of a dead server.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    false
}

/// The processes whose command line has an argument starting with `needle`; `None` when
/// `/proc` cannot be read. A killed process waiting to be reaped has no command line left.
fn running_on(needle: &str) -> Option<Vec<libc::pid_t>> {
    let entries = std::fs::read_dir("/proc").ok()?;
    let mut running = Vec::new();
    for entry in entries {
        let entry = entry.ok()?;
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        let cmdline = match std::fs::read(format!("/proc/{pid}/cmdline")) {
            Ok(cmdline) => cmdline,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
            // The process may have ended between the listing and the read.
            Err(err) if err.raw_os_error() == Some(libc::ESRCH) => continue,
            Err(_) => return None,
        };
        if cmdline
            .split(|b| *b == 0)
            .any(|arg| arg.starts_with(needle.as_bytes()))
        {
            running.push(pid);
        }
    }
    Some(running)
}

/// Every process id in `/proc`.
pub(super) fn processes() -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_devtools_address_is_read_from_its_line() {
        assert_eq!(
            address_in("DevTools listening on ws://127.0.0.1:4321/devtools/browser/abc"),
            Some("ws://127.0.0.1:4321/devtools/browser/abc".into())
        );
        assert_eq!(address_in("[0:0:ERROR:bus.cc] Failed to connect"), None);
    }
}
