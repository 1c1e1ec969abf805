//! The Colloquy process under measurement: the `colloquy` binary of this build, serving on a
//! free loopback port with SQLite in a temporary directory, and what `/proc` says of it.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const API_KEY: &str = "bench-key";
pub const MODEL: &str = "fake-model";
const BINARY: &str = env!("CARGO_BIN_EXE_colloquy");

pub struct Colloquy {
    child: Child,
    pub url: String,
    _data: tempfile::TempDir,
}

impl Colloquy {
    /// Starts Colloquy in front of `upstream` with `vars` added to its environment, and waits
    /// until it answers.
    pub async fn start(upstream: SocketAddr, vars: &[(&str, String)]) -> Colloquy {
        let data = tempfile::tempdir().expect("temporary data directory");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let url = format!("http://127.0.0.1:{port}");
        let mut command = Command::new(BINARY);
        command
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("COLLOQUY_BIND", format!("127.0.0.1:{port}"))
            .env("COLLOQUY_DATA_DIR", data.path())
            .env("COLLOQUY_LLM__BASE_URL", format!("http://{upstream}/v1"))
            .env("COLLOQUY_LLM__MODEL", MODEL)
            .env("COLLOQUY_LLM__CONTEXT_LENGTH", "131072")
            .env("COLLOQUY_AUTH__BOOTSTRAP_API_KEY", API_KEY)
            .env("COLLOQUY_MEMORY__EMBEDDER", "hash")
            .env("COLLOQUY_LOG__FILTER", "error")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        for (key, value) in vars {
            command.env(key, value);
        }
        let mut child = command.arg("serve").spawn().expect("start colloquy");
        let client = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("client");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(response) = client.get(format!("{url}/health")).send().await
                && response.status().is_success()
            {
                break;
            }
            assert!(
                child.try_wait().expect("child status").is_none(),
                "colloquy exited early"
            );
            assert!(Instant::now() < deadline, "colloquy did not come up");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Colloquy {
            child,
            url,
            _data: data,
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Resident memory, in bytes.
    pub fn rss_bytes(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .expect("the process's status");
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kib| kib.parse::<u64>().ok())
            .map_or(0, |kib| kib * 1024)
    }

    /// User plus system CPU seconds so far.
    pub fn cpu_seconds(&self) -> f64 {
        cpu_seconds_of(&format!("/proc/{}/stat", self.pid())).unwrap_or(0.0)
    }

    /// File descriptors open now.
    pub fn open_files(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.pid())).map_or(0, |entries| entries.count())
    }

    /// Waits until the RSS stops moving (allocator and lazily touched pages settled).
    pub async fn settled_rss(&self) -> u64 {
        let mut last = self.rss_bytes();
        for _ in 0..20 {
            tokio::time::sleep(Duration::from_millis(500)).await;
            let now = self.rss_bytes();
            if now.abs_diff(last) < 64 * 1024 {
                return now;
            }
            last = now;
        }
        last
    }

    /// A gauge of `/metrics`, by its full name.
    pub async fn gauge(&self, client: &reqwest::Client, name: &str) -> Option<f64> {
        let text = client
            .get(format!("{}/metrics", self.url))
            .bearer_auth(API_KEY)
            .send()
            .await
            .ok()?
            .text()
            .await
            .ok()?;
        text.lines()
            .filter(|line| !line.starts_with('#'))
            .find_map(|line| line.strip_prefix(name)?.trim().parse().ok())
    }

    /// Creates `count` chats through the chat API, `concurrency` at a time; their ids.
    pub async fn create_chats(
        &self,
        client: &reqwest::Client,
        count: usize,
        concurrency: usize,
    ) -> Vec<String> {
        let url = format!("{}/chat/api/chats", self.url);
        crate::load::in_parallel(count, concurrency, |_| {
            let request = client
                .post(&url)
                .bearer_auth(API_KEY)
                .json(&serde_json::json!({}));
            async move {
                let chat: Value = request
                    .send()
                    .await
                    .expect("create a chat")
                    .error_for_status()
                    .expect("a created chat")
                    .json()
                    .await
                    .expect("the chat as JSON");
                chat["id"].as_str().expect("the chat's id").to_string()
            }
        })
        .await
    }
}

impl Drop for Colloquy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// User plus system CPU seconds from a `/proc/<pid>/stat` file. The kernel counts them in
/// `USER_HZ` ticks, 100 on every Linux architecture.
pub fn cpu_seconds_of(path: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(path).ok()?;
    // utime and stime are fields 14 and 15; count after the parenthesised command name.
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    let utime: f64 = fields.nth(11)?.parse().ok()?;
    let stime: f64 = fields.next()?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

/// This process's soft open-file limit (Colloquy's is the same: it inherits it and raises the
/// soft limit to the hard one).
pub fn open_file_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

pub fn mib(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / (1024.0 * 1024.0))
}
