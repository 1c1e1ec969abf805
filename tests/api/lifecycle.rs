//! Start-up, restart and shutdown of the real application and of the real binary.

use entities::ids::{ChatId, RunId, UserId};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use chrono::Utc;
use sea_orm::{ActiveModelTrait, EntityTrait, Set};
use serde_json::Value;

use crate::client::Call;
use crate::helpers::free_port;
use crate::helpers::spawn_app;

const BINARY: &str = env!("CARGO_BIN_EXE_colloquy");

#[actix_web::test]
async fn a_restart_keeps_users_keys_and_chats_and_does_not_bootstrap_again() {
    let app = spawn_app().await;
    assert!(app.login_url.is_some());
    let chat = app.create_chat("Survives").await;
    let app = app.restart().await;
    assert!(app.login_url.is_none(), "the admin exists, no new link");
    let fetched: Value = app
        .chat_api()
        .chat(chat["id"].as_str().unwrap())
        .read_json()
        .await;
    assert_eq!(fetched["title"], "Survives");
}

#[actix_web::test]
async fn runs_left_running_by_a_dead_process_are_marked_interrupted() {
    let app = spawn_app().await;
    let chat = app.create_chat("Crashed").await;
    let me: Value = app.auth().me().read_json().await;
    let run_id = RunId::generate();
    entities::runs::ActiveModel {
        id: Set(run_id.clone()),
        chat_id: Set(ChatId::from_string(chat["id"].as_str().unwrap())),
        user_id: Set(UserId::from_string(me["id"].as_str().unwrap())),
        status: Set(entities::runs::RunStatus::Running),
        stop_reason: Set(None),
        user_message_id: Set(None),
        assistant_message_id: Set(None),
        iterations: Set(1),
        input_tokens: Set(0),
        output_tokens: Set(0),
        error: Set(None),
        options: Set(None),
        created_at: Set(Utc::now()),
        finished_at: Set(None),
        draft: Set(None),
        tool_calls: Set(None),
        deep_think: Set(None),
    }
    .insert(&app.db)
    .await
    .unwrap();
    let app = app.restart().await;
    let run = entities::runs::Entity::find_by_id(run_id)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(run.status.as_str(), "interrupted");
    assert_eq!(
        run.stop_reason,
        Some(entities::stop_reason::StopReason::Interrupted)
    );
    assert!(run.finished_at.is_some());
}

#[test]
fn help_lists_the_subcommands() {
    let output = Command::new(BINARY).arg("--help").output().unwrap();
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    for subcommand in ["serve", "migrate", "create-user", "create-api-key"] {
        assert!(
            help.contains(subcommand),
            "{subcommand} missing from:\n{help}"
        );
    }
}

/// Runs the binary with a clean environment apart from `vars`.
fn colloquy(dir: &std::path::Path, vars: &[(&str, &str)]) -> Command {
    let mut command = Command::new(BINARY);
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("COLLOQUY_DATA_DIR", dir)
        .env("COLLOQUY_LOG__FILTER", "info");
    for (key, value) in vars {
        command.env(key, value);
    }
    command
}

