//! A fake upstream model: a real HTTP server on 127.0.0.1:0 speaking OpenAI's wire protocol.
//! Tests script its replies (text deltas, reasoning in each server's shape, fragmented tool
//! calls, usage, errors, delays, a stream cut mid-way, garbage lines) and read back every
//! request it received.
//!
//! Where real servers are strict, it can be too: llama-cpp-python's empty 200 for a tool-call
//! message without `content` and for an over-long stream, llama-server's `/props` and its 400
//! for a prompt past the context, chat templates that require alternating roles, silence before
//! the first byte, usage omitted.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use bytes::Bytes;
use serde_json::{Value, json};

/// Where a server puts its model's reasoning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasoningShape {
    /// `reasoning_content` deltas and message field (llama.cpp's server, vLLM, DeepSeek).
    ReasoningContent,
    /// `reasoning` deltas, beside an empty `content` (Ollama's OpenAI endpoint, newer vLLM).
    Reasoning,
    /// A `<think>…</think>` block opening the content (DeepSeek-R1 style), streamed in pieces
    /// of three characters so the tags are cut.
    Think,
}

/// One scripted answer to one `/chat/completions` request.
#[derive(Debug, Clone, Default)]
pub struct Reply {
    /// Reasoning before the text, in one server's shape.
    pub reasoning: Option<(ReasoningShape, String)>,
    /// Reported as `completion_tokens_details.reasoning_tokens` in the usage.
    pub reasoning_tokens: Option<u64>,
    /// Text, sent as one delta per piece when streaming.
    pub pieces: Vec<String>,
    /// Tool calls: (id, name, arguments JSON text).
    pub tool_calls: Vec<(String, String, String)>,
    /// Size of the argument fragments tool calls are streamed in.
    pub fragment_chars: usize,
    /// Answer with this status and body instead.
    pub status: Option<(u16, String)>,
    pub retry_after: Option<u64>,
    /// Wait this long before answering at all.
    pub delay: Duration,
    /// Wait this long between streamed events.
    pub event_gap: Duration,
    /// Stop the stream after this many content events, without a finish reason or [DONE].
    pub cut_after: Option<usize>,
    /// Interleave comments and non-JSON lines with the real events.
    pub garbage: bool,
    pub usage: (u64, u64),
    /// Send no usage at all, as llama-cpp-python does whatever `stream_options` says.
    pub omit_usage: bool,
    /// Send the headers at once, then nothing for this long (llama-server reading a prompt).
    pub silence_before_first_event: Duration,
    /// After this many events, fall silent for the second duration (a frozen server).
    pub stall: Option<(usize, Duration)>,
    /// Report usage as a real server counts it (the request's tokens in, the reply's out)
    /// instead of `usage`.
    pub counted: bool,
}

impl Reply {
    pub fn text(text: &str) -> Self {
        Self {
            pieces: text.split_inclusive(' ').map(str::to_string).collect(),
            usage: (10, 5),
            fragment_chars: 5,
            ..Self::default()
        }
    }

    pub fn tool_call(id: &str, name: &str, arguments: Value) -> Self {
        Self {
            tool_calls: vec![(id.into(), name.into(), arguments.to_string())],
            usage: (20, 8),
            fragment_chars: 5,
            ..Self::default()
        }
    }

    /// `answer`, after `thinking` sent as `shape` puts it.
    pub fn reasoned(shape: ReasoningShape, thinking: &str, answer: &str) -> Self {
        Self::text(answer).with_reasoning(shape, thinking)
    }

    /// Reasoning before this reply's text or tool calls, as `shape` puts it.
    pub fn with_reasoning(mut self, shape: ReasoningShape, thinking: &str) -> Self {
        self.reasoning = Some((shape, thinking.into()));
        self
    }

    /// Reports `tokens` reasoning tokens in the usage.
    pub fn with_reasoning_tokens(mut self, tokens: u64) -> Self {
        self.reasoning_tokens = Some(tokens);
        self
    }

    /// The content as a `<think>` server sends it: the block, then the answer.
    fn think_content(&self, thinking: &str) -> String {
        format!("<think>\n{thinking}\n</think>\n\n{}", self.pieces.concat())
    }

    pub fn status(status: u16, body: &str) -> Self {
        Self {
            status: Some((status, body.into())),
            ..Self::default()
        }
    }

    pub fn retry_after(mut self, seconds: u64) -> Self {
        self.retry_after = Some(seconds);
        self
    }

    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    pub fn event_gap(mut self, gap: Duration) -> Self {
        self.event_gap = gap;
        self
    }

