//! What `code_search` (GitHub) and `gitlab_code_search` share: their arguments and the choice
//! of mode, repository names, a client for a code host's JSON API that turns its failures into
//! `ToolError`s, and how fetched files and directories are shown to the model. Nothing here
//! knows either host's endpoints.

use std::time::Duration;

use base64::Engine;
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderValue};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use url::Url;

use super::ToolError;

/// `max_results` when the call names none (seed: 5).
pub const DEFAULT_MAX_RESULTS: i64 = 5;
/// Tree entries a review shows: a project's layout, not an inventory of a monorepo.
pub const MAX_TREE_ENTRIES: usize = 500;
/// Commits a review shows.
pub const RECENT_COMMITS: usize = 10;
/// README characters a review keeps: the overview, leaving room for the rest of the review.
pub const README_MAX_CHARS: usize = 6_000;
/// Characters shared by the full files of one search, like web_search's auto-fetch budget.
pub const SEARCH_CONTENT_BUDGET_CHARS: usize = 12_000;
/// Characters shared by the files of one browse call, like fetch_url's budget.
pub const BROWSE_CONTENT_BUDGET_CHARS: usize = 24_000;
/// Characters of an upstream error message quoted to the model: enough for GitHub's and
/// GitLab's one-line messages, never a whole HTML error page.
const UPSTREAM_MESSAGE_MAX_CHARS: usize = 300;

/// The code host a tool talks to, for messages and suggestions.
pub struct Host {
    /// "GitHub" or "GitLab".
    pub name: &'static str,
    /// The setting holding its token, named in no-token errors.
    pub token_setting: &'static str,
    /// Whether repository names may have more than two segments (GitLab's nested groups).
    pub nested_namespaces: bool,
    /// Whether `query` and `repository` together mean a search inside that repository.
    pub scoped_search: bool,
}

/// A repository name, `owner/name` (GitHub) or `group/sub/project` (GitLab).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repository(String);

