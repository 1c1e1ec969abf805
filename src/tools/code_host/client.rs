//! A code host's JSON API: one `reqwest::Client` with the host's headers and a timeout, URLs
//! built segment by segment (so `group/project` becomes `group%2Fproject`), and failures
//! classified — not found, rate limited, refused, other — then put in the model's words.

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::Value;
use url::Url;

use super::Host;
use super::results::clip;
use crate::tools::ToolError;

/// Characters of an upstream error message quoted to the model: enough for GitHub's and
/// GitLab's one-line messages, never a whole HTML error page.
const UPSTREAM_MESSAGE_MAX_CHARS: usize = 300;

/// A failed request to a code host, before it is put in the model's words.
#[derive(Debug)]
pub enum FetchError {
    NotFound,
    /// Out of quota; `resets` says when it comes back, if the host said.
    RateLimited {
        resets: Option<String>,
    },
    /// 401, or 403 for any other reason than the rate limit.
    Refused {
        status: u16,
        message: String,
    },
    Status {
        status: u16,
        message: String,
    },
    /// No answer at all: connection, timeout or an unreadable body.
    Unreachable(String),
}

/// A code host's JSON API: a base URL, default headers (token included) and a timeout.
pub struct CodeHostClient {
    http: Result<reqwest::Client, String>,
    base: Result<Url, String>,
    host: &'static Host,
    has_token: bool,
}

impl CodeHostClient {
    /// `headers` are sent with every request; `has_token` says whether they carry a token.
    pub fn new(
        host: &'static Host,
        base_url: &str,
        timeout: Duration,
        headers: HeaderMap,
        has_token: bool,
    ) -> Self {
        // Building fails only if the TLS backend cannot start; then every call says so.
        let http = reqwest::Client::builder()
            .user_agent("colloquy")
            .default_headers(headers)
            .timeout(timeout)
            .build()
            .map_err(|err| format!("the {} HTTP client could not start: {err}", host.name));
        let base = Url::parse(base_url)
            .ok()
            .filter(|url| !url.cannot_be_a_base())
            .ok_or_else(|| format!("the {} API URL {base_url:?} is not a URL", host.name));
        Self {
            http,
            base,
            host,
            has_token,
        }
    }

    pub fn has_token(&self) -> bool {
        self.has_token
    }

    /// The API URL of `segments` (each percent-encoded, `/` included) with `query`.
    pub fn url<'a>(
        &self,
        segments: impl IntoIterator<Item = &'a str>,
        query: &[(&str, &str)],
    ) -> Result<Url, ToolError> {
        let misconfigured = |message: String| {
            ToolError::new(
                "upstream_error",
                message,
                "Tell the user the server's code search is misconfigured.",
            )
        };
        let mut url = self.base.clone().map_err(misconfigured)?;
        url.path_segments_mut()
            .map_err(|()| {
                misconfigured(format!("the {} API URL cannot take a path", self.host.name))
            })?
            .pop_if_empty()
            .extend(segments);
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        Ok(url)
    }

    /// GETs `url` (asking for `accept` instead of the default media type, if given),
    /// returning the successful response's headers and body.
    pub async fn get(
        &self,
        url: Url,
        accept: Option<&'static str>,
    ) -> Result<(HeaderMap, bytes::Bytes), FetchError> {
        let http = self
            .http
            .as_ref()
            .map_err(|reason| FetchError::Unreachable(reason.clone()))?;
        let mut request = http.get(url);
        if let Some(accept) = accept {
            request = request.header(reqwest::header::ACCEPT, accept);
        }
        let response = request
            .send()
            .await
            .map_err(|err| FetchError::Unreachable(without_url(&err)))?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = response
            .bytes()
            .await
            .map_err(|err| FetchError::Unreachable(without_url(&err)))?;
        if status.is_success() {
            return Ok((headers, body));
        }
        Err(status_error(status, &headers, &body))
    }

    /// GETs `url` and parses its JSON body.
    pub async fn get_json(&self, url: Url) -> Result<(HeaderMap, Value), FetchError> {
        self.get_json_accepting(url, None).await
    }

    /// [`Self::get_json`] asking for another JSON media type.
    pub async fn get_json_accepting(
        &self,
        url: Url,
        accept: Option<&'static str>,
    ) -> Result<(HeaderMap, Value), FetchError> {
        let (headers, body) = self.get(url, accept).await?;
        let value = serde_json::from_slice(&body)
            .map_err(|err| FetchError::Unreachable(format!("the answer is not JSON: {err}")))?;
        Ok((headers, value))
    }

    /// The model's words for a failure concerning `subject` (e.g. "repository a/b").
    pub fn failure(&self, err: FetchError, subject: &str) -> ToolError {
        let host = self.host.name;
        match err {
            FetchError::NotFound => ToolError::new(
                "not_found",
                format!("{subject} was not found on {host}"),
                "Check the spelling; private repositories are invisible without access. Review \
                 the repository to see which paths exist.",
            ),
            FetchError::RateLimited { resets } => ToolError::new(
                "rate_limited",
                match resets {
                    Some(when) => format!("{host}'s API rate limit is exhausted; it resets {when}"),
                    None => format!("{host}'s API rate limit is exhausted"),
                },
                "Do not retry now: answer from what you already have, or use another tool.",
            ),
            FetchError::Refused { status, message } if !self.has_token => ToolError::new(
                "no_token",
                format!("{host} refused {subject} without a token ({status} {message})"),
                format!(
                    "Tell the user an administrator must set {}; meanwhile use other tools.",
                    self.host.token_setting
                ),
            ),
            FetchError::Refused { status, message } => ToolError::new(
                "upstream_error",
                format!("{host} refused {subject} with the configured token ({status} {message})"),
                format!(
                    "The token may lack access or have expired: tell the user to check {}.",
                    self.host.token_setting
                ),
            ),
            FetchError::Status { status, message } => ToolError::new(
                "upstream_error",
                format!("{host} answered {status} for {subject}: {message}"),
                "Simplify the query or arguments, or try again later.",
            ),
            FetchError::Unreachable(message) => ToolError::new(
                "upstream_error",
                format!("could not get {subject} from {host}: {message}"),
                "Try again later, or use another tool.",
            ),
        }
    }

    /// The refusal for a call that needs a token the server does not have.
    pub fn no_token(&self, what: &str) -> ToolError {
        ToolError::new(
            "no_token",
            format!(
                "{what} on {} needs a token: set {}",
                self.host.name, self.host.token_setting
            ),
            "Tell the user an administrator must configure the token. Meanwhile review or \
             browse a known repository, or use web_search.",
        )
    }
}