    /// Usage counted from the request and the reply, as a real server reports it.
    pub fn counted(mut self) -> Self {
        self.counted = true;
        self
    }

    pub fn without_usage(mut self) -> Self {
        self.omit_usage = true;
        self
    }

    /// Headers at once, then silence for `silence` before the first event.
    pub fn silent_first(mut self, silence: Duration) -> Self {
        self.silence_before_first_event = silence;
        self
    }

    /// Silence for `silence` after `events` events.
    pub fn stall_after(mut self, events: usize, silence: Duration) -> Self {
        self.stall = Some((events, silence));
        self
    }

    pub fn cut_after(mut self, events: usize) -> Self {
        self.cut_after = Some(events);
        self
    }

    pub fn with_garbage(mut self) -> Self {
        self.garbage = true;
        self
    }

    pub fn and_tool_call(mut self, id: &str, name: &str, arguments: Value) -> Self {
        self.tool_calls
            .push((id.into(), name.into(), arguments.to_string()));
        self
    }

    /// The SSE events of this reply, in order.
    fn events(&self) -> Vec<String> {
        let chunk = |delta: Value, finish: Value| {
            json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1,
                   "model": "fake-model",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
            .to_string()
        };
        let mut events = vec![chunk(
            json!({"role": "assistant", "content": ""}),
            Value::Null,
        )];
        let words =
            |text: &str| -> Vec<String> { text.split_inclusive(' ').map(str::to_string).collect() };
        let mut pieces = self.pieces.clone();
        match &self.reasoning {
            Some((ReasoningShape::ReasoningContent, thinking)) => {
                for word in words(thinking) {
                    events.push(chunk(
                        json!({"reasoning_content": word, "content": null}),
                        Value::Null,
                    ));
                }
            }
            Some((ReasoningShape::Reasoning, thinking)) => {
                for word in words(thinking) {
                    events.push(chunk(
                        json!({"role": "assistant", "content": "", "reasoning": word}),
                        Value::Null,
                    ));
                }
            }
            Some((ReasoningShape::Think, thinking)) => {
                let chars: Vec<char> = self.think_content(thinking).chars().collect();
                pieces = chars.chunks(3).map(|c| c.iter().collect()).collect();
            }
            None => {}
        }
        for piece in &pieces {
            events.push(chunk(json!({"content": piece}), Value::Null));
        }
        for (index, (id, name, arguments)) in self.tool_calls.iter().enumerate() {
            events.push(chunk(
                json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                        "function": {"name": name, "arguments": ""}}]}),
                Value::Null,
            ));
            let chars: Vec<char> = arguments.chars().collect();
            for fragment in chars.chunks(self.fragment_chars.max(1)) {
                let fragment: String = fragment.iter().collect();
                events.push(chunk(
                    json!({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]}),
                    Value::Null,
                ));
            }
        }
        if let Some(cut) = self.cut_after {
            events.truncate(cut + 1);
            return events;
        }
        let finish = if self.tool_calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        events.push(chunk(json!({}), json!(finish)));
        if !self.omit_usage {
            events.push(
                json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1,
                       "model": "fake-model", "choices": [], "usage": self.usage_json()})
                .to_string(),
            );
        }
        events.push("[DONE]".into());
        events
    }

    fn usage_json(&self) -> Value {
        let mut usage = json!({"prompt_tokens": self.usage.0, "completion_tokens": self.usage.1,
               "total_tokens": self.usage.0 + self.usage.1});
        if let Some(tokens) = self.reasoning_tokens {
            usage["completion_tokens_details"] =
                json!({"reasoning_tokens": tokens, "accepted_prediction_tokens": 0});
        }
        usage
    }

    fn completion(&self) -> Value {
        let tool_calls: Vec<Value> = self
            .tool_calls
            .iter()
            .map(|(id, name, arguments)| {
                json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
            })
            .collect();
        let mut message = json!({"role": "assistant", "content": self.pieces.concat()});
        match &self.reasoning {
            Some((ReasoningShape::ReasoningContent, thinking)) => {
                message["reasoning_content"] = json!(thinking);
            }
            Some((ReasoningShape::Reasoning, thinking)) => message["reasoning"] = json!(thinking),
            Some((ReasoningShape::Think, thinking)) => {
                message["content"] = json!(self.think_content(thinking));
            }
            None => {}
        }
        if !tool_calls.is_empty() {
            message["tool_calls"] = json!(tool_calls);
        }
        let finish = if tool_calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        let mut completion = json!({"id": "chatcmpl-fake", "object": "chat.completion",
               "created": 1, "model": "fake-model",
               "choices": [{"index": 0, "message": message, "finish_reason": finish}]});
        if !self.omit_usage {
            completion["usage"] = self.usage_json();
        }
        completion
    }
}

