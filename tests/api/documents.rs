//! The document workspace: tus and multipart uploads (with an interrupted upload resumed),
//! processing by type, limits, the documents REST API, file_search with its events, automatic
//! context injection, deletion, isolation and index rebuilds — over real HTTP.

use entities::ids::{ChatId, UploadId};
use std::time::Duration;

use base64::Engine;
use reqwest::Method;
use sea_orm::EntityTrait;
use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, error_body, eventually, spawn_app, spawn_app_with};
use crate::sse::{Frame, read_all};

/// A one-page PDF with the given lines of text in Helvetica, xref offsets computed.
pub fn pdf_with_text(lines: &[&str]) -> Vec<u8> {
    let mut content = String::from("BT /F1 12 Tf 72 720 Td 14 TL\n");
    for line in lines {
        content.push_str(&format!(
            "({}) Tj T*\n",
            line.replace('(', "\\(").replace(')', "\\)")
        ));
    }
    content.push_str("ET");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R \
         /Resources << /Font << /F1 5 0 R >> >> >>"
            .to_string(),
        format!(
            "<< /Length {} >>\nstream\n{content}\nendstream",
            content.len()
        ),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_string(),
    ];
    let mut pdf = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend(format!("{} 0 obj\n{object}\nendobj\n", i + 1).as_bytes());
    }
    let xref = pdf.len();
    pdf.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for offset in offsets {
        pdf.extend(format!("{offset:010} 00000 n \n").as_bytes());
    }
    pdf.extend(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    pdf
}

pub async fn upload(
    app: &TestApp,
    chat: &str,
    filename: &str,
    bytes: Vec<u8>,
) -> reqwest::Response {
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(bytes).file_name(filename.to_string()),
    );
    app.chat_api()
        .upload_document(chat)
        .multipart(form)
        .send()
        .await
        .unwrap()
}

/// The `response.file_search_call.*` events of a stream, as JSON.
fn file_search_events(frames: &[Frame]) -> Vec<Value> {
    frames
        .iter()
        .map(Frame::json)
        .filter(|j| {
            j["type"]
                .as_str()
                .is_some_and(|t| t.starts_with("response.file_search_call"))
        })
        .collect()
}

pub async fn documents(app: &TestApp, chat: &str) -> Value {
    let response = app.chat_api().documents(chat).call().await;
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

/// Waits until no document of the chat is uploading or processing; returns the list.
pub async fn settled(app: &TestApp, chat: &str) -> Value {
    eventually("processing finishing", Duration::from_secs(90), || async {
        let list = documents(app, chat).await;
        let busy = list["documents"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["status"] == "processing" || d["status"] == "uploading");
        (!busy).then_some(list)
    })
    .await
}

fn by_name<'a>(list: &'a Value, filename: &str) -> &'a Value {
    list["documents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["filename"] == filename)
        .unwrap_or_else(|| panic!("{filename} not listed: {list}"))
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[actix_web::test]
async fn every_file_type_is_processed_per_seed_002() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    let pdf = pdf_with_text(&[
        "Quarterly revenue grew by forty percent.",
        "Sharding uses consistent hashing.",
    ]);
    let html =
        b"<html><head><title>Guide</title><script>var secret = 'zzscriptzz';</script></head>\
        <body><h1>Deployment guide</h1><p>Blue green deployments avoid downtime.</p></body></html>";
    let code =
        b"def fibonacci(n):\n    return n if n < 2 else fibonacci(n - 1) + fibonacci(n - 2)\n";
    let png = [
        &[0x89u8, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a][..],
        &[0u8; 64][..],
    ]
    .concat();
    for (name, bytes) in [
        ("report.pdf", pdf),
        ("guide.html", html.to_vec()),
        ("fib.py", code.to_vec()),
        ("notes.txt", png),
        (
            "readme.md",
            b"# Readme\nRun `make test` before pushing.".to_vec(),
        ),
    ] {
        let response = upload(&app, &chat, name, bytes).await;
        assert_eq!(response.status(), 201, "{name}");
        // The upload's answer already names the type the bytes show.
        let created: Value = response.json().await.unwrap();
        let expected = match name {
            "report.pdf" => "application/pdf",
            "guide.html" => "text/html",
            "fib.py" => "text/x-python",
            "notes.txt" => "image/png",
            _ => "text/markdown",
        };
        assert_eq!(created["type"], expected, "{name}: {created}");
    }
    let list = settled(&app, &chat).await;
    assert_eq!(list["total"], 5);
    let limits = &app.config.documents;
    assert_eq!(
        list["limits"],
        json!({"max_file_bytes": limits.max_file_bytes,
               "max_files_per_chat": limits.max_files_per_chat,
               "max_text_chars": limits.max_text_chars}),
        "the list says the limits, for a client to check a file before sending it"
    );
    let pdf = by_name(&list, "report.pdf");
    assert_eq!(pdf["status"], "processed", "{pdf}");
    assert_eq!(pdf["type"], "application/pdf");
    assert_eq!(pdf["searchable"], true);
    assert!(
        pdf["artifact_id"].is_string()
            && pdf["uploaded_at"].is_string()
            && pdf["size"].as_i64().unwrap() > 100
    );
    assert_eq!(by_name(&list, "guide.html")["type"], "text/html");
    assert_eq!(by_name(&list, "fib.py")["type"], "text/x-python");
    // Sniffed from the bytes, not the name: a PNG named .txt is a binary, stored but not searchable.
    let binary = by_name(&list, "notes.txt");
    assert_eq!(binary["status"], "processed");
    assert_eq!(binary["searchable"], false);
    assert_eq!(binary["type"], "image/png");
    // Most recent first.
    assert_eq!(list["documents"][0]["filename"], "readme.md");
    assert_eq!(list["documents"][4]["filename"], "report.pdf");

    // The text of each searchable type is really indexed (and a script's is not).
    let hits = app
        .state
        .workspace()
        .search(
            &ChatId::from_string(chat.clone()),
            "revenue grew percent",
            3,
        )
        .await
        .unwrap()
        .hits;
    assert_eq!(hits[0].filename, "report.pdf");
    assert!(
        hits[0].text.contains("Quarterly revenue grew"),
        "{:?}",
        hits[0].text
    );
    let hits = app
        .state
        .workspace()
        .search(
            &ChatId::from_string(chat.clone()),
            "blue green deployments",
            3,
        )
        .await
        .unwrap()
        .hits;
    assert_eq!(hits[0].filename, "guide.html");
    assert!(!hits[0].text.contains("zzscriptzz"));
    let hits = app
        .state
        .workspace()
        .search(&ChatId::from_string(chat.clone()), "fibonacci", 3)
        .await
        .unwrap()
        .hits;
    assert_eq!(hits[0].filename, "fib.py");
    assert!(hits.iter().all(|h| h.filename != "notes.txt"));
}

