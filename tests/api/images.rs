//! Images end to end: uploads checked by their bytes and size, another user's image not
//! found, images of stored `/v1` chats (Chat Completions and Responses) sent to the model on
//! their turn and replayed on the next, the chat API's messages with attachments, a model that
//! cannot read images said in one line, and image URLs fetched only through the SSRF guard.

use base64::Engine;
use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::{Reply, image_urls};
use crate::helpers::{TestApp, error_body, spawn_app, spawn_app_with};

/// The smallest PNG: a 1×1 transparent pixel.
pub const PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
    0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
    0x42, 0x60, 0x82,
];

pub fn png_data_url() -> String {
    format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(PNG)
    )
}

/// The bytes of a `data:` URL the model was sent.
fn decoded(url: &str) -> Vec<u8> {
    let (_, payload) = url.split_once(";base64,").expect("a base64 data: URL");
    base64::engine::general_purpose::STANDARD
        .decode(payload)
        .expect("base64")
}

async fn upload_as(
    app: &TestApp,
    key: &str,
    chat: &str,
    bytes: Vec<u8>,
    filename: &str,
) -> reqwest::Response {
    upload_image(app.as_key(key).chat_api(), chat, bytes, filename).await
}

/// Uploads `bytes` as an image of `chat` through `chat_api`.
pub async fn upload_image(
    chat_api: crate::client::ChatApi<'_>,
    chat: &str,
    bytes: Vec<u8>,
    filename: &str,
) -> reqwest::Response {
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(bytes).file_name(filename.to_string()),
    );
    chat_api
        .upload_attachment(chat)
        .multipart(form)
        .send()
        .await
        .unwrap()
}

async fn upload(app: &TestApp, chat: &str, bytes: Vec<u8>) -> reqwest::Response {
    upload_as(app, &app.api_key, chat, bytes, "picture.png").await
}

/// The images (decoded) each message of the `index`th model request carried, by message.
fn images_sent(app: &TestApp, index: usize) -> Vec<(usize, Vec<u8>)> {
    let received = app.upstream.received();
    let body = &received[index].body;
    image_urls(body)
        .into_iter()
        .map(|(message, url)| (message, decoded(&url)))
        .collect()
}

#[actix_web::test]
async fn an_upload_is_checked_by_its_bytes_and_size_and_served_as_what_it_is() {
    let app = spawn_app_with(|c| c.attachments.max_image_bytes = 1_000).await;
    let chat = app.new_chat().await;

    let limits: Value = app.chat_api().attachment_limits().read_json().await;
    assert_eq!(limits["max_image_bytes"], 1_000);
    assert_eq!(limits["max_images_per_message"], 8);
    assert!(
        limits["mime_types"]
            .as_array()
            .unwrap()
            .contains(&json!("image/webp"))
    );

    let response = upload(&app, &chat, PNG.to_vec()).await;
    assert_eq!(response.status(), 201);
    let created: Value = response.json().await.unwrap();
    let id = created["id"].as_str().unwrap();
    assert!(id.starts_with("att_"), "{created}");
    assert_eq!(created["mime_type"], "image/png");
    assert_eq!(created["size"], PNG.len());

    let served = app.chat_api().attachment(&chat, id).call().await;
    assert_eq!(served.status(), 200);
    assert_eq!(served.headers()["content-type"], "image/png");
    assert_eq!(served.headers()["x-content-type-options"], "nosniff");
    assert_eq!(served.bytes().await.unwrap().as_ref(), PNG);

    // Named .png, but text: refused by its bytes.
    let text = upload_as(
        &app,
        &app.api_key,
        &chat,
        b"<svg onload=alert(1)>".to_vec(),
        "x.png",
    )
    .await;
    assert_eq!(text.status(), 415);
    assert_eq!(error_body(text).await["code"], "unsupported_image_type");
    // A real PNG header, but larger than allowed.
    let mut large = PNG.to_vec();
    large.resize(1_500, 0);
    let too_large = upload(&app, &chat, large).await;
    assert_eq!(too_large.status(), 413);
    assert_eq!(error_body(too_large).await["code"], "image_too_large");
    let not_multipart = app
        .chat_api()
        .upload_attachment(&chat)
        .body(PNG.to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(not_multipart.status(), 415);

    let listed: Value = app.chat_api().attachments(&chat).read_json().await;
    assert_eq!(
        listed["data"].as_array().unwrap().len(),
        1,
        "only the PNG was kept"
    );
    assert!(listed["data"][0]["message_id"].is_null());
    let malformed = app
        .chat_api()
        .attachment(&chat, "..%2F..%2Fetc")
        .call()
        .await;
    assert_eq!(malformed.status(), 404);
}

#[actix_web::test]
async fn another_users_image_is_not_found_anywhere() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    let created: Value = upload(&app, &chat, PNG.to_vec())
        .await
        .json()
        .await
        .unwrap();
    let id = created["id"].as_str().unwrap();
    let bob = app.create_user_with_key("bob").await;
    let as_bob = app.as_key(&bob);

    let read = as_bob
        .chat_api()
        .attachment(&chat, id)
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), 404);
    let upload_there = upload_as(&app, &bob, &chat, PNG.to_vec(), "p.png").await;
    assert_eq!(upload_there.status(), 404);
    // Bob names Alice's image in his own chat.
    let bobs_chat = as_bob.new_chat_with(&json!({"title": "mine"})).await;
    let send = as_bob
        .chat_api()
        .send_message(&bobs_chat)
        .json(&json!({"content": "what is this?", "attachments": [id]}))
        .send()
        .await
        .unwrap();
    assert_eq!(send.status(), 404);
    assert_eq!(error_body(send).await["message"], "attachment not found");
    assert!(
        app.upstream.received().is_empty(),
        "nothing reached the model"
    );
}

