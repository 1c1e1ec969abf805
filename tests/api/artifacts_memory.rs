//! Artifacts and per-chat memory: the tools over the real loop against the fake upstream,
//! their REST APIs, passive memory injection, and everything surviving passivation and a
//! restart while staying invisible to other chats and users.

use entities::ids::ChatId;
use std::time::Duration;

use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, error_body, eventually, spawn_app, spawn_app_with};
use crate::sse::Frame;

fn events(frames: &[Frame], kind: &str) -> Vec<Value> {
    frames
        .iter()
        .map(Frame::json)
        .filter(|j| j["type"] == kind)
        .collect()
}

/// The tool messages the upstream received in its last request, parsed as JSON.
fn tool_messages_sent(app: &TestApp) -> Vec<Value> {
    let received = app.upstream.received();
    let last = received.last().expect("the upstream was called");
    last.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
        .collect()
}

fn create(identifier: &str, content: &str) -> Reply {
    Reply::tool_call(
        "call_create",
        "create_artifact",
        json!({"identifier": identifier, "title": "Fibonacci Generator",
               "type": "text/x-python", "language": "python", "content": content}),
    )
}

fn update(identifier: &str, content: &str) -> Reply {
    Reply::tool_call(
        "call_update",
        "update_artifact",
        json!({"identifier": identifier, "content": content}),
    )
}

#[actix_web::test]
async fn an_artifact_created_and_updated_twice_keeps_every_version() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    app.upstream.script([
        create("fibonacci.py", "def fib(): pass  # v1\n"),
        Reply::text("Created it."),
        update("fibonacci.py", "def fib(): return 1  # v2\n"),
        Reply::text("Updated."),
        update("fibonacci.py", "def fib(): return 2  # v3\n"),
        Reply::text("Updated again."),
    ]);
    let first = app.send_text(&chat, "Write a Fibonacci generator").await;
    assert_eq!(
        events(&first, "x_artifact.created"),
        [
            json!({"type": "x_artifact.created", "identifier": "fibonacci.py",
                "title": "Fibonacci Generator", "version": 1})
        ]
    );
    let created = &tool_messages_sent(&app)[0];
    assert_eq!(created["status"], "created");
    assert_eq!(created["version"], 1);
    let second = app.send_text(&chat, "Return 1").await;
    assert_eq!(
        events(&second, "x_artifact.updated"),
        [json!({"type": "x_artifact.updated", "identifier": "fibonacci.py", "version": 2})]
    );
    let third = app.send_text(&chat, "Return 2").await;
    assert_eq!(events(&third, "x_artifact.updated")[0]["version"], 3);

    let list: Value = app.chat_api().artifacts(&chat).read_json().await;
    assert_eq!(list["total"], 1);
    let item = &list["artifacts"][0];
    assert_eq!(item["identifier"], "fibonacci.py");
    assert_eq!(item["version"], 3);
    assert_eq!(item["type"], "text/x-python");
    assert_eq!(item["language"], "python");
    let id = item["id"].as_str().unwrap().to_string();

    let one: Value = app.chat_api().artifact(&chat, &id).read_json().await;
    let versions: Vec<i64> = one["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_i64().unwrap())
        .collect();
    assert_eq!(versions, [1, 2, 3]);
    assert_eq!(one["content"], "def fib(): return 2  # v3\n");
    // Each version points at the assistant message that delivered it.
    assert!(
        one["versions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|v| v["message_id"].is_string())
    );

    let by_identifier: Value = app
        .chat_api()
        .artifact_version(&chat, "fibonacci.py", "2")
        .read_json()
        .await;
    assert_eq!(by_identifier["content"], "def fib(): return 1  # v2\n");
    assert_eq!(by_identifier["latest_version"], 3);
    let missing = app
        .chat_api()
        .artifact_version(&chat, &id, "4")
        .call()
        .await;
    assert_eq!(missing.status(), 404);

    let raw = app.chat_api().artifact_raw(&chat, &id).call().await;
    assert_eq!(raw.status(), 200);
    assert_eq!(
        raw.headers()["content-type"],
        "text/x-python; charset=utf-8"
    );
    let disposition = raw.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        disposition.contains("attachment") && disposition.contains("fibonacci.py"),
        "{disposition}"
    );
    assert_eq!(raw.text().await.unwrap(), "def fib(): return 2  # v3\n");
    let raw_v1 = app
        .chat_api()
        .artifact_version_raw(&chat, &id, "1")
        .call()
        .await;
    assert_eq!(raw_v1.text().await.unwrap(), "def fib(): pass  # v1\n");

    // Each answer carries its version as a message part; the events are not stored.
    let messages: Value = app.chat_api().messages(&chat).read_json().await;
    let parts: Vec<Value> = messages["data"]
        .as_array()
        .unwrap()
        .iter()
        // The stored answers, not their runs' tool exchanges (`toolCalls` messages).
        .filter(|m| m["role"] == "assistant" && m.get("toolCalls").is_none())
        .map(|m| m["parts"][0].clone())
        .collect();
    assert_eq!(parts.len(), 3, "{messages}");
    assert_eq!(parts[0]["type"], "artifact");
    assert_eq!(parts[0]["version"], 1);
    assert_eq!(parts[0]["content"], "def fib(): pass  # v1\n");
    assert_eq!(parts[2]["version"], 3);
    assert_eq!(parts[2]["mime_type"], "text/x-python");
    assert!(!messages.to_string().contains("x_artifact"));

    let deleted = app
        .chat_api()
        .delete_artifact(&chat, &id)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 200);
    let gone = app.chat_api().artifact(&chat, &id).call().await;
    assert_eq!(gone.status(), 404);
    assert_eq!(error_body(gone).await["code"], "not_found");
}

