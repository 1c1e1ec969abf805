//! A real SMTP server for the email tests: `tests/email/smtp_sink.py` (aiosmtpd, installed into
//! `target/smtp-venv` on first use), started in the background on a port it picks, writing
//! each message it takes to a temporary directory as JSON.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::subprocess::{Background, start_within};

/// How long a sink may live: longer than any test that uses it, so it is killed by its test's
/// end, and by this only when a test process dies without dropping it.
const SINK_LIMIT: Duration = Duration::from_secs(600);

pub struct SmtpSink {
    pub port: u16,
    dir: tempfile::TempDir,
    _server: Background,
}

/// Python with `tests/email/requirements.txt` (aiosmtpd) installed.
fn python_with_aiosmtpd() -> PathBuf {
    crate::openai_python::python_venv("target/smtp-venv", "tests/email/requirements.txt")
}

impl SmtpSink {
    /// Starts a sink and waits until it accepts connections.
    pub async fn start() -> Self {
        let python = tokio::task::spawn_blocking(python_with_aiosmtpd)
            .await
            .unwrap();
        let dir = tempfile::tempdir().expect("a directory for received mail");
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/email/smtp_sink.py");
        let mut command = Command::new(python);
        command
            .arg(script)
            .arg(dir.path())
            .arg(SINK_LIMIT.as_secs().to_string());
        tokio::task::spawn_blocking(move || {
            let server = start_within(command, "the SMTP sink", SINK_LIMIT);
            let ready = server.wait_for_line("ready ", Duration::from_secs(60));
            let port = ready["ready ".len()..].trim().parse().expect("a port");
            Self {
                port,
                dir,
                _server: server,
            }
        })
        .await
        .unwrap()
    }

    /// The URL Colloquy sends through.
    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// Every message received so far, oldest first: `mail_from`, `rcpt_tos`, `from`, `to`,
    /// `cc`, `bcc`, `subject`, `content_type`, `body` (decoded), `raw`.
    pub fn received(&self) -> Vec<Value> {
        let mut names: Vec<PathBuf> = std::fs::read_dir(self.dir.path())
            .expect("the sink's directory")
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|path| {
                path.extension().is_some_and(|ext| ext == "json")
                    && !path
                        .file_name()
                        .is_some_and(|name| name.to_string_lossy().starts_with('.'))
            })
            .collect();
        names.sort();
        names
            .iter()
            .map(|path| {
                serde_json::from_slice(&std::fs::read(path).expect("a message file"))
                    .expect("a message record")
            })
            .collect()
    }
}