#[actix_web::test]
async fn file_search_is_offered_with_documents_and_emits_its_events() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    app.upstream.script([Reply::text("No documents yet.")]);
    app.send_text(&chat, "hello").await;
    assert!(!tool_names(&app.upstream.received()[0].body).contains(&"file_search".to_string()));

    let spec = "API Key Authentication: all requests must include a valid API key in the \
        Authorization header using the Bearer scheme. Keys are project-scoped and rotated via the dashboard.";
    upload(&app, &chat, "api-design-spec.md", spec.as_bytes().to_vec()).await;
    upload(
        &app,
        &chat,
        "cooking.txt",
        b"Simmer the tomatoes for twenty minutes with basil.".to_vec(),
    )
    .await;
    let list = settled(&app, &chat).await;
    let spec_id = by_name(&list, "api-design-spec.md")["artifact_id"].clone();

    app.upstream.script([
        Reply::tool_call(
            "fs1",
            "file_search",
            json!({"query": "authentication flow for API keys", "max_results": 3}),
        ),
        Reply::text("Keys go in the Authorization header."),
    ]);
    let frames = app
        .send_text(&chat, "How do API keys authenticate requests?")
        .await;
    let received = app.upstream.received();
    let first = &received[1].body;
    assert!(tool_names(first).contains(&"file_search".to_string()));
    // The file list and the relevant passage are in the system prompt.
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("api-design-spec.md (text/markdown, processed)"),
        "{system}"
    );
    assert!(system.contains("cooking.txt"), "{system}");
    assert!(
        system.contains("Bearer scheme"),
        "the relevant chunk is injected: {system}"
    );
    assert!(
        !system.contains("Simmer the tomatoes"),
        "an irrelevant chunk is not: {system}"
    );

    let result: Value = serde_json::from_str(
        received[2].body["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["content"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    let results = result["results"].as_array().unwrap();
    assert!(!results.is_empty() && results.len() <= 3, "{result}");
    assert_eq!(results[0]["filename"], "api-design-spec.md");
    assert_eq!(results[0]["artifact_id"], spec_id);
    assert!(
        results[0]["chunk_text"]
            .as_str()
            .unwrap()
            .contains("Bearer scheme")
    );
    let scores: Vec<f64> = results
        .iter()
        .map(|r| r["relevance_score"].as_f64().unwrap())
        .collect();
    assert!(scores.iter().all(|s| (0.0..=1.0).contains(s)), "{scores:?}");
    // The results come in relevance order.
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");

    let kinds = file_search_events(&frames);
    // The completed event says where the search's time went, stage by stage.
    let timings = &kinds[2]["x_timings_ms"];
    for stage in [
        "query_embedding",
        "lock_wait",
        "bm25",
        "vectors",
        "fusion",
        "chunk_texts",
        "artifact_ids",
        "total",
    ] {
        assert!(
            timings[stage].as_f64().is_some_and(|ms| ms >= 0.0),
            "{timings}"
        );
    }
    let types: Vec<&str> = kinds.iter().map(|k| k["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "response.file_search_call.in_progress",
            "response.file_search_call.searching",
            "response.file_search_call.completed"
        ]
    );
    assert!(
        kinds
            .iter()
            .all(|k| k["item_id"] == kinds[0]["item_id"] && k["output_index"] == 0)
    );
    assert!(kinds[0]["item_id"].as_str().unwrap().starts_with("fs_"));
}

/// The passages' scores of one Responses file_search whose tool is `tool`, the model asking for
/// `asked` results.
async fn scores_of(app: &TestApp, chat: &str, tool: Value, asked: Option<u32>) -> Vec<f64> {
    let mut arguments = json!({"query": "aurora borealis northern lights"});
    if let Some(asked) = asked {
        arguments["max_results"] = json!(asked);
    }
    app.upstream.script([
        Reply::tool_call("fs_l", "file_search", arguments),
        Reply::text("Found."),
    ]);
    let response = app
        .openai()
        .create_response()
        .json(&json!({"input": "Tell me about auroras", "x_chat_id": chat, "tools": [tool]}))
        .call()
        .await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["output"][0]["type"], "file_search_call", "{body}");
    body["output"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["relevance_score"].as_f64().unwrap())
        .collect()
}