#[test]
fn the_cli_creates_users_and_api_keys_that_the_server_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let migrate = colloquy(dir.path(), &[]).arg("migrate").output().unwrap();
    assert!(
        migrate.status.success(),
        "{}",
        String::from_utf8_lossy(&migrate.stderr)
    );
    assert!(dir.path().join("colloquy.db").exists());

    let mut create = colloquy(dir.path(), &[])
        .args(["create-user", "grace", "--password-stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    create
        .stdin
        .take()
        .unwrap()
        .write_all(b"cobol forever\n")
        .unwrap();
    let created = create.wait_with_output().unwrap();
    assert!(created.status.success());
    assert!(String::from_utf8_lossy(&created.stdout).contains("created user grace"));

    let key = colloquy(dir.path(), &[])
        .args(["create-api-key", "grace", "--name", "ci"])
        .output()
        .unwrap();
    assert!(
        key.status.success(),
        "{}",
        String::from_utf8_lossy(&key.stderr)
    );
    let key = String::from_utf8(key.stdout).unwrap().trim().to_string();
    assert!(key.starts_with("cq_"), "{key}");

    let missing = colloquy(dir.path(), &[])
        .args(["create-api-key", "nobody"])
        .output()
        .unwrap();
    assert!(!missing.status.success());

    let server = Server::start(dir.path(), &[]);
    let client = reqwest::blocking::Client::new();
    let me: Value = client
        .get(format!("{}/auth/me", server.url))
        .bearer_auth(&key)
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(me["username"], "grace");
}

/// The real binary, serving on a free port, with its stdout lines collected.
struct Server {
    child: std::process::Child,
    url: String,
    stdout: Vec<String>,
}

impl Server {
    fn start(dir: &std::path::Path, vars: &[(&str, &str)]) -> Server {
        let port = free_port();
        let bind = format!("127.0.0.1:{port}");
        let mut vars = vars.to_vec();
        vars.push(("COLLOQUY_BIND", &bind));
        let mut child = colloquy(dir, &vars)
            .arg("serve")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let url = format!("http://{bind}");
        let deadline = Instant::now() + Duration::from_secs(30);
        let client = reqwest::blocking::Client::new();
        while client.get(format!("{url}/health")).send().is_err() {
            assert!(Instant::now() < deadline, "server did not come up");
            assert!(child.try_wait().unwrap().is_none(), "server exited early");
            std::thread::sleep(Duration::from_millis(50));
        }
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        // The banner is printed before the server answers; give the pipe a moment.
        let mut lines = Vec::new();
        while let Ok(line) = rx.recv_timeout(Duration::from_millis(300)) {
            lines.push(line);
        }
        Server {
            child,
            url,
            stdout: lines,
        }
    }

    /// Sends SIGTERM and waits for a clean exit.
    fn terminate(mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-TERM", &pid])
                .status()
                .unwrap()
                .success()
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "server did not stop on SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_binary_bootstraps_on_defaults_prints_a_login_link_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("nested").join("data");
    let server = Server::start(&data, &[("COLLOQUY_AUTH__BOOTSTRAP_API_KEY", "k")]);
    assert!(
        data.join("colloquy.db").exists(),
        "data dir and database created"
    );
    let link = server
        .stdout
        .iter()
        .find(|line| line.contains("/login?token="))
        .unwrap_or_else(|| panic!("no login link in {:?}", server.stdout))
        .trim()
        .to_string();
    assert!(link.starts_with(&server.url), "{link}");

    let client = reqwest::blocking::Client::new();
    let with_key = client
        .get(format!("{}/v1/models", server.url))
        .bearer_auth("k")
        .send()
        .unwrap();
    // No upstream runs at the default address here: authenticated, then a gateway error.
    assert_eq!(with_key.status(), 502);
    let without = client
        .get(format!("{}/v1/models", server.url))
        .send()
        .unwrap();
    assert_eq!(without.status(), 401);

    let status = server.terminate();
    assert!(status.success(), "graceful exit, got {status:?}");
}

/// More clients than the process has open files for: the server accepts only as many
/// connections as its limit holds beside their model calls (the rest wait in the backlog), so
/// it never runs out: no accept fails with "too many open files", and once the crowd goes, a
/// request that reads the database is answered.
#[test]
fn more_clients_than_open_files_wait_unaccepted_and_the_server_keeps_its_files() {
    use std::os::unix::process::CommandExt;
    const LIMIT: u64 = 400;
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let bind = format!("127.0.0.1:{port}");
    let log = dir.path().join("server.log");
    let mut command = colloquy(
        dir.path(),
        &[
            ("COLLOQUY_BIND", &bind),
            ("COLLOQUY_WORKERS", "1"),
            ("COLLOQUY_HTTP__MAX_IN_FLIGHT", "100"),
            ("COLLOQUY_HTTP__LISTEN_BACKLOG", "1024"),
            ("COLLOQUY_AUTH__BOOTSTRAP_API_KEY", "k"),
        ],
    );
    command
        .arg("serve")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap());
    // SAFETY: `setrlimit` is async-signal-safe and touches only the child being started.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: LIMIT,
                rlim_max: LIMIT,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = command.spawn().unwrap();
    let mut server = Server {
        child,
        url: format!("http://{bind}"),
        stdout: Vec::new(),
    };
    let client = reqwest::blocking::Client::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while client.get(format!("{}/health", server.url)).send().is_err() {
        assert!(Instant::now() < deadline, "server did not come up");
        assert!(
            server.child.try_wait().unwrap().is_none(),
            "server exited early: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let files = || {
        std::fs::read_dir(format!("/proc/{}/fd", server.child.id()))
            .map(|entries| entries.count() as u64)
            .unwrap_or(0)
    };
    // Half again as many clients as the process has files, each connected (the kernel
    // completes a connection into the backlog before the server accepts it).
    let crowd: Vec<std::net::TcpStream> = (0..LIMIT * 3 / 2)
        .map(|_| std::net::TcpStream::connect(&bind).unwrap())
        .collect();
    let mut most = 0;
    for _ in 0..20 {
        most = most.max(files());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(most < LIMIT, "{most} open files against a limit of {LIMIT}");
    drop(crowd);
    let deadline = Instant::now() + Duration::from_secs(30);
    let me = loop {
        match client
            .get(format!("{}/auth/me", server.url))
            .bearer_auth("k")
            .timeout(Duration::from_secs(5))
            .send()
        {
            Ok(response) => break response,
            Err(err) => assert!(
                Instant::now() < deadline,
                "no answer after the crowd: {err}"
            ),
        }
    };
    assert_eq!(me.status(), 200);
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        !logged.contains("os error 24"),
        "the server ran out of files:\n{logged}"
    );
    assert!(
        logged.contains("connections each HTTP worker accepts"),
        "{logged}"
    );
    server.stdout.clear();
}
