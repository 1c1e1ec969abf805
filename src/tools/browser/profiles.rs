//! Where this process keeps its sessions' profiles: a folder of its own under
//! `<data_dir>/browser`, locked (`flock`) for as long as the process lives, so processes that
//! share a data directory (cluster mode) never delete each other's live profiles. At start,
//! the folders whose lock nobody holds (their process is gone) are removed, with any Chromium
//! still running on them, and so are the profiles of the layout before (session folders
//! straight under `browser`).

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// The file in each process's folder whose lock says the process is alive.
const LOCK_FILE: &str = ".lock";
/// How a folder being made starts its name: it is renamed once its lock is held.
const PARTIAL_PREFIX: &str = ".partial-";
/// How a session's own profile is named (`BrowserSessionId`): one left from the layout before.
const LEGACY_SESSION_PREFIX: &str = "bs_";

/// This process's profiles folder, held for as long as the value lives.
pub struct ProcessProfiles {
    dir: PathBuf,
    /// Open with its lock held: dropped (the process gone), the folder is stale.
    _lock: File,
}

impl ProcessProfiles {
    /// Makes this process's folder under `root` (locked before it gets its name), then removes
    /// what processes that are gone left there.
    pub fn claim(root: &Path) -> std::io::Result<Self> {
        std::fs::create_dir_all(root)?;
        let name = format!(
            "p{}-{}",
            std::process::id(),
            &uuid::Uuid::new_v4().simple().to_string()[..8]
        );
        let partial = root.join(format!("{PARTIAL_PREFIX}{name}"));
        std::fs::create_dir(&partial)?;
        let lock = File::create(partial.join(LOCK_FILE))?;
        if !try_lock(&lock) {
            return Err(std::io::Error::other("cannot lock a new profiles folder"));
        }
        let dir = root.join(&name);
        std::fs::rename(&partial, &dir)?;
        remove_stale(root, &dir);
        Ok(Self { dir, _lock: lock })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Takes `file`'s exclusive lock if nobody holds it.
fn try_lock(file: &File) -> bool {
    // SAFETY: flock on a descriptor this `File` owns; it has no memory effects.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// Removes the folders under `root` of processes that are gone (their lock is free) and the
/// profiles of the layout before; never `own`, a folder whose lock is held, or one being made.
fn remove_stale(root: &Path, own: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path == own || name.starts_with(PARTIAL_PREFIX) || !path.is_dir() {
            continue;
        }
        let stale = if name.starts_with(LEGACY_SESSION_PREFIX) {
            true
        } else {
            // A folder without its lock file is not one of these: left alone.
            match File::open(path.join(LOCK_FILE)) {
                Ok(lock) => try_lock(&lock),
                Err(_) => false,
            }
        };
        // Removed only once no Chromium runs on it any more; otherwise at a later start.
        if stale
            && super::process::kill_leftovers(&path)
            && let Err(err) = std::fs::remove_dir_all(&path)
        {
            tracing::warn!(folder = %path.display(), %err, "could not remove stale browser profiles");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_processs_folder_is_kept_and_a_gone_ones_is_removed() {
        let root = tempfile::tempdir().unwrap();
        let live = ProcessProfiles::claim(root.path()).unwrap();
        std::fs::create_dir(live.dir().join("bs_live")).unwrap();
        let gone = ProcessProfiles::claim(root.path()).unwrap();
        let gone_dir = gone.dir().to_path_buf();
        std::fs::create_dir(gone_dir.join("bs_gone")).unwrap();
        drop(gone);
        let legacy = root.path().join("bs_0123");
        std::fs::create_dir(&legacy).unwrap();
        let foreign = root.path().join("not-ours");
        std::fs::create_dir(&foreign).unwrap();

        // The next start sweeps it. (A child another test thread forks holds a copy of the
        // gone folder's lock until it execs: such a folder is swept at the start after.)
        let mut starts = vec![ProcessProfiles::claim(root.path()).unwrap()];
        for _ in 0..20 {
            if !gone_dir.exists() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
            starts.push(ProcessProfiles::claim(root.path()).unwrap());
        }
        let next = starts.pop().unwrap();
        assert!(next.dir().is_dir());
        assert!(
            live.dir().join("bs_live").is_dir(),
            "a live process's profile is kept"
        );
        assert!(!gone_dir.exists(), "a gone process's folder is removed");
        assert!(
            !legacy.exists(),
            "profiles of the layout before are removed"
        );
        assert!(
            foreign.is_dir(),
            "a folder that is not a process's is left alone"
        );
        assert_ne!(next.dir(), live.dir());
    }

    /// A stand-in for a Chromium left running: a shell whose command line names `data_dir`.
    fn left_running(data_dir: &Path) -> std::process::Child {
        std::process::Command::new("sh")
            .args(["-c", "sleep 120; true", "chromium"])
            .arg(format!("--user-data-dir={}", data_dir.display()))
            // Its `sleep` outlives a kill of the shell: it must not hold the tests' output open.
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    }

    /// How `child` ended, if it did within a second.
    fn ended(child: &mut std::process::Child) -> Option<std::process::ExitStatus> {
        for _ in 0..10 {
            if let Some(status) = child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        None
    }

    #[test]
    fn a_gone_processs_chromium_is_killed_at_start_and_nothing_else() {
        use std::os::unix::process::ExitStatusExt;
        let root = tempfile::tempdir().unwrap();
        let gone = ProcessProfiles::claim(root.path()).unwrap();
        let mut left = left_running(&gone.dir().join("bs_left"));
        let live = ProcessProfiles::claim(root.path()).unwrap();
        let mut running = left_running(&live.dir().join("bs_live"));
        let mut unrelated = left_running(&root.path().join("elsewhere").join("bs_x"));
        drop(gone);

        // The next start sweeps it. (While another test thread forks, its child holds a copy
        // of every descriptor until it execs, the gone folder's lock among them; such a
        // folder is swept at the start after, so the test starts again then; under a loaded
        // machine's parallel tests that can take several starts.)
        let mut status = None;
        let mut starts = Vec::new();
        for _ in 0..30 {
            starts.push(ProcessProfiles::claim(root.path()).unwrap());
            status = ended(&mut left);
            if status.is_some() {
                break;
            }
        }
        let status = status.expect("the gone process's Chromium is killed");
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        for other in [&mut running, &mut unrelated] {
            assert!(other.try_wait().unwrap().is_none(), "only the gone one's");
            other.kill().unwrap();
            other.wait().unwrap();
        }
    }
}