#[actix_web::test]
async fn file_search_keeps_a_requests_max_num_results_and_score_threshold() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    let texts = [
        (
            "aurora.md",
            "The aurora borealis, the northern lights, glows over the arctic sky.",
        ),
        (
            "lights.md",
            "Northern towns string lights along their streets in winter.",
        ),
        ("sky.md", "The arctic sky is dark for months in winter."),
        (
            "bread.md",
            "Sourdough bread needs a starter, flour, water and salt.",
        ),
    ];
    for (name, text) in texts {
        upload(&app, &chat, name, text.as_bytes().to_vec()).await;
    }
    settled(&app, &chat).await;

    let all = scores_of(&app, &chat, json!({"type": "file_search"}), Some(10)).await;
    assert!(all.len() >= 3, "{all:?}");
    // max_num_results is the default when the model names none, and caps what it names.
    let one = scores_of(
        &app,
        &chat,
        json!({"type": "file_search", "max_num_results": 1}),
        None,
    )
    .await;
    assert_eq!(one, all[..1]);
    let two = scores_of(
        &app,
        &chat,
        json!({"type": "file_search", "max_num_results": 2}),
        Some(10),
    )
    .await;
    assert_eq!(two, all[..2]);
    // score_threshold keeps the passages scoring at least that much.
    assert!(all[0] > all[1], "{all:?}");
    let threshold = (all[0] + all[1]) / 2.0;
    let above = scores_of(
        &app,
        &chat,
        json!({"type": "file_search", "ranking_options": {"score_threshold": threshold}}),
        Some(10),
    )
    .await;
    assert_eq!(above, all[..1], "threshold {threshold}");

    for bad in [
        json!({"type": "file_search", "max_num_results": 0}),
        json!({"type": "file_search", "max_num_results": 51}),
        json!({"type": "file_search", "ranking_options": {"score_threshold": 1.5}}),
    ] {
        let refused = app
            .openai()
            .create_response()
            .json(&json!({"input": "hi", "x_chat_id": chat, "tools": [bad]}))
            .call()
            .await;
        assert_eq!(refused.status(), 400, "{bad}");
    }
}

/// A run that pauses for the client's function and goes on keeps its file_search as the
/// request asked for it: the named store, within its `max_num_results`.
#[actix_web::test]
async fn a_paused_run_keeps_its_file_search_stores_and_limits_when_it_goes_on() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    let mut file_ids = Vec::new();
    for (name, text) in [
        (
            "aurora.md",
            "The aurora borealis, the northern lights, glows over the arctic sky.",
        ),
        (
            "lights.md",
            "Northern towns string lights along their streets in winter.",
        ),
        ("sky.md", "The arctic sky is dark for months in winter."),
    ] {
        let file = crate::object_storage::upload_file(app.openai(), name, text).await;
        file_ids.push(file["id"].as_str().unwrap().to_string());
    }
    let store: Value = app
        .openai()
        .create_vector_store()
        .json(&json!({"name": "Sky", "file_ids": file_ids}))
        .read_json()
        .await;
    let store = store["id"].as_str().unwrap().to_string();
    eventually(
        "the store's files processed",
        Duration::from_secs(60),
        || {
            let (app, store) = (&app, &store);
            async move {
                let files: Value = app
                    .openai()
                    .vector_store_files(store)
                    .call()
                    .await
                    .json()
                    .await
                    .ok()?;
                let files = files["data"].as_array()?;
                (files.len() == 3 && files.iter().all(|f| f["status"] == "completed")).then_some(())
            }
        },
    )
    .await;
    app.upstream.script([
        Reply::tool_call("call_w", "weather", json!({"city": "Tromsø"})),
        Reply::tool_call(
            "fs_1",
            "file_search",
            json!({"query": "aurora borealis northern lights", "max_results": 10}),
        ),
        Reply::text("Found."),
    ]);
    let tools = json!([
        {"type": "file_search", "vector_store_ids": [store], "max_num_results": 1},
        {"type": "function", "name": "weather", "parameters": {"type": "object",
         "properties": {"city": {"type": "string"}}}}
    ]);
    let paused = app
        .openai()
        .create_response()
        .json(&json!({"input": "Auroras tonight?", "x_chat_id": chat, "tools": tools}))
        .call()
        .await;
    assert_eq!(paused.status(), 200);
    let paused: Value = paused.json().await.unwrap();
    assert_eq!(paused["output"][0]["type"], "function_call", "{paused}");
    let resumed = app
        .openai()
        .create_response()
        .json(
            &json!({"previous_response_id": paused["id"], "tools": tools,
                      "input": [{"type": "function_call_output", "call_id": "call_w",
                                 "output": "clear skies"}]}),
        )
        .call()
        .await;
    assert_eq!(resumed.status(), 200);
    let resumed: Value = resumed.json().await.unwrap();
    let call = resumed["output"]
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["type"] == "file_search_call")
        .unwrap_or_else(|| panic!("no file_search_call: {resumed}"));
    let results = call["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "max_num_results 1 kept: {call}");
    assert_eq!(
        results[0]["filename"], "aurora.md",
        "the named store searched: {call}"
    );
}

