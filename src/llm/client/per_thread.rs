//! `PerThread`: one `reqwest::Client` for each thread that calls an upstream.
//!
//! A client's pooled connection is a task on the runtime where it was first opened. Colloquy
//! runs its requests on several single-threaded runtimes (the HTTP workers, the run arbiters),
//! so with one client shared by all of them a request on one worker often borrowed a
//! connection whose task lived on another: every piece of the answer then crossed threads
//! twice (the connection task woke the request's task through the other runtime's eventfd,
//! and back for the next read), and a busy worker delayed the answers of requests on an idle
//! one. With a client per thread, a connection is used only where it lives.
//!
//! The clients of a thread are kept in a thread-local list, each beside a weak reference to
//! the `PerThread` it belongs to; an entry whose `PerThread` has been dropped (a test's
//! application, a reloaded provider) is removed the next time the list grows.

use std::cell::RefCell;
use std::sync::{Arc, Weak};
use std::time::Duration;

/// What every thread's client is built with.
struct Settings {
    connect_timeout: Duration,
    /// Built when the upstream is made (so a setting that cannot work is refused then), and
    /// used by any thread where building its own client fails.
    fallback: reqwest::Client,
}

/// One upstream's HTTP clients, one per thread. Cloning shares them.
#[derive(Clone)]
pub(super) struct PerThread {
    settings: Arc<Settings>,
}

thread_local! {
    static CLIENTS: RefCell<Vec<(Weak<Settings>, reqwest::Client)>> = const { RefCell::new(Vec::new()) };
}

impl PerThread {
    pub(super) fn new(connect_timeout: Duration) -> reqwest::Result<Self> {
        let fallback = build(connect_timeout)?;
        Ok(Self {
            settings: Arc::new(Settings {
                connect_timeout,
                fallback,
            }),
        })
    }

    /// This thread's client (a handle: cloning a client is cheap).
    pub(super) fn here(&self) -> reqwest::Client {
        let mine = Arc::as_ptr(&self.settings);
        CLIENTS.with(|clients| {
            let mut clients = clients.borrow_mut();
            if let Some((_, client)) = clients.iter().find(|(owner, _)| owner.as_ptr() == mine) {
                return client.clone();
            }
            let client = build(self.settings.connect_timeout)
                .unwrap_or_else(|_| self.settings.fallback.clone());
            clients.retain(|(owner, _)| owner.strong_count() > 0);
            clients.push((Arc::downgrade(&self.settings), client.clone()));
            client
        })
    }
}

fn build(connect_timeout: Duration) -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .pool_idle_timeout(Duration::from_secs(90))
        .build()
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// An HTTP/1.1 server on 127.0.0.1 that answers every GET with `ok` on a kept-alive
    /// connection, and counts the connections it accepted.
    fn counting_server() -> (String, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                counter.fetch_add(1, Ordering::SeqCst);
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut line = String::new();
                    loop {
                        line.clear();
                        match reader.read_line(&mut line) {
                            Ok(0) | Err(_) => return,
                            Ok(_) if line == "\r\n" => {
                                let answer = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
                                if stream.write_all(answer.as_bytes()).is_err() {
                                    return;
                                }
                            }
                            Ok(_) => {}
                        }
                    }
                });
            }
        });
        (url, accepted)
    }

    /// One GET through this thread's client. A connection borrowed from a runtime that is
    /// not running would never answer, hence the timeout.
    async fn fetch(clients: &PerThread, url: &str) {
        let request = async { clients.here().get(url).send().await?.text().await };
        let body = tokio::time::timeout(Duration::from_secs(5), request)
            .await
            .expect("answered on a connection this thread drives")
            .unwrap();
        assert_eq!(body, "ok");
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn a_thread_reuses_its_own_connection_and_never_borrows_another_threads() {
        let (url, accepted) = counting_server();
        let clients = PerThread::new(Duration::from_secs(5)).unwrap();
        // This thread's runtime stays alive throughout, so its idle connection stays open and
        // a shared pool would lend it to the other thread.
        let here = runtime();
        here.block_on(async {
            fetch(&clients, &url).await;
            fetch(&clients, &url).await;
        });
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            1,
            "one thread, one connection"
        );

        std::thread::scope(|scope| {
            scope.spawn(|| runtime().block_on(fetch(&clients, &url)));
        });
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            2,
            "the other thread opened its own connection"
        );
        here.block_on(fetch(&clients, &url));
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            2,
            "this thread's is still its own"
        );
    }

    #[test]
    fn a_dropped_upstreams_clients_are_let_go_when_the_list_grows() {
        let count = || CLIENTS.with(|clients| clients.borrow().len());
        let before = count();
        let first = PerThread::new(Duration::from_secs(1)).unwrap();
        first.here();
        first.here();
        assert_eq!(
            count(),
            before + 1,
            "a thread keeps one client per upstream"
        );
        drop(first);
        let second = PerThread::new(Duration::from_secs(1)).unwrap();
        second.here();
        assert_eq!(count(), before + 1, "the dropped upstream's client is gone");
    }
}