impl Repository {
    /// Accepts `owner/name`, `host/owner/name` or a full URL such as
    /// `https://gitlab.com/group/project/-/tree/main`.
    pub fn parse(raw: &str, host: &Host) -> Result<Self, ToolError> {
        let raw = raw.trim();
        let path = match Url::parse(raw) {
            Ok(url) if url.has_host() => url.path().to_string(),
            _ => raw.to_string(),
        };
        let mut segments: Vec<&str> = path
            .split('/')
            .filter(|s| !s.is_empty())
            .take_while(|s| *s != "-")
            .collect();
        if segments.len() > 2 && segments[0].contains('.') {
            segments.remove(0); // "github.com/owner/name": a host without a scheme
        }
        if !host.nested_namespaces {
            segments.truncate(2); // the rest of a GitHub URL: /tree/main/src/...
        }
        if let Some(last) = segments.last_mut() {
            *last = last.strip_suffix(".git").unwrap_or(last);
        }
        let valid_segment = |s: &&str| {
            !s.is_empty()
                && *s != "."
                && *s != ".."
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        };
        if segments.len() < 2 || !segments.iter().all(valid_segment) {
            let shape = if host.nested_namespaces {
                "namespace/project"
            } else {
                "owner/name"
            };
            return Err(ToolError::invalid_arguments(format!(
                "repository must be {shape} or a {} URL, not {raw:?}",
                host.name
            )));
        }
        Ok(Self(segments.join("/")))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name's segments, for building URL paths segment by segment.
    pub fn segments(&self) -> impl Iterator<Item = &str> {
        self.0.split('/')
    }
}

/// The arguments both tools take (seed 000 "code_search", "gitlab_code_search").
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Arguments {
    #[serde(default)]
    query: Option<String>,
    #[serde(default)]
    repository: Option<String>,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    paths: Option<Vec<String>>,
    #[serde(default)]
    language: Option<String>,
    #[serde(default)]
    max_results: Option<i64>,
}

/// What one call asks for.
#[derive(Debug, PartialEq)]
pub enum Mode {
    /// Code matching `query`; inside `repository` where the host supports that.
    Search {
        query: String,
        language: Option<String>,
        max_results: usize,
        repository: Option<Repository>,
    },
    /// A repository's overview.
    Review { repository: Repository },
    /// Files or directory listings; a path of "" is the repository's root.
    Browse {
        repository: Repository,
        paths: Vec<String>,
    },
}

impl Arguments {
    /// Chooses the mode, refusing conflicting or out-of-range arguments.
    pub fn into_mode(
        self,
        host: &Host,
        max_results_limit: u32,
        max_paths: usize,
    ) -> Result<Mode, ToolError> {
        let given = |s: Option<String>| s.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
        let query = given(self.query);
        let repository = given(self.repository)
            .map(|r| Repository::parse(&r, host))
            .transpose()?;
        let mut paths: Vec<String> = Vec::new();
        for path in self.path.into_iter().chain(self.paths.into_iter().flatten()) {
            let path = path.trim().trim_matches('/').to_string();
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
        let invalid = |message: &str, suggestion: &str| {
            ToolError::new("invalid_arguments", message, suggestion)
        };
        match (query, repository) {
            (Some(_), _) if !paths.is_empty() => Err(invalid(
                "path and paths browse a repository; they cannot be combined with query",
                "Search with query first, then browse with repository and path.",
            )),
            (Some(_), Some(_)) if !host.scoped_search => Err(invalid(
                "use query OR repository, not both",
                "To search one repository, put repo:owner/name in the query.",
            )),
            (Some(query), repository) => {
                let max_results = self.max_results.unwrap_or(DEFAULT_MAX_RESULTS);
                if !(1..=i64::from(max_results_limit)).contains(&max_results) {
                    return Err(invalid(
                        &format!("max_results must be between 1 and {max_results_limit}"),
                        &format!("Call again with max_results from 1 to {max_results_limit}, or leave it out for {DEFAULT_MAX_RESULTS}."),
                    ));
                }
                Ok(Mode::Search {
                    query,
                    language: given(self.language),
                    max_results: usize::try_from(max_results).unwrap_or(1),
                    repository,
                })
            }
            (None, None) if !paths.is_empty() => Err(invalid(
                "path and paths need repository",
                "Name the repository the paths belong to.",
            )),
            (None, None) => Err(invalid(
                "give query to search, or repository to review or browse",
                "Call again with query, or with repository (and path to read files).",
            )),
            (None, Some(repository)) if paths.is_empty() => Ok(Mode::Review { repository }),
            (None, Some(_)) if paths.len() > max_paths => Err(invalid(
                &format!("at most {max_paths} paths per call, got {}", paths.len()),
                &format!("Split the paths into calls of {max_paths} or fewer."),
            )),
            (None, Some(repository)) => Ok(Mode::Browse { repository, paths }),
        }
    }
}

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
    http: reqwest::Client,
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
        // unwrap: building fails only if the TLS backend cannot start, a start-up failure
        let http = reqwest::Client::builder()
            .user_agent("colloquy")
            .default_headers(headers)
            .timeout(timeout)
            .build()
            .expect("the code host HTTP client builds");
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
        let mut url = self.base.clone().map_err(|message| {
            ToolError::new(
                "upstream_error",
                message,
                "Tell the user the server's code search is misconfigured.",
            )
        })?;
        url.path_segments_mut()
            .map_err(|()| ToolError::invalid_arguments("the API URL cannot take a path"))?
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
        let mut request = self.http.get(url);
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

/// Base64 as GitHub sends it: wrapped with newlines every 60 characters.
pub fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact)
        .ok()
}

/// The first `max_chars` characters of `text`, and whether anything was cut.
pub fn clip(text: &str, max_chars: usize) -> (String, bool) {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => (text[..cut].to_string(), true),
        None => (text.to_string(), false),
    }
}

/// A fetched file's body as the model sees it: `content` (cut to `max_chars`, with
/// `truncated`), or a note for binary files.
pub fn content_fields(bytes: &[u8], max_chars: usize) -> Map<String, Value> {
    let mut fields = Map::new();
    match std::str::from_utf8(bytes) {
        Ok(text) if !text.contains('\0') => {
            let (content, truncated) = clip(text, max_chars);
            fields.insert("content".into(), json!(content));
            if truncated {
                fields.insert("truncated".into(), json!(true));
            }
        }
        _ => {
            fields.insert("content".into(), Value::Null);
            fields.insert(
                "note".into(),
                json!(format!("binary file of {} bytes", bytes.len())),
            );
        }
    }
    fields
}

/// A browsed path: a file's bytes, a directory's entries (`name`, `path`, `type`, `size`), or
/// something else (a submodule, a symlink) with a note.
pub enum Browsed {
    File {
        path: String,
        url: Option<String>,
        bytes: Vec<u8>,
    },
    Dir {
        path: String,
        entries: Vec<Value>,
        truncated: bool,
    },
    Other {
        path: String,
        kind: String,
        note: String,
    },
}

