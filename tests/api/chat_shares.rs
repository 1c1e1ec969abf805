//! Read-only shared links (issue 50, point 5): the owner's API (create, list, revoke, expiry,
//! limits), what `/shared/{token}` shows (the active branch, its images and artifact versions,
//! nothing else), that a link's token opens no other route, and the browser scenario
//! `tests/browser/shared_link.mjs`.

use reqwest::{Method, RequestBuilder, Response};
use sea_orm::EntityTrait;
use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, error_body, spawn_app};

/// `POST /chat/api/chats/{chat}/shares` with `body`, as `key`.
fn create_share(app: &TestApp, key: &str, chat: &str, body: Option<Value>) -> RequestBuilder {
    let request = app
        .http
        .post(app.url(&format!("/chat/api/chats/{chat}/shares")))
        .bearer_auth(key);
    match body {
        Some(body) => request.json(&body),
        None => request,
    }
}

fn list_shares(app: &TestApp, key: &str, chat: &str) -> RequestBuilder {
    app.http
        .get(app.url(&format!("/chat/api/chats/{chat}/shares")))
        .bearer_auth(key)
}

fn revoke_share(app: &TestApp, key: &str, chat: &str, share: &str) -> RequestBuilder {
    app.http
        .delete(app.url(&format!("/chat/api/chats/{chat}/shares/{share}")))
        .bearer_auth(key)
}

/// A new link to `chat` (the admin's), as its creation answered it.
async fn new_share(app: &TestApp, chat: &str) -> Value {
    let response = create_share(app, &app.api_key, chat, None)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    response.json().await.unwrap()
}

fn token_of(share: &Value) -> String {
    share["token"].as_str().expect("a token").to_string()
}

/// `GET /shared/{token}{rest}` with no credentials.
async fn shared(app: &TestApp, token: &str, rest: &str) -> Response {
    app.anonymous(Method::GET, &format!("/shared/{token}{rest}"))
        .send()
        .await
        .unwrap()
}

/// The headers every answer under a link must carry, and the cookie it must not set.
fn assert_sealed(response: &Response) {
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(header("cache-control"), "no-store", "{}", response.url());
    assert_eq!(header("referrer-policy"), "no-referrer");
    assert!(header("x-robots-tag").contains("noindex"));
    assert!(response.headers().get("set-cookie").is_none());
}

#[actix_web::test]
async fn the_owner_creates_lists_and_revokes_links_and_a_revoked_link_answers_404() {
    let app = spawn_app().await;
    let chat = app.create_chat("Trip plans").await["id"]
        .as_str()
        .unwrap()
        .to_string();

    let share = new_share(&app, &chat).await;
    let token = token_of(&share);
    assert!(token.len() >= 43, "at least 256 bits, base64: {token}");
    assert!(share["id"].as_str().unwrap().starts_with("shr_"));
    assert!(share["expires_at"].is_null());
    assert_eq!(
        share["url"].as_str().unwrap(),
        format!("{}/s/{token}", app.address)
    );

    // Only the token's hash is stored.
    let rows = entities::chat_shares::Entity::find()
        .all(&app.db)
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_ne!(rows[0].token_hash, token);
    assert_eq!(rows[0].token_hash.len(), 64);

    let listed: Value = list_shares(&app, &app.api_key, &chat)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed["data"].as_array().unwrap().len(), 1);
    assert_eq!(listed["data"][0]["id"], share["id"]);
    assert!(
        !listed.to_string().contains(&token),
        "a list never shows a token"
    );
    assert!(listed["data"][0].get("token").is_none());

    let opened = shared(&app, &token, "").await;
    assert_eq!(opened.status(), 200);
    assert_sealed(&opened);
    let body: Value = opened.json().await.unwrap();
    assert_eq!(body["title"], "Trip plans");

    let page = app
        .anonymous(Method::GET, &format!("/s/{token}"))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    assert_sealed(&page);
    assert!(page.text().await.unwrap().contains("<html"));

    let revoked = revoke_share(&app, &app.api_key, &chat, share["id"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), 200);
    let gone = shared(&app, &token, "").await;
    assert_eq!(gone.status(), 404);
    assert_sealed(&gone);
    let gone_page = app
        .anonymous(Method::GET, &format!("/s/{token}"))
        .send()
        .await
        .unwrap();
    assert_eq!(gone_page.status(), 404);
    assert_sealed(&gone_page);

    // Revoked, unknown and malformed tokens get the very same answer.
    let revoked_body = error_body(gone).await;
    let unknown = error_body(
        shared(
            &app,
            "cqshr_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
            "",
        )
        .await,
    )
    .await;
    let malformed = error_body(shared(&app, "nonsense", "").await).await;
    assert_eq!(revoked_body, unknown);
    assert_eq!(revoked_body, malformed);
    assert_eq!(revoked_body["code"], "not_found");

    let again = revoke_share(&app, &app.api_key, &chat, share["id"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 404);
    assert_eq!(error_body(again).await["code"], "not_found");
}

