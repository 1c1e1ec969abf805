//! Where a session's Chromium sends its own network: a listener on loopback, one per session,
//! given to Chromium as its proxy. Every request a page makes is meant to be paused by the
//! Fetch domain and answered by Colloquy (`interception`), so nothing should ever arrive here;
//! whatever does (a request that went round the interception) is answered with nothing (the
//! connection closed), logged, and recorded (`Bypasses`) for the tests that hold it at zero.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;

use super::BrowserSessionId;

/// Bypassing requests remembered (the latest ones).
const MAX_REMEMBERED: usize = 100;
/// How much of a connection is read to name its request: its first line is enough.
const READ_BYTES: usize = 2048;
/// How long a connection is given to say what it wants. Chromium opens sockets to its proxy
/// ahead of need (preconnects) and keeps them idle for a while; one that carries no request
/// before it closes or this passes is no request.
const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The requests that reached a sink: their first line (`GET http://…`, `CONNECT host:443`).
#[derive(Debug, Clone, Default)]
pub struct Bypasses(Arc<Mutex<Vec<String>>>);

impl Bypasses {
    fn push(&self, request: String) {
        let mut list = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if list.len() == MAX_REMEMBERED {
            list.remove(0);
        }
        list.push(request);
    }

    pub fn list(&self) -> Vec<String> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// One session's sink, closed when dropped.
pub struct Sink {
    port: u16,
    task: tokio::task::AbortHandle,
}

impl Sink {
    /// Listens on a free loopback port for session `session`'s Chromium.
    pub async fn open(session: &BrowserSessionId, bypasses: &Bypasses) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let (session, bypasses) = (session.clone(), bypasses.clone());
        let task = tokio::spawn(async move {
            while let Ok((mut connection, _)) = listener.accept().await {
                let (session, bypasses) = (session.clone(), bypasses.clone());
                tokio::spawn(async move {
                    let mut head = vec![0; READ_BYTES];
                    let read = tokio::time::timeout(READ_TIMEOUT, connection.read(&mut head)).await;
                    let read = read.ok().and_then(Result::ok).unwrap_or(0);
                    let text = String::from_utf8_lossy(&head[..read]);
                    let request = text.lines().next().unwrap_or("").to_string();
                    if request.is_empty() {
                        return;
                    }
                    tracing::debug!(%session, request, "a browser request went round the interception");
                    bypasses.push(request);
                });
            }
        });
        Ok(Self {
            port,
            task: task.abort_handle(),
        })
    }

    /// The proxy address Chromium is given.
    pub fn address(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        self.task.abort();
    }
}
