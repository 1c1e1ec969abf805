//! Fake GitHub (REST v3) and GitLab (v4) servers: real HTTP on 127.0.0.1:0 under an API
//! prefix, answering in those APIs' JSON shapes for one repository each (`octo/widgets`,
//! `group/project` with id 42), and recording every request's path (as sent, percent-encoding
//! included), query and headers. Tests may override the answer for a path.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use base64::Engine;
use serde_json::{Value, json};

/// A request a fake host received. `path` is as sent, percent-encoding included.
#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    pub query: HashMap<String, String>,
    pub headers: HashMap<String, String>,
}

/// A fake answer: status, headers, body (JSON, or text when it is a string).
#[derive(Clone)]
pub struct Canned {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Value,
}

fn ok(body: Value) -> Canned {
    Canned {
        status: 200,
        headers: Vec::new(),
        body,
    }
}

fn status(status: u16, body: Value) -> Canned {
    Canned {
        status,
        headers: Vec::new(),
        body,
    }
}

type World = fn(&Seen, &str) -> Canned;

#[derive(Default)]
struct HostState {
    seen: Vec<Seen>,
    overrides: HashMap<String, Canned>,
}

/// A fake code host: `world` answers every request under `prefix` unless a test overrides
/// a path.
pub struct FakeHost {
    state: Arc<Mutex<HostState>>,
    pub base_url: String,
    handle: actix_web::dev::ServerHandle,
}

impl FakeHost {
    pub async fn start(prefix: &'static str, world: World) -> Self {
        let state = Arc::new(Mutex::new(HostState::default()));
        let data = web::Data::from(state.clone());
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .app_data(web::Data::new((prefix, world)))
                .default_service(web::to(answer))
        })
        .workers(1)
        .bind("127.0.0.1:0")
        .expect("bind fake code host");
        let address = server.addrs()[0];
        let server = server.run();
        let handle = server.handle();
        actix_web::rt::spawn(server);
        Self {
            state,
            base_url: format!("http://{address}{prefix}"),
            handle,
        }
    }

    /// Answers `path` (after the prefix, as sent) with `canned` from now on.
    pub fn answer(&self, path: &str, canned: Canned) {
        let mut state = self.state.lock().unwrap();
        state.overrides.insert(path.into(), canned);
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.state.lock().unwrap().seen.clone()
    }

    pub fn paths(&self) -> Vec<String> {
        self.seen().into_iter().map(|s| s.path).collect()
    }

    pub async fn stop(self) {
        self.handle.stop(false).await;
    }
}

async fn answer(
    state: web::Data<Mutex<HostState>>,
    world: web::Data<(&'static str, World)>,
    req: HttpRequest,
) -> HttpResponse {
    let (prefix, world) = **world;
    let path = req.path().strip_prefix(prefix).unwrap_or("").to_string();
    let seen = Seen {
        path: path.clone(),
        query: url::form_urlencoded::parse(req.query_string().as_bytes())
            .into_owned()
            .collect(),
        headers: req
            .headers()
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
            .collect(),
    };
    let canned = {
        let mut state = state.lock().unwrap();
        state.seen.push(seen.clone());
        state.overrides.get(&path).cloned()
    };
    let canned = canned.unwrap_or_else(|| world(&seen, &path));
    let mut response =
        HttpResponse::build(actix_web::http::StatusCode::from_u16(canned.status).unwrap());
    for (name, value) in canned.headers {
        response.insert_header((name, value));
    }
    match canned.body {
        Value::String(text) => response.content_type("text/plain").body(text),
        body => response.json(body),
    }
}

/// Base64 wrapped at 60 characters with a trailing newline, as GitHub's contents API sends it.
fn github_base64(text: &str) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(text);
    let mut wrapped = String::new();
    for line in encoded.as_bytes().chunks(60) {
        wrapped.push_str(std::str::from_utf8(line).unwrap());
        wrapped.push('\n');
    }
    wrapped
}

pub fn widget_source(i: usize) -> String {
    format!(
        "// Widget {i}: turns requests into responses.\nasync fn handle_{i}(request: Request) -> Response {{\n    Response::ok(request.body())\n}}\n"
    )
}

pub const README: &str = "# Widgets\n\nAsync widgets for every occasion.\n";
/// Files in the fake GitHub repository's tree: more than a review shows.
const TREE_FILES: usize = 600;
/// Files GitHub's fake code search finds.
pub const GITHUB_HITS: usize = 7;