#[actix_web::test]
async fn a_stored_v1_chat_sends_the_image_on_its_turn_and_replays_it_on_the_next() {
    let app = spawn_app().await;
    app.upstream
        .script([Reply::text("A tiny pixel."), Reply::text("Transparent.")]);
    let first = app
        .openai()
        .chat_completions()
        .json(
            &json!({"model": "fake-model", "messages": [{"role": "user", "content": [
                {"type": "text", "text": "What is in this picture?"},
                {"type": "image_url", "image_url": {"url": png_data_url(), "detail": "low"}}]}]}),
        )
        .call()
        .await;
    assert_eq!(first.status(), 200, "{:?}", first.text().await);
    let body: Value = first.json().await.unwrap();
    assert_eq!(body["choices"][0]["message"]["content"], "A tiny pixel.");
    let chat = body["x_chat_id"]
        .as_str()
        .expect("a stored chat")
        .to_string();
    assert_eq!(
        images_sent(&app, 0),
        [(0, PNG.to_vec())],
        "the image on its turn"
    );
    let sent = &app.upstream.received()[0].body["messages"][0]["content"];
    assert_eq!(
        sent[0],
        json!({"type": "text", "text": "What is in this picture?"})
    );
    assert_eq!(sent[1]["image_url"]["detail"], "low", "the detail is kept");

    let next = app
        .openai()
        .chat_completions()
        .json(&json!({"x_chat_id": chat, "messages": [
                {"role": "user", "content": "And its colour?"}]}))
        .call()
        .await;
    assert_eq!(next.status(), 200);
    let replayed = app.upstream.received()[1].body["messages"].clone();
    assert_eq!(replayed.as_array().unwrap().len(), 3, "{replayed}");
    assert_eq!(
        images_sent(&app, 1),
        [(0, PNG.to_vec())],
        "the next turn's history carries the image"
    );
    assert_eq!(replayed[2]["content"], "And its colour?");

    // The chat API shows the stored image part, so the UI draws a thumbnail after a reload.
    let messages: Value = app.chat_api().messages(&chat).read_json().await;
    let question = &messages["data"][0];
    assert_eq!(question["content"], "What is in this picture?");
    assert_eq!(question["parts"][0]["type"], "image");
    assert_eq!(question["parts"][0]["mime_type"], "image/png");
    let id = question["parts"][0]["attachment_id"].as_str().unwrap();
    let served = app.chat_api().attachment(&chat, id).call().await;
    assert_eq!(served.bytes().await.unwrap().as_ref(), PNG);
}

