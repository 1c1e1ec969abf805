//! Logging: a `tracing` subscriber, as text or JSON lines, filtered by `log.filter`. Each HTTP
//! request runs in a span (`RequestSpan`) carrying its request id and its path — never its query
//! string's values, which can be secrets (`/login?token=`), nor any header holding credentials.

use std::io::IsTerminal;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::{Error, HttpMessage};
use tracing::Span;
use tracing_actix_web::{DefaultRootSpanBuilder, RequestId, RootSpanBuilder};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

use crate::config::{LogConfig, LogFormat};

/// What replaces every query-string value in the logs.
const REDACTED: &str = "REDACTED";
/// Longest query parameter name logged as is; our secrets are 40+ characters, names are short.
const MAX_LOGGED_KEY_CHARS: usize = 32;

/// Installs the global subscriber, writing to stderr (in colour only on a terminal). A second
/// call (tests start many apps) is a no-op.
pub fn init(config: &LogConfig) {
    install(config, std::io::stderr, std::io::stderr().is_terminal());
}

/// Installs the global subscriber writing plain text to `writer` (tests capture the log to
/// search it). A second call is a no-op.
pub fn init_with_writer<W>(config: &LogConfig, writer: W)
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    install(config, writer, false);
}

fn install<W>(config: &LogConfig, writer: W, ansi: bool)
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let filter = EnvFilter::try_new(&config.filter).unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(writer);
    let _ = match config.format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Text => builder.try_init(),
    };
}

/// The root span of every request: method, route, path with its query values redacted, client
/// address, user agent, request id, and on completion the status (and error, if any). Headers
/// such as `Authorization` and `Cookie` are never recorded.
pub struct RequestSpan;

impl RootSpanBuilder for RequestSpan {
    fn on_request_start(request: &ServiceRequest) -> Span {
        let route = route_before_routing(request);
        let request_id = request
            .extensions()
            .get::<RequestId>()
            .map(ToString::to_string)
            .unwrap_or_default();
        let user_agent = request
            .headers()
            .get("user-agent")
            .and_then(|value| value.to_str().ok())
            .unwrap_or("");
        let client = request
            .peer_addr()
            .map(|peer| peer.ip().to_string())
            .unwrap_or_default();
        tracing::info_span!(
            "HTTP request",
            http.method = %request.method().as_str(),
            http.route = %route,
            http.target = %redacted_target(request.path(), request.query_string()),
            http.client_ip = %client,
            http.user_agent = %user_agent,
            http.status_code = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
            request_id = %request_id,
            exception.message = tracing::field::Empty,
            exception.details = tracing::field::Empty,
        )
    }

    fn on_request_end<B: MessageBody>(span: Span, outcome: &Result<ServiceResponse<B>, Error>) {
        DefaultRootSpanBuilder::on_request_end(span, outcome);
    }
}

/// Most paths that are a route of their own (no parameter, such as `/v1/chat/completions`)
/// remembered per thread; past this many, the others are matched each time.
const MAX_REMEMBERED_ROUTES: usize = 512;

/// The route pattern of a request whose span opens before it is routed. Matching then walks
/// every route's pattern in turn, so a path that proved to be a route of its own is remembered
/// (per thread, and per application: tests start many); a path with parameters in it is
/// matched each time.
fn route_before_routing(request: &ServiceRequest) -> String {
    thread_local! {
        static OWN_ROUTES: std::cell::RefCell<(usize, std::collections::HashSet<String>)> =
            std::cell::RefCell::default();
    }
    let path = request.path();
    let app = std::ptr::from_ref(request.resource_map()) as usize;
    let known = OWN_ROUTES.with_borrow(|(of, paths)| *of == app && paths.contains(path));
    if known {
        return path.to_string();
    }
    let Some(route) = request.match_pattern() else {
        return "default".into();
    };
    if route == path {
        OWN_ROUTES.with_borrow_mut(|(of, paths)| {
            if *of != app {
                *of = app;
                paths.clear();
            }
            if paths.len() < MAX_REMEMBERED_ROUTES {
                paths.insert(route.clone());
            }
        });
    }
    route
}

