//! The `gitlab_code_search` tool (docs/spec.md#code-search): `code_search`'s three modes against a
//! GitLab v4 API — blob search (global, or inside one project), project review, browsing files and
//! directories. Projects are addressed by their URL-encoded path (`group%2Fproject`), then by id.
//! Exists only when `tools.gitlab_api_url` is set; `tools.gitlab_token` is optional.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::join_all;
use reqwest::header::{HeaderMap, HeaderName};
use secrecy::ExposeSecret;
use serde_json::{Value, json};

use super::code_host::{
    Arguments, Browsed, CodeHostClient, FetchError, Host, MAX_TREE_ENTRIES, Mode, RECENT_COMMITS,
    Repository, ReviewParts, attach_contents, browse_results, parameters_schema, secret_header,
    tree_json,
};
use super::{ProgressKind, ToolError, ToolFuture, TypedTool};
use crate::config::ToolsConfig;

mod project;

use project::{Project, id_text, readme_path};

static GITLAB: Host = Host {
    name: "GitLab",
    token_setting: "tools.gitlab_token",
    nested_namespaces: true,
    scoped_search: true,
};

/// The most entries one GitLab tree page may hold (GitLab's own maximum is 100).
const TREE_PAGE_SIZE: &str = "100";

/// Language names the model uses mapped to the extensions GitLab's `extension:` filter takes;
/// anything else is taken as an extension already.
const EXTENSIONS: [(&str, &str); 17] = [
    ("python", "py"),
    ("javascript", "js"),
    ("typescript", "ts"),
    ("ruby", "rb"),
    ("rust", "rs"),
    ("golang", "go"),
    ("kotlin", "kt"),
    ("csharp", "cs"),
    ("c#", "cs"),
    ("c++", "cpp"),
    ("shell", "sh"),
    ("bash", "sh"),
    ("markdown", "md"),
    ("perl", "pl"),
    ("haskell", "hs"),
    ("elixir", "ex"),
    ("objective-c", "m"),
];

pub struct GitlabCodeSearch {
    inner: Arc<GitlabApi>,
}

struct GitlabApi {
    client: CodeHostClient,
    max_results: u32,
    full_content: usize,
    max_paths: usize,
}

impl GitlabCodeSearch {
    /// `None` when no GitLab API is configured: the tool then does not exist.
    pub fn new(config: &ToolsConfig) -> Option<Self> {
        let base_url = config.gitlab_api_url.as_deref()?;
        let mut headers = HeaderMap::new();
        let token = config
            .gitlab_token
            .as_ref()
            .and_then(|token| secret_header(token.expose_secret()));
        if config.gitlab_token.is_some() && token.is_none() {
            tracing::warn!("tools.gitlab_token cannot be sent as a header; ignoring it");
        }
        let has_token = token.is_some();
        if let Some(token) = token {
            headers.insert(HeaderName::from_static("private-token"), token);
        }
        let client = CodeHostClient::new(
            &GITLAB,
            base_url,
            Duration::from_secs(config.fetch_timeout_secs),
            headers,
            has_token,
        );
        Some(Self {
            inner: Arc::new(GitlabApi {
                client,
                max_results: config.gitlab_search_max_results,
                full_content: config.code_search_full_content,
                max_paths: config.browse_max_paths,
            }),
        })
    }
}

impl TypedTool for GitlabCodeSearch {
    type Args = Arguments;

    fn name(&self) -> &'static str {
        "gitlab_code_search"
    }

    fn description(&self) -> Cow<'_, str> {
        "Search and browse code on GitLab. Three modes: search (query, optionally inside \
             one repository: snippets with full file content for the top results); review \
             (repository alone: metadata, languages, README, directory tree, recent commits); \
             browse (repository with path or paths: files or directory listings)."
            .into()
    }

    fn parameters(&self, derived: Value) -> Value {
        let api = &self.inner;
        parameters_schema(derived, &GITLAB, api.max_results, api.max_paths)
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
            match arguments.into_mode(&GITLAB, api.max_results, api.max_paths)? {
                Mode::Search {
                    query,
                    language,
                    max_results,
                    repository,
                } => api.search(query, language, max_results, repository).await,
                Mode::Review { repository } => api.review(&repository).await,
                Mode::Browse { repository, paths } => api.browse(&repository, &paths).await,
            }
        })
    }
}

