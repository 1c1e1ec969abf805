//! Every program a test starts (an SDK script, a browser scenario, `npm ci`, `pip install`, a
//! server beside the application)
//! runs under a wall-clock limit: one that hangs is killed with everything it started (its
//! process group: Node and the Chromium it drives), and the test fails saying so, instead of
//! eating the whole CI budget.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// An SDK script or a browser scenario: each takes seconds; a minute's margin per step.
pub const CLIENT_LIMIT: Duration = Duration::from_secs(300);
/// Installing a pinned set of packages from a registry on a cold cache.
pub const INSTALL_LIMIT: Duration = Duration::from_secs(900);

/// Runs `command` to its end and returns what it printed; kills its process group and panics,
/// naming `what` and the output so far, if it runs past `limit`.
pub fn output_within(mut command: Command, what: &str, limit: Duration) -> Output {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so a kill reaches the programs it started.
        .process_group(0);
    let mut child = command
        .spawn()
        .unwrap_or_else(|err| panic!("{what} could not start: {err}"));
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    // unwrap: both pipes were asked for above.
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("the child's status") {
            break status;
        }
        if Instant::now() >= deadline {
            let group = format!("-{}", child.id());
            let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
            let _ = child.kill();
            let _ = child.wait();
            let stdout = String::from_utf8_lossy(&stdout.join().unwrap_or_default()).into_owned();
            let stderr = String::from_utf8_lossy(&stderr.join().unwrap_or_default()).into_owned();
            panic!("{what} ran past {limit:?} and was killed:\n{stdout}\n{stderr}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

/// A server a test runs beside the application (an SMTP server): in its own process group,
/// killed with everything it started when dropped, or when `limit` passes, whichever is first.
pub struct Background {
    child: std::process::Child,
    finished: std::sync::Arc<std::sync::atomic::AtomicBool>,
    lines: std::sync::mpsc::Receiver<String>,
    what: String,
}

/// Starts `command` in the background under a wall-clock `limit`; its stdout is read line by
/// line (`Background::wait_for_line`), its stderr goes to the test's.
pub fn start_within(mut command: Command, what: &str, limit: Duration) -> Background {
    use std::io::BufRead;
    use std::sync::atomic::{AtomicBool, Ordering};
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .process_group(0);
    let mut child = command
        .spawn()
        .unwrap_or_else(|err| panic!("{what} could not start: {err}"));
    // unwrap: stdout was asked for above.
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let (send, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            if send.send(line).is_err() {
                break;
            }
        }
    });
    let finished = std::sync::Arc::new(AtomicBool::new(false));
    let watched = finished.clone();
    let group = format!("-{}", child.id());
    std::thread::spawn(move || {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if watched.load(Ordering::Relaxed) {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
    });
    Background {
        child,
        finished,
        lines,
        what: what.to_string(),
    }
}

impl Background {
    /// Its process id (a test may kill it alone, as `kill -9` would).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The first line it prints that starts with `prefix`, waiting at most `within`.
    pub fn wait_for_line(&self, prefix: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.starts_with(prefix) => return line,
                Ok(_) => {}
                Err(_) => panic!(
                    "{} did not print a line starting {prefix:?} within {within:?}",
                    self.what
                ),
            }
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        self.finished
            .store(true, std::sync::atomic::Ordering::Relaxed);
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_background_program_is_killed_with_what_it_started_when_dropped() {
    let mut command = Command::new("sh");
    command.args(["-c", "sleep 30 & echo started $!; wait"]);
    let running = start_within(command, "a sleeper", Duration::from_secs(60));
    let line = running.wait_for_line("started", Duration::from_secs(10));
    let sleeper = line.trim_start_matches("started ").trim().to_string();
    drop(running);
    let gone = (0..50).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        !std::path::Path::new(&format!("/proc/{sleeper}")).exists()
            || std::fs::read_to_string(format!("/proc/{sleeper}/stat"))
                .is_ok_and(|stat| stat.contains(") Z "))
    });
    assert!(gone, "the program's own child {sleeper} outlived it");
}

#[test]
fn a_program_past_its_limit_is_killed_with_what_it_started() {
    let started = Instant::now();
    let mut command = Command::new("sh");
    // The child's own child sleeps too: both must go.
    command.args(["-c", "echo begun; sleep 30 & sleep 30"]);
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        output_within(command, "a sleeper", Duration::from_millis(300))
    }));
    let message = *outcome
        .expect_err("it must not finish")
        .downcast::<String>()
        .expect("a message");
    assert!(message.contains("a sleeper ran past"), "{message}");
    assert!(message.contains("begun"), "{message}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_program_within_its_limit_gives_its_output_and_status() {
    let mut command = Command::new("sh");
    command.args(["-c", "echo out; echo err >&2; exit 3"]);
    let output = output_within(command, "a quick one", Duration::from_secs(30));
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(output.stdout, b"out\n");
    assert_eq!(output.stderr, b"err\n");
}