/// `path?key=REDACTED&…`: which parameters a request had, never their values. A "key" that
/// does not look like a parameter name (a bare secret as the whole query) is redacted too.
pub fn redacted_target(path: &str, query: &str) -> String {
    let path = redacted_path(path);
    if query.is_empty() {
        return path;
    }
    let keys: Vec<String> = query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let key = pair.split('=').next().unwrap_or_default();
            let name_like = key.len() <= MAX_LOGGED_KEY_CHARS
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
            let key = if name_like { key } else { REDACTED };
            format!("{key}={REDACTED}")
        })
        .collect();
    format!("{path}?{}", keys.join("&"))
}

/// The path, with a shared link's token (`/s/{token}`, `/shared/{token}/…`: a bearer secret
/// in the path itself) redacted.
fn redacted_path(path: &str) -> String {
    for prefix in ["/s/", "/shared/"] {
        if let Some(rest) = path.strip_prefix(prefix) {
            let tail = rest.find('/').map_or("", |at| &rest[at..]);
            return format!("{prefix}{REDACTED}{tail}");
        }
    }
    path.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[actix_web::test]
    async fn a_requests_route_is_named_before_routing_the_same_whether_remembered_or_not() {
        use actix_web::{App, HttpResponse, test, web};
        let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let record = seen.clone();
        let app = test::init_service(
            App::new()
                .wrap_fn(move |req, service| {
                    use actix_web::dev::Service;
                    record.borrow_mut().push(route_before_routing(&req));
                    service.call(req)
                })
                .route("/v1/chat/completions", web::post().to(HttpResponse::Ok))
                .route("/chat/api/chats/{chat_id}", web::get().to(HttpResponse::Ok)),
        )
        .await;
        for (method, path) in [
            ("POST", "/v1/chat/completions"),
            ("POST", "/v1/chat/completions"),
            ("GET", "/chat/api/chats/chat_1"),
            ("GET", "/chat/api/chats/chat_2"),
            ("GET", "/nowhere"),
            ("GET", "/v1/chat/completions"),
        ] {
            let method = actix_web::http::Method::from_bytes(method.as_bytes()).unwrap();
            let request = test::TestRequest::default()
                .method(method)
                .uri(path)
                .to_request();
            test::call_service(&app, request).await;
        }
        assert_eq!(
            *seen.borrow(),
            [
                "/v1/chat/completions",
                "/v1/chat/completions",
                "/chat/api/chats/{chat_id}",
                "/chat/api/chats/{chat_id}",
                "default",
                "/v1/chat/completions",
            ]
        );
    }

    #[test]
    fn a_shared_links_token_is_redacted_from_the_path() {
        assert_eq!(redacted_target("/s/cqshr_secret", ""), "/s/REDACTED");
        assert_eq!(
            redacted_target("/shared/cqshr_secret/attachments/att_1", "x=1"),
            "/shared/REDACTED/attachments/att_1?x=REDACTED"
        );
        assert_eq!(redacted_target("/settings", ""), "/settings");
    }

    #[test]
    fn query_values_are_redacted_and_keys_kept() {
        assert_eq!(
            redacted_target("/login", "token=cql_secret"),
            "/login?token=REDACTED"
        );
        assert_eq!(
            redacted_target("/chat/api/x/runs/y/events", "after=3&key=cq_abc&flag"),
            "/chat/api/x/runs/y/events?after=REDACTED&key=REDACTED&flag=REDACTED"
        );
        assert_eq!(
            redacted_target("/login", "cql_0123456789abcdefghijklmnopqrstuvwxyzABCD"),
            "/login?REDACTED=REDACTED"
        );
        assert_eq!(redacted_target("/health", ""), "/health");
    }
}