#[actix_web::test]
async fn create_then_update_in_one_run_is_one_part_at_the_latest_version() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    app.upstream.script([
        create("notes.md", "v1"),
        update("notes.md", "v2"),
        Reply::text("Done."),
    ]);
    app.send_text(&chat, "Draft and revise").await;
    let messages: Value = app.chat_api().messages(&chat).read_json().await;
    // After the tool exchange, the stored answer.
    let answer = messages["data"].as_array().unwrap().last().unwrap();
    assert_eq!(answer["parts"].as_array().unwrap().len(), 1, "{answer}");
    assert_eq!(answer["parts"][0]["version"], 2);
    assert_eq!(answer["parts"][0]["content"], "v2");
}

#[actix_web::test]
async fn a_duplicate_identifier_or_bad_input_is_an_error_result_that_names_the_fix() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    app.upstream.script([
        create("main.rs", "fn main() {}"),
        create("main.rs", "fn main() { println!() }"),
        Reply::tool_call(
            "c3",
            "update_artifact",
            json!({"identifier": "nope", "content": "x"}),
        ),
        Reply::tool_call(
            "c4",
            "create_artifact",
            json!({"identifier": "bad id!", "title": "t",
            "type": "text/plain", "content": "x"}),
        ),
        Reply::tool_call(
            "c5",
            "create_artifact",
            json!({"identifier": "zip", "title": "t",
            "type": "application/zip", "content": "x"}),
        ),
        Reply::text("I could only create one."),
    ]);
    let frames = app.send_text(&chat, "Write main.rs").await;
    assert_eq!(events(&frames, "x_artifact.created").len(), 1);
    let received = app.upstream.received();
    let tool_result = |request: usize| -> Value {
        let messages = received[request].body["messages"].as_array().unwrap();
        let tool = messages.iter().rev().find(|m| m["role"] == "tool").unwrap();
        serde_json::from_str(tool["content"].as_str().unwrap()).unwrap()
    };
    let duplicate = tool_result(2);
    assert_eq!(duplicate["code"], "artifact_exists", "{duplicate}");
    assert!(
        duplicate["suggestion"]
            .as_str()
            .unwrap()
            .contains("update_artifact")
    );
    assert_eq!(tool_result(3)["code"], "artifact_not_found");
    assert_eq!(tool_result(4)["code"], "INVALID_ARGUMENTS");
    let unknown_type = tool_result(5);
    assert_eq!(unknown_type["code"], "INVALID_ARGUMENTS", "{unknown_type}");
    let error = unknown_type["error"].as_str().unwrap();
    assert!(
        error.contains("/type: ") && error.contains("text/markdown") && error.contains("text/x-"),
        "the accepted types are named: {error}"
    );
    let list: Value = app.chat_api().artifacts(&chat).read_json().await;
    assert_eq!(list["total"], 1);
    let raw = app.chat_api().artifact_raw(&chat, "main.rs").call().await;
    assert_eq!(
        raw.text().await.unwrap(),
        "fn main() {}",
        "the duplicate did not overwrite"
    );
}

