//! The fake OpenAI upstream: `POST /v1/chat/completions` answers a streamed request with a role
//! chunk at once, then `pieces` content chunks `every` apart, then the finish, usage and
//! `[DONE]`, as a real server streams; a non-streamed one at once (and a `QUICK` one at once
//! in one piece). It remembers when the latest
//! request arrived (for the history part) and how many streams it holds open.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{App, HttpResponse, HttpServer, web};
use bytes::Bytes;
use serde_json::{Value, json};

use crate::colloquy::MODEL;

/// One content piece; the answer is `PIECE` repeated.
pub const PIECE: &str = "word ";
/// A request whose last message holds this is answered at once, in one piece, whatever the pacing
/// (the cluster part's turns beside its slow streams).
pub const QUICK: &str = "quick turn";

#[derive(Clone, Copy)]
pub struct Pacing {
    pub pieces: usize,
    pub every: Duration,
}

/// What the upstream saw, shared with the bench.
#[derive(Default)]
pub struct Seen {
    pub last_arrival: Mutex<Option<Instant>>,
    pub open_streams: AtomicUsize,
    pub most_open_streams: AtomicUsize,
}

pub struct Upstream {
    pub address: SocketAddr,
    pub seen: Arc<Seen>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Upstream {
    pub fn start(pacing: Pacing) -> Upstream {
        let seen = Arc::new(Seen::default());
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let shared = Arc::clone(&seen);
        let thread = std::thread::Builder::new()
            .name("fake-upstream".into())
            .spawn(move || {
                actix_web::rt::System::new().block_on(async move {
                    let state = web::Data::new((pacing, shared));
                    let server = HttpServer::new(move || {
                        App::new()
                            .app_data(state.clone())
                            .route("/v1/chat/completions", web::post().to(completions))
                    })
                    .workers(1)
                    .backlog(16_384)
                    .max_connections(100_000)
                    .tcp_nodelay(true)
                    .bind("127.0.0.1:0")
                    .expect("bind the fake upstream");
                    let address = server.addrs()[0];
                    let server = server.run();
                    let handle = server.handle();
                    actix_web::rt::spawn(server);
                    ready_tx.send(address).expect("the bench waits");
                    let _ = stop_rx.await;
                    handle.stop(false).await;
                });
            })
            .expect("spawn the upstream thread");
        let address = ready_rx.recv().expect("the upstream starts");
        Upstream {
            address,
            seen,
            stop: Some(stop_tx),
            thread: Some(thread),
        }
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn chunk(delta: Value, finish: Value) -> Bytes {
    let chunk = json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1,
                       "model": MODEL,
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    Bytes::from(format!("data: {chunk}\n\n"))
}

/// Decrements the open-stream count when the stream is dropped, finished or not.
struct OpenStream(Arc<Seen>);

impl Drop for OpenStream {
    fn drop(&mut self) {
        self.0.open_streams.fetch_sub(1, Ordering::Relaxed);
    }
}

async fn completions(state: web::Data<(Pacing, Arc<Seen>)>, body: Bytes) -> HttpResponse {
    let (mut pacing, seen) = (state.0, Arc::clone(&state.1));
    *seen.last_arrival.lock().expect("not poisoned") = Some(Instant::now());
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return HttpResponse::BadRequest().finish();
    };
    let last = request["messages"].as_array().and_then(|m| m.last());
    if last.is_some_and(|m| m["content"].to_string().contains(QUICK)) {
        pacing = Pacing {
            pieces: 1,
            every: Duration::ZERO,
        };
    }
    let usage = json!({"prompt_tokens": 10, "completion_tokens": pacing.pieces,
                       "total_tokens": 10 + pacing.pieces});
    if request["stream"] != json!(true) {
        return HttpResponse::Ok().json(json!({
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 1, "model": MODEL,
            "choices": [{"index": 0,
                         "message": {"role": "assistant", "content": PIECE.repeat(pacing.pieces)},
                         "finish_reason": "stop"}],
            "usage": usage,
        }));
    }
    let open = seen.open_streams.fetch_add(1, Ordering::Relaxed) + 1;
    seen.most_open_streams.fetch_max(open, Ordering::Relaxed);
    let guard = OpenStream(seen);
    // Step 0 is the role chunk; steps 1..=pieces the content; then the tail.
    let stream = futures_util::stream::unfold((0usize, guard), move |(step, guard)| {
        let usage = usage.clone();
        async move {
            let bytes = if step == 0 {
                chunk(json!({"role": "assistant", "content": ""}), Value::Null)
            } else if step <= pacing.pieces {
                tokio::time::sleep(pacing.every).await;
                chunk(json!({"content": PIECE}), Value::Null)
            } else if step == pacing.pieces + 1 {
                let mut tail = chunk(json!({}), json!("stop")).to_vec();
                let last = json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk",
                                  "created": 1, "model": MODEL, "choices": [], "usage": usage});
                tail.extend_from_slice(format!("data: {last}\n\ndata: [DONE]\n\n").as_bytes());
                Bytes::from(tail)
            } else {
                return None;
            };
            Some((Ok::<_, actix_web::Error>(bytes), (step + 1, guard)))
        }
    });
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .streaming(stream)
}
