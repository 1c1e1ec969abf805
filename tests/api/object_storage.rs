//! Files in an S3-compatible object store (`[storage] url = "s3://…"`), against a real one: a
//! `moto` server started here (its Python package from PyPI, in `target/moto-venv`). Image
//! attachments, Files API files and committed documents go to the store, not the data
//! directory; they are read back, processed, searched and removed with their chat from there.
//! A store that fails in the middle of an upload leaves the upload an error and no object.

use std::process::Command;
use std::time::Duration;

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use serde_json::{Value, json};

use crate::documents::{settled, upload};
use crate::helpers::free_port;
use crate::helpers::{TestApp, eventually, spawn_app_with};
use crate::openai_python::python_venv;
use crate::subprocess::{Background, start_within};

pub const BUCKET: &str = "colloquy-files";
const PREFIX: &str = "one";

/// A moto S3 server on a free port of 127.0.0.1, with the bucket made.
pub struct S3 {
    _process: Background,
    pub url: String,
}

pub async fn start_s3() -> S3 {
    let python = python_venv("target/moto-venv", "tests/python/moto-requirements.txt");
    let port = free_port();
    let mut command = Command::new(python.with_file_name("moto_server"));
    command.args(["-H", "127.0.0.1", "-p", &port.to_string()]);
    let process = start_within(command, "moto_server", Duration::from_secs(600));
    let url = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    eventually("moto answering", Duration::from_secs(60), || async {
        http.get(&url).send().await.ok().map(|_| ())
    })
    .await;
    let made = http.put(format!("{url}/{BUCKET}")).send().await.unwrap();
    assert!(made.status().is_success(), "{:?}", made.text().await);
    S3 {
        _process: process,
        url,
    }
}

