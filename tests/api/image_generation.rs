//! `/v1/images/generations` passed through to a fake image server that answers in OpenAI's
//! shapes (JSON, and server-sent events with partial images): the official Python SDK reads
//! both; the provider gets the configured key and model, never the caller's key; a caller
//! without a key, a prompt past the limit and a server without `[images]` are refused before
//! anything is sent; a provider's failure keeps an `upstream_*` code. The Responses API's
//! `image_generation` tool makes `image_generation_call` items with partial images.

use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use reqwest::Method;
use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, run_client, spawn_app, spawn_app_with};
use crate::openai_node::node_clients;
use crate::openai_python::python_with_openai;

/// What the fake image server was sent: the Authorization header and the body.
type Seen = Arc<Mutex<Vec<(String, Value)>>>;

/// A tiny picture's base64 (a 1×1 PNG a browser draws), as a provider sends it.
const PICTURE: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGMAAQAABQABDQottAAAAABJRU5ErkJggg==";

async fn generations(
    req: HttpRequest,
    body: web::Json<Value>,
    seen: web::Data<Seen>,
) -> HttpResponse {
    let auth = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    seen.lock().unwrap().push((auth, body.0.clone()));
    if body["prompt"] == "fail" {
        return HttpResponse::BadRequest().json(json!({"error": {"message":
            "Your request was rejected by the safety system.", "type": "image_generation_user_error",
            "code": "moderation_blocked"}}));
    }
    if body["stream"] == true {
        let partials = body["partial_images"].as_u64().unwrap_or(0);
        let mut text = String::new();
        for index in 0..partials {
            let event = json!({"type": "image_generation.partial_image", "b64_json": format!("partial{index}"),
                "created_at": 1_760_000_000, "size": "256x256", "quality": "low", "background": "opaque",
                "output_format": "png", "partial_image_index": index});
            text.push_str(&format!(
                "event: image_generation.partial_image\ndata: {event}\n\n"
            ));
        }
        let done = json!({"type": "image_generation.completed", "b64_json": PICTURE,
            "created_at": 1_760_000_000, "size": "256x256", "quality": "low", "background": "opaque",
            "output_format": "png", "usage": {"input_tokens": 5, "output_tokens": 10, "total_tokens": 15,
            "input_tokens_details": {"text_tokens": 5, "image_tokens": 0}}});
        text.push_str(&format!(
            "event: image_generation.completed\ndata: {done}\n\n"
        ));
        return HttpResponse::Ok()
            .content_type("text/event-stream")
            .body(text);
    }
    HttpResponse::Ok().json(
        json!({"created": 1_760_000_000, "data": [{"b64_json": PICTURE,
        "revised_prompt": "A lighthouse at dusk, oil painting"}], "size": "256x256",
        "quality": "low", "output_format": "png"}),
    )
}

/// An edit as the fake image server reads OpenAI's form: the text fields, and each file as
/// `{field, filename, type, bytes}` under `files`; recorded with the Authorization header.
async fn edits(
    req: HttpRequest,
    mut form: actix_multipart::Multipart,
    seen: web::Data<Seen>,
) -> HttpResponse {
    use futures_util::StreamExt;
    let auth = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let mut body = json!({"files": []});
    while let Some(Ok(mut field)) = form.next().await {
        let name = field.name().unwrap_or_default().to_string();
        let filename = field
            .content_disposition()
            .and_then(|cd| cd.get_filename())
            .map(str::to_string);
        let kind = field.content_type().map(ToString::to_string);
        let mut bytes = Vec::new();
        while let Some(Ok(chunk)) = field.next().await {
            bytes.extend_from_slice(&chunk);
        }
        match filename {
            Some(filename) => body["files"].as_array_mut().unwrap().push(json!({
                "field": name, "filename": filename, "type": kind, "bytes": bytes.len()})),
            None => body[name] = json!(String::from_utf8_lossy(&bytes)),
        }
    }
    seen.lock().unwrap().push((auth, body));
    HttpResponse::Ok().json(
        json!({"created": 1_760_000_000, "data": [{"b64_json": PICTURE,
        "revised_prompt": "A lighthouse with a boat"}]}),
    )
}

