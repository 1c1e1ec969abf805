//! The Responses API's state and its edges over plain HTTP: `store: false` keeps nothing,
//! what is forwarded (`text.format`, sampling) and echoed (`metadata`), refusals, the stream's
//! headers and numbering, a UI chat used as a conversation and as a vector store, and the
//! files and vector stores' limits and lifecycle.

use sea_orm::{EntityTrait, PaginatorTrait};
use serde_json::{Value, json};

use crate::client::Call;
use crate::documents::{settled, upload};
use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, error_body, eventually, spawn_app, spawn_app_with};
use crate::sse::read_all;

async fn count<E: EntityTrait>(app: &TestApp) -> u64
where
    E::Model: Sync,
{
    E::find().count(&app.db).await.unwrap()
}

async fn upload_file(app: &TestApp, name: &str, bytes: &[u8], purpose: &str) -> reqwest::Response {
    let form = reqwest::multipart::Form::new()
        .text("purpose", purpose.to_string())
        .part(
            "file",
            reqwest::multipart::Part::bytes(bytes.to_vec()).file_name(name.to_string()),
        );
    app.openai()
        .upload_file()
        .multipart(form)
        .send()
        .await
        .unwrap()
}

#[actix_web::test]
async fn store_false_keeps_nothing_and_the_request_reaches_the_model_as_asked() {
    let app = spawn_app().await;
    app.upstream
        .script([Reply::text("{\"ok\": true}"), Reply::text("Hi.")]);
    let schema = json!({"type": "json_schema", "name": "answer", "strict": true,
        "schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}});
    let response = app
        .openai()
        .create_response()
        .json(
            &json!({"model": "fake-model", "input": "Is it ok?", "store": false,
                    "text": {"format": schema}, "temperature": 0.2, "max_output_tokens": 50,
                    "metadata": {"ticket": "T-1"}, "include": ["reasoning.encrypted_content"]}),
        )
        .call()
        .await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["store"], false);
    assert_eq!(body["metadata"], json!({"ticket": "T-1"}));
    assert_eq!(body["output_text"], "{\"ok\": true}");
    assert!(body.get("x_chat_id").is_none());
    let sent = &app.upstream.received()[0].body;
    assert_eq!(sent["response_format"]["type"], "json_schema");
    assert_eq!(sent["response_format"]["json_schema"]["name"], "answer");
    assert_eq!(sent["max_tokens"], 50);
    assert!((sent["temperature"].as_f64().unwrap() - 0.2).abs() < 1e-6);
    // Nothing was kept: no chat, no message, no stored response.
    assert_eq!(count::<entities::chats::Entity>(&app).await, 0);
    assert_eq!(count::<entities::messages::Entity>(&app).await, 0);
    assert_eq!(count::<entities::responses::Entity>(&app).await, 0);
    let id = body["id"].as_str().unwrap();
    assert_eq!(app.openai().response(id).call().await.status(), 404);

    // Stored (the default): a chat and a response, retrievable.
    let stored: Value = app
        .openai()
        .create_response()
        .json(&json!({"input": "Hello"}))
        .read_json()
        .await;
    assert_eq!(stored["store"], true);
    let id = stored["id"].as_str().unwrap();
    let again = eventually(
        "the stored response",
        std::time::Duration::from_secs(10),
        || {
            let app = &app;
            async move {
                let body: Value = app.openai().response(id).call().await.json().await.ok()?;
                (body["status"] == "completed").then_some(body)
            }
        },
    )
    .await;
    assert_eq!(again["output_text"], "Hi.");
    assert_eq!(again["x_chat_id"], stored["x_chat_id"]);
}

#[actix_web::test]
async fn what_cannot_be_honoured_is_refused_by_name() {
    let app = spawn_app().await;
    for (body, words) in [
        (
            json!({"input": "x", "include": ["nonsense.value"]}),
            "include",
        ),
        (
            json!({"input": "x", "previous_response_id": "resp_1", "conversation": "c"}),
            "cannot both",
        ),
        (
            json!({"input": "x", "tools": [{"type": "computer_use_preview"}]}),
            "not supported",
        ),
        (
            json!({"input": "x", "tools": [{"type": "function", "name": "bad name!"}]}),
            "name",
        ),
        (
            json!({"input": "x", "text": {"format": {"type": "yaml"}}}),
            "text.format",
        ),
        (json!({"input": "x", "metadata": {"k": 1}}), "metadata"),
        (
            json!({"input": [{"type": "item_reference", "id": "msg_nope"}]}),
            "item_reference",
        ),
        (
            json!({"input": "x", "previous_response_id": "resp_nope"}),
            "response",
        ),
        (json!({"input": []}), "input"),
        (json!({"input": "x", "background": true}), "background"),
    ] {
        let response = app.openai().create_response().json(&body).call().await;
        let status = response.status().as_u16();
        let error = error_body(response).await;
        assert!(status == 400 || status == 404, "{body}: {status}");
        let message = error["message"].as_str().unwrap_or_default().to_lowercase();
        assert!(message.contains(words), "{body}: {error}");
    }
    assert!(app.upstream.received().is_empty(), "nothing ran");
    assert_eq!(count::<entities::responses::Entity>(&app).await, 0);
}

#[actix_web::test]
async fn a_stream_is_numbered_unbuffered_and_ends_failed_when_the_run_fails() {
    let app = spawn_app().await;
    app.upstream
        .script([Reply::text("Fine."), Reply::status(400, "bad request")]);
    let response = app
        .openai()
        .create_response()
        .json(&json!({"input": "Hi", "stream": true}))
        .call()
        .await;
    assert_eq!(response.headers()["x-accel-buffering"], "no");
    assert_eq!(response.headers()["cache-control"], "no-cache");
    let frames = read_all(response).await;
    let payloads: Vec<Value> = frames.iter().map(|f| f.json()).collect();
    for (n, payload) in payloads.iter().enumerate() {
        assert_eq!(payload["sequence_number"], n, "{payload}");
    }
    let kinds: Vec<&str> = payloads
        .iter()
        .map(|p| p["type"].as_str().unwrap())
        .collect();
    assert!(kinds.iter().all(|k| !k.starts_with("x_")), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"response.completed"));
    let usage = &payloads.last().unwrap()["response"]["usage"];
    assert!(usage["total_tokens"].as_u64().unwrap() > 0, "{usage}");

    let failed = app
        .openai()
        .create_response()
        .json(&json!({"input": "Again", "stream": true, "store": false, "x_events": true}))
        .call()
        .await;
    let frames = read_all(failed).await;
    let kinds: Vec<String> = frames
        .iter()
        .map(|f| f.json()["type"].as_str().unwrap().to_string())
        .collect();
    assert!(kinds.contains(&"error".to_string()), "{kinds:?}");
    // Asked for, Colloquy's own events come too.
    assert!(kinds.contains(&"x_chat.metadata".to_string()), "{kinds:?}");
    assert_eq!(kinds.last().map(String::as_str), Some("response.failed"));
    assert!(!kinds.contains(&"response.completed".to_string()));
}