/// GitHub's REST API v3 for one repository, `octo/widgets`.
fn github(seen: &Seen, path: &str) -> Canned {
    let not_found = status(
        404,
        json!({"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"}),
    );
    let repo = json!({"id": 1, "name": "widgets", "full_name": "octo/widgets",
                      "owner": {"login": "octo", "id": 2, "type": "Organization"},
                      "html_url": "https://github.com/octo/widgets", "private": false});
    let file = |i: usize| {
        json!({"type": "file", "encoding": "base64", "size": widget_source(i).len(),
               "name": format!("widget{i}.rs"), "path": format!("src/widget{i}.rs"),
               "content": github_base64(&widget_source(i)), "sha": format!("sha{i}"),
               "url": format!("https://api.github.com/repos/octo/widgets/contents/src/widget{i}.rs?ref=main"),
               "html_url": format!("https://github.com/octo/widgets/blob/main/src/widget{i}.rs"),
               "download_url": format!("https://raw.githubusercontent.com/octo/widgets/main/src/widget{i}.rs"),
               "_links": {"self": "…", "git": "…", "html": "…"}})
    };
    match path {
        "/search/code" if !seen.headers.contains_key("authorization") => status(
            401,
            json!({"message": "Requires authentication", "documentation_url": "https://docs.github.com/rest/search/search#search-code", "status": "401"}),
        ),
        "/search/code" => {
            let per_page: usize = seen.query["per_page"].parse().unwrap();
            let items: Vec<Value> = (0..GITHUB_HITS.min(per_page))
                .map(|i| {
                    json!({"name": format!("widget{i}.rs"), "path": format!("src/widget{i}.rs"),
                           "sha": format!("sha{i}"),
                           "url": format!("https://api.github.com/repositories/1/contents/src/widget{i}.rs?ref=abc"),
                           "git_url": format!("https://api.github.com/repositories/1/git/blobs/sha{i}"),
                           "html_url": format!("https://github.com/octo/widgets/blob/abc/src/widget{i}.rs"),
                           "repository": repo, "score": 1.0,
                           "text_matches": [{"object_type": "FileContent", "property": "content",
                                             "fragment": format!("async fn handle_{i}(request: Request)"),
                                             "matches": [{"text": "async", "indices": [0, 5]}]}]})
                })
                .collect();
            ok(json!({"total_count": GITHUB_HITS, "incomplete_results": false, "items": items}))
        }
        "/repos/octo/widgets" => ok(json!({
            "id": 1, "name": "widgets", "full_name": "octo/widgets", "owner": {"login": "octo"},
            "html_url": "https://github.com/octo/widgets", "description": "Async widgets",
            "fork": false, "stargazers_count": 1234, "watchers_count": 1234, "forks_count": 56,
            "open_issues_count": 7, "default_branch": "main", "topics": ["async", "widgets"],
            "license": {"key": "mit", "name": "MIT License", "spdx_id": "MIT"},
            "archived": false, "updated_at": "2024-05-01T10:00:00Z",
            "pushed_at": "2024-04-30T09:00:00Z", "language": "Rust"})),
        "/repos/octo/widgets/languages" => ok(json!({"Rust": 9000, "Shell": 1000})),
        "/repos/octo/widgets/readme" => ok(json!({
            "type": "file", "encoding": "base64", "size": README.len(), "name": "README.md",
            "path": "README.md", "content": github_base64(README),
            "html_url": "https://github.com/octo/widgets/blob/main/README.md"})),
        "/repos/octo/widgets/git/trees/main" if seen.query.contains_key("recursive") => {
            let mut tree =
                vec![json!({"path": "src", "mode": "040000", "type": "tree", "sha": "t0"})];
            tree.extend((0..TREE_FILES).map(|i| {
                json!({"path": format!("src/widget{i}.rs"), "mode": "100644", "type": "blob",
                       "sha": format!("sha{i}"), "size": 120})
            }));
            ok(
                json!({"sha": "abc", "url": "https://api.github.com/…", "tree": tree, "truncated": false}),
            )
        }
        "/repos/octo/widgets/commits" => ok(json!([
            {"sha": "c0ffee1", "html_url": "https://github.com/octo/widgets/commit/c0ffee1",
             "commit": {"author": {"name": "Ada", "email": "ada@example.com", "date": "2024-04-30T09:00:00Z"},
                        "committer": {"name": "GitHub", "date": "2024-04-30T09:00:00Z"},
                        "message": "Make widgets async\n\nA longer explanation."},
             "author": {"login": "ada"}},
            {"sha": "c0ffee0", "html_url": "https://github.com/octo/widgets/commit/c0ffee0",
             "commit": {"author": {"name": "Grace", "email": "grace@example.com", "date": "2024-04-29T09:00:00Z"},
                        "message": "Initial commit"},
             "author": {"login": "grace"}}])),
        "/repos/octo/widgets/contents/src" => ok(json!([
            {"type": "file", "name": "widget0.rs", "path": "src/widget0.rs", "size": 120, "sha": "sha0"},
            {"type": "dir", "name": "nested", "path": "src/nested", "size": 0, "sha": "t1"}])),
        path => match path
            .strip_prefix("/repos/octo/widgets/contents/src/widget")
            .and_then(|rest| rest.strip_suffix(".rs"))
            .and_then(|i| i.parse().ok())
        {
            Some(i) if i < TREE_FILES => ok(file(i)),
            _ => not_found,
        },
    }
}