#[actix_web::test]
async fn the_responses_api_searches_a_chats_documents_with_file_search() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    let spec = "API Key Authentication: all requests must include a valid API key in the \
        Authorization header using the Bearer scheme.";
    upload(&app, &chat, "api-design-spec.md", spec.as_bytes().to_vec()).await;
    let list = settled(&app, &chat).await;
    let spec_id = by_name(&list, "api-design-spec.md")["artifact_id"].clone();

    // Without a chat or vector stores, file_search is the new chat's own: no documents there,
    // so the model is not offered it (the spec's request, docs/spec.md#request-shapes, runs as
    // written). An unknown vector
    // store is 404, and include values are checked.
    app.upstream
        .script([Reply::text("There are no documents here.")]);
    let no_chat = app
        .openai()
        .create_response()
        .json(&json!({"input": "hi", "tools": [{"type": "file_search"}]}))
        .call()
        .await;
    assert_eq!(no_chat.status(), 200);
    let offered = app.upstream.received()[0].body["tools"].to_string();
    assert!(!offered.contains("file_search"), "{offered}");
    let unknown = app
        .openai().create_response().json(&json!({"input": "hi", "tools": [{"type": "file_search", "vector_store_ids": ["vs_nope"]}]})).call()
        .await;
    assert_eq!(unknown.status(), 404);
    let bad_include = app
        .openai()
        .create_response()
        .json(&json!({"input": "hi", "x_chat_id": chat, "include": ["everything"]}))
        .call()
        .await;
    assert_eq!(bad_include.status(), 400);

    // Without include: the item has the passages' metadata, not their text.
    app.upstream.script([
        Reply::tool_call(
            "fs1",
            "file_search",
            json!({"query": "API key authentication"}),
        ),
        Reply::text("Keys go in the Authorization header."),
    ]);
    let response = app
        .openai()
        .create_response()
        .json(&json!({"input": "How do API keys work?", "x_chat_id": chat,
                    "tools": [{"type": "file_search"}]}))
        .call()
        .await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["x_chat_id"], chat);
    let output = body["output"].as_array().unwrap();
    assert_eq!(output.len(), 2, "{body}");
    let call = &output[0];
    assert_eq!(call["type"], "file_search_call");
    assert_eq!(call["id"], "fs_fs1");
    assert_eq!(call["status"], "completed");
    assert_eq!(call["queries"], json!(["API key authentication"]));
    let first = &call["results"][0];
    assert_eq!(first["filename"], "api-design-spec.md");
    assert_eq!(first["artifact_id"], spec_id);
    assert!((0.0..=1.0).contains(&first["relevance_score"].as_f64().unwrap()));
    assert!(first.get("chunk_text").is_none(), "{first}");
    assert_eq!(output[1]["type"], "message");
    assert_eq!(body["output_text"], "Keys go in the Authorization header.");
    // The model was offered file_search, and the turn is stored in the chat.
    assert!(tool_names(&app.upstream.received()[1].body).contains(&"file_search".to_string()));
    let messages: Value = app.chat_api().messages(&chat).read_json().await;
    assert!(messages.to_string().contains("How do API keys work?"));

    // Streamed, with include: the item's events and the final item carry the text.
    app.upstream.script([
        Reply::tool_call("fs2", "file_search", json!({"query": "Bearer scheme"})),
        Reply::text("Use Bearer."),
    ]);
    let streamed = app
        .openai()
        .create_response()
        .json(
            &json!({"input": "Which scheme?", "x_chat_id": chat, "stream": true,
                    "tools": [{"type": "file_search"}],
                    "include": ["file_search_call.results"]}),
        )
        .call()
        .await;
    let frames = read_all(streamed).await;
    let searching = file_search_events(&frames);
    assert_eq!(searching.len(), 3);
    assert!(
        searching
            .iter()
            .all(|e| e["item_id"] == "fs_fs2" && e["output_index"] == 0),
        "{searching:?}"
    );
    let delta = frames
        .iter()
        .map(Frame::json)
        .find(|j| j["type"] == "response.output_text.delta")
        .unwrap();
    assert_eq!(delta["output_index"], 1);
    let completed = frames.last().unwrap().json();
    assert_eq!(completed["type"], "response.completed");
    let item = &completed["response"]["output"][0];
    assert_eq!(item["id"], "fs_fs2");
    assert!(
        item["results"][0]["chunk_text"]
            .as_str()
            .unwrap()
            .contains("Bearer scheme"),
        "{item}"
    );
    assert_eq!(completed["response"]["output"][1]["type"], "message");
}

#[actix_web::test]
async fn deleting_a_document_removes_it_from_search_at_once() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    upload(
        &app,
        &chat,
        "alpha.txt",
        b"The aurora borealis glows green over Tromso.".to_vec(),
    )
    .await;
    let list = settled(&app, &chat).await;
    let id = by_name(&list, "alpha.txt")["artifact_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        app.state
            .workspace()
            .search(&ChatId::from_string(chat.clone()), "aurora borealis", 5)
            .await
            .unwrap()
            .hits
            .len(),
        1
    );
    let deleted = app
        .chat_api()
        .delete_document(&chat, &id)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 200);
    assert_eq!(
        deleted.json::<Value>().await.unwrap(),
        json!({"deleted": true, "artifact_id": id})
    );
    assert!(
        app.state
            .workspace()
            .search(&ChatId::from_string(chat.clone()), "aurora borealis", 5)
            .await
            .unwrap()
            .hits
            .is_empty()
    );
    assert_eq!(documents(&app, &chat).await["total"], 0);
    let again = app
        .chat_api()
        .delete_document(&chat, &id)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 404);
    app.upstream.script([Reply::text("ok")]);
    app.send_text(&chat, "aurora?").await;
    assert!(!tool_names(&app.upstream.received()[0].body).contains(&"file_search".to_string()));
}