#[actix_web::test]
async fn a_stored_v1_history_keeps_its_images_and_store_false_passes_them_on() {
    let app = spawn_app().await;
    app.upstream
        .script([Reply::text("Yes."), Reply::text("Unstored.")]);
    let history = json!([
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": png_data_url()}}]},
        {"role": "assistant", "content": "A pixel."},
        {"role": "user", "content": "Is it small?"}]);
    let response = app
        .openai()
        .chat_completions()
        .json(&json!({"messages": history}))
        .call()
        .await;
    assert_eq!(response.status(), 200);
    assert_eq!(images_sent(&app, 0), [(0, PNG.to_vec())]);
    let unstored = app
        .openai()
        .chat_completions()
        .json(&json!({"messages": history, "store": false}))
        .call()
        .await;
    assert_eq!(unstored.status(), 200);
    let sent = app.upstream.received()[1].body.clone();
    assert_eq!(
        image_urls(&sent),
        [(0, png_data_url())],
        "store: false sends the request's own parts"
    );
}

#[actix_web::test]
async fn the_responses_api_keeps_an_input_image_for_the_next_response() {
    let app = spawn_app().await;
    app.upstream
        .script([Reply::text("A pixel."), Reply::text("It is transparent.")]);
    let first = app
        .openai()
        .create_response()
        .json(
            &json!({"model": "fake-model", "input": [{"role": "user", "content": [
                {"type": "input_text", "text": "Describe this."},
                {"type": "input_image", "image_url": png_data_url()}]}]}),
        )
        .call()
        .await;
    assert_eq!(first.status(), 200, "{:?}", first.text().await);
    let first: Value = first.json().await.unwrap();
    assert_eq!(images_sent(&app, 0), [(0, PNG.to_vec())]);
    let next = app
        .openai()
        .create_response()
        .json(&json!({"previous_response_id": first["id"], "input": "What colour is it?"}))
        .call()
        .await;
    assert_eq!(next.status(), 200, "{:?}", next.text().await);
    assert_eq!(
        images_sent(&app, 1),
        [(0, PNG.to_vec())],
        "the previous response's image is replayed"
    );
}

#[actix_web::test]
async fn the_chat_api_sends_images_and_replays_them_on_regenerate_and_edit() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    let created: Value = upload(&app, &chat, PNG.to_vec())
        .await
        .json()
        .await
        .unwrap();
    let id = created["id"].as_str().unwrap().to_string();
    app.upstream.script([
        Reply::text("A pixel."),
        Reply::text("Still a pixel."),
        Reply::text("An edited answer."),
    ]);
    // An image alone is a message.
    app.send(&chat, json!({"content": "", "attachments": [id]}))
        .await;
    assert_eq!(images_sent(&app, 0), [(0, PNG.to_vec())]);
    let sent = app.upstream.received()[0].body["messages"][0]["content"].clone();
    assert_eq!(
        sent.as_array().unwrap().len(),
        1,
        "no empty text part: {sent}"
    );

    let messages: Value = app.chat_api().messages(&chat).read_json().await;
    let question = messages["data"][0].clone();
    assert_eq!(
        question["parts"],
        json!([{"type": "image", "attachment_id": id, "mime_type": "image/png"}])
    );
    let attachments: Value = app.chat_api().attachments(&chat).read_json().await;
    assert_eq!(
        attachments["data"][0]["message_id"], question["id"],
        "linked when sent"
    );

    let answer = messages["data"][1]["id"].as_str().unwrap();
    let regenerated = app
        .chat_api()
        .regenerate(&chat, answer)
        .send()
        .await
        .unwrap();
    crate::sse::read_all(regenerated).await;
    assert_eq!(
        images_sent(&app, 1),
        [(0, PNG.to_vec())],
        "a regeneration replays it"
    );

    let question_id = question["id"].as_str().unwrap();
    let edited = app
        .chat_api()
        .edit_message(&chat, question_id)
        .json(&json!({"content": "And now?", "attachments": [id]}))
        .send()
        .await
        .unwrap();
    assert_eq!(edited.status(), 200);
    crate::sse::read_all(edited).await;
    assert_eq!(
        images_sent(&app, 2),
        [(0, PNG.to_vec())],
        "an edit may keep the image"
    );

    // A message with neither text nor images, or too many images, is refused.
    let empty = app
        .chat_api()
        .send_message(&chat)
        .json(&json!({"content": " "}))
        .call()
        .await;
    assert_eq!(empty.status(), 400);
    let many: Vec<String> = {
        let mut ids = Vec::new();
        for _ in 0..9 {
            let made: Value = upload(&app, &chat, PNG.to_vec())
                .await
                .json()
                .await
                .unwrap();
            ids.push(made["id"].as_str().unwrap().to_string());
        }
        ids
    };
    let too_many = app
        .chat_api()
        .send_message(&chat)
        .json(&json!({"content": "all of them", "attachments": many}))
        .call()
        .await;
    assert_eq!(too_many.status(), 400);
    assert_eq!(error_body(too_many).await["code"], "too_many_images");
    assert_eq!(
        app.upstream.received().len(),
        3,
        "nothing refused reached the model"
    );

    // Deleting the chat deletes its images.
    let dir = app.data_dir.path().join("attachments").join(&chat);
    assert!(dir.exists());
    let deleted = app.chat_api().delete_chat(&chat).send().await.unwrap();
    assert_eq!(deleted.status(), 200);
    assert!(!dir.exists(), "the chat's image files are gone");
}

