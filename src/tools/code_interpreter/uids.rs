//! The user ids sandboxes run as when the server is root: one per running sandbox, so the
//! process limit (`RLIMIT_NPROC`, counted per user) bounds each sandbox alone, and no sandbox
//! shares a user with another, of this process or of another server on the same host. A uid is
//! taken by an exclusive `flock` on its file under the system's temporary folder, held while the
//! sandbox runs and let go by the kernel if the process dies. The folder is `/run`'s (only root
//! writes there), made private, and used only if it is a real folder of this user's that no one
//! else may write to; its files are opened without following links.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

/// How many uids from the first are tried.
const RANGE: u32 = 65_536;

/// A uid held for one sandbox; dropping it lets it go.
#[derive(Debug)]
pub struct UidLease {
    pub uid: u32,
    _lock: File,
}

fn folder() -> Option<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let base = if std::path::Path::new("/run").is_dir() {
        PathBuf::from("/run")
    } else {
        std::env::temp_dir()
    };
    let folder = base.join("colloquy-sandbox-uids");
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&folder);
    let meta = std::fs::symlink_metadata(&folder).ok()?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    (meta.is_dir() && meta.uid() == me && meta.mode() & 0o022 == 0).then_some(folder)
}

/// Takes a free uid from `first` on, or `None` when every one is held (or the folder cannot be
/// made).
pub fn take(first: u32) -> Option<UidLease> {
    use std::os::unix::fs::OpenOptionsExt;
    let folder = folder()?;
    let start = std::process::id() % RANGE;
    for n in 0..RANGE {
        let uid = first.checked_add((start + n) % RANGE)?;
        let Ok(file) = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(folder.join(uid.to_string()))
        else {
            continue;
        };
        // SAFETY: flock on a file descriptor this function owns.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Some(UidLease { uid, _lock: file });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_uid_is_not_taken_again_until_let_go() {
        let first = 3_000_000;
        let a = take(first).unwrap();
        let b = take(first).unwrap();
        assert_ne!(a.uid, b.uid);
        let held = a.uid;
        drop(a);
        // Let go, it can be taken again (by this process or another).
        let again: Vec<UidLease> = (0..4).filter_map(|_| take(first)).collect();
        assert!(again.iter().all(|l| l.uid != b.uid));
        let _ = held;
    }
}