/// A request the fake upstream received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub authorization: Option<String>,
    pub body: Value,
}

#[derive(Default)]
struct Shared {
    script: VecDeque<Reply>,
    /// Replies for requests whose messages mention a marker, before the main script.
    routes: Vec<(String, VecDeque<Reply>)>,
    /// Requests waiting out their reply's `delay` now, and the most there ever were.
    in_flight: usize,
    max_in_flight: usize,
    received: Vec<Recorded>,
    /// Streams whose client went away before the last event was sent.
    abandoned_streams: usize,
    /// Answer `/embeddings` with one vector per token, as llama-server does without
    /// `--pooling`.
    per_token_embeddings: bool,
    garbage_embeddings: bool,
    /// The context window `/props` reports; requests longer than it get llama-server's 400
    /// when `enforce_context` is set.
    n_ctx: Option<u32>,
    enforce_context: bool,
    n_ctx_hidden: bool,
    /// Refuse an over-long request as llama-cpp-python does: a streaming one with an empty
    /// 200, a non-streaming one with an OpenAI-style 400 that states the window.
    overflow_like_llama_cpp_python: bool,
    /// Reject conversations whose user and assistant turns do not alternate, as the chat
    /// templates of Gemma, Mistral and Llama 2 do.
    alternate_roles: bool,
    /// Answer non-streaming requests (Colloquy's summary requests) without the script, with a
    /// "summary" naming each `question N` the request mentions.
    summarize: bool,
    /// Refuse requests with images as llama.cpp's server does without a projector (a 500).
    refuse_images: bool,
    /// The ids `/v1/models` lists; `None`: `fake-model` alone.
    models: Option<Vec<String>>,
}

/// Counts a stream as abandoned if it is dropped before it finished.
struct StreamGuard {
    shared: Arc<Mutex<Shared>>,
    finished: bool,
}

impl StreamGuard {
    fn mark_finished(&mut self) {
        self.finished = true;
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        if !self.finished {
            self.shared.lock().unwrap().abandoned_streams += 1;
        }
    }
}

#[derive(Clone)]
pub struct FakeUpstream {
    shared: Arc<Mutex<Shared>>,
    pub base_url: String,
    handle: actix_web::dev::ServerHandle,
}

