//! A typed client for the server's routes: one method per route, grouped by URL family
//! (`chat_api` for `/chat/api/...`, `openai` for `/v1/...`, `api` for `/api/...`, `auth` for
//! `/auth/...`, `admin` for `/admin/api/...`). Each method returns a `reqwest::RequestBuilder`,
//! so a test still adds the body, headers and checks the status itself.
//!
//! `app.chat_api()` and its siblings send the admin's API key. Another caller is a `Client`:
//! `app.as_key(key)`, `app.as_session(cookie)`, `app.as_browser(cookie)` or `app.as_anonymous()`,
//! with the same family methods; `Client::with_key` serves a `colloquy serve` process of a test's
//! own. `Call` adds to every request `.call()` (send; fail the test only if it could not be sent),
//! `.read_json()` (send and read the body as JSON), `.with_query("k=v")` and `.describe()`
//! (`METHOD /path`, for assertion messages).
//!
//! Requests outside these families (`/health`, `/metrics`, the UI, a tus upload's `Location`,
//! malformed paths) still use `app.request` and `app.anonymous`.
//!
//! ```ignore
//! let sent = app.chat_api().send_message(&chat).json(&body).call().await;
//! let refused = app.as_anonymous().chat_api().list_chats().call().await;
//! ```

mod admin;
mod api;
mod auth;
mod chat_api;
mod openai;

pub use admin::Admin;
pub use api::Api;
pub use auth::Auth;
pub use chat_api::ChatApi;
pub use openai::OpenAi;

use reqwest::{Method, RequestBuilder, Response};
use serde::de::DeserializeOwned;

use crate::helpers::TestApp;

/// How a `Client`'s requests prove who sends them.
#[derive(Clone, Copy)]
enum Credentials<'a> {
    /// `Authorization: Bearer <key>`.
    Key(&'a str),
    /// The session cookie alone, nothing said about where the request comes from.
    Session(&'a str),
    /// The session cookie and this server's `Origin`, as the browser UI sends them.
    Browser(&'a str),
    /// Nothing at all.
    Anonymous,
}

/// One caller of one server: its address, an HTTP client and the credentials its requests carry.
#[derive(Clone, Copy)]
pub struct Client<'a> {
    http: &'a reqwest::Client,
    /// `http://host:port`, no trailing slash.
    base: &'a str,
    credentials: Credentials<'a>,
}

impl<'a> Client<'a> {
    /// A client for a server other than a `TestApp` (a `colloquy serve` process), sending `key`.
    pub fn with_key(http: &'a reqwest::Client, base: &'a str, key: &'a str) -> Self {
        Client {
            http,
            base,
            credentials: Credentials::Key(key),
        }
    }

    /// `/chat/api/...`: chats and everything inside one.
    pub fn chat_api(self) -> ChatApi<'a> {
        ChatApi(self)
    }

    /// `/v1/...`: the OpenAI-compatible API.
    pub fn openai(self) -> OpenAi<'a> {
        OpenAi(self)
    }

    /// `/api/...`: agents, knowledge bases, schedules, workflows, tools, MCP servers.
    pub fn api(self) -> Api<'a> {
        Api(self)
    }

    /// `/auth/...`: sign-in, keys, users, the account and its sessions.
    pub fn auth(self) -> Auth<'a> {
        Auth(self)
    }

    /// `/admin/api/...`: users and the server's status.
    pub fn admin(self) -> Admin<'a> {
        Admin(self)
    }

    /// A request to `path` with this client's credentials.
    fn request(self, method: Method, path: &str) -> RequestBuilder {
        let request = self.http.request(method, format!("{}{path}", self.base));
        match self.credentials {
            Credentials::Key(key) => request.bearer_auth(key),
            Credentials::Session(session) => request.header("cookie", format!("session={session}")),
            Credentials::Browser(session) => request
                .header("cookie", format!("session={session}"))
                .header("origin", self.base),
            Credentials::Anonymous => request,
        }
    }

    /// Makes a chat over HTTP from `body` (a title, an agent, ...) and returns its id; the chat
    /// API must answer 201.
    pub async fn new_chat_with(self, body: &serde_json::Value) -> String {
        let response = self.chat_api().create_chat().json(body).call().await;
        assert_eq!(response.status(), 201, "{:?}", response.text().await);
        let chat: serde_json::Value = response.json().await.expect("chat JSON");
        chat["id"].as_str().expect("a chat id").to_string()
    }
}

