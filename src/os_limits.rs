//! The operating system's limits a busy process meets first: open files and the queue of
//! connections not yet accepted. Every stream holds its client's socket and, while the model
//! answers, the model server's; a limit lower than the configured number of requests in flight
//! fails with "too many open files" under load, so start-up raises the soft limit to the hard
//! one and warns when even that is too low. The listener is bound with the configured backlog,
//! and start-up warns when the kernel's cap (`net.core.somaxconn`) cuts it.
//!
//! Background work that comes in bursts (the chat search's indexing and merges) runs on threads
//! given a lower priority (`lower_thread_priority`), so that on a busy machine a request's
//! thread takes the core from them at once instead of waiting behind a merge.

use std::net::{SocketAddr, TcpListener, ToSocketAddrs};

/// Open files the process needs beside its streams: the database pool, document indexes,
/// logs, the listener, MCP servers' pipes.
pub const BASE_OPEN_FILES: u64 = 256;

/// Open files needed for `max_in_flight` requests: two per request, plus the base.
pub fn open_files_needed(max_in_flight: usize) -> u64 {
    (max_in_flight as u64).saturating_mul(2) + BASE_OPEN_FILES
}

/// The warning to log when `limit` open files cannot hold `max_in_flight` requests.
pub fn open_files_warning(limit: u64, max_in_flight: usize) -> Option<String> {
    let needed = open_files_needed(max_in_flight);
    (limit < needed).then(|| {
        format!(
            "the open-file limit is {limit}, but http.max_in_flight = {max_in_flight} needs about \
             {needed} (two per request, {BASE_OPEN_FILES} besides): raise it (ulimit -n, \
             LimitNOFILE= in a systemd unit) or lower http.max_in_flight; past it, requests fail \
             with \"too many open files\""
        )
    })
}

/// Raises the soft open-file limit to the hard one; returns the soft limit now in force
/// (`None` where the platform does not say).
#[cfg(unix)]
pub fn raise_open_files() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `getrlimit` writes the struct it is given, which lives for the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return None;
    }
    if limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: limit.rlim_max,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: `setrlimit` reads the struct it is given, which lives for the call.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            limit.rlim_cur = limit.rlim_max;
        }
    }
    #[allow(clippy::unnecessary_cast)] // `rlim_t` is not `u64` on every platform.
    Some(limit.rlim_cur as u64)
}

#[cfg(not(unix))]
pub fn raise_open_files() -> Option<u64> {
    None
}

/// File-table slots `reserve_file_table` makes room for: the files of the default
/// `http.max_in_flight` (10,000 requests, two files each) and then some.
pub const RESERVED_FILE_SLOTS: u64 = 32_768;

/// Raises the open-file limit (`raise_open_files`) and grows the process's table of open files
/// at once to `RESERVED_FILE_SLOTS` slots (fewer when the limit is lower), returning them. To
/// be called first in `main`, before any thread starts.
///
/// Why: the kernel grows the table only when a new file needs a slot past its end, doubling it,
/// and in a process of many threads each growth waits for an RCU grace period
/// (`expand_fdtable`'s `synchronize_rcu`) while every thread opening a file (an accept, a
/// model call's socket) waits behind it. On a loaded 2-core VM that stood the whole process
/// still for up to 680 ms each time the connections crossed a power of two (`cargo bench --bench
/// overhead`, `store: false` at 5,000 requests a second: every thread in `D` state in
/// `expand_files`). A process of one thread grows it with no wait, and a table never shrinks;
/// the room costs 8 bytes a slot (256 KiB).
#[cfg(unix)]
pub fn reserve_file_table() -> Option<u64> {
    grow_file_table(raise_open_files()?.min(RESERVED_FILE_SLOTS))
}

/// Grows the table of open files to hold `slots` (below the open-file limit); `slots` once
/// done.
#[cfg(unix)]
fn grow_file_table(slots: u64) -> Option<u64> {
    use std::os::fd::AsRawFd;
    let highest = libc::c_int::try_from(slots.checked_sub(1)?).ok()?;
    let file = std::fs::File::open("/dev/null").ok()?;
    // SAFETY: `F_DUPFD_CLOEXEC` duplicates an open descriptor this function owns onto the
    // lowest free slot at or past `highest`, taking no other descriptor; the copy is closed
    // at once, and the table keeps the size it grew to.
    let copy = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_DUPFD_CLOEXEC, highest) };
    if copy < 0 {
        return None;
    }
    // SAFETY: `copy` is the descriptor just made, owned here and used by nothing else.
    unsafe { libc::close(copy) };
    Some(slots)
}