async fn start_image_server() -> (String, Seen) {
    let seen: Seen = Arc::new(Mutex::new(Vec::new()));
    let data = web::Data::new(seen.clone());
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .route("/v1/images/generations", web::post().to(generations))
            .route("/v1/images/edits", web::post().to(edits))
    })
    .workers(1)
    .bind("127.0.0.1:0")
    .unwrap();
    let address = server.addrs()[0];
    actix_web::rt::spawn(server.run());
    (format!("http://{address}/v1"), seen)
}

async fn app_with_images(base_url: String) -> TestApp {
    spawn_app_with(move |config| config.images = Some(images_config(base_url))).await
}

fn images_config(base_url: String) -> colloquy::config::ImagesConfig {
    colloquy::config::ImagesConfig {
        base_url,
        api_key: Some(secrecy::SecretString::from("image-secret")),
        model: "sd-turbo".into(),
        timeout_secs: 10,
        max_prompt_chars: 200,
        max_images: 2,
        max_response_bytes: 1024 * 1024,
    }
}

#[actix_web::test]
async fn the_python_sdk_generates_images_plain_streamed_and_with_the_responses_tool() {
    let python = tokio::task::spawn_blocking(python_with_openai)
        .await
        .unwrap();
    let (base, seen) = start_image_server().await;
    let app = app_with_images(base).await;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python/image_generation.py");
    let mut command = Command::new(python);
    command.arg(script);
    app.upstream.script(tool_script());
    let saw = run_client(&app, command).await;
    check(&app, &seen, &saw);
}

#[actix_web::test]
async fn the_node_sdk_generates_images_plain_streamed_and_with_the_responses_tool() {
    let dir = tokio::task::spawn_blocking(node_clients).await.unwrap();
    let (base, seen) = start_image_server().await;
    let app = app_with_images(base).await;
    let mut command = Command::new("node");
    command.arg("image_generation.mjs").current_dir(dir);
    app.upstream.script(tool_script());
    let saw = run_client(&app, command).await;
    check(&app, &seen, &saw);
}

/// The model's part of the clients' Responses flow.
fn tool_script() -> Vec<Reply> {
    vec![
        Reply::tool_call(
            "img_1",
            "generate_image",
            json!({"prompt": "a lighthouse at dusk"}),
        ),
        Reply::text("Here is your lighthouse."),
    ]
}

