//! Addressing one GitLab project: its metadata by URL-encoded path (`group%2Fproject`) or id,
//! then files (the raw endpoint, paths URL-encoded) and JSON listings under `/projects/{id}`.

use serde_json::Value;

use super::GitlabApi;
use crate::tools::ToolError;
use crate::tools::code_host::{FetchError, Repository};

/// What browse and review need from a project's metadata.
pub(super) struct Project {
    pub id: String,
    pub default_branch: Option<String>,
    pub web_url: String,
    pub meta: Value,
}

impl GitlabApi {
    /// `GET /projects/{id or url-encoded path}?license=true`.
    pub(super) async fn project_by(&self, id_or_path: &str) -> Result<Project, FetchError> {
        let url = self
            .client
            .url(["projects", id_or_path], &[("license", "true")])
            .map_err(|err| FetchError::Unreachable(err.message))?;
        let (_, meta) = self.client.get_json(url).await?;
        let id = match &meta["id"] {
            Value::Null => return Err(FetchError::Unreachable("the project has no id".into())),
            id => id_text(id),
        };
        Ok(Project {
            id,
            default_branch: meta["default_branch"].as_str().map(str::to_string),
            web_url: meta["web_url"].as_str().unwrap_or_default().to_string(),
            meta,
        })
    }

    pub(super) async fn project(&self, repository: &Repository) -> Result<Project, ToolError> {
        self.project_by(repository.as_str()).await.map_err(|err| {
            self.client
                .failure(err, &format!("project {}", repository.as_str()))
        })
    }

    /// `GET /projects/{id}/repository/files/{url-encoded path}/raw?ref=`.
    pub(super) async fn raw(
        &self,
        project_id: &str,
        path: &str,
        ref_name: &str,
    ) -> Result<Vec<u8>, FetchError> {
        let url = self
            .client
            .url(
                ["projects", project_id, "repository", "files", path, "raw"],
                &[("ref", ref_name)],
            )
            .map_err(|err| FetchError::Unreachable(err.message))?;
        let (_, body) = self.client.get(url, None).await?;
        Ok(body.to_vec())
    }

    /// `GET /projects/{id}/{segments…}` as JSON, with whether another page follows.
    pub(super) async fn project_json(
        &self,
        project: &Project,
        segments: &[&str],
        query: &[(&str, &str)],
    ) -> Result<(Value, bool), FetchError> {
        let url = self
            .client
            .url(
                ["projects", project.id.as_str()]
                    .into_iter()
                    .chain(segments.iter().copied()),
                query,
            )
            .map_err(|err| FetchError::Unreachable(err.message))?;
        let (headers, value) = self.client.get_json(url).await?;
        let more = headers
            .get("x-next-page")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| !v.trim().is_empty());
        Ok((value, more))
    }
}

/// The README's path in the repository: from `readme_url` (`…/-/blob/{branch}/{path}`), else
/// `README.md`.
pub(super) fn readme_path(meta: &Value, branch: Option<&str>) -> String {
    let from_url = meta["readme_url"].as_str().and_then(|url| {
        let marker = format!("/-/blob/{}/", branch?);
        let start = url.find(&marker)? + marker.len();
        Some(url[start..].to_string())
    });
    from_url
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "README.md".into())
}

/// A project id as a URL segment, whether GitLab sent it as a number or a string.
pub(super) fn id_text(id: &Value) -> String {
    match id {
        Value::String(id) => id.clone(),
        other => other.to_string(),
    }
}