/// The keys under `prefix` in the bucket, as the store lists them.
pub async fn keys(s3_url: &str, prefix: &str) -> Vec<String> {
    let listing = reqwest::Client::new()
        .get(format!("{s3_url}/{BUCKET}?list-type=2&prefix={prefix}"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    listing
        .split("<Key>")
        .skip(1)
        .filter_map(|rest| rest.split_once("</Key>").map(|(key, _)| key.to_string()))
        .collect()
}

/// A new vector store named `name` holding the uploaded file `file_id`; its id.
pub async fn vector_store_with(
    openai: crate::client::OpenAi<'_>,
    name: &str,
    file_id: &str,
) -> String {
    let store: Value = openai
        .create_vector_store()
        .json(&json!({"name": name}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let store_id = store["id"].as_str().unwrap().to_string();
    let added = openai
        .add_vector_store_file(&store_id)
        .json(&json!({"file_id": file_id}))
        .send()
        .await
        .unwrap();
    assert!(added.status().is_success(), "{:?}", added.text().await);
    store_id
}

/// An app whose files go to the store at `endpoint`.
async fn app_on(endpoint: &str) -> TestApp {
    let endpoint = endpoint.to_string();
    spawn_app_with(move |config| {
        config.storage.url = Some(format!("s3://{BUCKET}/{PREFIX}"));
        config.storage.endpoint = Some(endpoint);
        config.storage.access_key_id = Some("testing".to_string().into());
        config.storage.secret_access_key = Some("testing".to_string().into());
    })
    .await
}

/// A Files API file of `text`, uploaded through `openai`: its object.
pub async fn upload_file(openai: crate::client::OpenAi<'_>, filename: &str, text: &str) -> Value {
    let form = reqwest::multipart::Form::new()
        .text("purpose", "assistants")
        .part(
            "file",
            reqwest::multipart::Part::bytes(text.as_bytes().to_vec())
                .file_name(filename.to_string()),
        );
    let response = openai.upload_file().multipart(form).send().await.unwrap();
    assert!(
        response.status().is_success(),
        "{:?}",
        response.text().await
    );
    response.json().await.unwrap()
}

/// Every file (not directory) under `dir`.
pub fn files_in(dir: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

#[actix_web::test]
async fn attachments_files_and_documents_live_in_the_object_store_and_go_with_their_chat() {
    let s3 = start_s3().await;
    let app = app_on(&s3.url).await;

    // An image attachment: kept as an object, served back from it.
    let chat = app.new_chat().await;
    let png = crate::images::PNG.to_vec();
    let uploaded =
        crate::images::upload_image(app.chat_api(), &chat, png.clone(), "picture.png").await;
    assert_eq!(uploaded.status(), 201, "{:?}", uploaded.text().await);
    let attachment: Value = uploaded.json().await.unwrap();
    let id = attachment["id"].as_str().unwrap();
    assert_eq!(
        keys(&s3.url, &format!("{PREFIX}/attachments/{chat}/")).await,
        [format!("{PREFIX}/attachments/{chat}/{id}")]
    );
    let served = app.chat_api().attachment(&chat, id).send().await.unwrap();
    assert_eq!(served.status(), 200);
    assert_eq!(served.bytes().await.unwrap().to_vec(), png);

    // A document uploaded to the chat: its bytes are an object; processed from there.
    let text = "The lighthouse keeper logs the fog horn at dawn.\n".repeat(40);
    let response = upload(&app, &chat, "keeper.md", text.clone().into_bytes()).await;
    assert!(
        response.status().is_success(),
        "{:?}",
        response.text().await
    );
    let list = settled(&app, &chat).await;
    assert_eq!(list["documents"][0]["status"], "processed", "{list}");
    let documents = keys(&s3.url, &format!("{PREFIX}/documents/{chat}/")).await;
    assert_eq!(documents.len(), 1, "{documents:?}");

    // A Files API file, added to a vector store (a copy made from the object) and searched.
    let file = upload_file(
        app.openai(),
        "quartz.txt",
        &"Quartz crystals resonate at 32768 hertz in a watch.\n".repeat(30),
    )
    .await;
    let file_id = file["id"].as_str().unwrap().to_string();
    let user_files = keys(&s3.url, &format!("{PREFIX}/files/")).await;
    assert!(
        user_files.len() == 1 && user_files[0].ends_with(&file_id),
        "{user_files:?}"
    );
    let content = app.openai().file_content(&file_id).send().await.unwrap();
    assert!(
        String::from_utf8(content.bytes().await.unwrap().to_vec())
            .unwrap()
            .starts_with("Quartz crystals")
    );
    let store_id = vector_store_with(app.openai(), "watches", &file_id).await;
    let hits = eventually("the file searchable", Duration::from_secs(60), || async {
        let found: Value = app
            .openai()
            .search_vector_store(&store_id)
            .json(&json!({"query": "quartz hertz"}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        (found["data"].as_array().is_some_and(|d| !d.is_empty())).then_some(found)
    })
    .await;
    assert_eq!(hits["data"][0]["filename"], "quartz.txt", "{hits}");

    // Nothing of it in the data directory (the database and indexes are there).
    let local: Vec<String> = files_in(app.data_dir.path())
        .into_iter()
        .filter(|path| {
            ["/attachments/", "/documents/", "/files/"]
                .iter()
                .any(|dir| path.contains(dir))
        })
        .collect();
    assert!(local.is_empty(), "files kept locally: {local:?}");

    // Deleting the chat removes its objects.
    let deleted = app.chat_api().delete_chat(&chat).send().await.unwrap();
    assert!(deleted.status().is_success());
    eventually(
        "the chat's objects removed",
        Duration::from_secs(30),
        || async {
            let left = keys(&s3.url, &format!("{PREFIX}/attachments/{chat}/"))
                .await
                .len()
                + keys(&s3.url, &format!("{PREFIX}/documents/{chat}/"))
                    .await
                    .len();
            (left == 0).then_some(())
        },
    )
    .await;
}

/// Forwards every request to the store, except the second part of a multipart upload, which
/// it refuses as a store that fails mid-upload would (a 400, which is not retried).
async fn failing_proxy(target: String) -> String {
    async fn forward(
        request: HttpRequest,
        body: web::Bytes,
        target: web::Data<String>,
    ) -> HttpResponse {
        let query = request.query_string();
        if query.contains("partNumber=2") {
            return HttpResponse::BadRequest()
                .content_type("application/xml")
                .body("<Error><Code>InvalidRequest</Code><Message>refused</Message></Error>");
        }
        let url = format!(
            "{}{}{}{query}",
            target.get_ref(),
            request.path(),
            if query.is_empty() { "" } else { "?" }
        );
        let method = reqwest::Method::from_bytes(request.method().as_str().as_bytes()).unwrap();
        let mut sent = reqwest::Client::new().request(method, url);
        for (name, value) in request.headers() {
            if name != "host" && name != "content-length" {
                sent = sent.header(name.as_str(), value.as_bytes());
            }
        }
        let answer = sent.body(body.to_vec()).send().await.unwrap();
        let status = actix_web::http::StatusCode::from_u16(answer.status().as_u16()).unwrap();
        let mut response = HttpResponse::build(status);
        for (name, value) in answer.headers() {
            if name != "content-length" && name != "transfer-encoding" {
                response.insert_header((name.as_str(), value.as_bytes()));
            }
        }
        response.body(answer.bytes().await.unwrap())
    }
    let port = free_port();
    let server = HttpServer::new(move || {
        App::new()
            .app_data(web::Data::new(target.clone()))
            .app_data(web::PayloadConfig::new(64 * 1024 * 1024))
            .default_service(web::to(forward))
    })
    .workers(1)
    .bind(("127.0.0.1", port))
    .unwrap()
    .run();
    actix_web::rt::spawn(server);
    format!("http://127.0.0.1:{port}")
}

#[actix_web::test]
async fn a_store_failing_mid_upload_leaves_an_error_and_no_object() {
    let s3 = start_s3().await;
    let proxy = failing_proxy(s3.url.clone()).await;
    let app = app_on(&proxy).await;
    let chat = app.new_chat().await;
    // Over one part (8 MiB), so the store sees a second one.
    let text = "Tides follow the moon around the harbour wall.\n".repeat(230_000);
    assert!(text.len() > 9 * 1024 * 1024);
    let response = upload(&app, &chat, "tides.txt", text.into_bytes()).await;
    assert_eq!(
        response.status(),
        500,
        "an upload the store refused is an error"
    );
    let error = crate::helpers::error_body(response).await;
    assert_eq!(error["code"], "storage_failed", "{error}");
    let list = crate::documents::documents(&app, &chat).await;
    let statuses: Vec<&str> = list["documents"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["status"].as_str())
        .collect();
    assert!(statuses.iter().all(|s| *s == "error"), "{list}");
    assert!(
        keys(&s3.url, &format!("{PREFIX}/documents/"))
            .await
            .is_empty(),
        "nothing half-written is visible"
    );
    // The chat still works: a small document is stored and processed.
    let small = upload(
        &app,
        &chat,
        "small.md",
        b"A small note about tides.".to_vec(),
    )
    .await;
    assert!(small.status().is_success(), "{:?}", small.text().await);
    let list = settled(&app, &chat).await;
    assert!(
        list["documents"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["filename"] == "small.md" && d["status"] == "processed"),
        "{list}"
    );
}
