//! Chromium dies with its server: a real `colloquy serve` that opened a browser session and is
//! then killed with `kill -9` (the server alone, not its process group) leaves no Chromium
//! running on its profiles.

use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::client::{Call, Client};
use crate::fake_upstream::{FakeUpstream, Reply};
use crate::helpers::ADMIN_KEY;
use crate::subprocess::{Background, start_within};

const BINARY: &str = env!("CARGO_BIN_EXE_colloquy");
/// How long Chromium's processes may outlive a killed server.
const DIES_WITHIN: Duration = Duration::from_secs(5);

/// `colloquy serve` on a free port with `dir` as its data directory and `upstream` as its
/// model; its address, once ready.
async fn serve(dir: &Path, upstream: &str) -> (Background, String) {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut command = Command::new(BINARY);
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("COLLOQUY_DATA_DIR", dir)
        .env("COLLOQUY_BIND", format!("127.0.0.1:{port}"))
        .env("COLLOQUY_LOG__FILTER", "warn")
        .env("COLLOQUY_LLM__BASE_URL", upstream)
        .env("COLLOQUY_AUTH__BOOTSTRAP_API_KEY", ADMIN_KEY)
        .env(
            "COLLOQUY_BROWSER__CHROMIUM_PATH",
            crate::browser::chromium(),
        )
        .arg("serve");
    let server = start_within(command, "colloquy serve", Duration::from_secs(300));
    let base = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(90);
    while reqwest::get(format!("{base}/health/ready"))
        .await
        .map_or(true, |ready| !ready.status().is_success())
    {
        assert!(Instant::now() < deadline, "colloquy serve did not start");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    (server, base)
}

/// The processes whose command line names a profile under `dir`'s browser folder: each with
/// its parent and the start of its command line.
fn chromium_on(dir: &Path) -> Vec<String> {
    let needle = format!("--user-data-dir={}/", dir.join("browser").display());
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter_map(|entry| {
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            let parent = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .nth(1)
                .unwrap_or("?")
                .to_string();
            cmdline.contains(&needle).then(|| {
                format!(
                    "{} (parent {parent}): {}",
                    entry.file_name().to_string_lossy(),
                    &cmdline[..cmdline.len().min(60)]
                )
            })
        })
        .collect()
}

#[actix_web::test]
async fn chromium_dies_with_a_server_killed_with_kill_9() {
    let upstream = FakeUpstream::start().await;
    // A navigation the guard refuses still opens the session (its Chromium runs on).
    upstream.script([
        Reply::tool_call(
            "b1",
            "browser_action",
            json!({"action": "navigate", "url": "http://127.0.0.1:1/"}),
        ),
        Reply::text("Done."),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let (server, base) = serve(dir.path(), &upstream.base_url).await;
    let http = reqwest::Client::new();
    let client = Client::with_key(&http, &base, ADMIN_KEY);
    let chat = client.new_chat_with(&json!({})).await;
    let sent = client
        .chat_api()
        .send_message(&chat)
        .json(&json!({"content": "Open a page",
                      "web_search_options": {"x_tools": ["browser_action"]}}))
        .call()
        .await;
    assert_eq!(sent.status(), 200);
    let stream = sent.text().await.unwrap();
    assert!(stream.contains("browser_action"), "{stream}");
    let running = chromium_on(dir.path());
    assert!(!running.is_empty(), "the session's Chromium runs: {stream}");

    let killed = Command::new("kill")
        .args(["-KILL", &server.pid().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let deadline = Instant::now() + DIES_WITHIN;
    let mut left = chromium_on(dir.path());
    while !left.is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        left = chromium_on(dir.path());
    }
    assert!(
        left.is_empty(),
        "Chromium outlived its server by {DIES_WITHIN:?}: {left:#?}"
    );
    drop(server);
}