#[cfg(not(unix))]
pub fn reserve_file_table() -> Option<u64> {
    None
}

/// How much nicer than the rest of the process background threads run: on a busy machine they
/// get about a tenth of a core beside a request's threads (the kernel weighs nice 10 against 0
/// as 110 to 1024), so they still progress, and on an idle one the whole of it.
pub const BACKGROUND_NICE: i32 = 10;

/// The highest nice value (the lowest priority) there is.
const MAX_NICE: i32 = 19;

/// Raises the calling thread's nice value by `by` (to 19 at most), for it and for the threads
/// it starts afterwards (they inherit it). Linux keeps a nice value per thread, so the rest of
/// the process is untouched. Raising one's own nice value needs no privilege.
#[cfg(target_os = "linux")]
pub fn lower_thread_priority(by: i32) -> std::io::Result<()> {
    // SAFETY: `gettid` takes no argument and cannot fail.
    let tid = unsafe { libc::syscall(libc::SYS_gettid) };
    let Ok(tid) = libc::id_t::try_from(tid) else {
        return Err(std::io::Error::other("gettid returned no thread id"));
    };
    // SAFETY: `getpriority` reads only its arguments; -1 is a nice value as well as the error
    // return, so errno is cleared first and read after.
    let now = unsafe {
        *libc::__errno_location() = 0;
        libc::getpriority(libc::PRIO_PROCESS, tid)
    };
    if now == -1 && std::io::Error::last_os_error().raw_os_error() != Some(0) {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `setpriority` reads only its arguments.
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, (now + by).min(MAX_NICE)) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The nice value of the calling thread; for tests.
#[cfg(all(test, target_os = "linux"))]
pub(crate) fn own_nice() -> i32 {
    nice_in_stat(&std::fs::read_to_string("/proc/thread-self/stat").unwrap())
}

/// The nice values of this process's threads whose name (as the kernel keeps it: at most 15
/// bytes) starts with `name`; for tests.
#[cfg(all(test, target_os = "linux"))]
pub(crate) fn nice_of_threads(name: &str) -> Vec<i32> {
    let mut nices = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if !comm.trim_end().starts_with(name) {
            continue;
        }
        if let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) {
            nices.push(nice_in_stat(&stat));
        }
    }
    nices
}

/// The nice value in a `/proc/…/stat` line: its 19th field, the 17th after the name's `)`.
#[cfg(all(test, target_os = "linux"))]
fn nice_in_stat(stat: &str) -> i32 {
    let (_, after_name) = stat.rsplit_once(')').unwrap();
    after_name
        .split_whitespace()
        .nth(16)
        .unwrap()
        .parse()
        .unwrap()
}

#[cfg(not(target_os = "linux"))]
pub fn lower_thread_priority(_by: i32) -> std::io::Result<()> {
    Ok(())
}

/// Raises the open-file limit and logs a warning when it cannot hold `max_in_flight`
/// requests; returns the limit now in force (`None` where the platform does not say).
pub fn check_open_files(max_in_flight: usize) -> Option<u64> {
    let limit = raise_open_files();
    match limit {
        Some(limit) => match open_files_warning(limit, max_in_flight) {
            Some(warning) => tracing::warn!(limit, max_in_flight, "{warning}"),
            None => tracing::info!(limit, max_in_flight, "open-file limit"),
        },
        None => tracing::warn!("could not read the open-file limit"),
    }
    limit
}

