//! Forwarding a request to the process that owns its chat (several processes on one
//! PostgreSQL, `crate::cluster`). A client may send any request to any process and never sees
//! the difference: the owner's answer, streamed or not, comes back through the process it
//! asked, with every header the owner set.
//!
//! Two ways a request is found to belong elsewhere:
//! - its path names a chat (`/chat/api/{chat_id}/…`, `/chat/api/chats/{chat_id}`,
//!   `/v1/conversations/{id}…`) whose lease a live process holds: forwarded before any handler
//!   runs, the body streamed through;
//! - its handler learns the chat from the body (`/v1/chat/completions`, `/v1/responses`, a
//!   workflow run) and fails with `AppError::OwnedElsewhere` before it stores anything (plan,
//!   then begin): the body, kept aside when it was at most `http.max_v1_body_bytes`, is sent to
//!   the owner. A body too large to keep gets the error itself (a 503 with `Retry-After`).
//!
//! A forwarded request carries `x-colloquy-forwarded-by` and is never forwarded again (a lease
//! that moved meanwhile is a 503 with `Retry-After`, and the client's retry finds the new
//! owner). An owner that cannot be reached (it died; its leases have not expired yet) is the
//! same 503. An owner that accepts the request but does not start answering within
//! `cluster.forward_timeout_secs` is asked after: if its process lease has lapsed (it stalled),
//! the client gets 503 `chat_owner_unresponsive` with `Retry-After`; a live owner is waited for
//! again, so a long answer is never cut off. Every response says which process served it
//! (`x-colloquy-process`).

use std::future::{Ready, ready};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{Payload, Service, ServiceRequest, ServiceResponse, Transform};
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::{Error, HttpMessage, HttpResponse, ResponseError};
use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use futures_util::future::LocalBoxFuture;

use crate::cluster::{Cluster, chat_key};
use crate::error::AppError;

/// Set on a forwarded request: the process that forwarded it.
pub const FORWARDED_BY: &str = "x-colloquy-forwarded-by";
/// Set on every response in a cluster: the process that answered.
pub const SERVED_BY: &str = "x-colloquy-process";

/// The middleware: forwards what another process owns. Without a cluster it only passes on.
#[derive(Clone)]
pub struct Forwarding {
    router: Option<Arc<Router>>,
}

struct Router {
    cluster: Cluster,
    client: reqwest::Client,
    /// How long the owner may take to start answering before its liveness is checked.
    response_timeout: Duration,
    max_kept_body: usize,
}

impl Forwarding {
    pub fn new(
        cluster: Option<Cluster>,
        connect_timeout: Duration,
        response_timeout: Duration,
        max_kept_body: usize,
    ) -> anyhow::Result<Self> {
        let router = match cluster {
            None => None,
            Some(cluster) => Some(Arc::new(Router {
                cluster,
                client: reqwest::Client::builder()
                    .connect_timeout(connect_timeout)
                    .redirect(reqwest::redirect::Policy::none())
                    .no_proxy()
                    .pool_idle_timeout(Duration::from_secs(30))
                    .build()?,
                response_timeout,
                max_kept_body,
            })),
        };
        Ok(Self { router })
    }
}

impl<S, B> Transform<S, ServiceRequest> for Forwarding
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = Error> + 'static,
    B: MessageBody + 'static,
{
    type Response = ServiceResponse<BoxBody>;
    type Error = Error;
    type Transform = ForwardingService<S>;
    type InitError = ();
    type Future = Ready<Result<Self::Transform, Self::InitError>>;

    fn new_transform(&self, service: S) -> Self::Future {
        ready(Ok(ForwardingService {
            service: Rc::new(service),
            router: self.router.clone(),
        }))
    }
}

pub struct ForwardingService<S> {
    service: Rc<S>,
    router: Option<Arc<Router>>,
}

impl<S, B> Service<ServiceRequest> for ForwardingService<S>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = Error> + 'static,
    B: MessageBody + 'static,
{
    type Response = ServiceResponse<BoxBody>;
    type Error = Error;
    type Future = LocalBoxFuture<'static, Result<Self::Response, Self::Error>>;

    actix_web::dev::forward_ready!(service);

    fn call(&self, req: ServiceRequest) -> Self::Future {
        let service = self.service.clone();
        let Some(router) = self.router.clone() else {
            return Box::pin(async move { Ok(service.call(req).await?.map_into_boxed_body()) });
        };
        Box::pin(async move { router.route(service, req).await })
    }
}