impl TestApp {
    /// A client with the admin's API key.
    pub fn as_admin(&self) -> Client<'_> {
        self.as_key(&self.api_key)
    }

    /// A client sending `key` as a bearer token.
    pub fn as_key<'a>(&'a self, key: &'a str) -> Client<'a> {
        Client {
            http: &self.http,
            base: &self.address,
            credentials: Credentials::Key(key),
        }
    }

    /// A client with the session cookie and nothing said about where it comes from.
    pub fn as_session<'a>(&'a self, session: &'a str) -> Client<'a> {
        Client {
            http: &self.http,
            base: &self.address,
            credentials: Credentials::Session(session),
        }
    }

    /// A client as the browser UI: the session cookie, and this server's `Origin`.
    pub fn as_browser<'a>(&'a self, session: &'a str) -> Client<'a> {
        Client {
            http: &self.http,
            base: &self.address,
            credentials: Credentials::Browser(session),
        }
    }

    /// A client with no credentials at all.
    pub fn as_anonymous(&self) -> Client<'_> {
        Client {
            http: &self.http,
            base: &self.address,
            credentials: Credentials::Anonymous,
        }
    }

    /// `Client::new_chat_with` as the admin.
    pub async fn new_chat_with(&self, body: &serde_json::Value) -> String {
        self.as_admin().new_chat_with(body).await
    }

    /// `/chat/api/...` with the admin's API key.
    pub fn chat_api(&self) -> ChatApi<'_> {
        self.as_admin().chat_api()
    }

    /// `/v1/...` with the admin's API key.
    pub fn openai(&self) -> OpenAi<'_> {
        self.as_admin().openai()
    }

    /// `/api/...` with the admin's API key.
    pub fn api(&self) -> Api<'_> {
        self.as_admin().api()
    }

    /// `/auth/...` with the admin's API key.
    pub fn auth(&self) -> Auth<'_> {
        self.as_admin().auth()
    }

    /// `/admin/api/...` with the admin's API key.
    pub fn admin(&self) -> Admin<'_> {
        self.as_admin().admin()
    }
}

/// Sending a built request, and naming it in assertion messages.
pub trait Call {
    /// Sends the request; fails the test if it could not be sent (not on an error status).
    fn call(self) -> impl std::future::Future<Output = Response>;

    /// Sends the request and reads its body as JSON, whatever the status (as
    /// `.call().await.json().await.unwrap()`).
    fn read_json<T: DeserializeOwned>(self) -> impl std::future::Future<Output = T>;

    /// The same request with `query` (`"status=all"`, as written after a `?`) as its URL's
    /// query string.
    fn with_query(self, query: &str) -> RequestBuilder;

    /// `METHOD /path` of the request, for assertion messages.
    fn describe(&self) -> String;
}

impl Call for RequestBuilder {
    async fn call(self) -> Response {
        self.send().await.expect("the request was sent")
    }

    async fn read_json<T: DeserializeOwned>(self) -> T {
        self.call().await.json().await.expect("a JSON body")
    }

    fn with_query(self, query: &str) -> RequestBuilder {
        let (client, request) = self.build_split();
        let mut request = request.expect("a valid request");
        request.url_mut().set_query(Some(query));
        RequestBuilder::from_parts(client, request)
    }

    fn describe(&self) -> String {
        let request = self
            .try_clone()
            .expect("a request without a streamed body")
            .build()
            .expect("a valid request");
        format!("{} {}", request.method(), request.url().path())
    }
}