/// Connections each of `workers` HTTP workers accepts: `wanted`, unless the open-file limit
/// cannot hold that many beside what the requests they carry open. Every connection is a file,
/// and so is each admitted request's call to the model server; a process out of files fails at
/// whatever opens one next: an accept, the model call, SQLite opening its database. Held
/// within the limit, a connection past it waits in the listen backlog instead, unaccepted.
///
/// The files left beside the base are shared so that both kinds fit: either all but the
/// `max_in_flight` model calls go to connections, or (a limit too low for that) half do. Over
/// HTTP/1.1 a connection carries one request at a time, so connections and calls are never
/// more than twice the connections; over HTTP/2 a few connections carry many requests.
pub fn connections_per_worker(
    open_files: Option<u64>,
    max_in_flight: usize,
    workers: usize,
    wanted: usize,
) -> usize {
    let Some(limit) = open_files else {
        return wanted;
    };
    let budget = limit.saturating_sub(BASE_OPEN_FILES);
    let for_connections = budget.saturating_sub(max_in_flight as u64).max(budget / 2);
    let per_worker = for_connections / (workers.max(1) as u64);
    wanted.min(usize::try_from(per_worker).unwrap_or(usize::MAX).max(1))
}

/// Binds `bind` (the first of its addresses that can be bound) with a listen backlog of
/// `backlog`, as `TcpListener::bind` does with its fixed 128 (address reuse on Unix).
pub fn listen(bind: &str, backlog: u32) -> std::io::Result<TcpListener> {
    let mut failure = None;
    for address in bind.to_socket_addrs()? {
        match listen_on(address, backlog) {
            Ok(listener) => return Ok(listener),
            Err(err) => failure = Some(err),
        }
    }
    Err(failure.unwrap_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "no address to bind")
    }))
}

fn listen_on(address: SocketAddr, backlog: u32) -> std::io::Result<TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(
        Domain::for_address(address),
        Type::STREAM,
        Some(Protocol::TCP),
    )?;
    #[cfg(unix)]
    socket.set_reuse_address(true)?;
    socket.bind(&address.into())?;
    socket.listen(i32::try_from(backlog).unwrap_or(i32::MAX))?;
    Ok(socket.into())
}

/// The warning to log when the kernel's cap on listen backlogs (`somaxconn`) is below the
/// configured backlog.
pub fn backlog_warning(somaxconn: u64, backlog: u32) -> Option<String> {
    (somaxconn < u64::from(backlog)).then(|| {
        format!(
            "net.core.somaxconn is {somaxconn}, so the kernel cuts http.listen_backlog = \
             {backlog} to it: when more clients than that connect at once, the rest wait a \
             second to retry; raise it (sysctl -w net.core.somaxconn={backlog})"
        )
    })
}