impl Router {
    async fn route<S, B>(
        &self,
        service: Rc<S>,
        mut req: ServiceRequest,
    ) -> Result<ServiceResponse<BoxBody>, Error>
    where
        S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = Error>,
        B: MessageBody + 'static,
    {
        let forwarded = req.headers().contains_key(FORWARDED_BY);
        if !forwarded && let Some(chat) = chat_in_path(req.path()) {
            match self.cluster.owner_elsewhere(&chat_key(chat)).await {
                Ok(Some(address)) => {
                    let body = stream_through(req.take_payload());
                    let (request, _) = req.into_parts();
                    let response = self.send(&request, &address, body).await;
                    return Ok(ServiceResponse::new(request, response));
                }
                Ok(None) => {}
                // The owner is not known: served here; a handler needing the chat's session
                // asks again (and refuses if the database is down).
                Err(err) => tracing::warn!(%err, "cannot look up a chat's owner"),
            }
        }
        let kept = if forwarded {
            None
        } else {
            self.keep_body(&mut req).await?
        };
        let response = service.call(req).await?;
        let elsewhere = response
            .response()
            .error()
            .and_then(|err| err.as_error::<AppError>())
            .and_then(|err| match err {
                AppError::OwnedElsewhere { address } => Some(address.clone()),
                _ => None,
            });
        if let (Some(address), Some(body)) = (elsewhere, kept) {
            let (request, _) = response.into_parts();
            let response = self
                .send(&request, &address, reqwest::Body::from(body))
                .await;
            return Ok(ServiceResponse::new(request, response));
        }
        Ok(self.served(response.map_into_boxed_body()))
    }

    /// Reads the body into memory, to send it again if the handler finds the chat elsewhere,
    /// and gives the handler the same bytes. `None`: too large (or of unknown length) to keep.
    async fn keep_body(&self, req: &mut ServiceRequest) -> Result<Option<Bytes>, Error> {
        let length = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok());
        let chunked = req.headers().contains_key(header::TRANSFER_ENCODING);
        match length {
            None if !chunked => return Ok(Some(Bytes::new())),
            Some(length) if length <= self.max_kept_body => {}
            _ => return Ok(None),
        }
        let mut payload = req.take_payload();
        let mut body = BytesMut::with_capacity(length.unwrap_or(0));
        while let Some(chunk) = payload.next().await {
            body.extend_from_slice(&chunk?);
            if body.len() > self.max_kept_body {
                // A chunked body past the limit: the handler's own limit refuses it.
                return Err(AppError::PayloadTooLarge {
                    limit: self.max_kept_body,
                }
                .into());
            }
        }
        let body = body.freeze();
        req.set_payload(Payload::from(body.clone()));
        Ok(Some(body))
    }

    /// Sends the request to the owner at `address` and streams its answer back; an owner that
    /// cannot be reached is a 503 with `Retry-After`.
    async fn send(
        &self,
        request: &actix_web::HttpRequest,
        address: &str,
        body: reqwest::Body,
    ) -> HttpResponse {
        self.cluster.note_forwarded();
        let url = format!(
            "{}{}",
            address.trim_end_matches('/'),
            request.uri().path_and_query().map_or("/", |p| p.as_str())
        );
        let Ok(method) = reqwest::Method::from_bytes(request.method().as_str().as_bytes()) else {
            return AppError::invalid("unsupported method").error_response();
        };
        let mut outgoing = self.client.request(method, &url).body(body);
        for (name, value) in request.headers() {
            // `Expect: 100-continue` was answered here already: the body is on its way.
            if !is_hop_by_hop(name) && name != header::EXPECT {
                outgoing = outgoing.header(name.as_str(), value.as_bytes());
            }
        }
        outgoing = outgoing.header(FORWARDED_BY, self.cluster.process_id());
        if let Some(peer) = request.peer_addr() {
            outgoing = outgoing.header("x-forwarded-for", peer.ip().to_string());
        }
        // The owner's headers, waited for in rounds: after each, an owner whose process lease
        // has lapsed (stalled, or dead with its leases not expired) is given up on; a live one
        // is waited for again. Dropping the request drops its connection, never reused.
        let mut pending = std::pin::pin!(outgoing.send());
        let sent = loop {
            match tokio::time::timeout(self.response_timeout, &mut pending).await {
                Ok(sent) => break sent,
                Err(_) => match self.cluster.address_alive(address).await {
                    Ok(true) => continue,
                    Ok(false) => {
                        tracing::warn!(%address, "a chat's owner stopped answering; the client is told to retry");
                        return self.stamped(AppError::OwnerUnresponsive.error_response());
                    }
                    Err(err) => {
                        tracing::warn!(%err, %address, "cannot tell whether a chat's owner is alive");
                        return self.stamped(AppError::OwnerUnresponsive.error_response());
                    }
                },
            }
        };
        match sent {
            Ok(answer) => {
                let mut response = HttpResponse::build(
                    actix_web::http::StatusCode::from_u16(answer.status().as_u16())
                        .unwrap_or(actix_web::http::StatusCode::BAD_GATEWAY),
                );
                for (name, value) in answer.headers() {
                    let name = name.as_str();
                    // The owner's `x-colloquy-process` stays: it is the one that answered.
                    if name == "content-length" || (is_hop_by_hop_name(name) && name != SERVED_BY) {
                        continue;
                    }
                    response.append_header((name, value.as_bytes()));
                }
                response.streaming(answer.bytes_stream())
            }
            Err(err) => {
                tracing::warn!(%err, %address, "cannot reach a chat's owner; the client is told to retry");
                self.stamped(
                    AppError::OwnedElsewhere {
                        address: address.to_string(),
                    }
                    .error_response(),
                )
            }
        }
    }

    /// `response`, saying this process answered it.
    fn stamped(&self, mut response: HttpResponse) -> HttpResponse {
        if let Ok(value) = HeaderValue::from_str(self.cluster.process_id()) {
            response
                .headers_mut()
                .insert(HeaderName::from_static(SERVED_BY), value);
        }
        response
    }

    fn served(&self, mut response: ServiceResponse<BoxBody>) -> ServiceResponse<BoxBody> {
        if let Ok(value) = HeaderValue::from_str(self.cluster.process_id()) {
            response
                .headers_mut()
                .insert(HeaderName::from_static(SERVED_BY), value);
        }
        response
    }
}