impl FakeUpstream {
    pub async fn start() -> Self {
        let shared = Arc::new(Mutex::new(Shared::default()));
        let data = web::Data::from(shared.clone());
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .app_data(web::PayloadConfig::default().limit(64 * 1024 * 1024))
                .route("/v1/chat/completions", web::post().to(completions))
                .route("/v1/models", web::get().to(models))
                .route("/v1/embeddings", web::post().to(embeddings))
                .route("/props", web::get().to(props))
        })
        .workers(1)
        .bind("127.0.0.1:0")
        .expect("bind fake upstream");
        let address = server.addrs()[0];
        let server = server.run();
        let handle = server.handle();
        actix_web::rt::spawn(server);
        Self {
            shared,
            base_url: format!("http://{address}/v1"),
            handle,
        }
    }

    /// Queues replies, answered in order, one per request.
    pub fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.shared.lock().unwrap().script.extend(replies);
    }

    /// Queues replies for requests whose messages mention `marker` (answered in order, before
    /// the main script): concurrent requests get their own replies whatever order they come in.
    pub fn script_for(&self, marker: &str, replies: impl IntoIterator<Item = Reply>) {
        let mut shared = self.shared.lock().unwrap();
        let queue: VecDeque<Reply> = replies.into_iter().collect();
        match shared.routes.iter_mut().find(|(m, _)| m == marker) {
            Some((_, existing)) => existing.extend(queue),
            None => shared.routes.push((marker.to_string(), queue)),
        }
    }

    /// The most requests that were ever waiting out their reply's delay at once.
    pub fn max_in_flight(&self) -> usize {
        self.shared.lock().unwrap().max_in_flight
    }

    /// From now on, `/embeddings` answers with per-token vectors (two per input: the usual
    /// vector and three times it, so their mean is twice the usual vector).
    /// From now on, `/embeddings` answers with a string where each vector should be.
    pub fn embed_garbage(&self) {
        self.shared.lock().unwrap().garbage_embeddings = true;
    }

    pub fn embed_per_token(&self) {
        self.shared.lock().unwrap().per_token_embeddings = true;
    }

    /// From now on, the fake is a llama-server with a context window of `n_ctx` tokens: it
    /// says so in `/props` and answers a longer request with its 400.
    pub fn context_length(&self, n_ctx: u32) {
        let mut shared = self.shared.lock().unwrap();
        shared.n_ctx = Some(n_ctx);
        shared.enforce_context = true;
    }

    /// Like `context_length`, but `/props` says nothing: the window shows only in the
    /// overflow error (as with llama-cpp-python).
    pub fn hidden_context_length(&self, n_ctx: u32) {
        self.context_length(n_ctx);
        self.shared.lock().unwrap().n_ctx_hidden = true;
    }

    /// Like `hidden_context_length`, with llama-cpp-python's refusals: an empty 200 for a
    /// streaming request, and only a non-streaming one gets the 400 that says the size.
    pub fn context_length_like_llama_cpp_python(&self, n_ctx: u32) {
        self.hidden_context_length(n_ctx);
        self.shared.lock().unwrap().overflow_like_llama_cpp_python = true;
    }

    /// From now on, conversations whose user and assistant turns do not alternate are
    /// rejected the way a Jinja chat template rejects them.
    pub fn alternate_roles(&self) {
        self.shared.lock().unwrap().alternate_roles = true;
    }

    /// From now on (or, with `false`, no longer), non-streaming requests are answered with a
    /// summary of what they mention instead of the next scripted reply: "Summary: question 0;
    /// question 3" for a request whose messages mention questions 0 and 3.
    pub fn summarize(&self, on: bool) {
        self.shared.lock().unwrap().summarize = on;
    }

    /// From now on, a request whose messages carry an image is refused as llama.cpp's server
    /// refuses it for a model without a multimodal projector.
    pub fn refuse_images(&self) {
        self.shared.lock().unwrap().refuse_images = true;
    }

    /// From now on, `/v1/models` lists `ids` (instead of `fake-model` alone).
    pub fn serve_models(&self, ids: &[&str]) {
        self.shared.lock().unwrap().models = Some(ids.iter().map(|id| id.to_string()).collect());
    }

    /// How many streams were dropped by their client before they finished.
    pub fn abandoned_streams(&self) -> usize {
        self.shared.lock().unwrap().abandoned_streams
    }

    /// Every request received so far.
    pub fn received(&self) -> Vec<Recorded> {
        self.shared.lock().unwrap().received.clone()
    }

    pub async fn stop(&self) {
        self.handle.stop(false).await;
    }
}

fn record(shared: &Mutex<Shared>, req: &HttpRequest, body: Value) {
    let authorization = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    shared.lock().unwrap().received.push(Recorded {
        path: req.path().to_string(),
        authorization,
        body,
    });
}