pub fn tus(builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
    builder.header("Tus-Resumable", "1.0.0")
}

pub fn metadata(filename: &str) -> String {
    format!(
        "filename {}",
        base64::engine::general_purpose::STANDARD.encode(filename)
    )
}

/// Sends a PATCH whose body is cut off after `send` of `declared` bytes, then drops the socket.
async fn interrupted_patch(app: &TestApp, path: &str, offset: u64, body: &[u8], declared: usize) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let address = app.address.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let head = format!(
        "PATCH {path} HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {}\r\n\
         Tus-Resumable: 1.0.0\r\nUpload-Offset: {offset}\r\n\
         Content-Type: application/offset+octet-stream\r\nContent-Length: {declared}\r\n\r\n",
        app.api_key
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body).await.unwrap();
    stream.flush().await.unwrap();
    // The server has the bytes in flight; then the client goes away mid-body.
    tokio::time::sleep(Duration::from_millis(200)).await;
    stream.shutdown().await.ok();
    let mut sink = Vec::new();
    let _ = stream.read_to_end(&mut sink).await;
}

pub async fn offset(app: &TestApp, location: &str) -> u64 {
    let head = tus(app.request(Method::HEAD, location))
        .send()
        .await
        .unwrap();
    assert_eq!(head.status(), 200);
    assert_eq!(head.headers()["cache-control"], "no-store");
    head.headers()["upload-offset"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap()
}

#[actix_web::test]
async fn a_tus_upload_interrupted_midway_resumes_from_its_offset() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    let options = app.chat_api().upload_options(&chat).send().await.unwrap();
    assert_eq!(options.status(), 204);
    assert_eq!(options.headers()["tus-version"], "1.0.0");
    assert_eq!(options.headers()["tus-extension"], "creation,termination");
    assert_eq!(options.headers()["tus-max-size"], "200000000");

    let text: Vec<u8> = (0..4000)
        .map(|i| format!("Line {i}: the quick brown fox studies resumable uploads.\n"))
        .collect::<String>()
        .into_bytes();
    let created = tus(app.chat_api().create_upload(&chat))
        .header("Upload-Length", text.len().to_string())
        .header("Upload-Metadata", metadata("../../etc/big\u{7}notes.txt"))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    assert_eq!(created.headers()["tus-resumable"], "1.0.0");
    let location = created.headers()["location"].to_str().unwrap().to_string();
    let body: Value = created.json().await.unwrap();
    assert_eq!(
        body["filename"], "bignotes.txt",
        "path and control characters are stripped"
    );
    let listed = documents(&app, &chat).await;
    assert_eq!(listed["documents"][0]["status"], "uploading");

    // First part arrives whole.
    let first = tus(app.request(Method::PATCH, &location))
        .header("Upload-Offset", "0")
        .header("Content-Type", "application/offset+octet-stream")
        .body(text[..50_000].to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), 204);
    assert_eq!(first.headers()["upload-offset"], "50000");

    // The second is cut off mid-way: the server keeps what it received.
    interrupted_patch(
        &app,
        &location,
        50_000,
        &text[50_000..120_000],
        text.len() - 50_000,
    )
    .await;
    // The bytes that arrived count.
    let resumed_at: u64 = eventually(
        "the interrupted PATCH's bytes counting",
        Duration::from_secs(10),
        || async {
            let at = offset(&app, &location).await;
            (at == 120_000).then_some(at)
        },
    )
    .await;

    let stale = tus(app.request(Method::PATCH, &location))
        .header("Upload-Offset", "50000")
        .header("Content-Type", "application/offset+octet-stream")
        .body(text[50_000..].to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(stale.status(), 409, "a wrong offset is a conflict");
    let wrong_type = tus(app.request(Method::PATCH, &location))
        .header("Upload-Offset", resumed_at.to_string())
        .header("Content-Type", "application/octet-stream")
        .body(text[resumed_at as usize..].to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(wrong_type.status(), 415);
    let no_version = app.request(Method::HEAD, &location).send().await.unwrap();
    assert_eq!(no_version.status(), 412);

    let rest = tus(app.request(Method::PATCH, &location))
        .header("Upload-Offset", resumed_at.to_string())
        .header("Content-Type", "application/offset+octet-stream")
        .body(text[resumed_at as usize..].to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), 204);
    assert_eq!(
        rest.headers()["upload-offset"],
        text.len().to_string().as_str()
    );
    let list = settled(&app, &chat).await;
    let doc = by_name(&list, "bignotes.txt");
    assert_eq!(doc["status"], "processed", "{doc}");
    assert_eq!(doc["size"], text.len());
    let hits = app
        .state
        .workspace()
        .search(&ChatId::from_string(chat.clone()), "Line 3999", 1)
        .await
        .unwrap()
        .hits;
    assert!(
        hits[0].text.contains("Line 3999"),
        "the end of the file is indexed"
    );
    // Chunked with overlap: a 4000-line file is several chunks.
    let chunks = entities::document_chunks::Entity::find()
        .all(&app.db)
        .await
        .unwrap();
    assert!(chunks.len() > 10, "{}", chunks.len());
    assert!(chunks.iter().all(|c| c.token_count <= 1024));
}

