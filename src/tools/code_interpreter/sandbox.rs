//! One container's sandbox: the driver (`driver.py`, a long-lived CPython) inside bubblewrap.
//!
//! The wall, all of it the kernel's:
//! - namespaces of its own for everything bubblewrap can unshare: no network but its own
//!   loopback, its own PIDs and `/proc`, its own mounts;
//! - a root made of the host's `/usr` (read-only: the system and Python's packages), the few
//!   files of `/etc` Python and its libraries read (`ETC_FILES`), a fresh `/dev`, and two
//!   tmpfs of bounded size: `/mnt/data`, the container's files, and `/tmp`. Nothing else of the
//!   host: not its `/etc/shadow`, not the server's data directory, not another container;
//! - as root, the sandbox runs as a user id of its own (`uid`), so the process limit counts its
//!   processes alone; every capability dropped;
//! - resource limits set before bubblewrap starts and inherited by all it runs: address space
//!   (`memory_mb`), processes, open files, file size, no core files;
//! - the whole sandbox dies with the server (a parent-death signal on bubblewrap, and
//!   bubblewrap's own `--die-with-parent` on what it runs) and is killed whole on a timeout:
//!   killing bubblewrap ends its PID namespace and every process in it.
//!
//! The driver's answers are read as untrusted input: one JSON line each, bounded in size.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use base64::Engine;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// The driver CPython runs (`python3 -c`).
const DRIVER: &str = include_str!("driver.py");

/// The files and folders of the host's `/etc` the sandbox sees, when they exist: the dynamic
/// linker's cache, Debian's alternatives (the BLAS numpy loads), fonts and matplotlib's
/// settings, the time zone.
const ETC_FILES: &[&str] = &[
    "/etc/ld.so.cache",
    "/etc/alternatives",
    "/etc/fonts",
    "/etc/matplotlibrc",
    "/etc/localtime",
    "/etc/mime.types",
];

/// The programs and limits a sandbox starts with.
#[derive(Debug, Clone)]
pub struct Spec {
    pub bwrap: PathBuf,
    pub python: PathBuf,
    pub limits: Limits,
}

/// What one sandbox may use.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Address space of each process, in MB.
    pub memory_mb: u64,
    /// Processes (and threads) the sandbox's user may have.
    pub max_processes: u64,
    pub max_open_files: u64,
    /// The container's files together (`/mnt/data`), in MB; also the largest one file.
    pub container_mb: u64,
    /// The sandbox's `/tmp`, in MB (what the code's programs print lands there first).
    pub tmp_mb: u64,
}

/// Why a sandbox could not start or answer.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("the sandbox could not start: {0}")]
    Start(String),
    #[error("the call ran past its time limit of {0} s")]
    Timeout(u64),
    /// Its processes together held more memory than the sandbox may (`memory_mb`).
    #[error("the sandbox's processes together used more than {0} MB of memory")]
    Memory(u64),
    /// The driver is gone: the code ended it (killed its own interpreter, ran out of memory
    /// past what Python can report) or it broke its pipe.
    #[error("the interpreter ended: {0}")]
    Ended(String),
    #[error("the sandbox's answer was larger than {0} bytes")]
    TooLarge(usize),
    #[error("the sandbox's answer was not understood: {0}")]
    Garbled(String),
    /// The driver answered, and said no (a file it could not place). The sandbox still runs.
    #[error("the sandbox refused: {0}")]
    Refused(String),
}

/// A running sandbox and its driver's pipes.
pub struct Sandbox {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// An exchange was begun and not finished (its caller gave up on it): the pipe may still
    /// hold its answer, so the sandbox answers nothing more.
    in_exchange: bool,
    /// The resident memory all its processes together may hold, in MB (each one's address
    /// space is bounded too, by `RLIMIT_AS`).
    memory_mb: u64,
}

/// How much of a file one `put` carries: a file is placed part by part, so no one line of the
/// pipe (nor the driver's copy of it) grows with the file.
const PUT_PART: usize = 1024 * 1024;