#[actix_web::test]
async fn a_link_expires_and_its_expiry_is_bounded() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    let key = app.api_key.clone();

    let lasting = create_share(&app, &key, &chat, Some(json!({"expires_in": 3600})))
        .send()
        .await
        .unwrap();
    assert_eq!(lasting.status(), 201);
    let lasting: Value = lasting.json().await.unwrap();
    let at = chrono::DateTime::parse_from_rfc3339(lasting["expires_at"].as_str().unwrap()).unwrap();
    let ahead = at.with_timezone(&chrono::Utc) - chrono::Utc::now();
    assert!((3590..=3600).contains(&ahead.num_seconds()), "{ahead:?}");
    assert_eq!(shared(&app, &token_of(&lasting), "").await.status(), 200);

    for (body, code) in [
        (json!({"expires_in": 0}), "invalid_expiry"),
        (json!({"expires_in": 400 * 24 * 3600}), "invalid_expiry"),
        (
            json!({"expires_at": "2001-01-01T00:00:00Z"}),
            "invalid_expiry",
        ),
        (
            json!({"expires_at": (chrono::Utc::now() + chrono::Duration::days(1)).to_rfc3339(),
                   "expires_in": 3600}),
            "invalid_expiry",
        ),
        (json!({"expires": 3600}), "invalid_json"),
    ] {
        let refused = create_share(&app, &key, &chat, Some(body.clone()))
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 400, "{body}");
        assert_eq!(error_body(refused).await["code"], code, "{body}");
    }

    // A link whose time has come answers 404, like a revoked one.
    let token = token_of(&lasting);
    use sea_orm::{ActiveModelTrait, IntoActiveModel, Set};
    let row = entities::chat_shares::Entity::find()
        .all(&app.db)
        .await
        .unwrap()
        .remove(0);
    let mut row = row.into_active_model();
    row.expires_at = Set(Some(chrono::Utc::now() - chrono::Duration::seconds(1)));
    row.update(&app.db).await.unwrap();
    assert_eq!(shared(&app, &token, "").await.status(), 404);
    let listed: Value = list_shares(&app, &key, &chat)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed["data"][0]["expired"], true);
}

#[actix_web::test]
async fn a_chat_has_a_bounded_number_of_links() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    for _ in 0..colloquy::chat::shares::MAX_SHARES_PER_CHAT {
        new_share(&app, &chat).await;
    }
    let refused = create_share(&app, &app.api_key, &chat, None)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 409);
    assert_eq!(error_body(refused).await["code"], "too_many_shares");
}

#[actix_web::test]
async fn another_user_cannot_create_list_or_revoke_links_to_your_chat() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    let share = new_share(&app, &chat).await;
    let share_id = share["id"].as_str().unwrap();
    let mallory = app.create_user_with_key("mallory").await;

    let created = create_share(&app, &mallory, &chat, None)
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 404);
    let listed = list_shares(&app, &mallory, &chat).send().await.unwrap();
    assert_eq!(listed.status(), 404);
    let revoked = revoke_share(&app, &mallory, &chat, share_id)
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), 404);
    // Nor through a chat of their own: the link is not on it.
    let theirs = app
        .as_key(&mallory)
        .chat_api()
        .create_chat()
        .json(&json!({}))
        .call()
        .await;
    let theirs: Value = theirs.json().await.unwrap();
    let theirs = theirs["id"].as_str().unwrap();
    let sideways = revoke_share(&app, &mallory, theirs, share_id)
        .send()
        .await
        .unwrap();
    assert_eq!(sideways.status(), 404);

    assert_eq!(shared(&app, &token_of(&share), "").await.status(), 200);
    let anonymous = app
        .anonymous(Method::POST, &format!("/chat/api/chats/{chat}/shares"))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
}