#[actix_web::test]
async fn tus_termination_and_limits_are_enforced_before_storing() {
    let app = spawn_app_with(|c| {
        c.documents.max_file_bytes = 10_000;
        c.documents.max_files_per_chat = 2;
    })
    .await;
    let chat = app.new_chat().await;
    let too_big = tus(app.chat_api().create_upload(&chat))
        .header("Upload-Length", "10001")
        .header("Upload-Metadata", metadata("big.bin"))
        .send()
        .await
        .unwrap();
    assert_eq!(too_big.status(), 413);
    assert_eq!(error_body(too_big).await["code"], "file_too_large");
    let multipart_big = upload(&app, &chat, "big.txt", vec![b'a'; 200_000]).await;
    assert_eq!(multipart_big.status(), 413);
    assert_eq!(
        documents(&app, &chat).await["total"],
        0,
        "nothing was stored"
    );
    let stored: Vec<_> = std::fs::read_dir(app.data_dir.path().join("uploads"))
        .map(|d| d.collect())
        .unwrap_or_default();
    assert!(stored.is_empty(), "no partial file remains: {stored:?}");

    let created = tus(app.chat_api().create_upload(&chat))
        .header("Upload-Length", "100")
        .header("Upload-Metadata", metadata("half.txt"))
        .send()
        .await
        .unwrap();
    let location = created.headers()["location"].to_str().unwrap().to_string();
    let overrun = tus(app.request(Method::PATCH, &location))
        .header("Upload-Offset", "0")
        .header("Content-Type", "application/offset+octet-stream")
        .body(vec![b'x'; 150])
        .send()
        .await
        .unwrap();
    assert_eq!(overrun.status(), 413);
    let terminated = tus(app.request(Method::DELETE, &location))
        .send()
        .await
        .unwrap();
    assert_eq!(terminated.status(), 204);
    let gone = tus(app.request(Method::HEAD, &location))
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 404);
    assert_eq!(documents(&app, &chat).await["total"], 0);

    assert_eq!(
        upload(&app, &chat, "a.txt", b"one".to_vec()).await.status(),
        201
    );
    assert_eq!(
        upload(&app, &chat, "b.txt", b"two".to_vec()).await.status(),
        201
    );
    let third = upload(&app, &chat, "c.txt", b"three".to_vec()).await;
    assert_eq!(third.status(), 409);
    assert_eq!(error_body(third).await["code"], "too_many_documents");
    let third_tus = tus(app.chat_api().create_upload(&chat))
        .header("Upload-Length", "5")
        .send()
        .await
        .unwrap();
    assert_eq!(third_tus.status(), 409);
}

#[actix_web::test]
async fn uploads_racing_for_the_last_place_get_it_once() {
    let app = spawn_app_with(|c| c.documents.max_files_per_chat = 3).await;
    let chat = app.new_chat().await;
    for name in ["a.txt", "b.txt"] {
        assert_eq!(
            upload(&app, &chat, name, b"text".to_vec()).await.status(),
            201
        );
    }
    // Eight uploads at once, each with a body large enough (2.4 MB) to be received in many reads:
    // all pass the early count, and only one may take the third place.
    let racing = (0..8).map(|i| {
        let (app, chat) = (&app, &chat);
        async move {
            let body = format!("racer {i} ").repeat(300_000).into_bytes();
            upload(app, chat, &format!("racer-{i}.txt"), body).await
        }
    });
    let responses = futures_util::future::join_all(racing).await;
    let mut statuses: Vec<u16> = responses.iter().map(|r| r.status().as_u16()).collect();
    statuses.sort();
    assert_eq!(statuses, [201, 409, 409, 409, 409, 409, 409, 409]);
    for response in responses {
        if response.status() == 409 {
            assert_eq!(error_body(response).await["code"], "too_many_documents");
        }
    }
    assert_eq!(documents(&app, &chat).await["total"], 3);
    // Refused uploads leave no file behind.
    let uploads = std::fs::read_dir(app.state.workspace().uploads_dir())
        .map(|dir| dir.count())
        .unwrap_or_default();
    assert_eq!(uploads, 0);
}

#[actix_web::test]
async fn long_text_is_truncated_with_a_warning() {
    let app = spawn_app_with(|c| c.documents.max_text_chars = 1_000).await;
    let chat = app.new_chat().await;
    let text = "word ".repeat(1_000) + "ENDMARKER";
    upload(&app, &chat, "long.txt", text.into_bytes()).await;
    let list = settled(&app, &chat).await;
    let doc = by_name(&list, "long.txt");
    assert_eq!(doc["status"], "processed");
    assert!(
        doc["warning"].as_str().unwrap().contains("truncated"),
        "{doc}"
    );
    let hits = app
        .state
        .workspace()
        .search(&ChatId::from_string(chat.clone()), "ENDMARKER", 5)
        .await
        .unwrap()
        .hits;
    assert!(hits.iter().all(|h| !h.text.contains("ENDMARKER")));
}