/// A reqwest error's text without the URL, which may carry query text but never helps.
fn without_url(err: &reqwest::Error) -> String {
    let kind = if err.is_timeout() {
        "timed out"
    } else if err.is_connect() {
        "could not connect"
    } else {
        "request failed"
    };
    let mut source = std::error::Error::source(err);
    let mut detail = String::new();
    while let Some(cause) = source {
        detail = cause.to_string();
        source = cause.source();
    }
    if detail.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}: {detail}")
    }
}

/// Classifies a failed response: 404, a rate limit (429, or 403 saying so), other refusals.
fn status_error(status: StatusCode, headers: &HeaderMap, body: &[u8]) -> FetchError {
    let message = upstream_message(body);
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let exhausted = header("x-ratelimit-remaining") == Some("0")
        || header("ratelimit-remaining") == Some("0")
        || message.to_lowercase().contains("rate limit");
    match status {
        StatusCode::NOT_FOUND => FetchError::NotFound,
        StatusCode::TOO_MANY_REQUESTS => FetchError::RateLimited {
            resets: rate_limit_reset(headers),
        },
        StatusCode::FORBIDDEN if exhausted => FetchError::RateLimited {
            resets: rate_limit_reset(headers),
        },
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => FetchError::Refused {
            status: status.as_u16(),
            message,
        },
        _ => FetchError::Status {
            status: status.as_u16(),
            message,
        },
    }
}

/// The `message` (or `error`) of a JSON error body, else the start of the body's text.
fn upstream_message(body: &[u8]) -> String {
    let text = match serde_json::from_slice::<Value>(body) {
        Ok(value) => match (&value["message"], &value["error"]) {
            (Value::String(m), _) | (_, Value::String(m)) => m.clone(),
            (Value::Null, Value::Null) => value.to_string(),
            (m, Value::Null) => m.to_string(),
            (_, e) => e.to_string(),
        },
        Err(_) => String::from_utf8_lossy(body).trim().to_string(),
    };
    clip(&text, UPSTREAM_MESSAGE_MAX_CHARS).0
}

/// When a rate limit resets: from `x-ratelimit-reset` / `ratelimit-reset` (Unix seconds) or
/// `retry-after` (seconds from now).
fn rate_limit_reset(headers: &HeaderMap) -> Option<String> {
    let number = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<i64>().ok())
    };
    let now = chrono::Utc::now().timestamp();
    let reset = number("x-ratelimit-reset")
        .or_else(|| number("ratelimit-reset"))
        .or_else(|| number("retry-after").map(|seconds| now + seconds))?;
    let at = chrono::DateTime::from_timestamp(reset, 0)?;
    let wait = (reset - now).max(0);
    Some(format!(
        "at {} (in {wait} seconds)",
        at.format("%Y-%m-%dT%H:%M:%SZ")
    ))
}

/// A header value for a token, hidden from `Debug` output; `None` if it cannot be a header.
pub fn secret_header(value: &str) -> Option<HeaderValue> {
    let mut value = HeaderValue::from_str(value).ok()?;
    value.set_sensitive(true);
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limits_are_told_apart_from_other_refusals() {
        let mut headers = HeaderMap::new();
        headers.insert("x-ratelimit-remaining", HeaderValue::from_static("0"));
        headers.insert("x-ratelimit-reset", HeaderValue::from_static("4102444800"));
        let err = status_error(
            StatusCode::FORBIDDEN,
            &headers,
            br#"{"message":"API rate limit exceeded"}"#,
        );
        let FetchError::RateLimited { resets: Some(when) } = err else {
            panic!("{err:?}")
        };
        assert!(when.starts_with("at 2100-01-01T00:00:00Z"), "{when}");
        let err = status_error(
            StatusCode::FORBIDDEN,
            &HeaderMap::new(),
            br#"{"message":"Resource not accessible"}"#,
        );
        assert!(matches!(err, FetchError::Refused { status: 403, .. }));
        let err = status_error(
            StatusCode::UNPROCESSABLE_ENTITY,
            &HeaderMap::new(),
            b"<html>oops</html>",
        );
        assert!(
            matches!(err, FetchError::Status { status: 422, message } if message == "<html>oops</html>")
        );
    }
}