/// A chat with two versions of its first answer (the second active), an image on the first
/// message, and an artifact at version 1 in the active answer and version 2 in a later one.
struct SharedFixture {
    chat: String,
    attachment: String,
    artifact: String,
}

async fn chat_with_branches_images_and_an_artifact(app: &TestApp) -> SharedFixture {
    let chat = app.create_chat("Shared notes").await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let uploaded = crate::images::upload_image(
        app.chat_api(),
        &chat,
        crate::images::PNG.to_vec(),
        "picture.png",
    )
    .await;
    assert_eq!(uploaded.status(), 201);
    let attachment: Value = uploaded.json().await.unwrap();
    let attachment = attachment["id"].as_str().unwrap().to_string();

    app.upstream
        .script([Reply::text("The discarded first answer.")]);
    app.send(
        &chat,
        json!({"content": "Describe this picture", "attachments": [attachment]}),
    )
    .await;
    let messages: Value = app.chat_api().messages(&chat).read_json().await;
    let answer = messages["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    app.upstream.script([
        Reply::tool_call(
            "call_create",
            "create_artifact",
            json!({"identifier": "plan.md", "title": "The plan", "type": "text/markdown",
                   "content": "# Plan v1"}),
        ),
        Reply::text("The kept answer, with a plan."),
    ]);
    let regenerated = app
        .chat_api()
        .regenerate(&chat, &answer)
        .json(&json!({}))
        .call()
        .await;
    assert_eq!(regenerated.status(), 200);
    crate::sse::read_all(regenerated).await;
    app.upstream.script([
        Reply::tool_call(
            "call_update",
            "update_artifact",
            json!({"identifier": "plan.md", "content": "# Plan v2"}),
        ),
        Reply::text("Updated the plan."),
    ]);
    app.send_text(&chat, "Improve the plan").await;
    let artifacts: Value = app.chat_api().artifacts(&chat).read_json().await;
    let artifact = artifacts["artifacts"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    SharedFixture {
        chat,
        attachment,
        artifact,
    }
}