impl GitlabApi {
    async fn search(
        &self,
        query: String,
        language: Option<String>,
        max_results: usize,
        repository: Option<Repository>,
    ) -> Result<Value, ToolError> {
        let search = match language {
            Some(language) => format!("{query} extension:{}", extension(&language)),
            None => query,
        };
        let (segments, subject) = match &repository {
            Some(repo) => (
                vec!["projects", repo.as_str(), "search"],
                format!("the code search in {}", repo.as_str()),
            ),
            None => (vec!["search"], "the code search".to_string()),
        };
        let per_page = max_results.to_string();
        let url = self.client.url(
            segments,
            &[
                ("scope", "blobs"),
                ("search", &search),
                ("per_page", &per_page),
            ],
        )?;
        let (_, body) = self
            .client
            .get_json(url)
            .await
            .map_err(|err| self.client.failure(err, &subject))?;
        let blobs: Vec<&Value> = body
            .as_array()
            .map(|blobs| blobs.iter().take(max_results).collect())
            .unwrap_or_default();
        let mut project_ids: Vec<String> =
            blobs.iter().map(|b| id_text(&b["project_id"])).collect();
        project_ids.sort();
        project_ids.dedup();
        let (projects, fetched) = tokio::join!(
            join_all(project_ids.iter().map(|id| async move {
                let project = self.project_by(id).await.ok();
                (id.clone(), project)
            })),
            join_all(blobs.iter().take(self.full_content).map(|blob| async move {
                let project_id = id_text(&blob["project_id"]);
                let ref_name = blob["ref"].as_str().unwrap_or("HEAD");
                let path = blob["path"].as_str().unwrap_or_default();
                self.raw(&project_id, path, ref_name).await.map_err(|err| {
                    let subject = format!("{path} in project {project_id}");
                    self.client.failure(err, &subject)
                })
            })),
        );
        let projects: HashMap<String, Project> = projects
            .into_iter()
            .filter_map(|(id, project)| Some((id, project?)))
            .collect();
        let mut results: Vec<Value> = blobs
            .iter()
            .map(|blob| {
                let project = projects.get(&id_text(&blob["project_id"]));
                let url = project.map(|p| {
                    format!(
                        "{}/-/blob/{}/{}#L{}",
                        p.web_url,
                        blob["ref"].as_str().unwrap_or("HEAD"),
                        blob["path"].as_str().unwrap_or_default(),
                        blob["startline"].as_u64().unwrap_or(1)
                    )
                });
                json!({
                    "repository": project.map(|p| &p.meta["path_with_namespace"]),
                    "project_id": blob["project_id"],
                    "path": blob["path"],
                    "ref": blob["ref"],
                    "startline": blob["startline"],
                    "url": url,
                    "snippet": blob["data"],
                })
            })
            .collect();
        attach_contents(&mut results, fetched);
        Ok(json!({"mode": "search", "query": search, "results": results}))
    }

    async fn review(&self, repository: &Repository) -> Result<Value, ToolError> {
        let project = self.project(repository).await?;
        let meta = &project.meta;
        let branch = project.default_branch.as_deref();
        let readme_path = readme_path(meta, branch);
        let commits_per_page = RECENT_COMMITS.to_string();
        let commits_query = [("per_page", commits_per_page.as_str())];
        let (languages, readme, tree, commits) = tokio::join!(
            self.project_json(&project, &["languages"], &[]),
            async {
                match branch {
                    Some(branch) => Some(self.raw(&project.id, &readme_path, branch).await),
                    None => None,
                }
            },
            self.project_json(
                &project,
                &["repository", "tree"],
                &[("recursive", "true"), ("per_page", TREE_PAGE_SIZE)]
            ),
            self.project_json(&project, &["repository", "commits"], &commits_query),
        );
        let mut parts = ReviewParts::default();
        let mut settle = |what: &str, part: Result<(Value, bool), FetchError>| {
            let part = part.map_err(|err| self.client.failure(err, what));
            // An empty project (no default branch) has no tree or commits to find.
            parts.keep(what, part, branch.is_none())
        };
        let languages = settle("languages", languages);
        let tree = settle("tree", tree);
        let commits = settle("recent commits", commits);
        let readme = readme.map(|readme| readme.map_err(|err| self.client.failure(err, "readme")));
        parts.languages = languages.and_then(|(languages, _)| languages.as_object().cloned());
        parts.readme = readme
            .and_then(|readme| parts.keep("readme", readme, true))
            .map(|bytes| (readme_path, String::from_utf8_lossy(&bytes).into_owned()));
        parts.tree = tree.map(|(tree, more)| {
            let entries = tree.as_array().into_iter().flatten().map(|entry| {
                let path = entry["path"].as_str().unwrap_or_default().to_string();
                (path, entry["type"] == "tree")
            });
            tree_json(entries, more)
        });
        parts.recent_commits = commits.map(|(commits, _)| {
            let commits = commits.as_array().map(Vec::as_slice).unwrap_or_default();
            commits
                .iter()
                .take(RECENT_COMMITS)
                .map(commit_json)
                .collect()
        });
        let license = &meta["license"];
        Ok(parts.into_review(json!({
            "repository": meta["path_with_namespace"],
            "url": meta["web_url"],
            "description": meta["description"],
            "stars": meta["star_count"],
            "forks": meta["forks_count"],
            "open_issues": meta["open_issues_count"],
            "default_branch": meta["default_branch"],
            "topics": meta.get("topics").cloned().unwrap_or_else(|| json!([])),
            "license": license["nickname"].as_str().or(license["name"].as_str()),
            "archived": meta["archived"],
            "updated_at": meta["last_activity_at"],
        })))
    }

