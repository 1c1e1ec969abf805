//! The `code_search` tool (docs/spec.md#code-search): GitHub's REST API v3 in three modes — search
//! code (full content of the top results), review a repository (metadata, languages, README, tree,
//! recent commits), browse files and directories. Code search needs `tools.github_token`; review
//! and browse work without one, within GitHub's anonymous rate limit.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::join_all;
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderMap, HeaderValue};
use secrecy::ExposeSecret;
use serde_json::{Value, json};

use super::code_host::{
    Arguments, Browsed, CodeHostClient, Host, MAX_TREE_ENTRIES, Mode, RECENT_COMMITS, Repository,
    ReviewParts, attach_contents, browse_results, decode_base64, parameters_schema, secret_header,
    tree_json,
};
use super::{ProgressKind, ToolError, ToolFuture, TypedTool};
use crate::config::ToolsConfig;

static GITHUB: Host = Host {
    name: "GitHub",
    token_setting: "tools.github_token",
    nested_namespaces: false,
    scoped_search: false,
};

/// GitHub's JSON media type; search asks for the text-match variant to get snippets.
const JSON_MEDIA_TYPE: &str = "application/vnd.github+json";
const TEXT_MATCH_MEDIA_TYPE: &str = "application/vnd.github.text-match+json";
/// The REST API version the response shapes here were written against.
const API_VERSION: &str = "2022-11-28";

pub struct CodeSearch {
    inner: Arc<GithubApi>,
}

struct GithubApi {
    client: CodeHostClient,
    max_results: u32,
    full_content: usize,
    max_paths: usize,
}

impl CodeSearch {
    pub fn new(config: &ToolsConfig) -> Self {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static(JSON_MEDIA_TYPE));
        headers.insert(
            "x-github-api-version",
            HeaderValue::from_static(API_VERSION),
        );
        let token = config
            .github_token
            .as_ref()
            .and_then(|token| secret_header(&format!("Bearer {}", token.expose_secret())));
        if config.github_token.is_some() && token.is_none() {
            tracing::warn!("tools.github_token cannot be sent as a header; ignoring it");
        }
        let has_token = token.is_some();
        if let Some(token) = token {
            headers.insert(AUTHORIZATION, token);
        }
        let client = CodeHostClient::new(
            &GITHUB,
            &config.github_api_url,
            Duration::from_secs(config.fetch_timeout_secs),
            headers,
            has_token,
        );
        Self {
            inner: Arc::new(GithubApi {
                client,
                max_results: config.code_search_max_results,
                full_content: config.code_search_full_content,
                max_paths: config.browse_max_paths,
            }),
        }
    }
}

impl TypedTool for CodeSearch {
    type Args = Arguments;

    fn name(&self) -> &'static str {
        "code_search"
    }

    fn description(&self) -> Cow<'_, str> {
        "Search and browse code on GitHub. Three modes: search (query: code snippets with \
             repository, path, URL and full file content for the top results); review \
             (repository alone: metadata, languages, README, directory tree, recent commits); \
             browse (repository with path or paths: files or directory listings). Review first \
             to see the structure, then browse specific files."
            .into()
    }

    fn parameters(&self, derived: Value) -> Value {
        let api = &self.inner;
        parameters_schema(derived, &GITHUB, api.max_results, api.max_paths)
    }

    fn progress(&self) -> Option<ProgressKind> {
        Some(ProgressKind::CodeSearching)
    }
    /// Its result depends only on the arguments (and the outside world, for the cache's
    /// five minutes).
    fn cacheable(&self) -> bool {
        true
    }

    fn call(&self, arguments: Arguments) -> ToolFuture {
        let api = Arc::clone(&self.inner);
        Box::pin(async move {
            match arguments.into_mode(&GITHUB, api.max_results, api.max_paths)? {
                Mode::Search {
                    query,
                    language,
                    max_results,
                    repository: _,
                } => api.search(query, language, max_results).await,
                Mode::Review { repository } => api.review(&repository).await,
                Mode::Browse { repository, paths } => api.browse(&repository, &paths).await,
            }
        })
    }
}