#[actix_web::test]
async fn a_model_that_cannot_read_images_is_said_in_one_line() {
    let app = spawn_app().await;
    app.upstream.refuse_images();
    let refused = app
        .openai()
        .chat_completions()
        .json(
            &json!({"model": "fake-model", "messages": [{"role": "user", "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image_url", "image_url": {"url": png_data_url()}}]}]}),
        )
        .call()
        .await;
    assert_eq!(refused.status(), 400);
    let error = error_body(refused).await;
    assert_eq!(error["code"], "model_cannot_read_images");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("fake-model") && message.contains("cannot read images"),
        "{message}"
    );
    assert!(!message.contains('\n'), "one line: {message}");
    assert_eq!(
        app.upstream.received().len(),
        1,
        "not retried: the refusal is final"
    );

    // The chat API's stream says the same.
    let chat = app.new_chat().await;
    let created: Value = upload(&app, &chat, PNG.to_vec())
        .await
        .json()
        .await
        .unwrap();
    let frames = app
        .send(
            &chat,
            json!({"content": "and this?", "attachments": [created["id"]]}),
        )
        .await;
    let error = frames
        .iter()
        .find(|f| f.kind() == "error")
        .expect("an error event")
        .json();
    assert_eq!(error["error"]["code"], "model_cannot_read_images");
}