#[actix_web::test]
async fn the_shared_json_shows_only_the_active_branch_and_what_it_shows() {
    let app = spawn_app().await;
    let fixture = chat_with_branches_images_and_an_artifact(&app).await;
    let token = token_of(&new_share(&app, &fixture.chat).await);

    let body: Value = shared(&app, &token, "").await.json().await.unwrap();
    assert_eq!(body["title"], "Shared notes");
    let messages = body["messages"].as_array().unwrap();
    let texts: Vec<(&str, &str)> = messages
        .iter()
        .map(|m| (m["role"].as_str().unwrap(), m["content"].as_str().unwrap()))
        .collect();
    assert_eq!(
        texts,
        [
            ("user", "Describe this picture"),
            ("assistant", "The kept answer, with a plan."),
            ("user", "Improve the plan"),
            ("assistant", "Updated the plan."),
        ]
    );
    let text = body.to_string();
    assert!(!text.contains("discarded"), "another branch leaked: {text}");
    // Only what the page needs: no runs, tool calls, models or artifact content inline.
    assert!(
        !text.contains("run_id") && !text.contains("tool_calls"),
        "{text}"
    );
    assert!(!text.contains("# Plan"), "{text}");
    assert_eq!(messages[0]["parts"][0]["type"], "image");
    assert_eq!(
        messages[0]["parts"][0]["attachment_id"],
        fixture.attachment.as_str()
    );
    let plan = &messages[1]["parts"][0];
    assert_eq!(plan["type"], "artifact");
    assert_eq!(plan["artifact_id"], fixture.artifact.as_str());
    assert_eq!(plan["version"], 1);
    assert_eq!(messages[3]["parts"][0]["version"], 2);

    let image = shared(
        &app,
        &token,
        &format!("/attachments/{}", fixture.attachment),
    )
    .await;
    assert_eq!(image.status(), 200);
    assert_sealed(&image);
    assert_eq!(image.headers()["content-type"], "image/png");
    assert_eq!(image.bytes().await.unwrap().as_ref(), crate::images::PNG);

    for version in [1, 2] {
        let shown = shared(
            &app,
            &token,
            &format!("/artifacts/{}/versions/{version}", fixture.artifact),
        )
        .await;
        assert_eq!(shown.status(), 200);
        assert_sealed(&shown);
        let shown: Value = shown.json().await.unwrap();
        assert_eq!(shown["content"], format!("# Plan v{version}"));
        assert_eq!(shown["version"], version);
    }
    let preview = shared(
        &app,
        &token,
        &format!("/artifacts/{}/versions/1/preview", fixture.artifact),
    )
    .await;
    assert_eq!(preview.status(), 200);
    assert!(
        preview.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("sandbox")
    );

    // Nothing the branch does not show: a version no message made, by identifier, another
    // chat's image, and an image of this chat no message carries.
    let other = app.new_chat().await;
    let elsewhere = crate::images::upload_image(
        app.chat_api(),
        &other,
        crate::images::PNG.to_vec(),
        "other.png",
    )
    .await;
    let elsewhere: Value = elsewhere.json().await.unwrap();
    let unsent = crate::images::upload_image(
        app.chat_api(),
        &fixture.chat,
        crate::images::PNG.to_vec(),
        "unsent.png",
    )
    .await;
    let unsent: Value = unsent.json().await.unwrap();
    for rest in [
        format!("/artifacts/{}/versions/3", fixture.artifact),
        "/artifacts/plan.md/versions/1".to_string(),
        format!("/attachments/{}", elsewhere["id"].as_str().unwrap()),
        format!("/attachments/{}", unsent["id"].as_str().unwrap()),
        format!("/chat/api/{}/messages", fixture.chat),
    ] {
        let refused = shared(&app, &token, &rest).await;
        assert_eq!(refused.status(), 404, "{rest}");
        assert_sealed(&refused);
    }

    // Switching branches changes what the link shows: it is the chat's active branch, live.
    let tree: Value = app.chat_api().tree(&fixture.chat).read_json().await;
    let discarded = tree["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["content"] == "The discarded first answer.")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let switched = app
        .chat_api()
        .switch_branch(&fixture.chat, &discarded)
        .call()
        .await;
    assert_eq!(switched.status(), 200);
    let body: Value = shared(&app, &token, "").await.json().await.unwrap();
    assert_eq!(body["messages"].as_array().unwrap().len(), 2);
    assert_eq!(
        body["messages"][1]["content"],
        "The discarded first answer."
    );
    let hidden = shared(
        &app,
        &token,
        &format!("/artifacts/{}/versions/1", fixture.artifact),
    )
    .await;
    assert_eq!(hidden.status(), 404);
}

#[actix_web::test]
async fn deleting_the_chat_kills_its_links() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    let token = token_of(&new_share(&app, &chat).await);
    assert_eq!(shared(&app, &token, "").await.status(), 200);
    let deleted = app.chat_api().delete_chat(&chat).call().await;
    assert_eq!(deleted.status(), 200);
    assert_eq!(shared(&app, &token, "").await.status(), 404);
    let rows = entities::chat_shares::Entity::find()
        .all(&app.db)
        .await
        .unwrap();
    assert!(rows.is_empty(), "the rows went with the chat: {rows:?}");
}