impl GithubApi {
    async fn search(
        &self,
        query: String,
        language: Option<String>,
        max_results: usize,
    ) -> Result<Value, ToolError> {
        if !self.client.has_token() {
            return Err(self.client.no_token("code search"));
        }
        let query = match language {
            Some(language) => format!("{query} language:{language}"),
            None => query,
        };
        let per_page = max_results.to_string();
        let url = self.client.url(
            ["search", "code"],
            &[("q", &query), ("per_page", &per_page)],
        )?;
        let (_, body) = self
            .client
            .get_json_accepting(url, Some(TEXT_MATCH_MEDIA_TYPE))
            .await
            .map_err(|err| self.client.failure(err, "the code search"))?;
        let items: Vec<&Value> = body["items"]
            .as_array()
            .map(|items| items.iter().take(max_results).collect())
            .unwrap_or_default();
        let fetched = join_all(items.iter().take(self.full_content).map(|item| {
            let repository = item["repository"]["full_name"].as_str().unwrap_or_default();
            let path = item["path"].as_str().unwrap_or_default();
            self.file_bytes(repository, path)
        }))
        .await;
        let mut results: Vec<Value> = items
            .iter()
            .map(|item| {
                let mut result = json!({
                    "repository": item["repository"]["full_name"],
                    "path": item["path"],
                    "url": item["html_url"],
                });
                let snippets: Vec<&Value> = item["text_matches"]
                    .as_array()
                    .map(|m| m.iter().map(|m| &m["fragment"]).collect())
                    .unwrap_or_default();
                if !snippets.is_empty() {
                    result["snippets"] = json!(snippets);
                }
                result
            })
            .collect();
        attach_contents(&mut results, fetched);
        Ok(json!({
            "mode": "search",
            "query": query,
            "total_count": body["total_count"],
            "results": results,
        }))
    }

    /// A file's bytes from the contents API.
    async fn file_bytes(&self, repository: &str, path: &str) -> Result<Vec<u8>, ToolError> {
        let subject = format!("{path} in {repository}");
        let repository = Repository::parse(repository, &GITHUB)?;
        match self.contents(&repository, path, &subject).await? {
            Browsed::File { bytes, .. } => Ok(bytes),
            _ => Err(ToolError::new(
                "not_found",
                format!("{subject} is not a file"),
                "Browse it to see what it holds.",
            )),
        }
    }

    async fn review(&self, repository: &Repository) -> Result<Value, ToolError> {
        let repo: Vec<&str> = repository.segments().collect();
        let url = self
            .client
            .url(["repos"].into_iter().chain(repo.iter().copied()), &[])?;
        let (_, meta) = self.client.get_json(url).await.map_err(|err| {
            self.client
                .failure(err, &format!("repository {}", repository.as_str()))
        })?;
        let branch = meta["default_branch"].as_str().unwrap_or("HEAD");
        let under = |tail: &[&'static str]| {
            ["repos"]
                .into_iter()
                .chain(repo.iter().copied())
                .chain(tail.iter().copied())
                .collect::<Vec<&str>>()
        };
        let commits_per_page = RECENT_COMMITS.to_string();
        let commits_query = [("per_page", commits_per_page.as_str())];
        let (languages, readme, tree, commits) = tokio::join!(
            self.part(under(&["languages"]), &[]),
            self.part(under(&["readme"]), &[]),
            self.part(
                under(&["git", "trees"])
                    .into_iter()
                    .chain([branch])
                    .collect(),
                &[("recursive", "1")]
            ),
            self.part(under(&["commits"]), &commits_query),
        );
        let mut parts = ReviewParts::default();
        parts.languages = parts
            .keep("languages", languages, false)
            .and_then(|languages| languages.as_object().cloned());
        parts.readme = parts.keep("readme", readme, true).map(|readme| {
            let text = readme["content"]
                .as_str()
                .and_then(decode_base64)
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                .unwrap_or_default();
            let path = readme["path"].as_str().unwrap_or("README.md").to_string();
            (path, text)
        });
        parts.tree = parts.keep("tree", tree, false).map(|tree| {
            let entries = tree["tree"].as_array().into_iter().flatten().map(|entry| {
                let path = entry["path"].as_str().unwrap_or_default().to_string();
                (path, entry["type"] == "tree")
            });
            tree_json(entries, tree["truncated"] == true)
        });
        parts.recent_commits = parts.keep("recent commits", commits, false).map(|commits| {
            let commits = commits.as_array().map(Vec::as_slice).unwrap_or_default();
            commits
                .iter()
                .take(RECENT_COMMITS)
                .map(commit_json)
                .collect()
        });
        Ok(parts.into_review(json!({
            "repository": meta["full_name"],
            "url": meta["html_url"],
            "description": meta["description"],
            "stars": meta["stargazers_count"],
            "forks": meta["forks_count"],
            "open_issues": meta["open_issues_count"],
            "default_branch": meta["default_branch"],
            "topics": meta.get("topics").cloned().unwrap_or_else(|| json!([])),
            "license": meta["license"]["spdx_id"].as_str().or(meta["license"]["name"].as_str()),
            "archived": meta["archived"],
            "updated_at": meta["updated_at"],
            "pushed_at": meta["pushed_at"],
        })))
    }