#[actix_web::test]
async fn a_chat_from_the_ui_is_a_conversation_and_its_documents_a_vector_store() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    app.upstream
        .script([Reply::text("Noted."), Reply::text("You said hello.")]);
    app.send_text(&chat, "hello").await;

    // The chat as a conversation: its items are its messages, and a response continues it.
    let conversation: Value = app.openai().conversation(&chat).read_json().await;
    assert_eq!(conversation["object"], "conversation");
    let items: Value = app
        .openai()
        .conversation_items(&chat)
        .with_query("order=asc")
        .read_json()
        .await;
    let roles: Vec<&str> = items["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant"]);
    let continued: Value = app
        .openai()
        .create_response()
        .json(&json!({"input": "What did I say?", "conversation": chat}))
        .read_json()
        .await;
    assert_eq!(continued["output_text"], "You said hello.");
    assert_eq!(continued["conversation"]["id"], chat.as_str());
    let sent = app.upstream.received().last().unwrap().body.clone();
    assert!(
        sent.to_string().contains("hello"),
        "the chat's history: {sent}"
    );

    // Its documents are a vector store, named in the documents list.
    let uploaded = upload(
        &app,
        &chat,
        "notes.md",
        b"Kestrels hover over meadows.".to_vec(),
    )
    .await;
    assert_eq!(uploaded.status(), 201);
    let list = settled(&app, &chat).await;
    let store = list["vector_store_id"].as_str().unwrap().to_string();
    assert_eq!(store, format!("vs_{chat}"));
    let found: Value = app
        .openai()
        .search_vector_store(&store)
        .json(&json!({"query": "kestrels", "max_num_results": 3}))
        .read_json()
        .await;
    assert_eq!(found["object"], "vector_store.search_results.page");
    assert_eq!(found["data"][0]["filename"], "notes.md");
    assert!(
        found["data"][0]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Kestrels")
    );
    let score = found["data"][0]["score"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&score));
    let described: Value = app.openai().vector_store(&store).read_json().await;
    assert_eq!(described["file_counts"]["completed"], 1);
    // Deleting the store empties the chat's documents; the chat stays.
    let deleted = app
        .openai()
        .delete_vector_store(&store)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 200);
    assert_eq!(settled(&app, &chat).await["documents"], json!([]));
    assert_eq!(app.openai().conversation(&chat).call().await.status(), 200);
}