/// The `results` of a browse: one object per path, files sharing the content budget and
/// failures shown in place. When every path failed, the first failure is the call's error.
pub fn browse_results(outcomes: Vec<(String, Result<Browsed, ToolError>)>) -> Result<Value, ToolError> {
    if let Some((_, Err(first))) = outcomes.first()
        && outcomes.iter().all(|(_, outcome)| outcome.is_err())
    {
        return Err(first.clone());
    }
    let files = outcomes
        .iter()
        .filter(|(_, o)| matches!(o, Ok(Browsed::File { .. })))
        .count();
    let per_file = BROWSE_CONTENT_BUDGET_CHARS / files.max(1);
    let results = outcomes.into_iter().map(|(requested, outcome)| match outcome {
        Ok(Browsed::File { path, url, bytes }) => {
            let mut entry = Map::new();
            entry.insert("path".into(), json!(path));
            entry.insert("type".into(), json!("file"));
            entry.insert("size".into(), json!(bytes.len()));
            if let Some(url) = url {
                entry.insert("url".into(), json!(url));
            }
            entry.extend(content_fields(&bytes, per_file));
            Value::Object(entry)
        }
        Ok(Browsed::Dir { path, entries, truncated }) => {
            json!({"path": path, "type": "dir", "entries": entries, "truncated": truncated})
        }
        Ok(Browsed::Other { path, kind, note }) => json!({"path": path, "type": kind, "note": note}),
        Err(err) => json!({"path": requested, "error": err.message, "code": err.code}),
    });
    Ok(Value::Array(results.collect()))
}

/// Languages by share, largest first, each `{"name", "percent"}` to one decimal place.
pub fn language_shares(amounts: &Map<String, Value>) -> Vec<Value> {
    let total: f64 = amounts.values().filter_map(Value::as_f64).sum();
    let mut shares: Vec<(&String, f64)> = amounts
        .iter()
        .filter_map(|(name, amount)| Some((name, amount.as_f64()?)))
        .collect();
    shares.sort_by(|a, b| b.1.total_cmp(&a.1));
    shares
        .into_iter()
        .map(|(name, amount)| {
            let percent = if total > 0.0 {
                (amount * 1000.0 / total).round() / 10.0
            } else {
                0.0
            };
            json!({"name": name, "percent": percent})
        })
        .collect()
}

/// A repository tree as the model sees it: paths, directories ending in `/`.
pub fn tree_json(entries: impl Iterator<Item = (String, bool)>, host_truncated: bool) -> Value {
    let mut paths: Vec<String> = Vec::new();
    let mut truncated = host_truncated;
    for (path, is_dir) in entries {
        if paths.len() == MAX_TREE_ENTRIES {
            truncated = true;
            break;
        }
        paths.push(if is_dir { format!("{path}/") } else { path });
    }
    json!({"entries": paths, "truncated": truncated})
}