pub fn app_source(i: usize) -> String {
    format!(
        "import asyncio\n\n\nasync def handler_{i}(websocket):\n    await websocket.send('hi')\n"
    )
}

/// GitLab's v4 API for one project, `group/project` (id 42).
fn gitlab(seen: &Seen, path: &str) -> Canned {
    let project = json!({
        "id": 42, "description": "Backend service", "name": "project", "path": "project",
        "path_with_namespace": "group/project", "default_branch": "main",
        "web_url": "https://gitlab.example/group/project",
        "readme_url": "https://gitlab.example/group/project/-/blob/main/docs/README.md",
        "star_count": 12, "forks_count": 3, "open_issues_count": 4, "topics": ["python"],
        "last_activity_at": "2024-05-02T08:00:00.000Z", "archived": false,
        "license": {"key": "apache-2.0", "name": "Apache License 2.0", "nickname": null}});
    let blobs = |count: usize| {
        let blobs: Vec<Value> = (0..count)
            .map(|i| {
                json!({"basename": format!("src/app{i}"), "data": format!("async def handler_{i}(websocket):\n"),
                       "path": format!("src/app{i}.py"), "filename": format!("src/app{i}.py"),
                       "id": null, "ref": "main", "startline": 4, "project_id": 42})
            })
            .collect();
        Value::Array(blobs)
    };
    let per_page = |seen: &Seen| {
        seen.query
            .get("per_page")
            .map_or(20, |n| n.parse().unwrap())
    };
    let unauthorized = status(401, json!({"message": "401 Unauthorized"}));
    let tree_entry = |path: &str, kind: &str| {
        let name = path.rsplit('/').next().unwrap();
        json!({"id": "abc", "name": name, "type": kind, "path": path, "mode": "100644"})
    };
    let with_pages = |body: Value| Canned {
        status: 200,
        headers: vec![("x-next-page", String::new()), ("x-page", "1".into())],
        body,
    };
    match path {
        "/search" if !seen.headers.contains_key("private-token") => unauthorized,
        "/search" | "/projects/group%2Fproject/search" => ok(blobs(6.min(per_page(seen)))),
        "/projects/group%2Fproject" | "/projects/42" => ok(project),
        "/projects/42/languages" => ok(json!({"Python": 80.5, "Shell": 19.5})),
        "/projects/42/repository/files/docs%2FREADME.md/raw" => {
            ok(json!("# Project\n\nIt serves.\n"))
        }
        "/projects/42/repository/tree" => match seen.query.get("path").map(String::as_str) {
            Some("src") => with_pages(json!([
                tree_entry("src/app0.py", "blob"),
                tree_entry("src/lib", "tree")
            ])),
            Some(_) => status(404, json!({"message": "404 Tree Not Found"})),
            None => with_pages(json!([
                tree_entry("docs", "tree"),
                tree_entry("docs/README.md", "blob"),
                tree_entry("src", "tree"),
                tree_entry("src/app0.py", "blob")
            ])),
        },
        "/projects/42/repository/commits" => ok(json!([
            {"id": "9f8e7d6c5b4a", "short_id": "9f8e7d6c", "title": "Serve websockets",
             "message": "Serve websockets\n\nDetails.", "author_name": "Linus",
             "author_email": "l@example.com", "authored_date": "2024-05-02T08:00:00.000+00:00",
             "committed_date": "2024-05-02T08:00:00.000+00:00",
             "web_url": "https://gitlab.example/group/project/-/commit/9f8e7d6c5b4a"}])),
        path => match path
            .strip_prefix("/projects/42/repository/files/src%2Fapp")
            .and_then(|rest| rest.strip_suffix(".py/raw"))
            .and_then(|i| i.parse::<usize>().ok())
        {
            Some(i) if seen.query.get("ref").map(String::as_str) == Some("main") => {
                ok(json!(app_source(i)))
            }
            _ if path.starts_with("/projects/42/repository/files/") => {
                status(404, json!({"message": "404 File Not Found"}))
            }
            _ => status(404, json!({"message": "404 Project Not Found"})),
        },
    }
}

pub async fn github_host() -> FakeHost {
    FakeHost::start("/api/v3", github).await
}

pub async fn gitlab_host() -> FakeHost {
    FakeHost::start("/api/v4", gitlab).await
}