    /// One part of a review: a JSON document, or the failure in the model's words.
    async fn part(&self, segments: Vec<&str>, query: &[(&str, &str)]) -> Result<Value, ToolError> {
        let url = self.client.url(segments, query)?;
        let subject = url.path().to_string();
        self.client
            .get_json(url)
            .await
            .map(|(_, value)| value)
            .map_err(|err| self.client.failure(err, &subject))
    }

    async fn browse(&self, repository: &Repository, paths: &[String]) -> Result<Value, ToolError> {
        let outcomes = join_all(paths.iter().map(|path| async move {
            let subject = format!("{path:?} in {}", repository.as_str());
            (
                path.clone(),
                self.contents(repository, path, &subject).await,
            )
        }))
        .await;
        Ok(json!({
            "mode": "browse",
            "repository": repository.as_str(),
            "results": browse_results(outcomes)?,
        }))
    }

    /// `GET /repos/{o}/{r}/contents/{path}`: a file (an object) or a directory (an array).
    async fn contents(
        &self,
        repository: &Repository,
        path: &str,
        subject: &str,
    ) -> Result<Browsed, ToolError> {
        let segments = ["repos"]
            .into_iter()
            .chain(repository.segments())
            .chain(["contents"])
            .chain(path.split('/').filter(|s| !s.is_empty()));
        let url = self.client.url(segments, &[])?;
        let (_, body) = self
            .client
            .get_json(url)
            .await
            .map_err(|err| self.client.failure(err, subject))?;
        let path = path.to_string();
        if let Some(items) = body.as_array() {
            let entries: Vec<Value> = items
                .iter()
                .map(|item| {
                    json!({"name": item["name"], "path": item["path"], "type": item["type"],
                           "size": item["size"]})
                })
                .collect();
            let truncated = entries.len() > MAX_TREE_ENTRIES;
            let entries = entries.into_iter().take(MAX_TREE_ENTRIES).collect();
            return Ok(Browsed::Dir {
                path,
                entries,
                truncated,
            });
        }
        let kind = body["type"].as_str().unwrap_or("unknown").to_string();
        if kind != "file" {
            let note = match body["target"].as_str() {
                Some(target) => format!("a {kind} pointing to {target}"),
                None => format!("a {kind}, which has no content to show"),
            };
            return Ok(Browsed::Other { path, kind, note });
        }
        let bytes = match (body["encoding"].as_str(), body["content"].as_str()) {
            (Some("base64"), Some(content)) => decode_base64(content),
            _ => None,
        };
        let Some(bytes) = bytes else {
            return Ok(Browsed::Other {
                path,
                kind: "file".into(),
                note: format!(
                    "{} bytes, too large for the contents API; open {}",
                    body["size"],
                    body["html_url"].as_str().unwrap_or("it on GitHub")
                ),
            });
        };
        Ok(Browsed::File {
            path,
            url: body["html_url"].as_str().map(str::to_string),
            bytes,
        })
    }
}

/// A commit as a review shows it: sha, the message's first line, author, date.
fn commit_json(commit: &Value) -> Value {
    let message = commit["commit"]["message"].as_str().unwrap_or_default();
    let author = commit["commit"]["author"]["name"]
        .as_str()
        .or(commit["author"]["login"].as_str());
    json!({
        "sha": commit["sha"],
        "message": message.lines().next().unwrap_or_default(),
        "author": author,
        "date": commit["commit"]["author"]["date"],
    })
}