/// How long placing one part of a file may take. It is not the code's time limit: placing
/// files is the server's work, and a busy machine must not fail it as if the code were slow.
const PUT_PART_TIMEOUT: Duration = Duration::from_secs(20);

/// How often a call's memory is looked at.
const WATCH_EVERY: Duration = Duration::from_millis(100);

/// The resident memory, in bytes, of `pid` and every process below it (its children, theirs…).
fn tree_rss(pid: u32) -> u64 {
    // SAFETY: sysconf has no preconditions.
    let page = u64::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
    let mut total = 0;
    let mut queue = vec![pid];
    let mut seen = 0;
    while let Some(pid) = queue.pop() {
        seen += 1;
        if seen > 4096 {
            break;
        }
        if let Ok(statm) = std::fs::read_to_string(format!("/proc/{pid}/statm")) {
            total += statm
                .split_whitespace()
                .nth(1)
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0)
                * page;
        }
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for task in tasks.flatten() {
                if let Ok(children) = std::fs::read_to_string(task.path().join("children")) {
                    queue.extend(
                        children
                            .split_whitespace()
                            .filter_map(|c| c.parse::<u32>().ok()),
                    );
                }
            }
        }
    }
    total
}

/// What `bubblewrap` is given: the sandbox's root and namespaces, then the driver.
fn arguments(spec: &Spec) -> Vec<String> {
    let mut args: Vec<String> = [
        "--unshare-all",
        // A user namespace of its own in which no other can be made (the kernel's surface
        // for nested namespaces stays shut).
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--ro-bind",
        "/usr",
        "/usr",
    ]
    .map(String::from)
    .to_vec();
    for (link, target) in [
        ("/bin", "usr/bin"),
        ("/sbin", "usr/sbin"),
        ("/lib", "usr/lib"),
        ("/lib64", "usr/lib64"),
    ] {
        // A merged-/usr system has these as links; an older one as folders of their own.
        match std::fs::symlink_metadata(link) {
            Ok(meta) if meta.file_type().is_symlink() => {
                args.extend(["--symlink".into(), target.into(), link.into()])
            }
            Ok(meta) if meta.is_dir() => {
                args.extend(["--ro-bind".into(), link.into(), link.into()])
            }
            _ => {}
        }
    }
    for path in ETC_FILES {
        if Path::new(path).exists() {
            args.extend(["--ro-bind".into(), (*path).into(), (*path).into()]);
        }
    }
    let mb = |n: u64| (n * 1024 * 1024).to_string();
    args.extend([
        "--proc".into(),
        "/proc".into(),
        "--dev".into(),
        "/dev".into(),
        "--size".into(),
        mb(16),
        "--tmpfs".into(),
        "/dev/shm".into(),
        "--size".into(),
        mb(spec.limits.tmp_mb),
        "--tmpfs".into(),
        "/tmp".into(),
        "--size".into(),
        mb(spec.limits.container_mb),
        "--tmpfs".into(),
        "/mnt/data".into(),
        // Everything else read-only: bubblewrap's root and /dev are tmpfs without a bound.
        "--remount-ro".into(),
        "/dev".into(),
        "--remount-ro".into(),
        "/".into(),
        "--chdir".into(),
        "/mnt/data".into(),
    ]);
    for (key, value) in [
        ("PATH", "/usr/local/bin:/usr/bin:/bin"),
        ("HOME", "/mnt/data"),
        ("LANG", "C.UTF-8"),
        ("MPLBACKEND", "Agg"),
        ("MPLCONFIGDIR", "/tmp/.matplotlib"),
        ("XDG_CACHE_HOME", "/tmp/.cache"),
        ("PYTHONDONTWRITEBYTECODE", "1"),
        ("PYTHONUNBUFFERED", "1"),
        ("OPENBLAS_NUM_THREADS", "1"),
        ("OMP_NUM_THREADS", "1"),
        ("MKL_NUM_THREADS", "1"),
    ] {
        args.extend(["--setenv".into(), key.into(), value.into()]);
    }
    args.extend([
        "--".into(),
        spec.python.display().to_string(),
        "-I".into(),
        "-c".into(),
        DRIVER.into(),
    ]);
    args
}

