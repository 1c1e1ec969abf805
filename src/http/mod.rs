//! The HTTP surface, shaped like its URLs: a folder per URL family — `chat_api` (`/chat/api`),
//! `openai` (`/v1`), `api` (`/api`), `auth` (`/auth`) — and `admin` (`/admin/api`), one file per
//! resource in each, with a `configure` function; plus the extractor settings that turn
//! malformed input into clear 4xx errors and the request-id header. Handlers authenticate with
//! `Principal`, parse, call one function below, and respond; they never touch another user's
//! data, never query the database themselves, and no two files import each other
//! (`src/architecture.rs`).
//!
//! Routes are plain paths, never `/chat/api/{id}` scopes (two such scopes would shadow each
//! other). Beside the resources: `principal` (the extractor), `sse` (a run's events in each
//! stream dialect), `run_usage` (`x_chat.metadata`'s usage), `run_failure` (the one place a
//! failed run becomes an HTTP error), `page` (how a per-user list is paged) and `ui`.
//! `shared` serves read-only links (`/s/{token}`, `/shared/{token}/…`) outside every
//! authenticated API: a link's token is never a `Principal`.
//! `api::knowledge_bases` serves the same stores as `openai::vector_stores`, as knowledge bases,
//! through `chat_api::documents`' and `chat_api::uploads`' handlers.

pub mod admission;
mod errors;
pub mod forward;
mod health;
mod metrics;
mod page;
mod principal;
mod run_failure;
mod run_usage;
mod shared;
pub mod sse;
pub mod ui;

mod admin;
mod api;
mod auth;
mod chat_api;
mod openai;

use actix_web::dev::{Service, ServiceResponse};
use actix_web::error::{JsonPayloadError, PathError, QueryPayloadError};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::{HttpMessage, HttpRequest, web};
use tracing_actix_web::RequestId;

use crate::error::AppError;

/// Mounts every route.
pub fn configure(
    cfg: &mut web::ServiceConfig,
    max_json_body_bytes: usize,
    max_v1_body_bytes: usize,
) {
    cfg.app_data(
        web::JsonConfig::default()
            .limit(max_json_body_bytes)
            .error_handler(json_error),
    )
    .app_data(web::PathConfig::default().error_handler(path_error))
    .app_data(web::QueryConfig::default().error_handler(query_error))
    // Routing tries each route in turn: the OpenAI-compatible routes, the busiest, go first
    // (no other route's path starts with `/v1/`).
    .configure(|cfg| openai::configure(cfg, max_v1_body_bytes))
    .configure(health::configure)
    .configure(metrics::configure)
    .configure(auth::configure)
    .configure(admin::configure)
    .configure(chat_api::configure)
    .configure(api::configure)
    .configure(shared::configure)
    .configure(ui::configure)
    .default_service(web::to(not_found));
}

async fn not_found() -> Result<actix_web::HttpResponse, AppError> {
    Err(AppError::NotFound("route"))
}

pub(super) fn json_error(err: JsonPayloadError, _: &HttpRequest) -> actix_web::Error {
    let app = match err {
        JsonPayloadError::OverflowKnownLength { limit, .. }
        | JsonPayloadError::Overflow { limit } => AppError::PayloadTooLarge { limit },
        JsonPayloadError::ContentType => {
            AppError::UnsupportedMediaType("send the body as application/json".into())
        }
        JsonPayloadError::Deserialize(err) => AppError::InvalidJson(err.to_string()),
        other => AppError::InvalidJson(other.to_string()),
    };
    app.into()
}

fn path_error(err: PathError, _: &HttpRequest) -> actix_web::Error {
    AppError::invalid(format!("invalid path: {err}")).into()
}

fn query_error(err: QueryPayloadError, _: &HttpRequest) -> actix_web::Error {
    AppError::invalid(format!("invalid query string: {err}")).into()
}

/// Counts each answered request in `metrics` by method, route pattern (never the path, whose
/// ids would make a series per request) and status.
pub fn count_request<S, B>(
    metrics: std::sync::Arc<crate::metrics::Metrics>,
    req: actix_web::dev::ServiceRequest,
    service: &S,
) -> impl std::future::Future<Output = Result<ServiceResponse<B>, actix_web::Error>> + use<S, B>
where
    S: Service<
            actix_web::dev::ServiceRequest,
            Response = ServiceResponse<B>,
            Error = actix_web::Error,
        >,
{
    let method = req.method().to_string();
    let response = service.call(req);
    async move {
        let response = response.await?;
        // The pattern is known once the request was routed.
        let route = response
            .request()
            .match_pattern()
            .unwrap_or_else(|| "unmatched".into());
        // `/chat/api/:chat_id/messages`: braces in a label value trip up some parsers.
        let route = route.replace('{', ":").replace('}', "");
        metrics.http_request(&method, &route, response.status().as_u16());
        Ok(response)
    }
}

/// Copies the request id that `TracingLogger` assigned into an `x-request-id` response header,
/// so a client's report can be matched to the server's log lines.
pub fn request_id_header<S, B>(
    req: actix_web::dev::ServiceRequest,
    service: &S,
) -> impl std::future::Future<Output = Result<ServiceResponse<B>, actix_web::Error>> + use<S, B>
where
    S: Service<
            actix_web::dev::ServiceRequest,
            Response = ServiceResponse<B>,
            Error = actix_web::Error,
        >,
{
    let id = req.extensions().get::<RequestId>().map(|id| id.to_string());
    let response = service.call(req);
    async move {
        let mut response = response.await?;
        if let Some(value) = id.and_then(|id| HeaderValue::from_str(&id).ok()) {
            response
                .headers_mut()
                .insert(HeaderName::from_static("x-request-id"), value);
        }
        Ok(response)
    }
}