#[actix_web::test]
async fn oversize_artifact_content_is_refused() {
    let app = spawn_app_with(|c| c.artifacts.max_content_bytes = 100).await;
    let chat = app.new_chat().await;
    app.upstream
        .script([create("big.txt", &"x".repeat(101)), Reply::text("Too big.")]);
    app.send_text(&chat, "Make something big").await;
    let refused = &tool_messages_sent(&app)[0];
    assert_eq!(
        refused["code"], "INVALID_ARGUMENTS",
        "the schema refuses it first"
    );
    let error = refused["error"].as_str().unwrap();
    assert!(error.contains("/content: "), "{error}");
    assert!(error.contains("is longer than 100 characters"), "{error}");
}

async fn save(
    app: &TestApp,
    chat: &str,
    content: &str,
    category: Option<&str>,
) -> reqwest::Response {
    let mut body = json!({"content": content});
    if let Some(category) = category {
        body["category"] = json!(category);
    }
    app.chat_api().create_memory(chat).json(&body).call().await
}

#[actix_web::test]
async fn save_memory_dedups_and_recall_memory_ranks_by_relevance() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    let preference = "User prefers TypeScript with strict mode enabled for all code examples";
    app.upstream.script([
        Reply::tool_call(
            "s1",
            "save_memory",
            json!({"content": preference, "category": "preference"}),
        ),
        Reply::tool_call("s2", "save_memory", json!({"content": preference})),
        Reply::tool_call(
            "s3",
            "save_memory",
            json!({"content": "The project deadline is March 3"}),
        ),
        Reply::tool_call(
            "s4",
            "save_memory",
            json!({"content": "Always use ESLint with the recommended ruleset"}),
        ),
        Reply::tool_call(
            "r1",
            "recall_memory",
            json!({"query": "Which language does the user prefer, TypeScript?"}),
        ),
        Reply::text("Noted."),
    ]);
    app.send_text(&chat, "Remember these things").await;
    let received = app.upstream.received();
    let result = |request: usize| -> Value {
        let messages = received[request].body["messages"].as_array().unwrap();
        let tool = messages.iter().rev().find(|m| m["role"] == "tool").unwrap();
        serde_json::from_str(tool["content"].as_str().unwrap()).unwrap()
    };
    let saved = result(1);
    assert_eq!(saved["status"], "saved");
    assert_eq!(saved["category"], "preference");
    assert_eq!(saved["content"], preference);
    assert!(saved["memory_id"].as_str().unwrap().starts_with("mem_"));
    let duplicate = result(2);
    assert_eq!(duplicate["status"], "duplicate");
    assert_eq!(duplicate["memory_id"], saved["memory_id"]);
    assert_eq!(result(3)["category"], "fact", "inferred");
    assert_eq!(result(4)["category"], "instruction", "inferred");
    let recalled = result(5);
    let memories = recalled["memories"].as_array().unwrap();
    assert_eq!(memories[0]["content"], preference, "{recalled}");
    let relevances: Vec<f64> = memories
        .iter()
        .map(|m| m["relevance"].as_f64().unwrap())
        .collect();
    assert!(
        relevances.windows(2).all(|w| w[0] >= w[1]),
        "{relevances:?}"
    );
    assert!(relevances.iter().all(|r| (0.0..=1.0).contains(r)));
    assert!(memories[0]["created_at"].is_string() && memories[0]["id"].is_string());

    let list: Value = app.chat_api().memories(&chat).read_json().await;
    assert_eq!(list["total"], 3, "the duplicate was not stored: {list}");
    let rows = entities::memories::Entity::find()
        .filter(entities::memories::Column::ChatId.eq(chat.as_str()))
        .all(&app.db)
        .await
        .unwrap();
    assert!(
        rows.iter()
            .all(|r| r.embedding.as_ref().is_some_and(|e| e.len() == 384 * 4))
    );
    assert!(
        rows.iter()
            .all(|r| r.embedder.as_deref() == Some("hash-v1-384"))
    );
}