/// Logs a warning when the kernel cuts `backlog` (Linux; elsewhere nothing is read).
pub fn check_backlog(backlog: u32) {
    let Ok(text) = std::fs::read_to_string("/proc/sys/net/core/somaxconn") else {
        return;
    };
    if let Ok(somaxconn) = text.trim().parse::<u64>()
        && let Some(warning) = backlog_warning(somaxconn, backlog)
    {
        tracing::warn!(somaxconn, backlog, "{warning}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn a_lowered_priority_is_the_threads_own_and_passes_to_the_threads_it_starts() {
        let before = own_nice();
        let (lowered, started) = std::thread::spawn(move || {
            lower_thread_priority(3).unwrap();
            let started = std::thread::spawn(own_nice).join().unwrap();
            (own_nice(), started)
        })
        .join()
        .unwrap();
        let expected = (before + 3).min(MAX_NICE);
        assert_eq!((lowered, started), (expected, expected));
        // The thread that asked nothing keeps its priority.
        assert_eq!(own_nice(), before);
    }

    #[test]
    fn the_backlog_warning_comes_only_when_the_kernel_cuts_it() {
        let warning = backlog_warning(128, 4_096).unwrap();
        assert!(
            warning.contains("128") && warning.contains("4096"),
            "{warning}"
        );
        assert!(backlog_warning(4_096, 4_096).is_none());
        assert!(backlog_warning(65_535, 4_096).is_none());
    }

    #[test]
    fn a_listener_is_bound_with_its_backlog_and_accepts() {
        let listener = listen("127.0.0.1:0", 1_024).unwrap();
        let address = listener.local_addr().unwrap();
        let _client = std::net::TcpStream::connect(address).unwrap();
        let (_, peer) = listener.accept().unwrap();
        assert!(peer.ip().is_loopback());
        // A name resolves as `TcpListener::bind` resolves it; a bad one is an error.
        assert!(listen("localhost:0", 16).is_ok());
        assert!(listen("no-such-host.invalid:0", 16).is_err());
    }

    #[test]
    fn connections_are_held_within_the_open_file_limit() {
        // A limit that holds everything: each worker takes what it wants.
        assert_eq!(
            connections_per_worker(Some(1_048_576), 10_000, 2, 11_024),
            11_024
        );
        // Unknown: as wanted.
        assert_eq!(connections_per_worker(None, 10_000, 2, 11_024), 11_024);
        // This machine's 20,000: half of the 19,744 beside the base is more than what the
        // 10,000 model calls leave, so half it is, shared by the workers.
        assert_eq!(
            connections_per_worker(Some(20_000), 10_000, 2, 11_024),
            4_936
        );
        // A larger limit: all that the model calls leave.
        assert_eq!(
            connections_per_worker(Some(40_256), 10_000, 4, 11_024),
            7_500
        );
        // A low one (1,024): half of what the base leaves.
        assert_eq!(connections_per_worker(Some(1_024), 10_000, 2, 11_024), 192);
        // Never none.
        assert_eq!(connections_per_worker(Some(100), 10_000, 2, 11_024), 1);
        // Whatever the numbers: a worker's connections and their model calls fit.
        for (limit, in_flight, workers) in [
            (20_000u64, 10_000usize, 2usize),
            (1_024, 64, 8),
            (65_536, 100, 3),
        ] {
            let per_worker = connections_per_worker(Some(limit), in_flight, workers, usize::MAX);
            let connections = (per_worker * workers) as u64;
            assert!(
                connections + connections.min(in_flight as u64) + BASE_OPEN_FILES <= limit,
                "{limit} {in_flight} {workers}: {per_worker}"
            );
        }
    }

    #[test]
    fn the_warning_comes_only_when_the_limit_cannot_hold_the_streams() {
        assert_eq!(open_files_needed(10_000), 20_256);
        let warning = open_files_warning(1_024, 10_000).unwrap();
        assert!(
            warning.contains("1024") && warning.contains("20256"),
            "{warning}"
        );
        assert!(open_files_warning(1_048_576, 10_000).is_none());
        assert!(open_files_warning(20_256, 10_000).is_none());
        assert!(open_files_warning(20_255, 10_000).is_some());
    }

    /// The size of this process's table of open files (`FDSize` in `/proc/self/status`).
    #[cfg(target_os = "linux")]
    fn file_table_size() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        status
            .lines()
            .find_map(|line| line.strip_prefix("FDSize:"))
            .and_then(|size| size.trim().parse().ok())
            .expect("FDSize in /proc/self/status")
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_file_table_is_grown_at_once_to_the_slots_asked_for() {
        let limit = raise_open_files().unwrap();
        let before = file_table_size();
        // Four times what the test process has, within its limit (other tests open files
        // meanwhile, but not that many).
        let slots = (before * 4).min(limit);
        assert!(
            slots > before,
            "the open-file limit {limit} leaves no room to grow {before}"
        );
        assert_eq!(grow_file_table(slots), Some(slots));
        let after = file_table_size();
        assert!(
            after >= slots,
            "{after} slots after growing {before} to {slots}"
        );
        // The slot used to grow it is free again: the next file takes a low number.
        let file = std::fs::File::open("/dev/null").unwrap();
        assert!((std::os::fd::AsRawFd::as_raw_fd(&file) as u64) < slots - 1);
        // What start-up reserves is the limit, up to `RESERVED_FILE_SLOTS`.
        assert_eq!(reserve_file_table(), Some(limit.min(RESERVED_FILE_SLOTS)));
        assert!(file_table_size() >= limit.min(RESERVED_FILE_SLOTS));
    }

    #[cfg(unix)]
    #[test]
    fn the_soft_limit_is_raised_to_the_hard_one() {
        let soft = raise_open_files().unwrap();
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: as in `raise_open_files`.
        assert_eq!(
            unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) },
            0
        );
        #[allow(clippy::unnecessary_cast)]
        let current = limit.rlim_cur as u64;
        assert_eq!(soft, current);
        assert_eq!(limit.rlim_cur, limit.rlim_max);
    }
}