/// The parameters schema both tools share.
pub fn parameters_schema(host: &Host, max_results: u32, max_paths: usize) -> Value {
    let (repository, query) = if host.nested_namespaces {
        (
            "GitLab project to review or browse: namespace/project or a full URL (e.g. \
             https://gitlab.com/group/project). With query, searches only this project.",
            "Code search query: function names, class names, error messages or patterns.",
        )
    } else {
        (
            "GitHub repository to review or browse: owner/repo or a full URL (e.g. \
             https://github.com/owner/repo). Use this OR query, not both.",
            "Code search query. Supports GitHub qualifiers: repo:owner/name, org:name, path:dir/, \
             filename:name, extension:ext. Use this OR repository, not both.",
        )
    };
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": query},
            "repository": {"type": "string", "description": repository},
            "path": {"type": "string", "description": "A file or directory to fetch from the repository. Requires repository."},
            "paths": {"type": "array", "items": {"type": "string"}, "maxItems": max_paths,
                      "description": format!("Several files or directories to fetch (max {max_paths}). Requires repository.")},
            "language": {"type": "string", "description": "Filter by programming language (e.g. swift, python, javascript). Only used with query."},
            "max_results": {"type": "integer", "minimum": 1, "maximum": max_results,
                            "description": format!("Maximum results (1-{max_results}, default {DEFAULT_MAX_RESULTS}). Full file content is fetched for the top 3. Only used with query.")}
        },
        "additionalProperties": false
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GITHUB: Host = Host {
        name: "GitHub",
        token_setting: "tools.github_token",
        nested_namespaces: false,
        scoped_search: false,
    };
    const GITLAB: Host = Host {
        name: "GitLab",
        token_setting: "tools.gitlab_token",
        nested_namespaces: true,
        scoped_search: true,
    };

    fn repo(raw: &str, host: &Host) -> Result<String, String> {
        Repository::parse(raw, host)
            .map(|r| r.as_str().to_string())
            .map_err(|e| e.code)
    }

    #[test]
    fn repository_names_and_urls_are_accepted_in_every_common_form() {
        assert_eq!(repo("vapor/vapor", &GITHUB), Ok("vapor/vapor".into()));
        assert_eq!(repo("https://github.com/apple/swift-nio.git", &GITHUB), Ok("apple/swift-nio".into()));
        assert_eq!(repo("https://github.com/a/b/tree/main/src", &GITHUB), Ok("a/b".into()));
        assert_eq!(repo("github.com/a/b", &GITHUB), Ok("a/b".into()));
        assert_eq!(repo("https://gitlab.com/g/sub/p/-/tree/main", &GITLAB), Ok("g/sub/p".into()));
        assert_eq!(repo("gitlab.com/g/p", &GITLAB), Ok("g/p".into()));
        for bad in ["vapor", "", "a/b c", "../x", "https://github.com/only"] {
            assert_eq!(repo(bad, &GITHUB), Err("invalid_arguments".into()), "{bad}");
        }
    }

    fn mode(arguments: Value, host: &Host) -> Result<Mode, ToolError> {
        serde_json::from_value::<Arguments>(arguments)
            .unwrap()
            .into_mode(host, 30, 10)
    }

    #[test]
    fn the_mode_follows_the_arguments_given() {
        let search = mode(json!({"query": "q", "language": "rust"}), &GITHUB).unwrap();
        assert!(matches!(search, Mode::Search { max_results: 5, .. }));
        let review = mode(json!({"repository": "a/b", "max_results": 99}), &GITHUB).unwrap();
        assert!(matches!(review, Mode::Review { .. }), "max_results only matters with query");
        let browse = mode(json!({"repository": "a/b", "path": "/src/", "paths": ["src", "x"]}), &GITHUB).unwrap();
        assert_eq!(
            browse,
            Mode::Browse { repository: Repository("a/b".into()), paths: vec!["src".into(), "x".into()] }
        );
        let scoped = mode(json!({"query": "q", "repository": "g/p"}), &GITLAB).unwrap();
        assert!(matches!(scoped, Mode::Search { repository: Some(_), .. }));
        for bad in [
            json!({"query": "q", "repository": "a/b"}),
            json!({"query": "q", "path": "x"}),
            json!({"path": "x"}),
            json!({}),
            json!({"query": "q", "max_results": 0}),
            json!({"query": "q", "max_results": 31}),
        ] {
            assert_eq!(mode(bad.clone(), &GITHUB).unwrap_err().code, "invalid_arguments", "{bad}");
        }
    }

    #[test]
    fn rate_limits_are_told_apart_from_other_refusals() {
        let mut headers = HeaderMap::new();
        headers.insert("x-ratelimit-remaining", HeaderValue::from_static("0"));
        headers.insert("x-ratelimit-reset", HeaderValue::from_static("4102444800"));
        let err = status_error(StatusCode::FORBIDDEN, &headers, br#"{"message":"API rate limit exceeded"}"#);
        let FetchError::RateLimited { resets: Some(when) } = err else { panic!("{err:?}") };
        assert!(when.starts_with("at 2100-01-01T00:00:00Z"), "{when}");
        let err = status_error(StatusCode::FORBIDDEN, &HeaderMap::new(), br#"{"message":"Resource not accessible"}"#);
        assert!(matches!(err, FetchError::Refused { status: 403, .. }));
        let err = status_error(StatusCode::UNPROCESSABLE_ENTITY, &HeaderMap::new(), b"<html>oops</html>");
        assert!(matches!(err, FetchError::Status { status: 422, message } if message == "<html>oops</html>"));
    }

    #[test]
    fn content_is_clipped_and_binary_files_are_named_not_shown() {
        assert_eq!(decode_base64("aGVs\nbG8=\n").unwrap(), b"hello");
        let fields = content_fields("héllo".as_bytes(), 2);
        assert_eq!(fields["content"], "hé");
        assert_eq!(fields["truncated"], true);
        let fields = content_fields(&[0, 159, 146, 150], 100);
        assert_eq!(fields["content"], Value::Null);
        assert_eq!(fields["note"], "binary file of 4 bytes");
    }

    #[test]
    fn language_shares_are_percentages_largest_first() {
        let amounts = json!({"Shell": 250, "Rust": 750}).as_object().unwrap().clone();
        assert_eq!(
            language_shares(&amounts),
            vec![json!({"name": "Rust", "percent": 75.0}), json!({"name": "Shell", "percent": 25.0})]
        );
    }
}
