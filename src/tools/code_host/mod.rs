//! What `code_search` (GitHub) and `gitlab_code_search` share: their arguments and the choice
//! of mode, repository names, a client for a code host's JSON API (`client`) and the shapes of
//! what the model is shown (`results`). Nothing here knows either host's endpoints.

mod client;
mod results;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use url::Url;

use super::schema::{add_to_description, set_keyword};
use super::{INVALID_ARGUMENTS, ToolError};
pub use client::{CodeHostClient, FetchError, secret_header};
pub use results::{
    Browsed, ReviewParts, attach_contents, browse_results, decode_base64, tree_json,
};

/// `max_results` when the call names none (the spec's 5: docs/spec.md#code-search).
pub const DEFAULT_MAX_RESULTS: i64 = 5;
/// Tree entries a review shows: a project's layout, not an inventory of a monorepo.
pub const MAX_TREE_ENTRIES: usize = 500;
/// Longest values the schema allows (GitHub's code search takes queries up to 256).
const MAX_QUERY_CHARS: usize = 256;
const MAX_REPOSITORY_CHARS: usize = 300;
const MAX_PATH_CHARS: usize = 1_000;
const MAX_LANGUAGE_CHARS: usize = 50;
/// Commits a review shows.
pub const RECENT_COMMITS: usize = 10;

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
        let (path, mut is_url) = match Url::parse(raw) {
            Ok(url) if url.has_host() => (url.path().to_string(), true),
            _ => (raw.to_string(), false),
        };
        let mut segments: Vec<&str> = path
            .split('/')
            .filter(|s| !s.is_empty())
            .take_while(|s| *s != "-")
            .collect();
        if segments.len() > 2 && segments[0].contains('.') {
            segments.remove(0); // "github.com/owner/name": a host without a scheme
            is_url = true;
        }
        if !host.nested_namespaces && is_url {
            segments.truncate(2); // the rest of a GitHub URL: /tree/main/src/...
        }
        let max_segments = if host.nested_namespaces {
            usize::MAX
        } else {
            2
        };
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
        if !(2..=max_segments).contains(&segments.len()) || !segments.iter().all(valid_segment) {
            let shape = if host.nested_namespaces {
                "namespace/project"
            } else {
                "owner/name"
            };
            return Err(ToolError::new(
                INVALID_ARGUMENTS,
                format!(
                    "repository must be {shape} or a {} URL, not {raw:?}",
                    host.name
                ),
                format!("Pass repository as {shape}, and any file or directory in it as path."),
            ));
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

/// The arguments both tools take (docs/spec.md#code-search); the
/// descriptions of `query` and `repository` are each host's (`parameters_schema`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Arguments {
    #[schemars(length(min = 1, max = MAX_QUERY_CHARS))]
    query: Option<String>,
    #[schemars(length(min = 1, max = MAX_REPOSITORY_CHARS))]
    repository: Option<String>,
    /// A file or directory to fetch from the repository. Requires repository.
    #[schemars(length(max = MAX_PATH_CHARS))]
    path: Option<String>,
    /// Several files or directories to fetch. Requires repository.
    #[schemars(inner(length(max = MAX_PATH_CHARS)))]
    paths: Option<Vec<String>>,
    /// Filter by programming language (e.g. swift, python, javascript). Only used with query.
    #[schemars(length(max = MAX_LANGUAGE_CHARS))]
    language: Option<String>,
    /// Maximum results. Only used with query.
    #[schemars(range(min = 1))]
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
        for path in self
            .path
            .into_iter()
            .chain(self.paths.into_iter().flatten())
        {
            let path = path.trim().trim_matches('/').to_string();
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
        let invalid = |message: &str, suggestion: &str| {
            ToolError::new(INVALID_ARGUMENTS, message, suggestion)
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
                        &format!(
                            "Call again with max_results from 1 to {max_results_limit}, or leave it out for {DEFAULT_MAX_RESULTS}."
                        ),
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

/// The parameters schema both tools share (`derived` from `Arguments`), with the host's
/// descriptions and the configured limits.
pub fn parameters_schema(
    mut parameters: Value,
    host: &Host,
    max_results: u32,
    max_paths: usize,
) -> Value {
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
    set_keyword(&mut parameters, "/properties/query", "description", query);
    set_keyword(
        &mut parameters,
        "/properties/repository",
        "description",
        repository,
    );
    set_keyword(&mut parameters, "/properties/paths", "maxItems", max_paths);
    add_to_description(
        &mut parameters,
        "/properties/paths",
        &format!("At most {max_paths}."),
    );
    set_keyword(
        &mut parameters,
        "/properties/max_results",
        "maximum",
        max_results,
    );
    add_to_description(
        &mut parameters,
        "/properties/max_results",
        &format!(
            "From 1 to {max_results}, default {DEFAULT_MAX_RESULTS}. Full file content is fetched \
             for the top 3."
        ),
    );
    parameters
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
        assert_eq!(
            repo("https://github.com/apple/swift-nio.git", &GITHUB),
            Ok("apple/swift-nio".into())
        );
        assert_eq!(
            repo("https://github.com/a/b/tree/main/src", &GITHUB),
            Ok("a/b".into())
        );
        assert_eq!(repo("github.com/a/b", &GITHUB), Ok("a/b".into()));
        assert_eq!(
            repo("https://gitlab.com/g/sub/p/-/tree/main", &GITLAB),
            Ok("g/sub/p".into())
        );
        assert_eq!(repo("gitlab.com/g/p", &GITLAB), Ok("g/p".into()));
        for bad in [
            "vapor",
            "",
            "a/b c",
            "../x",
            "a/b/c",
            "https://github.com/only",
        ] {
            assert_eq!(repo(bad, &GITHUB), Err("INVALID_ARGUMENTS".into()), "{bad}");
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
        assert!(
            matches!(review, Mode::Review { .. }),
            "max_results only matters with query"
        );
        let browse = mode(
            json!({"repository": "a/b", "path": "/src/", "paths": ["src", "x"]}),
            &GITHUB,
        )
        .unwrap();
        assert_eq!(
            browse,
            Mode::Browse {
                repository: Repository("a/b".into()),
                paths: vec!["src".into(), "x".into()]
            }
        );
        let scoped = mode(json!({"query": "q", "repository": "g/p"}), &GITLAB).unwrap();
        assert!(matches!(
            scoped,
            Mode::Search {
                repository: Some(_),
                ..
            }
        ));
        for bad in [
            json!({"query": "q", "repository": "a/b"}),
            json!({"query": "q", "path": "x"}),
            json!({"path": "x"}),
            json!({}),
            json!({"query": "q", "max_results": 0}),
            json!({"query": "q", "max_results": 31}),
        ] {
            assert_eq!(
                mode(bad.clone(), &GITHUB).unwrap_err().code,
                "INVALID_ARGUMENTS",
                "{bad}"
            );
        }
    }
}