/// What either client saw, and what the image server and the model were sent.
fn check(app: &TestApp, seen: &Seen, saw: &Value) {
    assert_eq!(saw["b64"], PICTURE);
    assert_eq!(saw["revised_prompt"], "A lighthouse at dusk, oil painting");
    assert_eq!(
        saw["stream"],
        json!([
            ["image_generation.partial_image", 0, "partial0"],
            ["image_generation.partial_image", 1, "partial1"],
            ["image_generation.completed", null, PICTURE]
        ])
    );
    // The Responses tool: OpenAI's events in order, partial images by output index, the
    // finished picture in the item, the text after it.
    let kinds: Vec<&str> = saw["responses_kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    let image_events: Vec<&str> = kinds
        .iter()
        .copied()
        .filter(|k| k.starts_with("response.image_generation_call."))
        .collect();
    assert_eq!(
        image_events,
        [
            "response.image_generation_call.in_progress",
            "response.image_generation_call.generating",
            "response.image_generation_call.partial_image",
            "response.image_generation_call.partial_image",
            "response.image_generation_call.completed",
        ]
    );
    assert_eq!(
        saw["responses_partials"],
        json!([[0, 0, "partial0"], [0, 1, "partial1"]])
    );
    let item = &saw["responses_item"];
    assert_eq!(item["type"], "image_generation_call");
    assert_eq!(item["id"], "ig_img_1");
    assert_eq!(item["status"], "completed");
    assert_eq!(item["result"], PICTURE);
    assert_eq!(item["size"], "256x256");
    assert_eq!(item["output_format"], "png");
    assert_eq!(saw["responses_text"], "Here is your lighthouse.");
    // The model read what was made, not the picture.
    let after = app
        .upstream
        .received()
        .into_iter()
        .map(|r| r.body)
        .find(|body| body.to_string().contains("\"tool_call_id\":\"img_1\""))
        .expect("the call's result reached the model");
    let result = after["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["tool_call_id"] == "img_1")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(result.contains("completed"), "{result}");
    assert!(!result.contains(PICTURE), "{result}");

    let sent = seen.lock().unwrap().clone();
    assert_eq!(sent.len(), 3);
    for (auth, body) in &sent {
        assert_eq!(
            auth, "Bearer image-secret",
            "the provider's key, not the caller's"
        );
        assert_eq!(body["model"], "sd-turbo");
        assert_eq!(body["prompt"], "a lighthouse at dusk");
        assert_eq!(body["size"], "256x256");
        assert_eq!(body["n"], 1);
    }
    assert_eq!(sent[1].1["partial_images"], 2);
    assert_eq!(sent[2].1["partial_images"], 2);
    assert_eq!(sent[2].1["stream"], true);
}

#[actix_web::test]
async fn image_requests_are_refused_before_anything_is_sent_and_failures_keep_their_codes() {
    let (base, seen) = start_image_server().await;
    let app = app_with_images(base).await;
    let post = |body: Value| {
        app.request(Method::POST, "/v1/images/generations")
            .json(&body)
            .send()
    };
    let anonymous = app
        .anonymous(Method::POST, "/v1/images/generations")
        .json(&json!({"prompt": "a cat"}))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    let long = post(json!({"prompt": "x".repeat(201)})).await.unwrap();
    assert_eq!(long.status(), 413);
    let body: Value = long.json().await.unwrap();
    assert_eq!(body["error"]["code"], "prompt_too_long");
    let many = post(json!({"prompt": "a cat", "n": 3})).await.unwrap();
    assert_eq!(many.status(), 400);
    assert!(
        seen.lock().unwrap().is_empty(),
        "nothing reached the provider"
    );
    let rejected = post(json!({"prompt": "fail"})).await.unwrap();
    assert_eq!(rejected.status(), 400);
    let body: Value = rejected.json().await.unwrap();
    assert_eq!(body["error"]["code"], "upstream_rejected");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("safety system"),
        "{body}"
    );

    let without = spawn_app().await;
    let refused = without
        .request(Method::POST, "/v1/images/generations")
        .json(&json!({"prompt": "a cat"}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "images_not_configured");
    let tool_refused = without
        .request(Method::POST, "/v1/responses")
        .json(&json!({"input": "a cat", "tools": [{"type": "image_generation"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(tool_refused.status(), 400);
    let body: Value = tool_refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "images_not_configured");
    let too_many_partials = app
        .request(Method::POST, "/v1/responses")
        .json(&json!({"input": "a cat", "tools": [{"type": "image_generation", "partial_images": 4}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(too_many_partials.status(), 400);
}

#[actix_web::test]
async fn an_agent_that_names_generate_image_makes_pictures_in_its_chats_where_a_server_has_them() {
    let (base, seen) = start_image_server().await;
    let app = app_with_images(base).await;
    let agent: Value = app
        .api()
        .create_agent()
        .json(&json!({"name": "Painter", "enabled_tools": ["generate_image"]}))
        .read_json()
        .await;
    let chat: Value = app
        .chat_api()
        .create_chat()
        .json(&json!({"title": "Pictures", "agent_id": agent["id"]}))
        .read_json()
        .await;
    let chat = chat["id"].as_str().unwrap().to_string();
    app.upstream.script([
        Reply::tool_call(
            "img_a",
            "generate_image",
            json!({"prompt": "a red kite", "size": "256x256"}),
        ),
        Reply::text("A red kite."),
    ]);
    let frames = app.send_text(&chat, "Draw a kite").await;
    let offered = app.upstream.received()[0].body["tools"].to_string();
    assert!(offered.contains("generate_image"), "{offered}");
    let result = frames
        .iter()
        .map(crate::sse::Frame::json)
        .find(|f| f["type"] == "tool_result" && f["name"] == "generate_image")
        .expect("the call's result");
    assert_eq!(result["success"], true, "{result}");
    assert_eq!(
        result["result"]["revised_prompt"],
        "A lighthouse at dusk, oil painting"
    );
    let sent = seen.lock().unwrap().clone();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].1["prompt"], "a red kite");
    assert_eq!(sent[0].1["size"], "256x256");

    // A server without an image server says what the tool needs.
    let without = spawn_app().await;
    let refused = without
        .api()
        .create_agent()
        .json(&json!({"name": "Painter", "enabled_tools": ["generate_image"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
    let body: Value = refused.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("generate_image is not configured on this server (it needs an [images]"),
        "{body}"
    );
}

#[actix_web::test]
async fn a_picture_made_in_a_chat_is_kept_with_the_answer_and_shown_in_the_app() {
    use base64::Engine;
    use sea_orm::EntityTrait;
    let (base, _) = start_image_server().await;
    let app = crate::browser::browser_app(|config| config.images = Some(images_config(base))).await;
    let chat = app.new_chat().await;
    app.upstream.script(tool_script());
    let made: Value = app
        .openai()
        .create_response()
        .json(
            &json!({"model": "fake-model", "input": "Draw a lighthouse.", "x_chat_id": chat,
            "tools": [{"type": "image_generation"}]}),
        )
        .read_json()
        .await;
    let item = &made["output"][0];
    assert_eq!(item["type"], "image_generation_call", "{made}");
    assert_eq!(item["result"], PICTURE);
    let attachment = item["x_attachment_id"]
        .as_str()
        .expect("the picture is kept in the chat")
        .to_string();
    // A part of the stored answer, served as the chat's attachment.
    let messages: Value = app.chat_api().messages(&chat).read_json().await;
    let answer = messages["data"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "assistant")
        .expect("the answer is stored")
        .clone();
    let parts = answer["parts"].as_array().expect("the answer's parts");
    assert!(
        parts
            .iter()
            .any(|p| p["type"] == "image" && p["attachment_id"] == attachment.as_str()),
        "{answer}"
    );
    let served = app
        .request(
            Method::GET,
            &format!("/chat/api/{chat}/attachments/{attachment}"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(served.status(), 200);
    let bytes = served.bytes().await.unwrap();
    let picture = base64::engine::general_purpose::STANDARD
        .decode(PICTURE)
        .unwrap();
    assert_eq!(bytes.as_ref(), picture.as_slice());
    // Linked to the answer, it is not swept as an image never sent.
    let linked = entities::attachments::Entity::find_by_id(
        entities::ids::AttachmentId::from_string(&attachment),
    )
    .one(&app.db)
    .await
    .unwrap()
    .expect("the attachment row");
    assert_eq!(
        linked.message_id.as_ref().map(ToString::to_string),
        answer["id"].as_str().map(str::to_string)
    );
    crate::browser::run_scenario(&app, "generated_image", &[("CHAT_ID", chat)]).await;
}

#[actix_web::test]
async fn the_python_sdk_edits_a_picture_through_the_image_server() {
    use base64::Engine;
    let python = tokio::task::spawn_blocking(python_with_openai)
        .await
        .unwrap();
    let (base, seen) = start_image_server().await;
    let app = app_with_images(base).await;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python/image_edits.py");
    let mut command = Command::new(python);
    command.arg(script).env("PICTURE", PICTURE);
    let saw = run_client(&app, command).await;
    assert_eq!(saw["b64"], PICTURE);
    assert_eq!(saw["revised_prompt"], "A lighthouse with a boat");
    assert_eq!(
        saw["not_a_picture"],
        json!({"status": 415, "code": "unsupported_image_type"}),
        "refused before anything is sent"
    );
    let sent = seen.lock().unwrap().clone();
    assert_eq!(sent.len(), 1, "{sent:?}");
    let (auth, form) = &sent[0];
    assert_eq!(
        auth, "Bearer image-secret",
        "the configured key, never the caller's"
    );
    assert_eq!(form["prompt"], "Add a boat");
    assert_eq!(form["model"], "sd-turbo");
    assert_eq!(form["size"], "256x256");
    let picture = base64::engine::general_purpose::STANDARD
        .decode(PICTURE)
        .unwrap();
    assert_eq!(
        form["files"],
        json!([{"field": "image", "filename": "lighthouse.png", "type": "image/png",
                "bytes": picture.len()}])
    );

    // No picture, a field OpenAI does not define, and a server without [images]: refused.
    let form = reqwest::multipart::Form::new().text("prompt", "Add a boat");
    let response = app
        .request(Method::POST, "/v1/images/edits")
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let form = reqwest::multipart::Form::new()
        .text("prompt", "Add a boat")
        .text("webhook", "http://example.org/");
    let response = app
        .request(Method::POST, "/v1/images/edits")
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    assert_eq!(seen.lock().unwrap().len(), 1, "nothing more was sent");
    let without = spawn_app().await;
    let form = reqwest::multipart::Form::new().text("prompt", "Add a boat");
    let response = without
        .request(Method::POST, "/v1/images/edits")
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "images_not_configured");
}

#[actix_web::test]
async fn a_later_turn_changes_a_picture_made_earlier_by_its_image_id() {
    let (base, seen) = start_image_server().await;
    let app = app_with_images(base).await;
    let chat = app.new_chat().await;
    app.upstream.script(tool_script());
    let ask = |input: &str| {
        json!({"model": "fake-model", "input": input, "x_chat_id": chat,
               "tools": [{"type": "image_generation"}]})
    };
    let made: Value = app
        .openai()
        .create_response()
        .json(&ask("Draw a lighthouse."))
        .read_json()
        .await;
    let first = made["output"][0]["x_attachment_id"]
        .as_str()
        .expect("kept")
        .to_string();

    app.upstream.script([
        Reply::tool_call(
            "img_2",
            "generate_image",
            json!({"prompt": "add a boat", "image_id": first}),
        ),
        Reply::tool_call(
            "img_3",
            "generate_image",
            json!({"prompt": "add a boat", "image_id": "att_0123456789abcdef0123456789abcdef"}),
        ),
        Reply::text("Now with a boat."),
    ]);
    let changed: Value = app
        .openai()
        .create_response()
        .json(&ask("Add a boat to it."))
        .read_json()
        .await;
    // The model saw the earlier picture's id with the earlier answer.
    let received = app.upstream.received();
    let context = received[received.len() - 3].body["messages"].to_string();
    assert!(
        context.contains(&format!("by image_id: {first}")),
        "{context}"
    );
    // The edit went to the image server with the earlier picture; an unknown id is the model's
    // error, and the run goes on.
    let sent = seen.lock().unwrap().clone();
    let (_, edit) = sent.last().unwrap();
    assert_eq!(edit["prompt"], "add a boat");
    assert_eq!(edit["files"][0]["field"], "image");
    assert_eq!(edit["files"][0]["type"], "image/png");
    assert_eq!(sent.len(), 2, "the unknown id sent nothing: {sent:?}");
    let second = &changed["output"][0];
    assert_eq!(second["type"], "image_generation_call");
    assert_eq!(second["status"], "completed");
    assert_ne!(second["x_attachment_id"], json!(first));
    assert_eq!(changed["output"][1]["status"], "failed");
    let told = received.last().unwrap().body["messages"].to_string();
    assert!(told.contains("is no picture of this chat"), "{told}");
    assert_eq!(changed["output_text"], "Now with a boat.");
}