async fn completions(
    shared: web::Data<Mutex<Shared>>,
    req: HttpRequest,
    body: Bytes,
) -> HttpResponse {
    let Ok(body) = serde_json::from_slice::<Value>(&body) else {
        return HttpResponse::BadRequest().json(json!({"error": {"message": "body is not JSON"}}));
    };
    record(&shared, &req, body.clone());
    // llama-cpp-python's chat templates read every message's `content`: an assistant message
    // with tool calls but no `content` makes the template raise, and the server answers 200
    // with an empty body; `content: null` gets a 500. Behave the same.
    if let Some(messages) = body["messages"].as_array() {
        for message in messages {
            let Some(fields) = message.as_object() else {
                continue;
            };
            if fields.contains_key("tool_calls") {
                match fields.get("content") {
                    None => {
                        return HttpResponse::Ok()
                            .content_type("text/event-stream")
                            .finish();
                    }
                    Some(Value::Null) => {
                        return HttpResponse::InternalServerError()
                            .json(json!({"error": {"message": "content must be a string"}}));
                    }
                    Some(_) => {}
                }
            }
        }
    }
    if let Some(refusal) = refuse_like_a_real_server(&shared, &body) {
        return refusal;
    }
    if body["stream"] != json!(true) && shared.lock().unwrap().summarize {
        return HttpResponse::Ok().json(Reply::text(&summary_of(&body)).completion());
    }
    let reply = {
        let mut shared = shared.lock().unwrap();
        let text = body["messages"].to_string();
        let routed = shared
            .routes
            .iter_mut()
            .find(|(marker, queue)| !queue.is_empty() && text.contains(marker.as_str()))
            .and_then(|(_, queue)| queue.pop_front());
        routed.or_else(|| shared.script.pop_front())
    };
    let Some(mut reply) = reply else {
        return HttpResponse::BadRequest()
            .json(json!({"error": {"message": "fake upstream: no scripted reply left"}}));
    };
    if reply.counted {
        let out: usize = reply.pieces.iter().map(String::len).sum::<usize>()
            + reply.tool_calls.iter().map(|c| c.2.len()).sum::<usize>();
        reply.usage = (u64::from(fake_tokens(&body)), (out / 4 + 1) as u64);
    }
    if !reply.delay.is_zero() {
        {
            let mut shared = shared.lock().unwrap();
            shared.in_flight += 1;
            shared.max_in_flight = shared.max_in_flight.max(shared.in_flight);
        }
        actix_web::rt::time::sleep(reply.delay).await;
        shared.lock().unwrap().in_flight -= 1;
    }
    if let Some((status, text)) = &reply.status {
        let mut response = HttpResponse::build(
            actix_web::http::StatusCode::from_u16(*status).expect("valid status"),
        );
        if let Some(seconds) = reply.retry_after {
            response.insert_header(("retry-after", seconds.to_string()));
        }
        return response
            .content_type("application/json")
            .body(json!({"error": {"message": text, "type": "fake_error"}}).to_string());
    }
    if body["stream"] != json!(true) {
        return HttpResponse::Ok().json(reply.completion());
    }
    let gap = reply.event_gap;
    let garbage = reply.garbage;
    let silence = reply.silence_before_first_event;
    let stall = reply.stall;
    let events: VecDeque<String> = reply.events().into();
    let guard = StreamGuard {
        shared: shared.into_inner(),
        finished: false,
    };
    let stream = futures_util::stream::unfold(
        (events, 0usize, guard),
        move |(mut events, sent, mut guard)| async move {
            let Some(event) = events.pop_front() else {
                guard.mark_finished();
                return None;
            };
            if sent == 0 && !silence.is_zero() {
                actix_web::rt::time::sleep(silence).await;
            }
            if let Some((after, pause)) = stall
                && sent == after
            {
                actix_web::rt::time::sleep(pause).await;
            }
            if sent > 0 && !gap.is_zero() {
                actix_web::rt::time::sleep(gap).await;
            }
            let mut text = String::new();
            if garbage {
                text.push_str(
                    ": keep-alive comment\n\ndata: this is not json\n\nrandom garbage line\n\n",
                );
            }
            text.push_str(&format!("data: {event}\n\n"));
            Some((
                Ok::<_, actix_web::Error>(Bytes::from(text)),
                (events, sent + 1, guard),
            ))
        },
    );
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .streaming(stream)
}