/// Every route of the authenticated APIs a share token could be tried on, as `(method, path)`.
///
/// Derived from the route configuration: each `configure` function under `src/http/chat_api/`,
/// `src/http/openai/` and `src/http/api/` (`grep -n 'route(\|resource(\|scope(' -A2`), one
/// entry per method and path, scopes and `web::resource`s expanded; `{…}` segments are filled
/// in by `fill` with the shared chat's real ids where they name one.
/// `every_listed_route_is_in_the_source` checks the other way: no path in those files is
/// missing here.
const AUTHENTICATED_ROUTES: &[(&str, &str)] = &[
    // src/http/chat_api/model_picker.rs
    ("GET", "/chat/api/models"),
    ("PUT", "/chat/api/models/default"),
    // src/http/chat_api/shares.rs
    ("POST", "/chat/api/chats/{chat_id}/shares"),
    ("GET", "/chat/api/chats/{chat_id}/shares"),
    ("DELETE", "/chat/api/chats/{chat_id}/shares/{share_id}"),
    // src/http/chat_api/chats.rs (a scope on /chat/api/chats)
    ("POST", "/chat/api/chats"),
    ("GET", "/chat/api/chats"),
    ("GET", "/chat/api/chats/{chat_id}"),
    ("PATCH", "/chat/api/chats/{chat_id}"),
    ("DELETE", "/chat/api/chats/{chat_id}"),
    // src/http/chat_api/folders.rs (a scope on /chat/api/folders)
    ("GET", "/chat/api/folders"),
    ("POST", "/chat/api/folders"),
    ("PATCH", "/chat/api/folders/{folder_id}"),
    ("DELETE", "/chat/api/folders/{folder_id}"),
    // src/http/chat_api/search.rs
    // With a word of the shared chat, so a refusal is not for want of a query.
    ("GET", "/chat/api/search?q=plan"),
    // src/http/chat_api/export.rs
    ("GET", "/chat/api/export"),
    ("POST", "/chat/api/import"),
    ("GET", "/chat/api/{chat_id}/export"),
    // src/http/chat_api/messages.rs
    ("GET", "/chat/api/{chat_id}/messages"),
    ("POST", "/chat/api/{chat_id}/messages"),
    ("POST", "/chat/api/{chat_id}/messages/{message_id}/edit"),
    (
        "POST",
        "/chat/api/{chat_id}/messages/{message_id}/regenerate",
    ),
    ("POST", "/chat/api/{chat_id}/messages/{message_id}/switch"),
    ("GET", "/chat/api/{chat_id}/tree"),
    // src/http/chat_api/runs.rs
    ("GET", "/chat/api/{chat_id}/runs/{run_id}/events"),
    ("POST", "/chat/api/{chat_id}/runs/{run_id}/cancel"),
    // src/http/chat_api/asks.rs
    ("POST", "/chat/api/{chat_id}/ask/{correlation_id}"),
    ("GET", "/chat/api/{chat_id}/asks"),
    // src/http/chat_api/artifacts.rs
    ("GET", "/chat/api/{chat_id}/artifacts"),
    ("GET", "/chat/api/{chat_id}/artifacts/{artifact}"),
    ("DELETE", "/chat/api/{chat_id}/artifacts/{artifact}"),
    ("GET", "/chat/api/{chat_id}/artifacts/{artifact}/raw"),
    (
        "GET",
        "/chat/api/{chat_id}/artifacts/{artifact}/versions/{version}",
    ),
    (
        "GET",
        "/chat/api/{chat_id}/artifacts/{artifact}/versions/{version}/raw",
    ),
    ("GET", "/chat/api/{chat_id}/artifacts/{artifact}/preview"),
    (
        "GET",
        "/chat/api/{chat_id}/artifacts/{artifact}/versions/{version}/preview",
    ),
    // src/http/chat_api/memories.rs
    ("GET", "/chat/api/{chat_id}/memories"),
    ("POST", "/chat/api/{chat_id}/memories"),
    ("PATCH", "/chat/api/{chat_id}/memories/{memory_id}"),
    ("PUT", "/chat/api/{chat_id}/memories/{memory_id}"),
    ("DELETE", "/chat/api/{chat_id}/memories/{memory_id}"),
    // src/http/chat_api/documents.rs
    ("GET", "/chat/api/{chat_id}/documents"),
    ("POST", "/chat/api/{chat_id}/documents"),
    ("DELETE", "/chat/api/{chat_id}/documents/{artifact_id}"),
    // src/http/chat_api/attachments.rs
    ("GET", "/chat/api/attachments/limits"),
    ("GET", "/chat/api/{chat_id}/attachments"),
    ("POST", "/chat/api/{chat_id}/attachments"),
    ("GET", "/chat/api/{chat_id}/attachments/{attachment_id}"),
    // src/http/chat_api/screenshots.rs
    ("GET", "/chat/api/{chat_id}/screenshots/{screenshot_id}"),
    // src/http/chat_api/uploads.rs
    ("OPTIONS", "/chat/api/{chat_id}/uploads"),
    ("POST", "/chat/api/{chat_id}/uploads"),
    ("HEAD", "/chat/api/{chat_id}/uploads/{upload_id}"),
    ("PATCH", "/chat/api/{chat_id}/uploads/{upload_id}"),
    ("DELETE", "/chat/api/{chat_id}/uploads/{upload_id}"),
    // src/http/openai/models.rs
    ("GET", "/v1/models"),
    ("GET", "/v1/models/{id}"),
    ("POST", "/v1/embeddings"),
    // src/http/openai/completions.rs
    ("POST", "/v1/chat/completions"),
    // src/http/openai/responses.rs
    ("POST", "/v1/responses"),
    ("GET", "/v1/responses/{id}"),
    ("DELETE", "/v1/responses/{id}"),
    ("GET", "/v1/responses/{id}/input_items"),
    // src/http/openai/conversations.rs
    ("POST", "/v1/conversations"),
    ("GET", "/v1/conversations/{id}"),
    ("POST", "/v1/conversations/{id}"),
    ("DELETE", "/v1/conversations/{id}"),
    ("GET", "/v1/conversations/{id}/items"),
    ("POST", "/v1/conversations/{id}/items"),
    ("GET", "/v1/conversations/{id}/items/{item_id}"),
    ("DELETE", "/v1/conversations/{id}/items/{item_id}"),
    // src/http/openai/files.rs
    ("POST", "/v1/files"),
    ("GET", "/v1/files"),
    ("GET", "/v1/files/{id}"),
    ("DELETE", "/v1/files/{id}"),
    ("GET", "/v1/files/{id}/content"),
    // src/http/openai/containers.rs
    ("POST", "/v1/containers"),
    ("GET", "/v1/containers"),
    ("GET", "/v1/containers/{id}"),
    ("DELETE", "/v1/containers/{id}"),
    ("POST", "/v1/containers/{id}/files"),
    ("GET", "/v1/containers/{id}/files"),
    ("GET", "/v1/containers/{id}/files/{file}"),
    ("DELETE", "/v1/containers/{id}/files/{file}"),
    ("GET", "/v1/containers/{id}/files/{file}/content"),
    // src/http/openai/images.rs
    ("POST", "/v1/images/generations"),
    ("POST", "/v1/images/edits"),
    // src/http/openai/vector_stores.rs
    ("POST", "/v1/vector_stores"),
    ("GET", "/v1/vector_stores"),
    ("GET", "/v1/vector_stores/{id}"),
    ("POST", "/v1/vector_stores/{id}"),
    ("DELETE", "/v1/vector_stores/{id}"),
    ("POST", "/v1/vector_stores/{id}/files"),
    ("GET", "/v1/vector_stores/{id}/files"),
    ("GET", "/v1/vector_stores/{id}/files/{file_id}"),
    ("DELETE", "/v1/vector_stores/{id}/files/{file_id}"),
    ("POST", "/v1/vector_stores/{id}/search"),
    // src/http/api/tools.rs, workflow_tools.rs, mcp.rs
    ("GET", "/api/tools"),
    ("GET", "/api/workflow-tools"),
    ("GET", "/api/mcp/servers"),
    // src/http/api/knowledge_bases.rs
    ("GET", "/api/knowledge-bases"),
    ("POST", "/api/knowledge-bases"),
    ("GET", "/api/knowledge-bases/{kb_id}"),
    ("PATCH", "/api/knowledge-bases/{kb_id}"),
    ("DELETE", "/api/knowledge-bases/{kb_id}"),
    ("GET", "/api/knowledge-bases/{kb_id}/documents"),
    ("POST", "/api/knowledge-bases/{kb_id}/documents"),
    (
        "DELETE",
        "/api/knowledge-bases/{kb_id}/documents/{artifact_id}",
    ),
    ("OPTIONS", "/api/knowledge-bases/{kb_id}/uploads"),
    ("POST", "/api/knowledge-bases/{kb_id}/uploads"),
    ("HEAD", "/api/knowledge-bases/{kb_id}/uploads/{upload_id}"),
    ("PATCH", "/api/knowledge-bases/{kb_id}/uploads/{upload_id}"),
    ("DELETE", "/api/knowledge-bases/{kb_id}/uploads/{upload_id}"),
    // src/http/api/agents.rs
    ("GET", "/api/agents"),
    ("POST", "/api/agents"),
    ("GET", "/api/agents/{agent_id}"),
    ("PATCH", "/api/agents/{agent_id}"),
    ("PUT", "/api/agents/{agent_id}"),
    ("DELETE", "/api/agents/{agent_id}"),
    ("GET", "/api/agents/{agent_id}/chat/tools"),
    // src/http/api/workflows.rs
    ("GET", "/api/workflows"),
    ("POST", "/api/workflows"),
    ("GET", "/api/workflows/{workflow_id}"),
    ("PATCH", "/api/workflows/{workflow_id}"),
    ("DELETE", "/api/workflows/{workflow_id}"),
    ("GET", "/api/workflows/{workflow_id}/versions"),
    ("GET", "/api/workflows/{workflow_id}/runs"),
    ("POST", "/api/workflows/{workflow_id}/runs"),
    // src/http/api/schedules.rs
    ("POST", "/api/schedules/preview"),
    ("GET", "/api/schedules"),
    ("POST", "/api/schedules"),
    ("GET", "/api/schedules/{schedule_id}"),
    ("PATCH", "/api/schedules/{schedule_id}"),
    ("DELETE", "/api/schedules/{schedule_id}"),
    ("POST", "/api/schedules/{schedule_id}/pause"),
    ("POST", "/api/schedules/{schedule_id}/resume"),
];

