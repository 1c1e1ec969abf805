//! The stateful Responses API, Conversations, Files and Vector Stores with the official OpenAI
//! SDKs against the real server and the fake upstream: `tests/python/responses_client.py` and
//! `tests/clients/node/responses_client.mjs` run their flows, and these tests check what they
//! saw and what the model was sent; another user then finds none of it.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, run_client, spawn_app};
use crate::openai_node::node_clients;
use crate::openai_python::python_with_openai;

/// The texts of the messages an upstream request carried.
fn texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| match &m["content"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// The upstream request whose last message is `last`.
fn request_ending(app: &TestApp, last: &str) -> Value {
    app.upstream
        .received()
        .into_iter()
        .map(|r| r.body)
        .find(|body| texts(body).last().is_some_and(|t| t.contains(last)))
        .unwrap_or_else(|| panic!("no upstream request ends with {last:?}"))
}

fn script() -> Vec<Reply> {
    vec![
        // 1. plain, then streamed
        Reply::tool_call("c_plain", "calculator", json!({"expression": "6*7"})),
        Reply::text("6*7 is 42."),
        Reply::tool_call("c_stream", "calculator", json!({"expression": "6*7"})),
        Reply::text("6*7 is 42."),
        // 2. previous_response_id
        Reply::text("Nice to meet you, Ada."),
        Reply::text("Your name is Ada."),
        // 4. a client function, then its result and a server-side tool
        Reply::tool_call("call_w", "get_weather", json!({"city": "Oslo"})),
        Reply::tool_call("c_add", "calculator", json!({"expression": "2+2"})),
        Reply::text("Sunny in Oslo, and 2+2 is 4."),
        // 5. a conversation
        Reply::text("Your color is blue."),
        // 6. file_search over the vector store, with and without the passages' text
        Reply::tool_call("fs_1", "file_search", json!({"query": "sharding"})),
        Reply::text("Hash-based, sixteen shards."),
        Reply::tool_call("fs_2", "file_search", json!({"query": "sharding"})),
        Reply::text("Hash-based, sixteen shards."),
        // 7. the spec's Responses example with web and file search
        Reply::tool_call("fs_3", "file_search", json!({"query": "design spec"})),
        Reply::text("Compared."),
        // 8. the spec's file_search example, in a chat with no documents yet
        Reply::text("This chat has no documents yet."),
    ]
}

#[actix_web::test]
async fn the_python_sdk_uses_stored_responses_conversations_and_vector_stores() {
    let python = tokio::task::spawn_blocking(python_with_openai)
        .await
        .unwrap();
    let app = spawn_app().await;
    app.upstream.script(script());
    let client = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python/responses_client.py");
    let mut command = Command::new(python);
    command.arg(client);
    let seen = run_client(&app, command).await;

    // 1. The stream helper's final response is the plain call's.
    assert_eq!(seen["stream_equals_plain"], true, "{}", seen["stream_diff"]);
    assert_eq!(seen["final_text"], "6*7 is 42.");
    let kinds: Vec<&str> = seen["stream_kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    for kind in [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.output_item.done",
        "response.completed",
    ] {
        assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
    }

    // 2. The earlier turn is what the model saw next.
    assert_eq!(seen["second_text"], "Your name is Ada.");
    assert_eq!(seen["second_previous"], true);
    let continued = texts(&request_ending(&app, "What is my name?"));
    assert!(
        continued.iter().any(|t| t == "My name is Ada."),
        "{continued:?}"
    );
    assert!(
        continued.iter().any(|t| t == "Nice to meet you, Ada."),
        "{continued:?}"
    );

    // 3. Retrieve, input items, delete.
    assert_eq!(seen["retrieved_text"], "Nice to meet you, Ada.");
    assert_eq!(seen["retrieved_status"], "completed");
    assert_eq!(
        seen["input_items"],
        json!([["message", "user", "What is my name?"]])
    );
    assert_eq!(seen["deleted_is_gone"], true);

    // 4. The function call came back to the client; its output went to the model with the
    // server-side calculator still offered.
    assert_eq!(
        seen["function_call"],
        json!([["get_weather", {"city": "Oslo"}]])
    );
    assert_eq!(seen["function_answer"], "Sunny in Oslo, and 2+2 is 4.");
    let after_output = app
        .upstream
        .received()
        .into_iter()
        .map(|r| r.body)
        .find(|body| {
            body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["role"] == "tool" && m["tool_call_id"] == "call_w")
        })
        .expect("the function's output reached the model");
    let tool_message = after_output["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["tool_call_id"] == "call_w")
        .unwrap()
        .clone();
    assert_eq!(tool_message["content"], "sunny");
    let offered: Vec<&str> = after_output["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        offered.contains(&"calculator") && offered.contains(&"get_weather"),
        "{offered:?}"
    );

    // 5. The conversation is a chat: its first item reached the model, and a person sees it.
    assert_eq!(seen["conversation_text"], "Your color is blue.");
    let in_conversation = texts(&request_ending(&app, "What is my color?"));
    // (Consecutive user messages reach the model as one, as strict chat templates need.)
    assert!(
        in_conversation
            .iter()
            .any(|t| t.contains("Remember: my color is blue.")),
        "{in_conversation:?}"
    );
    assert_eq!(
        seen["conversation_items"],
        json!([
            ["user", "Remember: my color is blue."],
            ["user", "What is my color?"],
            ["assistant", "Your color is blue."]
        ])
    );
    assert_eq!(seen["conversation_metadata"], json!({"topic": "colors"}));
    let conversation = seen["conversation_id"].as_str().unwrap();
    let chats: Value = app.chat_api().list_chats().read_json().await;
    let listed = chats.to_string();
    assert!(listed.contains(conversation), "the UI lists it: {listed}");

    // 6. Files and vector stores.
    assert_eq!(seen["file"], json!(["sharding.md", 82, "assistants"]));
    let file_id = seen["ids"]["file"].as_str().unwrap();
    assert_eq!(seen["store_files"], json!([[file_id, "completed"]]));
    assert_eq!(seen["store_counts"], 1);
    assert_eq!(seen["search"], json!([["sharding.md", true]]));
    let with = &seen["with_results"];
    assert_eq!(with["type"], "file_search_call");
    assert_eq!(with["queries"], json!(["sharding"]));
    assert_eq!(with["results"][0]["filename"], "sharding.md");
    assert!(
        with["results"][0]["chunk_text"]
            .as_str()
            .unwrap()
            .contains("sixteen shards")
    );
    let without = &seen["without_results"];
    assert_eq!(without["results"][0]["filename"], "sharding.md");
    assert!(without["results"][0]["chunk_text"].is_null());
    assert_eq!(seen["file_search_answer"], "Hash-based, sixteen shards.");
    // The vector store's chat is not in the chat list.
    let store = seen["ids"]["store"].as_str().unwrap();
    assert!(!listed.contains(store.trim_start_matches("vs_")));

    // 7-8. The spec's examples ran to completion.
    let seed000: Vec<&str> = seen["seed000_events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    assert!(
        seed000.contains(&"response.file_search_call.completed"),
        "{seed000:?}"
    );
    assert_eq!(seed000.last(), Some(&"response.completed"));
    let seed002 = seen["seed002_events"].as_array().unwrap();
    assert_eq!(seed002.last().unwrap(), "response.completed");

    another_user_finds_none_of_it(&app, &seen["ids"]).await;
}

/// Another user's requests for the same ids are all 404, and cannot search the store.
async fn another_user_finds_none_of_it(app: &TestApp, ids: &Value) {
    let key = app.create_user_with_key("mallory").await;
    let as_other = app.as_key(&key).openai();
    let id = |name: &str| ids[name].as_str().unwrap().to_string();
    for request in [
        as_other.response(id("response")),
        as_other.response_input_items(id("response")),
        as_other.delete_response(id("response")),
        as_other.conversation(id("conversation")),
        as_other.conversation_items(id("conversation")),
        as_other.file(id("file")),
        as_other.file_content(id("file")),
        as_other.vector_store(id("store")),
        as_other.vector_store_files(id("store")),
    ] {
        let what = request.describe();
        let response = request.call().await;
        assert_eq!(response.status(), 404, "{what}");
    }
    for (request, body) in [
        (
            as_other.search_vector_store(id("store")),
            json!({"query": "sharding"}),
        ),
        (
            as_other.create_response(),
            json!({"input": "hi", "previous_response_id": id("response")}),
        ),
        (
            as_other.create_response(),
            json!({"input": "hi", "conversation": id("conversation")}),
        ),
        (
            as_other.create_response(),
            json!({"input": "hi", "tools": [{"type": "file_search",
                "vector_store_ids": [id("store")]}]}),
        ),
        (
            as_other.create_vector_store(),
            json!({"name": "mine", "file_ids": [id("file")]}),
        ),
    ] {
        let path = request.describe();
        let response = request.json(&body).send().await.unwrap();
        assert_eq!(response.status(), 404, "{path} {body}");
    }
    // The owner still has everything.
    let mine = app.openai().response(id("response")).call().await;
    assert_eq!(mine.status(), 200);
}

#[actix_web::test]
async fn the_node_sdk_and_vercels_default_openai_provider_use_the_responses_api() {
    let dir = tokio::task::spawn_blocking(node_clients).await.unwrap();
    let app = spawn_app().await;
    app.upstream.script([
        Reply::text("Hello there!"),
        Reply::text("Hello there!"),
        Reply::text("Nice to meet you, Ada."),
        Reply::text("Your name is Ada."),
        Reply::tool_call("call_n", "get_weather", json!({"city": "Oslo"})),
        Reply::text("It is rainy in Oslo."),
        Reply::tool_call("fs_n", "file_search", json!({"query": "design spec"})),
        Reply::text("Compared."),
        Reply::text("The code word is kestrel."),
        Reply::text("Hello from Colloquy."),
        Reply::tool_call("call_v", "get_weather", json!({"city": "Turku"})),
        Reply::text("Overcast in Turku."),
    ]);
    let mut command = Command::new("node");
    command.arg("responses_client.mjs").current_dir(dir);
    let seen = run_client(&app, command).await;
    assert_eq!(seen["stream_equals_plain"], true, "{seen}");
    assert_eq!(seen["stream_text"], "Hello there!");
    assert_eq!(seen["second_text"], "Your name is Ada.");
    let continued = texts(&request_ending(&app, "What is my name?"));
    assert!(
        continued.iter().any(|t| t == "Nice to meet you, Ada."),
        "{continued:?}"
    );
    assert_eq!(seen["call"], json!(["get_weather", {"city": "Oslo"}]));
    assert_eq!(seen["function_answer"], "It is rainy in Oslo.");
    assert_eq!(seen["search"], json!(["spec.md"]));
    let seed000: Vec<&str> = seen["seed000_events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    assert!(
        seed000.contains(&"response.file_search_call.completed"),
        "{seed000:?}"
    );
    assert_eq!(seed000.last(), Some(&"response.completed"));
    assert_eq!(seen["conversation_text"], "The code word is kestrel.");
    let coded = texts(&request_ending(&app, "What is the code word?"));
    assert!(coded.iter().any(|t| t.contains("kestrel")), "{coded:?}");
    // Vercel's default provider: no error parts ("text part … not found" before), and its tool
    // round trip, whose earlier items it sends back by reference.
    assert_eq!(seen["vercel_errors"], json!([]), "{seen}");
    assert_eq!(seen["vercel_text"], "Hello from Colloquy.");
    assert_eq!(seen["vercel_tool_ran_with"], json!(["Turku"]));
    assert_eq!(seen["vercel_tool_answer"], "Overcast in Turku.");
    let last = app.upstream.received().last().unwrap().body.clone();
    let messages = last["messages"].as_array().unwrap();
    assert_eq!(messages.last().unwrap()["role"], "tool");
    assert!(
        messages.last().unwrap()["content"]
            .as_str()
            .unwrap()
            .contains("overcast")
    );
}