#[actix_web::test]
async fn files_and_vector_stores_keep_their_limits_and_report_each_files_status() {
    let app = spawn_app_with(|config| {
        config.documents.max_file_bytes = 1_000;
        config.documents.max_files_per_knowledge_base = 2;
    })
    .await;
    let too_big = upload_file(&app, "big.txt", &[b'a'; 1_001], "assistants").await;
    assert_eq!(too_big.status(), 413);
    assert_eq!(error_body(too_big).await["code"], "file_too_large");
    let bad_purpose = upload_file(&app, "a.txt", b"text", "fine-tune").await;
    assert_eq!(bad_purpose.status(), 400);
    assert_eq!(
        count::<entities::files::Entity>(&app).await,
        0,
        "nothing kept"
    );

    let mut ids = Vec::new();
    for (name, bytes) in [
        ("one.md", b"First file about owls.".to_vec()),
        ("two.md", b"Second file about hawks.".to_vec()),
        ("three.md", b"Third file about eagles.".to_vec()),
        // A PDF that is not one: processing fails, and the store says so.
        ("broken.pdf", b"%PDF-1.7\nthis is not really a PDF".to_vec()),
    ] {
        let response = upload_file(&app, name, &bytes, "user_data").await;
        assert_eq!(response.status(), 200);
        let file: Value = response.json().await.unwrap();
        assert_eq!(file["object"], "file");
        assert_eq!(file["bytes"], bytes.len());
        ids.push(file["id"].as_str().unwrap().to_string());
    }
    let content = app.openai().file_content(&ids[0]).call().await;
    assert_eq!(
        content.bytes().await.unwrap().as_ref(),
        b"First file about owls."
    );

    let store: Value = app
        .openai()
        .create_vector_store()
        .json(&json!({"name": "Birds", "file_ids": [ids[0], ids[3]],
            "metadata": {"team": "birds"}}))
        .read_json()
        .await;
    let store_id = store["id"].as_str().unwrap().to_string();
    assert_eq!(store["name"], "Birds");
    assert_eq!(store["metadata"], json!({"team": "birds"}));
    let files = eventually(
        "the store's files settling",
        std::time::Duration::from_secs(60),
        || {
            let (app, store_id) = (&app, &store_id);
            async move {
                let files: Value = app
                    .openai()
                    .vector_store_files(store_id)
                    .with_query("order=asc")
                    .call()
                    .await
                    .json()
                    .await
                    .ok()?;
                let settled = files["data"]
                    .as_array()?
                    .iter()
                    .all(|f| f["status"] != "in_progress");
                settled.then_some(files)
            }
        },
    )
    .await;
    let statuses: Vec<(&str, &str)> = files["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["id"].as_str().unwrap(), f["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        statuses,
        [(ids[0].as_str(), "completed"), (ids[3].as_str(), "failed")]
    );
    assert!(files["data"][1]["last_error"]["message"].is_string());

    // The store holds at most max_files_per_knowledge_base (it is a knowledge base).
    let full = app
        .openai()
        .add_vector_store_file(&store_id)
        .json(&json!({"file_id": ids[1]}))
        .call()
        .await;
    assert_eq!(full.status(), 409, "{:?}", full.text().await);

    // A file removed from the store is no longer found; the file itself stays.
    let removed = app
        .openai()
        .delete_vector_store_file(&store_id, &ids[0])
        .send()
        .await
        .unwrap();
    assert_eq!(removed.status(), 200);
    let found: Value = app
        .openai()
        .search_vector_store(&store_id)
        .json(&json!({"query": "owls"}))
        .read_json()
        .await;
    assert_eq!(found["data"], json!([]));
    assert_eq!(app.openai().file(&ids[0]).call().await.status(), 200);
    let listed: Value = app.openai().vector_stores().read_json().await;
    assert_eq!(listed["data"][0]["id"], store_id.as_str());
    let deleted = app.openai().delete_file(&ids[0]).send().await.unwrap();
    assert_eq!(deleted.status(), 200);
    assert_eq!(app.openai().file(&ids[0]).call().await.status(), 404);
}