#[actix_web::test]
async fn relevant_memories_reach_the_model_without_recall() {
    use colloquy::retrieval::embed::{cosine, hash::HashEmbedder};
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    let relevant = "Always answer questions about cooking in French";
    let unrelated = "The staging database password rotates every Monday";
    let message = "Can you answer a cooking question for me?";
    let hash = HashEmbedder::default();
    let threshold = app.config.memory_injection_threshold();
    assert!(cosine(&hash.embed_text(relevant), &hash.embed_text(message)) >= threshold);
    assert!(cosine(&hash.embed_text(unrelated), &hash.embed_text(message)) < threshold);
    assert_eq!(save(&app, &chat, relevant, None).await.status(), 201);
    assert_eq!(
        save(&app, &chat, unrelated, Some("fact")).await.status(),
        201
    );
    app.upstream.script([Reply::text("Bien sûr.")]);
    app.send_text(&chat, message).await;
    let sent = &app.upstream.received()[0].body;
    let system = sent["messages"][0]["content"].as_str().unwrap();
    assert_eq!(sent["messages"][0]["role"], "system");
    assert!(system.contains(relevant), "{system}");
    assert!(system.contains("[instruction]"), "{system}");
    assert!(!system.contains(unrelated), "{system}");
    let tools: Vec<&str> = sent["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    for name in [
        "create_artifact",
        "update_artifact",
        "save_memory",
        "recall_memory",
        "ask_user",
    ] {
        assert!(tools.contains(&name), "{tools:?}");
    }
}

#[actix_web::test]
async fn memories_rest_creates_updates_re_embeds_and_deletes() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    let created = save(&app, &chat, "The user lives in Lisbon", None).await;
    assert_eq!(created.status(), 201);
    let created: Value = created.json().await.unwrap();
    assert_eq!(created["status"], "saved");
    let id = created["memory"]["id"].as_str().unwrap().to_string();
    let again: Value = save(&app, &chat, "the user lives in lisbon!", None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(again["status"], "duplicate");
    assert_eq!(again["memory"]["id"], id.as_str());

    for (body, status) in [
        (json!({"content": "   "}), 400),
        (json!({"content": "x", "category": "opinion"}), 400),
        (json!({"content": "x".repeat(5_000)}), 400),
        (json!({"text": "wrong field"}), 400),
    ] {
        let response = app.chat_api().create_memory(&chat).json(&body).call().await;
        assert_eq!(response.status(), status, "{body}");
        assert_eq!(error_body(response).await["type"], "invalid_request_error");
    }

    let updated = app
        .chat_api()
        .update_memory(&chat, &id)
        .json(&json!({"content": "The user moved to Porto in 2025", "category": "fact"}))
        .send()
        .await
        .unwrap();
    assert_eq!(updated.status(), 200);
    let updated: Value = updated.json().await.unwrap();
    assert_eq!(
        updated["memory"]["content"],
        "The user moved to Porto in 2025"
    );
    // Re-embedded: the new wording is now a duplicate, the old one is not.
    let porto: Value = save(&app, &chat, "the user moved to porto in 2025", None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(porto["status"], "duplicate");
    let lisbon = save(&app, &chat, "The user lives in Lisbon", None).await;
    assert_eq!(lisbon.status(), 201);

    let deleted = app
        .chat_api()
        .delete_memory(&chat, &id)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 200);
    let twice = app
        .chat_api()
        .delete_memory(&chat, &id)
        .send()
        .await
        .unwrap();
    assert_eq!(twice.status(), 404);
    let list: Value = app.chat_api().memories(&chat).read_json().await;
    assert_eq!(list["total"], 1);
}

