//! Back-pressure: at most `http.max_in_flight` requests are served at once, a streamed answer
//! counting until its last byte is sent (or its client goes). One past the limit is answered
//! at once with `503 overloaded` and a `Retry-After`, before any handler runs, so nothing of it
//! is stored and the process's memory stays bounded however many clients come. Health probes
//! and `/metrics` are always answered: they are how an operator sees the overload.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use actix_web::body::{BodySize, BoxBody, EitherBody, MessageBody};
use actix_web::dev::{Service, ServiceRequest, ServiceResponse};
use actix_web::web::Bytes;
use actix_web::{Error, ResponseError};

use crate::error::AppError;

/// The count of requests being served, and its limit.
#[derive(Debug)]
pub struct Admission {
    in_flight: AtomicUsize,
    limit: usize,
    retry_after_secs: u64,
}

/// One admitted request's place; given back when dropped (with the response's body).
#[derive(Debug)]
pub struct Permit(Arc<Admission>);

impl Drop for Permit {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Admission {
    pub fn new(limit: usize, retry_after_secs: u64) -> Arc<Self> {
        Arc::new(Self {
            in_flight: AtomicUsize::new(0),
            limit,
            retry_after_secs,
        })
    }

    /// A place for one more request, unless `limit` are being served.
    pub fn try_admit(self: &Arc<Self>) -> Option<Permit> {
        let admitted = self
            .in_flight
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |now| {
                (now < self.limit).then_some(now + 1)
            })
            .is_ok();
        admitted.then(|| Permit(self.clone()))
    }
}

/// Paths answered whatever the load: the probes and the metrics.
fn always_answered(path: &str) -> bool {
    path.starts_with("/health") || path == "/metrics"
}

/// A response body that holds its request's permit until it is sent or dropped.
pub struct Held<B> {
    body: B,
    _permit: Option<Permit>,
}

impl<B: MessageBody + Unpin> MessageBody for Held<B> {
    type Error = B::Error;

    fn size(&self) -> BodySize {
        self.body.size()
    }

    fn poll_next(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Self::Error>>> {
        // `B` is `Unpin` (the middleware boxes the body), so `Held` is too.
        Pin::new(&mut self.get_mut().body).poll_next(cx)
    }
}

/// An admitted request's response (its body holding the permit), or the refusal.
type Admitted<B> = ServiceResponse<EitherBody<Held<Pin<Box<B>>>, BoxBody>>;

/// The middleware: admits the request or answers `503 overloaded`.
pub fn admit<S, B>(
    admission: Arc<Admission>,
    req: ServiceRequest,
    service: &S,
) -> impl std::future::Future<Output = Result<Admitted<B>, Error>> + use<S, B>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = Error>,
    B: MessageBody + 'static,
{
    let permit = if always_answered(req.path()) {
        Some(None)
    } else {
        admission.try_admit().map(Some)
    };
    let (retry_after_secs, limit) = (admission.retry_after_secs, admission.limit);
    let admitted = match permit {
        Some(permit) => Ok((service.call(req), permit)),
        None => Err(req),
    };
    async move {
        match admitted {
            Err(req) => {
                tracing::warn!(
                    limit,
                    path = req.path(),
                    "refused a request past the in-flight limit"
                );
                let response = AppError::Overloaded { retry_after_secs }.error_response();
                Ok(req.into_response(response).map_into_right_body())
            }
            Ok((call, permit)) => Ok(call
                .await?
                .map_body(|_, body| Held {
                    body: Box::pin(body),
                    _permit: permit,
                })
                .map_into_left_body()),
        }
    }
}
