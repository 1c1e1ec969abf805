//! The operating system's limits a busy process meets first: open files. Every stream holds
//! its client's socket and, while the model answers, the model server's; a limit lower than
//! the configured number of requests in flight fails with "too many open files" under load, so
//! start-up raises the soft limit to the hard one and warns when even that is too low.

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

/// Raises the open-file limit and logs a warning when it cannot hold `max_in_flight`
/// requests.
pub fn check_open_files(max_in_flight: usize) {
    match raise_open_files() {
        Some(limit) => match open_files_warning(limit, max_in_flight) {
            Some(warning) => tracing::warn!(limit, max_in_flight, "{warning}"),
            None => tracing::info!(limit, max_in_flight, "open-file limit"),
        },
        None => tracing::warn!("could not read the open-file limit"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