    async fn browse(&self, repository: &Repository, paths: &[String]) -> Result<Value, ToolError> {
        let project = self.project(repository).await?;
        let Some(branch) = project.default_branch.as_deref() else {
            return Err(ToolError::new(
                "not_found",
                format!("project {} has no files yet", repository.as_str()),
                "Browse another project.",
            ));
        };
        let project = &project;
        let outcomes = join_all(paths.iter().map(|path| async move {
            let subject = format!("{path:?} in {}", repository.as_str());
            let outcome = self
                .browse_one(project, branch, path)
                .await
                .map_err(|err| self.client.failure(err, &subject));
            (path.clone(), outcome)
        }))
        .await;
        Ok(json!({
            "mode": "browse",
            "repository": project.meta["path_with_namespace"],
            "ref": branch,
            "results": browse_results(outcomes)?,
        }))
    }

    /// A file through the raw endpoint; failing that (404), a directory through the tree.
    async fn browse_one(
        &self,
        project: &Project,
        branch: &str,
        path: &str,
    ) -> Result<Browsed, FetchError> {
        if !path.is_empty() {
            match self.raw(&project.id, path, branch).await {
                Ok(bytes) => {
                    return Ok(Browsed::File {
                        path: path.to_string(),
                        url: Some(format!("{}/-/blob/{branch}/{path}", project.web_url)),
                        bytes,
                    });
                }
                Err(FetchError::NotFound) => {}
                Err(err) => return Err(err),
            }
        }
        let (listing, more) = self
            .project_json(
                project,
                &["repository", "tree"],
                &[
                    ("path", path),
                    ("ref", branch),
                    ("per_page", TREE_PAGE_SIZE),
                ],
            )
            .await?;
        let items = listing.as_array().cloned().unwrap_or_default();
        if items.is_empty() && !path.is_empty() {
            return Err(FetchError::NotFound);
        }
        let entries: Vec<Value> = items
            .iter()
            .take(MAX_TREE_ENTRIES)
            .map(|item| {
                let kind = match item["type"].as_str() {
                    Some("tree") => "dir",
                    Some("commit") => "submodule",
                    _ => "file",
                };
                json!({"name": item["name"], "path": item["path"], "type": kind})
            })
            .collect();
        Ok(Browsed::Dir {
            path: path.to_string(),
            truncated: more || items.len() > MAX_TREE_ENTRIES,
            entries,
        })
    }
}

/// The extension GitLab's `extension:` filter takes for a language name.
fn extension(language: &str) -> String {
    let language = language.trim().trim_start_matches('.').to_lowercase();
    EXTENSIONS
        .iter()
        .find(|(name, _)| *name == language)
        .map_or(language.clone(), |(_, ext)| (*ext).to_string())
}

/// A commit as a review shows it: sha, title, author, date.
fn commit_json(commit: &Value) -> Value {
    json!({
        "sha": commit["id"],
        "message": commit["title"],
        "author": commit["author_name"],
        "date": commit["authored_date"],
    })
}

#[cfg(test)]
mod tests;