/// The fake's summary of a request: each distinct `question N` its messages mention, in order
/// of first mention.
fn summary_of(body: &Value) -> String {
    let mut found: Vec<String> = Vec::new();
    for message in body["messages"].as_array().into_iter().flatten() {
        let text = message["content"].as_str().unwrap_or_default();
        let mut rest = text;
        while let Some(at) = rest.find("question ") {
            let digits: String = rest[at + 9..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if !digits.is_empty() {
                let name = format!("question {digits}");
                if !found.contains(&name) {
                    found.push(name);
                }
            }
            rest = &rest[at + 9..];
        }
    }
    format!("Summary: {}", found.join("; "))
}

/// Tokens the fake counts for a request: about four bytes of text each, plus four per
/// message (close to what real tokenizers give for English).
pub fn fake_tokens(body: &Value) -> u32 {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let text: usize = messages
        .iter()
        .map(|m| m["content"].as_str().map_or(0, str::len) + m["tool_calls"].to_string().len())
        .sum();
    let tools = body.get("tools").map_or(0, |tools| tools.to_string().len());
    ((text + tools) / 4 + 4 * messages.len()) as u32
}

/// llama-server's 400 for a prompt longer than its context, and a chat template's refusal
/// of roles that do not alternate (llama-server answers that with a 500).
fn refuse_like_a_real_server(shared: &Mutex<Shared>, body: &Value) -> Option<HttpResponse> {
    let (n_ctx, enforce, alternate, like_python, refuse_images) = {
        let shared = shared.lock().unwrap();
        (
            shared.n_ctx,
            shared.enforce_context,
            shared.alternate_roles,
            shared.overflow_like_llama_cpp_python,
            shared.refuse_images,
        )
    };
    if refuse_images && !image_urls(body).is_empty() {
        return Some(HttpResponse::InternalServerError().json(json!({"error": {
            "code": 500,
            "message": "image input is not supported - hint: if this is unexpected, you may \
                need to provide the mmproj",
            "type": "server_error"}})));
    }
    if enforce && let Some(n_ctx) = n_ctx {
        let prompt = fake_tokens(body);
        if prompt > n_ctx && like_python {
            if body["stream"] == json!(true) {
                return Some(
                    HttpResponse::Ok()
                        .content_type("text/event-stream")
                        .finish(),
                );
            }
            return Some(HttpResponse::BadRequest().json(json!({"error": {
                "message": format!("This model's maximum context length is {n_ctx} tokens. \
                    However, you requested {prompt} tokens ({prompt} in the messages, 0 in the \
                    completion). Please reduce the length of the messages or completion."),
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded"}})));
        }
        if prompt > n_ctx {
            return Some(HttpResponse::BadRequest().json(json!({"error": {
                "code": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": prompt,
                "n_ctx": n_ctx}})));
        }
    }
    if alternate {
        let roles: Vec<&str> = body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m.get("tool_calls").is_none())
            .filter_map(|m| m["role"].as_str())
            .filter(|role| matches!(*role, "user" | "assistant"))
            .collect();
        let alternates = roles
            .iter()
            .enumerate()
            .all(|(i, role)| *role == if i % 2 == 0 { "user" } else { "assistant" });
        if !alternates {
            return Some(HttpResponse::InternalServerError().json(json!({"error": {
                "code": 500,
                "message": "Conversation roles must alternate user/assistant/user/assistant/...",
                "type": "server_error"}})));
        }
    }
    None
}

/// The URLs of the `image_url` parts of a request's messages, in order, with the index of the
/// message each is in.
pub fn image_urls(body: &Value) -> Vec<(usize, String)> {
    let mut urls = Vec::new();
    for (index, message) in body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        for part in message["content"].as_array().into_iter().flatten() {
            if part["type"] == "image_url"
                && let Some(url) = part["image_url"]["url"].as_str()
            {
                urls.push((index, url.to_string()));
            }
        }
    }
    urls
}

/// llama-server's `/props`: the context window of its slots.
async fn props(shared: web::Data<Mutex<Shared>>) -> HttpResponse {
    let shared = shared.lock().unwrap();
    if shared.n_ctx_hidden {
        return HttpResponse::NotFound().finish();
    }
    let n_ctx = shared.n_ctx.unwrap_or(1_048_576);
    HttpResponse::Ok().json(json!({
        "default_generation_settings": {"n_ctx": n_ctx},
        "total_slots": 1}))
}

async fn models(shared: web::Data<Mutex<Shared>>, req: HttpRequest) -> HttpResponse {
    record(&shared, &req, Value::Null);
    let ids = shared
        .lock()
        .unwrap()
        .models
        .clone()
        .unwrap_or_else(|| vec!["fake-model".into()]);
    let data: Vec<Value> = ids
        .iter()
        .map(|id| json!({"id": id, "object": "model", "created": 1, "owned_by": "tests"}))
        .collect();
    HttpResponse::Ok().json(json!({"object": "list", "data": data}))
}

/// Deterministic embeddings: a 4-dimensional vector from the text's bytes.
async fn embeddings(
    shared: web::Data<Mutex<Shared>>,
    req: HttpRequest,
    body: web::Json<Value>,
) -> HttpResponse {
    record(&shared, &req, body.0.clone());
    let (per_token, garbage) = {
        let shared = shared.lock().unwrap();
        (shared.per_token_embeddings, shared.garbage_embeddings)
    };
    if garbage {
        return HttpResponse::Ok().json(json!({"object": "list", "data": [
            {"object": "embedding", "index": 0, "embedding": "not a vector"}]}));
    }
    let inputs: Vec<String> = match &body["input"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items
            .iter()
            .filter_map(|i| i.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(index, text)| {
            let sum: u32 = text.bytes().map(u32::from).sum();
            let vector = [text.len() as f32, sum as f32, 1.0, (sum % 7) as f32];
            if per_token {
                let tripled = vector.map(|v| v * 3.0);
                return json!({"object": "embedding", "index": index,
                              "embedding": [vector, tripled]});
            }
            json!({"object": "embedding", "index": index, "embedding": vector})
        })
        .collect();
    HttpResponse::Ok().json(json!({"object": "list", "data": data, "model": body["model"]}))
}