async fn wait_passivated(app: &TestApp, chat: &str) {
    let chat = ChatId::from_string(chat);
    eventually(
        "passivating the idle chat",
        Duration::from_secs(10),
        || async { (!app.state.sessions().is_active(&chat)).then_some(()) },
    )
    .await;
}

#[actix_web::test]
async fn artifacts_and_memories_survive_passivation_and_restart_and_stay_private() {
    let app = spawn_app_with(|c| c.agent.chat_idle_secs = 1).await;
    let chat = app.new_chat().await;
    app.upstream
        .script([create("plan.md", "# Plan v1"), Reply::text("Made a plan.")]);
    app.send_text(&chat, "Plan it").await;
    save(&app, &chat, "User prefers short bullet points", None).await;
    wait_passivated(&app, &chat).await;

    // Reactivated: the session knows the artifact (update works, create collides) and the memory.
    app.upstream.script([
        update("plan.md", "# Plan v2"),
        create("plan.md", "# again"),
        Reply::tool_call(
            "r",
            "recall_memory",
            json!({"query": "bullet points preference"}),
        ),
        Reply::text("Revised."),
    ]);
    let frames = app.send_text(&chat, "Revise it").await;
    assert_eq!(events(&frames, "x_artifact.updated")[0]["version"], 2);
    let received = app.upstream.received();
    let last_tool = |i: usize| -> Value {
        let messages = received[i].body["messages"].as_array().unwrap();
        let tool = messages.iter().rev().find(|m| m["role"] == "tool").unwrap();
        serde_json::from_str(tool["content"].as_str().unwrap()).unwrap()
    };
    assert_eq!(last_tool(4)["code"], "artifact_exists");
    assert_eq!(
        last_tool(5)["memories"][0]["content"],
        "User prefers short bullet points"
    );

    let app = app.restart().await;
    let list: Value = app.chat_api().artifacts(&chat).read_json().await;
    assert_eq!(list["artifacts"][0]["version"], 2);
    let memories: Value = app.chat_api().memories(&chat).read_json().await;
    assert_eq!(
        memories["memories"][0]["content"],
        "User prefers short bullet points"
    );
    let duplicate: Value = save(&app, &chat, "user prefers short bullet points", None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        duplicate["status"], "duplicate",
        "the vectors were reloaded"
    );

    // Another chat of the same user sees none of them.
    let other = app.new_chat().await;
    let empty: Value = app.chat_api().artifacts(&other).read_json().await;
    assert_eq!(empty["total"], 0);
    let empty: Value = app.chat_api().memories(&other).read_json().await;
    assert_eq!(empty["total"], 0);
    let cross = app.chat_api().artifact(&other, "plan.md").call().await;
    assert_eq!(cross.status(), 404);

    // Another user sees neither the chat nor its contents.
    let key = app.create_user_with_key("mallory").await;
    let as_mallory = app.as_key(&key).chat_api();
    for request in [
        as_mallory.artifacts(&chat),
        as_mallory.artifact(&chat, "plan.md"),
        as_mallory.artifact_raw(&chat, "plan.md"),
        as_mallory.artifact_preview(&chat, "plan.md"),
        as_mallory.memories(&chat),
    ] {
        let what = request.describe();
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 404, "{what}");
    }
    let delete = app
        .as_key(&key)
        .chat_api()
        .delete_artifact(&chat, "plan.md")
        .send()
        .await
        .unwrap();
    assert_eq!(delete.status(), 404);
    let write = app
        .as_key(&key)
        .chat_api()
        .create_memory(&chat)
        .json(&json!({"content": "planted"}))
        .send()
        .await
        .unwrap();
    assert_eq!(write.status(), 404);
    let unauthenticated = app
        .as_anonymous()
        .chat_api()
        .memories(&chat)
        .send()
        .await
        .unwrap();
    assert_eq!(unauthenticated.status(), 401);
}