/// Sets `resource` to `value` (soft and hard) in the child, between fork and exec.
fn limit(resource: libc::__rlimit_resource_t, value: u64) -> std::io::Result<()> {
    let bound = libc::rlimit {
        rlim_cur: value,
        rlim_max: value,
    };
    // SAFETY: setrlimit reads the struct and is async-signal-safe.
    if unsafe { libc::setrlimit(resource, &bound) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

impl Sandbox {
    /// Starts a sandbox as the user `uid` (when the server is root; `None`: as the server's
    /// own user) and waits for its driver to say it is ready, within `timeout`.
    pub async fn start(
        spec: &Spec,
        uid: Option<u32>,
        timeout: Duration,
    ) -> Result<Self, SandboxError> {
        let mut command = Command::new(&spec.bwrap);
        command
            .args(arguments(spec))
            .env_clear()
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let limits = spec.limits;
        let parent = std::process::id();
        // SAFETY: the hook only makes async-signal-safe calls (prctl, getppid, setrlimit,
        // setgroups, setgid, setuid).
        unsafe {
            command.pre_exec(move || {
                let mb = 1024 * 1024;
                limit(libc::RLIMIT_AS, limits.memory_mb * mb)?;
                limit(libc::RLIMIT_NPROC, limits.max_processes)?;
                limit(libc::RLIMIT_NOFILE, limits.max_open_files)?;
                limit(libc::RLIMIT_FSIZE, limits.container_mb * mb)?;
                limit(libc::RLIMIT_CORE, 0)?;
                if let Some(uid) = uid
                    && (libc::setgroups(0, std::ptr::null()) != 0
                        || libc::setgid(uid) != 0
                        || libc::setuid(uid) != 0)
                {
                    return Err(std::io::Error::last_os_error());
                }
                // After the change of user, which clears the parent-death signal.
                crate::tools::browser::die_with_parent(parent)?;
                Ok(())
            });
        }
        let mut child = command
            .spawn()
            .map_err(|err| SandboxError::Start(format!("{}: {err}", spec.bwrap.display())))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(SandboxError::Start("the driver's pipes are missing".into()));
        };
        let mut sandbox = Self {
            child,
            stdin,
            stdout: BufReader::new(stdout),
            in_exchange: false,
            memory_mb: spec.limits.memory_mb,
        };
        let ready = tokio::time::timeout(timeout, sandbox.read(4096)).await;
        match ready {
            Ok(Ok(answer)) if answer["ready"] == true => Ok(sandbox),
            Ok(Ok(answer)) => Err(SandboxError::Start(format!("the driver said {answer}"))),
            Ok(Err(SandboxError::Ended(_))) => {
                sandbox.kill().await;
                Err(SandboxError::Start(
                    "bubblewrap or Python exited at once (are user namespaces allowed?)".into(),
                ))
            }
            Ok(Err(err)) => Err(SandboxError::Start(err.to_string())),
            Err(_) => {
                sandbox.kill().await;
                Err(SandboxError::Start(format!(
                    "the driver was not ready within {} s",
                    timeout.as_secs()
                )))
            }
        }
    }

    /// Sends `request` and reads its answer (at most `max_bytes`), within `timeout`. On a
    /// timeout or a broken driver the sandbox is killed, everything in it with it.
    pub async fn request(
        &mut self,
        request: &Value,
        timeout: Duration,
        max_bytes: usize,
    ) -> Result<Value, SandboxError> {
        if self.in_exchange {
            self.kill().await;
            return Err(SandboxError::Ended(
                "an earlier call was cut off before its answer".into(),
            ));
        }
        self.in_exchange = true;
        let pid = self.child.id();
        let memory_mb = self.memory_mb;
        let exchange = async {
            let mut line =
                serde_json::to_vec(request).map_err(|e| SandboxError::Garbled(e.to_string()))?;
            line.push(b'\n');
            self.stdin
                .write_all(&line)
                .await
                .map_err(|err| SandboxError::Ended(err.to_string()))?;
            self.stdin
                .flush()
                .await
                .map_err(|err| SandboxError::Ended(err.to_string()))?;
            self.read(max_bytes).await
        };
        let watch = async move {
            let limit = memory_mb * 1024 * 1024;
            loop {
                tokio::time::sleep(WATCH_EVERY).await;
                if pid.is_some_and(|pid| tree_rss(pid) > limit) {
                    return SandboxError::Memory(memory_mb);
                }
            }
        };
        let answer = tokio::select! {
            answer = tokio::time::timeout(timeout, exchange) => match answer {
                Ok(answer) => answer,
                Err(_) => Err(SandboxError::Timeout(timeout.as_secs())),
            },
            over = watch => Err(over),
        };
        if answer.is_err() {
            self.kill().await;
        } else {
            self.in_exchange = false;
        }
        answer
    }

    /// Places `bytes` at `name` under `/mnt/data` (replacing what was there), part by part.
    /// A part the driver refuses is an error that leaves the sandbox running; one it does not
    /// answer in time ends the sandbox.
    pub async fn put(&mut self, name: &str, bytes: &[u8]) -> Result<(), SandboxError> {
        let mut offset = 0;
        // An empty file is one empty part.
        loop {
            let end = bytes.len().min(offset + PUT_PART);
            let b64 = base64::engine::general_purpose::STANDARD.encode(&bytes[offset..end]);
            let request = serde_json::json!({
                "op": "put", "path": name, "b64": b64, "append": offset > 0,
            });
            let answer = self.request(&request, PUT_PART_TIMEOUT, 4096).await?;
            if answer["ok"] != true {
                let why = answer["error"].as_str().unwrap_or("no reason given");
                return Err(SandboxError::Refused(why.chars().take(300).collect()));
            }
            offset = end;
            if offset >= bytes.len() {
                return Ok(());
            }
        }
    }

    /// One line of the driver's, at most `max_bytes`, as JSON.
    async fn read(&mut self, max_bytes: usize) -> Result<Value, SandboxError> {
        let mut line = Vec::new();
        loop {
            let buffer = self
                .stdout
                .fill_buf()
                .await
                .map_err(|err| SandboxError::Ended(err.to_string()))?;
            if buffer.is_empty() {
                return Err(SandboxError::Ended(self.exit_status()));
            }
            let (taken, done) = match buffer.iter().position(|b| *b == b'\n') {
                Some(end) => (end + 1, true),
                None => (buffer.len(), false),
            };
            line.extend_from_slice(&buffer[..taken]);
            self.stdout.consume(taken);
            if line.len() > max_bytes {
                return Err(SandboxError::TooLarge(max_bytes));
            }
            if done {
                return serde_json::from_slice(&line)
                    .map_err(|err| SandboxError::Garbled(err.to_string()));
            }
        }
    }

    fn exit_status(&mut self) -> String {
        match self.child.try_wait() {
            Ok(Some(status)) => status.to_string(),
            _ => "its output closed".into(),
        }
    }

    /// bubblewrap's process id (the sandbox's processes are its descendants).
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Whether the sandbox is still running and can answer (no exchange was cut off).
    pub fn is_alive(&mut self) -> bool {
        !self.in_exchange && matches!(self.child.try_wait(), Ok(None))
    }

    /// Kills the sandbox (bubblewrap; its PID namespace ends with it) and reaps it.
    pub async fn kill(&mut self) {
        let _ = self.child.start_kill();
        let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
    }
}

/// Where `program` is: itself when it names a path, else the first match on `PATH`.
pub fn find_program(program: &Path) -> Option<PathBuf> {
    if program.components().count() > 1 {
        return program.is_file().then(|| program.to_path_buf());
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(program))
            .find(|candidate| candidate.is_file())
    })
}