#[actix_web::test]
async fn an_image_url_is_fetched_only_through_the_ssrf_guard() {
    use actix_web::{App, HttpResponse, HttpServer, web};
    // A site serving a picture on 127.0.0.1: internal, unless the allow-list names it.
    let server = HttpServer::new(|| {
        App::new()
            .route(
                "/cat.png",
                web::get().to(|| async { HttpResponse::Ok().content_type("image/png").body(PNG) }),
            )
            .route(
                "/page.html",
                web::get().to(|| async {
                    HttpResponse::Ok()
                        .content_type("text/html")
                        .body("<p>not a picture</p>")
                }),
            )
    })
    .workers(1)
    .bind("127.0.0.1:0")
    .unwrap();
    let site = server.addrs()[0];
    actix_web::rt::spawn(server.run());
    let url = format!("http://{site}/cat.png");
    let request = json!({"messages": [{"role": "user", "content": [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": url}}]}]});

    let guarded = spawn_app().await;
    let chats = || async {
        use sea_orm::{EntityTrait, PaginatorTrait};
        entities::chats::Entity::find()
            .count(&guarded.db)
            .await
            .unwrap()
    };
    let before = chats().await;
    let refused = guarded
        .openai()
        .chat_completions()
        .json(&request)
        .call()
        .await;
    assert_eq!(refused.status(), 400);
    let error = error_body(refused).await;
    assert_eq!(error["code"], "image_url_refused", "{error}");
    assert!(guarded.upstream.received().is_empty());
    assert_eq!(
        chats().await,
        before,
        "a refused request leaves no chat behind"
    );
    let file = guarded
        .openai()
        .chat_completions()
        .json(&json!({"messages": [{"role": "user", "content": [
                {"type": "image_url", "image_url": {"url": "file:///etc/passwd"}}]}]}))
        .call()
        .await;
    assert_eq!(error_body(file).await["code"], "invalid_image_url");

    let allowed = spawn_app_with(|c| c.tools.ssrf_allow_list = vec![site.to_string()]).await;
    allowed.upstream.script([Reply::text("A cat, of sorts.")]);
    let fetched = allowed
        .openai()
        .chat_completions()
        .json(&request)
        .call()
        .await;
    assert_eq!(fetched.status(), 200, "{:?}", fetched.text().await);
    assert_eq!(
        images_sent(&allowed, 0),
        [(0, PNG.to_vec())],
        "the model gets the fetched bytes, not the URL"
    );
    let page = allowed
        .openai().chat_completions().json(&json!({"messages": [{"role": "user", "content": [
                {"type": "text", "text": "And this?"},
                {"type": "image_url", "image_url": {"url": format!("http://{site}/page.html")}}]}]})).call()
        .await;
    assert_eq!(page.status(), 415);
    assert_eq!(error_body(page).await["code"], "unsupported_image_type");
}

/// Scripts the four answers an SDK round trip gets, runs `command`, and checks that the model
/// received the image on each turn that carried it and in the history of the turn after.
async fn sdk_round_trip(app: &TestApp, command: std::process::Command) {
    app.upstream.script([
        Reply::text("A tiny pixel."),
        Reply::text("Transparent."),
        Reply::text("One pixel."),
        Reply::text("Yes, fully."),
    ]);
    let seen = crate::helpers::run_client(app, command).await;
    assert_eq!(seen["first"], "A tiny pixel.", "{seen}");
    assert!(seen["chat_id"].is_string(), "{seen}");
    assert_eq!(seen["second"], "Transparent.", "{seen}");
    assert_eq!(seen["response"], "One pixel.", "{seen}");
    assert_eq!(seen["follow_up"], "Yes, fully.", "{seen}");
    let received = app.upstream.received();
    let completions: Vec<usize> = (0..received.len())
        .filter(|&i| received[i].path.ends_with("/chat/completions"))
        .collect();
    assert_eq!(completions.len(), 4, "one model call per turn");
    for (turn, &index) in completions.iter().enumerate() {
        assert_eq!(
            images_sent(app, index),
            [(0, PNG.to_vec())],
            "turn {turn}: the image, on its own turn or in the next one's history"
        );
    }
    let next = &received[completions[1]].body["messages"];
    assert_eq!(next.as_array().unwrap().len(), 3, "{next}");
    assert_eq!(next[2]["content"], "And what colour is it?");
}

#[actix_web::test]
async fn the_official_node_sdk_round_trips_an_image_through_a_stored_chat() {
    let dir = tokio::task::spawn_blocking(crate::openai_node::node_clients)
        .await
        .unwrap();
    let app = spawn_app().await;
    let mut command = std::process::Command::new("node");
    command.arg("images_client.mjs").current_dir(dir);
    sdk_round_trip(&app, command).await;
}

#[actix_web::test]
async fn the_official_python_sdk_round_trips_an_image_through_a_stored_chat() {
    let python = tokio::task::spawn_blocking(crate::openai_python::python_with_openai)
        .await
        .unwrap();
    let app = spawn_app().await;
    let script =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python/images_client.py");
    let mut command = std::process::Command::new(python);
    command.arg(script);
    sdk_round_trip(&app, command).await;
}

#[actix_web::test]
async fn a_chat_holds_a_bounded_number_of_images_not_yet_sent() {
    let app = spawn_app_with(|c| {
        c.attachments.max_images_per_message = 2;
        c.attachments.max_unsent_per_chat = 2;
    })
    .await;
    let chat = app.new_chat().await;
    let mut ids = Vec::new();
    for _ in 0..2 {
        let created = upload(&app, &chat, PNG.to_vec()).await;
        assert_eq!(created.status(), 201);
        let created: Value = created.json().await.unwrap();
        ids.push(created["id"].as_str().unwrap().to_string());
    }
    let refused = upload(&app, &chat, PNG.to_vec()).await;
    assert_eq!(refused.status(), 409);
    let error = error_body(refused).await;
    assert_eq!(error["code"], "too_many_unsent_images");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("send or remove")
    );

    // Sent with a message, they no longer count.
    app.upstream.script([Reply::text("Two pictures.")]);
    app.send(&chat, json!({"content": "look", "attachments": ids}))
        .await;
    assert_eq!(upload(&app, &chat, PNG.to_vec()).await.status(), 201);
}