#[actix_web::test]
async fn documents_are_private_and_the_index_is_rebuilt_from_the_database() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    upload(
        &app,
        &chat,
        "secret.md",
        b"The launch code word is pineapple.".to_vec(),
    )
    .await;
    settled(&app, &chat).await;
    let other = app.new_chat().await;
    assert_eq!(documents(&app, &other).await["total"], 0);
    assert!(
        app.state
            .workspace()
            .search(&ChatId::from_string(other.clone()), "pineapple", 5)
            .await
            .unwrap()
            .hits
            .is_empty()
    );
    let key = app.create_user_with_key("eve").await;
    let list = app
        .as_key(&key)
        .chat_api()
        .documents(&chat)
        .send()
        .await
        .unwrap();
    assert_eq!(list.status(), 404);
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(b"x".to_vec()).file_name("x.txt"),
    );
    let planted = app
        .as_key(&key)
        .chat_api()
        .upload_document(&chat)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(planted.status(), 404);
    let tus_planted = app
        .as_key(&key)
        .chat_api()
        .create_upload(&chat)
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Length", "1")
        .send()
        .await
        .unwrap();
    assert_eq!(tus_planted.status(), 404);

    // The index directory is lost (or corrupted) while the server is down: rebuilt on use.
    let data = app.data_dir.path().to_path_buf();
    let app = app.restart().await;
    let index_dir = data.join("indexes").join(&chat);
    std::fs::remove_dir_all(&index_dir).unwrap();
    let hits = app
        .state
        .workspace()
        .search(&ChatId::from_string(chat.clone()), "launch code word", 5)
        .await
        .unwrap()
        .hits;
    assert_eq!(hits.len(), 1);
    assert!(hits[0].text.contains("pineapple"));
    assert!(index_dir.exists());
}

#[actix_web::test]
async fn switching_embedders_re_embeds_document_chunks() {
    let app =
        spawn_app_with(|c| c.memory.embedder = Some(colloquy::config::EmbedderKind::OpenAi)).await;
    let chat = app.new_chat().await;
    upload(
        &app,
        &chat,
        "glacier.txt",
        b"Glaciers carve fjords over thousands of years.".to_vec(),
    )
    .await;
    settled(&app, &chat).await;
    let chunk = || async {
        entities::document_chunks::Entity::find()
            .one(&app.db)
            .await
            .unwrap()
            .unwrap()
    };
    assert_eq!(
        chunk().await.embedder.as_deref(),
        Some("openai:nomic-embed-text")
    );
    let mut config = app.config.clone();
    config.memory.embedder = Some(colloquy::config::EmbedderKind::Hash);
    let app = crate::helpers::restart_with(app, config).await;
    // Opening the chat's index finds the vectors of another embedder and re-embeds them.
    app.state
        .workspace()
        .index(&ChatId::from_string(chat.clone()))
        .await
        .unwrap();
    // The chunk is stored again with the new embedder's vector...
    let stored = eventually(
        "re-embedding the document",
        Duration::from_secs(20),
        || async {
            let stored = entities::document_chunks::Entity::find()
                .all(&app.db)
                .await
                .unwrap();
            let done = !stored.is_empty()
                && stored
                    .iter()
                    .all(|c| c.embedder.as_deref() == Some("hash-v1-384"));
            done.then_some(stored)
        },
    )
    .await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].embedder.as_deref(), Some("hash-v1-384"));
    // ... and found by search.
    let hits = eventually(
        "finding the re-embedded document",
        Duration::from_secs(20),
        || async {
            let hits = app
                .state
                .workspace()
                .search(
                    &ChatId::from_string(chat.clone()),
                    "glaciers carve fjords",
                    5,
                )
                .await
                .unwrap()
                .hits;
            (!hits.is_empty()).then_some(hits)
        },
    )
    .await;
    assert!(hits[0].text.contains("fjords"));
}

#[actix_web::test]
async fn documents_belong_to_the_chat_not_a_branch() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    app.upstream
        .script([Reply::text("Hi."), Reply::text("Edited answer.")]);
    app.send_text(&chat, "first question").await;
    upload(
        &app,
        &chat,
        "atlas.md",
        b"The atlas lists every lighthouse on the coast.".to_vec(),
    )
    .await;
    settled(&app, &chat).await;
    // Editing the first message starts a branch that forks before the upload happened.
    let messages: Value = app.chat_api().messages(&chat).read_json().await;
    let first_id = messages["data"][0]["id"].as_str().unwrap().to_string();
    let edit = app
        .chat_api()
        .edit_message(&chat, &first_id)
        .json(&json!({"content": "which lighthouse is in the atlas?"}))
        .call()
        .await;
    assert_eq!(edit.status(), 200);
    read_all(edit).await;
    let sent = &app.upstream.received()[1].body;
    assert!(tool_names(sent).contains(&"file_search".to_string()));
    assert!(
        sent["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("atlas.md")
    );
}

#[actix_web::test]
async fn expired_uploads_are_swept_with_their_partial_files() {
    use sea_orm::{ActiveModelTrait, Set};
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    let created = tus(app.chat_api().create_upload(&chat))
        .header("Upload-Length", "10")
        .header("Upload-Metadata", metadata("slow.txt"))
        .send()
        .await
        .unwrap();
    let location = created.headers()["location"].to_str().unwrap().to_string();
    let upload_id = location.rsplit('/').next().unwrap().to_string();
    let row = entities::uploads::Entity::find_by_id(UploadId::from_string(upload_id))
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    let part = std::path::PathBuf::from(&row.storage_path);
    assert!(part.exists());
    let mut expired: entities::uploads::ActiveModel = row.into();
    expired.expires_at = Set(chrono::Utc::now() - chrono::Duration::seconds(1));
    expired.update(&app.db).await.unwrap();
    let gone = tus(app.request(Method::HEAD, &location))
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 410);
    assert_eq!(
        app.state.workspace().sweep_expired_uploads().await.unwrap(),
        1
    );
    assert!(!part.exists());
    assert_eq!(documents(&app, &chat).await["total"], 0);
    let after = tus(app.request(Method::HEAD, &location))
        .send()
        .await
        .unwrap();
    assert_eq!(after.status(), 404);
}

