//! The `[code_interpreter]` section: the sandbox `code_interpreter` runs Python in (bubblewrap
//! and the host's CPython), and the limits on its containers and calls.

use std::path::PathBuf;

use serde::Deserialize;

/// The code interpreter's programs and limits.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct CodeInterpreterConfig {
    /// Offer the tool at all (when bubblewrap and Python are found).
    pub enabled: bool,
    /// bubblewrap's executable (`bwrap`, looked for on `PATH`).
    pub bwrap_path: PathBuf,
    /// The CPython the sandbox runs: the host's, whose packages (Debian's numpy, pandas,
    /// matplotlib…) the code may import.
    pub python_path: PathBuf,
    /// Seconds one call may run; past it, the sandbox is killed with all it started.
    pub timeout_secs: u64,
    /// Address space of each process in a sandbox, in MB.
    pub memory_mb: u64,
    /// Processes and threads one sandbox may have at once.
    pub max_processes: u64,
    /// Files one process may hold open.
    pub max_open_files: u64,
    /// A container's files together (its `/mnt/data`), in MB; also the largest one file.
    pub container_mb: u64,
    /// What a call's output keeps (its printed text and errors), in characters; the rest is
    /// cut with a note.
    pub max_output_chars: usize,
    /// Minutes without a call after which a container's interpreter is stopped (its Python
    /// state is gone; its files stay).
    pub idle_minutes: u32,
    /// Days a container's files are kept after its last call (a chat's are removed with it
    /// sooner).
    pub retention_days: u32,
    /// Sandboxes this process runs at once; when all are busy, a new one waits for none but
    /// is refused.
    pub max_containers: usize,
    /// Containers one chat may have.
    pub max_containers_per_chat: usize,
    /// Containers one user may have (each new Responses conversation makes one; unused ones
    /// go after `retention_days`, a chat's with the chat).
    pub max_containers_per_user: usize,
    /// When the server runs as root: the first of the user ids its sandboxes run as (one per
    /// running sandbox, so the process limit counts each sandbox's processes alone; taken from
    /// the 65,536 from here on, never two at once on one host).
    pub first_uid: u32,
}

impl Default for CodeInterpreterConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            bwrap_path: PathBuf::from("bwrap"),
            python_path: PathBuf::from("/usr/bin/python3"),
            timeout_secs: 30,
            memory_mb: 1024,
            max_processes: 64,
            max_open_files: 256,
            container_mb: 500,
            max_output_chars: 8_000,
            idle_minutes: 20,
            retention_days: 30,
            max_containers: 16,
            max_containers_per_chat: 4,
            max_containers_per_user: 1_000,
            first_uid: 300_000,
        }
    }
}

impl CodeInterpreterConfig {
    /// What is wrong with these settings, if anything.
    pub fn problem(&self) -> Option<&'static str> {
        (self.timeout_secs == 0
            || self.memory_mb < 64
            || self.max_processes == 0
            || self.max_open_files < 16
            || self.container_mb == 0
            || self.max_output_chars == 0
            || self.idle_minutes == 0
            || self.retention_days == 0
            || self.max_containers == 0
            || self.max_containers_per_chat == 0
            || self.max_containers_per_user < self.max_containers_per_chat
            || self.first_uid == 0)
            .then_some(
                "code_interpreter: timeout_secs, max_processes, container_mb, max_output_chars, \
                 idle_minutes, retention_days, max_containers, max_containers_per_chat and \
                 first_uid must be at least 1, memory_mb at least 64, max_open_files at least \
                 16, and max_containers_per_user at least max_containers_per_chat",
            )
    }
}