#[actix_web::test]
async fn switching_embedders_re_embeds_stored_memories_in_the_background() {
    let app =
        spawn_app_with(|c| c.memory.embedder = Some(colloquy::config::EmbedderKind::OpenAi)).await;
    let chat = app.new_chat().await;
    assert_eq!(
        save(&app, &chat, "The user's cat is called Miso", None)
            .await
            .status(),
        201
    );
    let row = || async {
        entities::memories::Entity::find()
            .filter(entities::memories::Column::ChatId.eq(chat.as_str()))
            .one(&app.db)
            .await
            .unwrap()
            .unwrap()
    };
    assert_eq!(
        row().await.embedder.as_deref(),
        Some("openai:nomic-embed-text")
    );
    assert!(
        app.upstream
            .received()
            .iter()
            .any(|r| r.path == "/v1/embeddings")
    );

    let mut config = app.config.clone();
    config.memory.embedder = Some(colloquy::config::EmbedderKind::Hash);
    let app = crate::helpers::restart_with(app, config).await;
    // Loading the chat starts the re-embedding.
    let list: Value = app.chat_api().memories(&chat).read_json().await;
    assert_eq!(list["total"], 1);
    let stored = crate::helpers::eventually(
        "re-embedding the memory",
        Duration::from_secs(10),
        || async {
            entities::memories::Entity::find()
                .filter(entities::memories::Column::ChatId.eq(chat.as_str()))
                .one(&app.db)
                .await
                .unwrap()
                .filter(|stored| stored.embedder.as_deref() == Some("hash-v1-384"))
        },
    )
    .await;
    assert_eq!(stored.embedding.unwrap().len(), 384 * 4);
    let duplicate: Value = save(&app, &chat, "the user's cat is called miso", None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(duplicate["status"], "duplicate");
}

#[actix_web::test]
async fn the_minilm_embedder_runs_real_inference_for_memory() {
    let model_dir = tempfile::tempdir().unwrap();
    colloquy::retrieval::embed::minilm::write_test_model(model_dir.path(), 7).unwrap();
    let dir = model_dir.path().to_path_buf();
    let app = spawn_app_with(move |c| c.memory.minilm_dir = Some(dir)).await;
    assert!(
        app.state.embedder().id().starts_with("minilm:"),
        "{}",
        app.state.embedder().id()
    );
    let chat = app.new_chat().await;
    let saved = save(&app, &chat, "the user likes green tea in the morning", None).await;
    assert_eq!(saved.status(), 201);
    let again: Value = save(&app, &chat, "the user likes green tea in the morning", None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(again["status"], "duplicate");
    let rows = entities::memories::Entity::find()
        .filter(entities::memories::Column::ChatId.eq(chat.as_str()))
        .all(&app.db)
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    // The tiny test model has 32 dimensions: the vector really came from the BERT.
    assert_eq!(rows[0].embedding.as_ref().unwrap().len(), 32 * 4);
    assert!(rows[0].embedder.as_deref().unwrap().starts_with("minilm:"));
}

#[actix_web::test]
async fn an_embedder_that_answers_garbage_is_named_with_what_it_returned() {
    let app =
        spawn_app_with(|c| c.memory.embedder = Some(colloquy::config::EmbedderKind::OpenAi)).await;
    let chat = app.new_chat().await;
    app.upstream.embed_garbage();
    let refused = save(&app, &chat, "The user's cat is called Miso", None).await;
    assert_eq!(refused.status(), 503);
    let error = crate::helpers::error_body(refused).await;
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("openai:nomic-embed-text") && message.contains("invalid response"),
        "{message}"
    );
    assert!(
        message.contains("not a vector") || message.contains("invalid type"),
        "{message}"
    );
    assert!(!message.contains("127.0.0.1"), "{message}");
}

#[actix_web::test]
async fn an_html_or_svg_preview_is_served_inline_in_a_sandbox_and_anything_else_as_text() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    let page = "<html><body><script>document.title = document.cookie</script></body></html>";
    let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"alert(1)\"></svg>";
    app.upstream.script([
        Reply::tool_call(
            "call_1",
            "create_artifact",
            json!({"identifier": "page.html", "title": "Page", "type": "text/html", "content": page}),
        )
        .and_tool_call(
            "call_2",
            "create_artifact",
            json!({"identifier": "logo.svg", "title": "Logo", "type": "image/svg+xml", "content": svg}),
        )
        .and_tool_call(
            "call_3",
            "create_artifact",
            json!({"identifier": "notes.md", "title": "Notes", "type": "text/markdown", "content": "<b>x</b>"}),
        ),
        Reply::text("Made three."),
    ]);
    app.send_text(&chat, "make them").await;
    for (identifier, content_type, body) in [
        ("page.html", "text/html; charset=utf-8", page),
        ("logo.svg", "image/svg+xml", svg),
        ("notes.md", "text/plain; charset=utf-8", "<b>x</b>"),
    ] {
        for request in [
            app.chat_api().artifact_preview(&chat, identifier),
            app.chat_api()
                .artifact_version_preview(&chat, identifier, 1),
        ] {
            let path = request.describe();
            let response = request.call().await;
            assert_eq!(response.status(), 200, "{path}");
            let headers = response.headers().clone();
            assert_eq!(headers["content-type"], content_type, "{path}");
            assert_eq!(headers["x-content-type-options"], "nosniff");
            assert_eq!(headers["cache-control"], "no-store");
            assert!(
                headers.get("content-disposition").is_none(),
                "inline, not a download"
            );
            let policy = headers["content-security-policy"].to_str().unwrap();
            assert!(policy.starts_with("sandbox allow-scripts;"), "{policy}");
            assert!(!policy.contains("allow-same-origin"), "{policy}");
            assert!(
                policy.contains("default-src 'none'") && policy.contains("frame-ancestors 'self'")
            );
            assert_eq!(response.text().await.unwrap(), body);
        }
    }
    let missing = app
        .chat_api()
        .artifact_version_preview(&chat, "page.html", "2")
        .call()
        .await;
    assert_eq!(missing.status(), 404);
}