/// The request's body as a stream reqwest can send: actix's payload lives on this worker's
/// thread, so a local task reads it into a channel.
fn stream_through(mut payload: Payload) -> reqwest::Body {
    let (sender, receiver) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(4);
    actix_web::rt::spawn(async move {
        while let Some(chunk) = payload.next().await {
            let chunk = chunk.map_err(|err| std::io::Error::other(err.to_string()));
            let failed = chunk.is_err();
            if sender.send(chunk).await.is_err() || failed {
                break;
            }
        }
    });
    let chunks = futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|chunk| (chunk, receiver))
    });
    reqwest::Body::wrap_stream(chunks)
}

fn is_hop_by_hop(name: &HeaderName) -> bool {
    is_hop_by_hop_name(name.as_str())
}

fn is_hop_by_hop_name(name: &str) -> bool {
    matches!(
        name,
        "connection"
            | "keep-alive"
            | "proxy-authenticate"
            | "proxy-authorization"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
            | FORWARDED_BY
            | SERVED_BY
    )
}

/// The chat a path names, if it names one.
pub fn chat_in_path(path: &str) -> Option<&str> {
    let mut parts = path.trim_start_matches('/').split('/');
    let chat = match (parts.next(), parts.next(), parts.next()) {
        (Some("chat"), Some("api"), Some("chats")) => parts.next(),
        (Some("chat"), Some("api"), Some(id))
            if !matches!(id, "export" | "import" | "models" | "attachments") =>
        {
            Some(id)
        }
        (Some("v1"), Some("conversations"), Some(id)) => Some(id),
        _ => None,
    }?;
    (!chat.is_empty()).then_some(chat)
}

#[cfg(test)]
mod tests {
    use super::chat_in_path;

    #[test]
    fn the_chat_a_path_names() {
        assert_eq!(chat_in_path("/chat/api/chat_1/messages"), Some("chat_1"));
        assert_eq!(
            chat_in_path("/chat/api/chat_1/runs/run_2/events"),
            Some("chat_1")
        );
        assert_eq!(chat_in_path("/chat/api/chats/chat_1"), Some("chat_1"));
        assert_eq!(
            chat_in_path("/v1/conversations/chat_1/items"),
            Some("chat_1")
        );
        assert_eq!(chat_in_path("/chat/api/chats"), None);
        assert_eq!(chat_in_path("/chat/api/chats/"), None);
        assert_eq!(chat_in_path("/chat/api/models"), None);
        assert_eq!(chat_in_path("/chat/api/export"), None);
        assert_eq!(chat_in_path("/chat/api/attachments/limits"), None);
        assert_eq!(chat_in_path("/v1/chat/completions"), None);
        assert_eq!(chat_in_path("/c/chat_1"), None);
    }
}