#[actix_web::test]
async fn a_response_cut_off_by_a_restart_says_so_when_retrieved() {
    use futures_util::StreamExt;
    let app = spawn_app().await;
    app.upstream
        .script([Reply::text("one two three four five")
            .stall_after(3, std::time::Duration::from_secs(30))]);
    let response = app
        .openai()
        .create_response()
        .json(&json!({"input": "Count", "stream": true}))
        .call()
        .await;
    let mut body = response.bytes_stream();
    let mut seen = String::new();
    let id = loop {
        let chunk = body.next().await.expect("the stream").unwrap();
        seen.push_str(&String::from_utf8_lossy(&chunk));
        let created = seen
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter_map(|d| serde_json::from_str::<Value>(d).ok())
            .find(|p| p["type"] == "response.created");
        if let Some(created) = created {
            break created["response"]["id"].as_str().unwrap().to_string();
        }
    };
    let running: Value = app.openai().response(&id).read_json().await;
    assert_eq!(running["status"], "in_progress");
    drop(body);

    let app = app.restart().await;
    let retrieved: Value = app.openai().response(&id).read_json().await;
    assert_eq!(retrieved["status"], "failed", "{retrieved}");
    assert_eq!(retrieved["error"]["code"], "interrupted");
    assert_eq!(retrieved["output"][0]["type"], "message");
    // It is kept as it was told.
    let again: Value = app.openai().response(&id).read_json().await;
    assert_eq!(again, retrieved);
}

/// The ids of one page of `GET /v1/vector_stores` with `query`, and its `has_more`.
async fn store_page(app: &TestApp, query: &str) -> (Vec<String>, bool) {
    let page: Value = app
        .openai()
        .vector_stores()
        .with_query(query)
        .read_json()
        .await;
    let ids = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|store| store["id"].as_str().unwrap().to_string())
        .collect::<Vec<_>>();
    assert_eq!(page["first_id"], json!(ids.first()));
    assert_eq!(page["last_id"], json!(ids.last()));
    (ids, page["has_more"].as_bool().unwrap())
}

#[actix_web::test]
async fn vector_stores_page_by_cursor_in_either_order_past_the_first_page() {
    let app = spawn_app_with(|config| {
        config.documents.max_knowledge_bases_per_user = 130;
    })
    .await;
    let mut made = Vec::new();
    for n in 0..125 {
        let store: Value = app
            .openai()
            .create_vector_store()
            .json(&json!({"name": format!("store {n}")}))
            .read_json()
            .await;
        made.push(store["id"].as_str().unwrap().to_string());
    }
    // Newest first by default, 20 a page; each page starts after the last one's `last_id`.
    let (first, more) = store_page(&app, "").await;
    assert_eq!(first.len(), 20);
    assert!(more);
    let mut newest_first = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let query = match &after {
            Some(id) => format!("limit=40&after={id}"),
            None => "limit=40".to_string(),
        };
        let (ids, more) = store_page(&app, &query).await;
        assert!(ids.len() <= 40);
        after = ids.last().cloned();
        newest_first.extend(ids);
        if !more {
            break;
        }
    }
    assert_eq!(
        newest_first.len(),
        125,
        "every store once, none past the 100th lost"
    );
    assert_eq!(&newest_first[..20], &first[..]);
    let mut oldest_first = made.clone();
    oldest_first.reverse();
    assert_eq!(newest_first, oldest_first);
    // `order=asc` walks them the other way, and a store made meanwhile neither repeats nor skips.
    let (page, more) = store_page(&app, "order=asc&limit=100").await;
    assert_eq!(page, made[..100]);
    assert!(more);
    let late: Value = app
        .openai()
        .create_vector_store()
        .json(&json!({"name": "late"}))
        .read_json()
        .await;
    let query = format!("order=asc&limit=100&after={}", page[99]);
    let (rest, more) = store_page(&app, &query).await;
    let mut expected = made[100..].to_vec();
    expected.push(late["id"].as_str().unwrap().to_string());
    assert_eq!(rest, expected);
    assert!(!more);
    // A cursor that names no store of the caller's, and limits past 1-100, are refused.
    let bob = app.create_user_with_key("bob").await;
    let bobs: Value = app
        .as_key(&bob)
        .openai()
        .create_vector_store()
        .json(&json!({"name": "bob's"}))
        .read_json()
        .await;
    let bobs = format!("after={}", bobs["id"].as_str().unwrap());
    for query in [
        bobs.as_str(),
        "after=vs_nothing",
        "limit=0",
        "limit=101",
        "order=sideways",
    ] {
        let response = app.openai().vector_stores().with_query(query).call().await;
        assert_eq!(response.status(), 400, "{query:?}");
        assert_eq!(
            error_body(response).await["code"],
            "invalid_request",
            "{query:?}"
        );
    }
}