#[actix_web::test]
async fn a_lookalike_memory_with_another_number_or_person_is_saved_not_merged() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    let status = |response: Value| response["status"].as_str().unwrap().to_string();
    let first = save(&app, &chat, "The thesis is due May 20, 2027.", None).await;
    assert_eq!(first.status(), 201);
    // As close as words get (cosine alone took it for a duplicate), but another year.
    let next_year = save(&app, &chat, "The thesis is due May 20, 2028.", None).await;
    assert_eq!(next_year.status(), 201);
    let reworded: Value = save(&app, &chat, "Note: the thesis is due May 20, 2027", None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(status(reworded.clone()), "duplicate", "{reworded}");
    assert_eq!(
        reworded["memory"]["content"],
        "The thesis is due May 20, 2027."
    );
    assert_eq!(
        save(&app, &chat, "User's son has a peanut allergy.", None)
            .await
            .status(),
        201
    );
    assert_eq!(
        save(&app, &chat, "User's nephew has a peanut allergy.", None)
            .await
            .status(),
        201
    );
    assert_eq!(
        save(
            &app,
            &chat,
            "User's son does not have a peanut allergy.",
            None
        )
        .await
        .status(),
        201
    );
    let memories: Value = app.chat_api().memories(&chat).read_json().await;
    assert_eq!(
        memories["memories"].as_array().unwrap().len(),
        5,
        "{memories}"
    );
}