/// The literal route paths in the files `AUTHENTICATED_ROUTES` was derived from: every
/// `"/chat/api…"`, `"/v1…"` and `"/api…"` string (a scope's routes are its prefix plus theirs).
fn paths_in_source() -> std::collections::BTreeSet<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/http");
    let mut files = Vec::new();
    for dir in ["chat_api", "openai", "api"] {
        let mut stack = vec![root.join(dir)];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    files.push(path);
                }
            }
        }
    }
    let mut found = std::collections::BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for piece in text.split('"').skip(1).step_by(2) {
            let route = ["/chat/api/", "/v1/", "/api/"]
                .iter()
                .any(|p| piece.starts_with(p))
                && !piece.contains(' ')
                && !piece.contains("{}")
                && !piece.contains("://");
            if route {
                found.insert(piece.replace("{id:.+}", "{id}"));
            }
        }
    }
    found
}

#[test]
fn every_listed_route_is_in_the_source() {
    let listed: std::collections::BTreeSet<&str> = AUTHENTICATED_ROUTES
        .iter()
        .map(|(_, path)| path.split('?').next().unwrap_or(path))
        .collect();
    // Paths that appear in the source only as part of another (a scope's prefix, `ONE`'s
    // constant) or in comments and messages, not as routes.
    let missing: Vec<String> = paths_in_source()
        .into_iter()
        .filter(|path| !listed.contains(path.as_str()))
        .filter(|path| {
            // A string that is only the start of listed routes (a scope, a prefix check).
            !listed.iter().any(|l| l.starts_with(path.as_str()))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "routes in src/http not tried with a share token: {missing:?}"
    );
}

/// A path with its `{…}` segments filled: the shared chat's own ids where a segment names one
/// of its things (so a refusal is not just "no such id"), plausible ids elsewhere.
fn fill(path: &str, fixture: &SharedFixture, share_id: &str) -> String {
    path.replace("{chat_id}", &fixture.chat)
        .replace("{share_id}", share_id)
        .replace("{artifact}", &fixture.artifact)
        .replace("{attachment_id}", &fixture.attachment)
        .replace("{version}", "1")
        .replace("{message_id}", "00000000-0000-7000-8000-000000000000")
        .replace("{run_id}", "00000000-0000-7000-8000-000000000001")
        .split('/')
        .map(|segment| {
            if segment.starts_with('{') {
                "x".to_string()
            } else {
                segment.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// How a share token is offered to a route: every way a credential could be read.
const CARRIERS: [&str; 4] = ["bearer", "session cookie", "query", "x-api-key and query"];

/// One request to `path` carrying `token` as `how` says, with `body` when given.
fn with_token(
    app: &TestApp,
    method: &Method,
    path: &str,
    how: &str,
    token: &str,
    body: Option<&Value>,
) -> RequestBuilder {
    let query = format!("token={token}&access_token={token}&share={token}&key={token}");
    let joiner = if path.contains('?') { '&' } else { '?' };
    let request = match how {
        "bearer" => app.anonymous(method.clone(), path).bearer_auth(token),
        // The app's own origin, so a write is judged by its cookie, not refused as cross-site
        // before the cookie is looked at.
        "session cookie" => app
            .anonymous(method.clone(), path)
            .header("origin", &app.address)
            .header(
                "cookie",
                format!("session={token}; colloquy_session={token}"),
            ),
        "query" => app.anonymous(method.clone(), &format!("{path}{joiner}{query}")),
        _ => app
            .anonymous(method.clone(), &format!("{path}?{query}"))
            .header("x-api-key", token)
            .header("origin", &app.address),
    };
    match body {
        Some(body) => request.json(body),
        None => request,
    }
}

/// The answer to `token` offered as `how`. A route reads its JSON body and its credentials
/// at once, and a body it cannot parse may be refused (400 `invalid_json`) before the token
/// is looked at: then the body gains the field the refusal names (or the type it asks for)
/// and the request is made again, until the body is not what is refused.
async fn answer_to_token(
    app: &TestApp,
    method: &Method,
    path: &str,
    how: &str,
    token: &str,
    mut body: Option<Value>,
) -> (u16, String) {
    let mut last_field: Option<String> = None;
    for _ in 0..12 {
        let response = with_token(app, method, path, how, token, body.as_ref())
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        let Some(fields) = body.as_mut().and_then(Value::as_object_mut) else {
            return (status, text);
        };
        let message = serde_json::from_str::<Value>(&text).ok().and_then(|v| {
            (v["error"]["code"] == "invalid_json")
                .then(|| v["error"]["message"].as_str().unwrap_or("").to_string())
        });
        let Some(message) = message else {
            return (status, text);
        };
        if let Some(field) = message
            .split("missing field `")
            .nth(1)
            .and_then(|r| r.split('`').next())
        {
            fields.insert(field.to_string(), json!("x"));
            last_field = Some(field.to_string());
            continue;
        }
        let Some(field) = last_field.clone() else {
            return (status, text);
        };
        let value = if let Some(variants) = message.split("expected one of `").nth(1) {
            json!(variants.split('`').next().unwrap_or_default())
        } else if message.contains("expected a sequence") {
            json!([])
        } else if message.contains("expected a map") || message.contains("expected struct") {
            json!({})
        } else if message.contains("expected a boolean") {
            json!(true)
        } else if message.contains("expected u") || message.contains("expected i") {
            json!(1)
        } else if message.contains("expected f") {
            json!(1.0)
        } else {
            return (status, text);
        };
        fields.insert(field, value);
    }
    (0, "the body never parsed".into())
}

#[actix_web::test]
async fn a_share_token_opens_no_authenticated_route() {
    let app = spawn_app().await;
    let fixture = chat_with_branches_images_and_an_artifact(&app).await;
    let share = new_share(&app, &fixture.chat).await;
    let token = token_of(&share);
    let share_id = share["id"].as_str().unwrap();

    // A valid export, so `POST /chat/api/import` gets past its body to its credentials.
    let export: Value = app.chat_api().export(&fixture.chat).read_json().await;
    let mut failures = Vec::new();
    for (method, template) in AUTHENTICATED_ROUTES {
        let method = Method::from_bytes(method.as_bytes()).unwrap();
        let path = fill(template, &fixture, share_id);
        let has_body = !matches!(method, Method::GET | Method::HEAD | Method::OPTIONS);
        for how in CARRIERS {
            let start = if *template == "/chat/api/import" {
                export.clone()
            } else {
                json!({})
            };
            let (status, text) =
                answer_to_token(&app, &method, &path, how, &token, has_body.then_some(start)).await;
            if status != 401 && status != 404 {
                failures.push(format!("{method} {template} ({how}): {status} {text}"));
            }
            for secret in [
                "Shared notes",
                "Describe this picture",
                "kept answer",
                "# Plan",
            ] {
                if text.contains(secret) {
                    failures.push(format!("{method} {template} ({how}) answered data: {text}"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "the share token got more than a refusal:\n{}",
        failures.join("\n")
    );
    // And the link still opens what it should.
    assert_eq!(shared(&app, &token, "").await.status(), 200);
}

#[actix_web::test]
async fn the_shared_link_opens_signed_out_in_the_browser_and_revoking_it_in_the_ui_closes_it() {
    let app = crate::browser::browser_app(|_| {}).await;
    let chat = app.create_chat("Shared in the browser").await["id"]
        .as_str()
        .unwrap()
        .to_string();
    app.upstream.script([
        Reply::tool_call(
            "call_create",
            "create_artifact",
            json!({"identifier": "itinerary.md", "title": "Itinerary", "type": "text/markdown",
                   "content": "# Day one\n\nThe museum opens at nine."}),
        ),
        Reply::text("Here is **the itinerary** for your trip."),
    ]);
    app.send_text(&chat, "Plan a day in Lisbon").await;
    crate::browser::run_scenario(&app, "shared_link", &[("CHAT_ID", chat.clone())]).await;
    // The UI revoked the link it made: none is left.
    let rows = entities::chat_shares::Entity::find()
        .all(&app.db)
        .await
        .unwrap();
    assert!(rows.is_empty(), "{rows:?}");
}