/// A Markdown handbook with a title and sections.
const HANDBOOK: &str = "# Staff handbook\n\nWelcome to the company.\n\n## Leave\n\n\
    Holidays are requested two weeks ahead through the portal.\n\n## Expenses\n\n\
    Receipts are scanned and filed within a month.\n";

#[actix_web::test]
async fn search_results_name_the_heading_path_of_their_passage() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    upload(&app, &chat, "handbook.md", HANDBOOK.as_bytes().to_vec()).await;
    upload(
        &app,
        &chat,
        "notes.txt",
        b"Leave the keys at the desk.".to_vec(),
    )
    .await;
    settled(&app, &chat).await;
    let hits = app
        .state
        .workspace()
        .search(&ChatId::from_string(chat.clone()), "requesting holidays", 5)
        .await
        .unwrap()
        .hits;
    assert_eq!(hits[0].filename, "handbook.md");
    // One chunk holds the whole file: known by its title (its sections are in its headings).
    assert_eq!(hits[0].heading_path.as_deref(), Some("Staff handbook"));
    let notes = hits.iter().find(|h| h.filename == "notes.txt");
    assert!(notes.is_none_or(|h| h.heading_path.is_none()), "{hits:?}");
    // A title word finds the handbook through its headings field.
    let hits = app
        .state
        .workspace()
        .search(&ChatId::from_string(chat.clone()), "expenses", 5)
        .await
        .unwrap()
        .hits;
    assert_eq!(hits[0].filename, "handbook.md");

    app.upstream.script([
        Reply::tool_call("fs1", "file_search", json!({"query": "holiday requests"})),
        Reply::text("Two weeks ahead."),
    ]);
    app.send_text(&chat, "How do I ask for holidays?").await;
    let received = app.upstream.received();
    let last = received.last().unwrap();
    let result: Value = serde_json::from_str(
        last.body["messages"].as_array().unwrap().last().unwrap()["content"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    let first = &result["results"][0];
    assert_eq!(first["filename"], "handbook.md", "{result}");
    assert_eq!(first["heading_path"], "Staff handbook", "{result}");
}

#[actix_web::test]
async fn an_index_from_before_stems_and_headings_is_searchable_while_it_is_rebuilt() {
    use sea_orm::{ColumnTrait, QueryFilter};
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    upload(&app, &chat, "handbook.md", HANDBOOK.as_bytes().to_vec()).await;
    let list = settled(&app, &chat).await;
    assert_eq!(list["documents"][0]["status"], "processed", "{list}");
    let rows = entities::document_chunks::Entity::find()
        .filter(entities::document_chunks::Column::ChatId.eq(chat.as_str()))
        .all(&app.db)
        .await
        .unwrap();
    assert!(
        rows[0].headings.is_some(),
        "the chunk's headings are stored"
    );
    let chunks: Vec<colloquy::retrieval::index::IndexedChunk> = rows
        .iter()
        .map(|row| colloquy::retrieval::index::IndexedChunk {
            chunk_id: row.id.clone(),
            document_id: row.document_id.clone(),
            filename: "handbook.md".into(),
            text: row.text.clone(),
            headings: Default::default(),
            vector: Vec::new(),
        })
        .collect();

    // As an upgrade finds it: the index on disk in the old layout.
    let data = app.data_dir.path().to_path_buf();
    let app = app.restart().await;
    let index_dir = data.join("indexes").join(&chat);
    std::fs::remove_dir_all(&index_dir).unwrap();
    colloquy::retrieval::index::write_legacy_index(&index_dir, &chunks).unwrap();

    let search = |query: &'static str| {
        let app = &app;
        let chat = ChatId::from_string(chat.clone());
        async move {
            app.state
                .workspace()
                .search(&chat, query, 5)
                .await
                .unwrap()
                .hits
        }
    };
    // Searchable at once, whether the rebuild has finished or not.
    let hits = search("requested holidays").await;
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert!(hits[0].text.contains("two weeks ahead"));
    // Rebuilt in today's layout in the background: the heading path comes back.
    let upgraded = eventually("the index rebuilt", Duration::from_secs(30), || async {
        let hits = search("requested holidays").await;
        hits.first()
            .and_then(|hit| hit.heading_path.clone())
            .map(|path| (path, hits.len()))
    })
    .await;
    assert_eq!(upgraded, ("Staff handbook".to_string(), 1));
    let mut siblings: Vec<String> = std::fs::read_dir(data.join("indexes"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(chat.as_str()))
        .collect();
    siblings.sort();
    assert_eq!(
        siblings,
        std::slice::from_ref(&chat),
        "no staging directory is left"
    );
    // A document added after the upgrade is searchable with the rest.
    upload(
        &app,
        &chat,
        "rota.txt",
        b"The rota is posted on Mondays.".to_vec(),
    )
    .await;
    settled(&app, &chat).await;
    assert_eq!(search("rota posted").await[0].filename, "rota.txt");
}
