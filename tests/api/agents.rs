//! Agents (docs/spec.md#agents): CRUD under `/api/agents` owned by their user, the default agent
//! every chat falls back to, the tools an agent's chats can call, `enableTools` per message, and an
//! agent's prompt, model and tools reaching the model.

use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::{
    TestApp, error_body, race_to_the_cap, read_every_page, spawn_app, spawn_app_with,
};

async fn create_agent(app: &TestApp, body: Value) -> Value {
    let response = app.api().create_agent().json(&body).call().await;
    assert_eq!(response.status(), 201, "{:?}", response.text().await);
    response.json().await.unwrap()
}

async fn tool_names(app: &TestApp, agent: &str) -> Vec<String> {
    let listed: Value = app.api().agent_tools(agent).read_json().await;
    let tools = listed["tools"].as_array().expect("a tools list");
    for tool in tools {
        assert!(tool["description"].is_string() && tool["parameters"]["type"] == "object");
    }
    tools
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// The tools every chat has (docs/spec.md#which-tools-a-run-has; file_search too once it has
/// documents), in the order they are offered.
const CHAT_TOOLS: [&str; 5] = [
    "create_artifact",
    "update_artifact",
    "save_memory",
    "recall_memory",
    "ask_user",
];

/// `names` after the chat tools.
fn with_chat_tools(before: &[&str], after: &[&str]) -> Vec<String> {
    before
        .iter()
        .chain(CHAT_TOOLS.iter())
        .chain(after)
        .map(|name| name.to_string())
        .collect()
}

/// The tool names the model was offered in the upstream request `index`.
fn offered(app: &TestApp, index: usize) -> Vec<String> {
    let received = app.upstream.received();
    received[index].body["tools"]
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
async fn agents_are_created_read_updated_and_deleted_by_their_owner_only() {
    let app = spawn_app().await;
    let listed: Value = app.api().agents().read_json().await;
    assert_eq!(
        listed["total"], 1,
        "every user has a default agent: {listed}"
    );
    let default = listed["agents"][0].clone();
    assert_eq!(default["is_default"], true);
    assert_eq!(default["tools_enabled"], true);

    let agent = create_agent(
        &app,
        json!({"name": "Researcher", "system_prompt": "Cite sources.", "model": "big-model",
               "enabled_tools": ["calculator", "browse_url"],
               "custom_tools": [{"type": "mcp", "config": {"server_id": "notes", "tool_name": "find"}}]}),
    )
    .await;
    let id = agent["id"].as_str().unwrap().to_string();
    assert_eq!(agent["is_default"], false);
    assert_eq!(agent["enabled_tools"], json!(["calculator", "browse_url"]));
    assert_eq!(agent["custom_tools"][0]["config"]["server_id"], "notes");
    let read: Value = app.api().agent(&id).read_json().await;
    assert_eq!(read, agent);

    let patched = app
        .api()
        .update_agent(&id)
        .json(&json!({"name": "Analyst", "system_prompt": null, "tools_enabled": false}))
        .send()
        .await
        .unwrap();
    assert_eq!(patched.status(), 200);
    let patched: Value = patched.json().await.unwrap();
    assert_eq!(patched["name"], "Analyst");
    assert_eq!(patched["system_prompt"], Value::Null, "null clears it");
    assert_eq!(patched["model"], "big-model", "a field not sent is kept");
    assert_eq!(patched["tools_enabled"], false);

    // Bad input is a 400 that names the problem.
    for (body, words) in [
        (json!({"name": ""}), "name must be"),
        (
            json!({"name": "x", "enabled_tools": ["no spaces allowed"]}),
            "enabled_tools",
        ),
        (
            json!({"name": "x", "custom_tools": [{"type": "shell", "config": {"server_id": "a", "tool_name": "b"}}]}),
            "not supported",
        ),
        (json!({"name": "x", "colour": "blue"}), "unknown field"),
    ] {
        let response = app.api().create_agent().json(&body).call().await;
        assert_eq!(response.status(), 400, "{body}");
        let error = error_body(response).await;
        assert!(
            error["message"].as_str().unwrap().contains(words),
            "{error}"
        );
    }

    // Another user sees none of it.
    let key = app.create_user_with_key("mallory").await;
    let as_mallory = app.as_key(&key).api();
    for request in [
        as_mallory.agent(&id),
        as_mallory.update_agent(&id),
        as_mallory.delete_agent(&id),
        as_mallory.agent_tools(&id),
    ] {
        let what = request.describe();
        let response = request
            .json(&json!({"name": "stolen"}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 404, "{what}");
    }
    let theirs: Value = app.as_key(&key).api().agents().read_json().await;
    assert_eq!(theirs["total"], 1, "only their own default: {theirs}");
    let chat_with_mine = app
        .as_key(&key)
        .chat_api()
        .create_chat()
        .json(&json!({"agent_id": id}))
        .send()
        .await
        .unwrap();
    assert_eq!(chat_with_mine.status(), 404, "nobody's chat joins my agent");

    // A chat of a deleted agent moves to the default; the default cannot be deleted.
    let chat: Value = app
        .chat_api()
        .create_chat()
        .json(&json!({"title": "t", "agent_id": id}))
        .read_json()
        .await;
    assert_eq!(chat["agent_id"], id);
    let deleted = app.api().delete_agent(&id).send().await.unwrap();
    assert_eq!(deleted.status(), 200);
    let moved: Value = app
        .chat_api()
        .chat(chat["id"].as_str().unwrap())
        .read_json()
        .await;
    assert_eq!(moved["agent_id"], default["id"]);
    let refused = app
        .api()
        .delete_agent(default["id"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 409);
}

#[actix_web::test]
async fn the_tools_list_is_what_the_agents_chats_can_call() {
    let app = spawn_app().await;
    let listed: Value = app.api().agents().read_json().await;
    let default = listed["agents"][0]["id"].as_str().unwrap().to_string();
    let all = tool_names(&app, &default).await;
    for name in [
        "web_search",
        "fetch_url",
        "calculator",
        "create_artifact",
        "update_artifact",
        "save_memory",
        "recall_memory",
        "ask_user",
        "file_search",
    ] {
        assert!(all.contains(&name.to_string()), "{name} in {all:?}");
    }
    assert!(
        !all.contains(&"browse_url".to_string()),
        "aliases only when named"
    );

    let picky = create_agent(
        &app,
        json!({"name": "Picky", "enabled_tools": ["calculator", "browse_url", "search_knowledge"]}),
    )
    .await;
    let picky = picky["id"].as_str().unwrap();
    // The chat tools stay beside the named ones (file_search listed: a chat may have documents).
    assert_eq!(
        tool_names(&app, picky).await,
        with_chat_tools(
            &["calculator"],
            &["file_search", "browse_url", "search_knowledge"]
        )
    );
    let patched = app
        .api()
        .update_agent(picky)
        .json(&json!({"enabled_tools": ["ask_user"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(patched.status(), 200);
    assert_eq!(
        tool_names(&app, picky).await,
        with_chat_tools(&[], &["file_search"])
    );
    // Turned off explicitly, the chat tools are only those it names.
    let patched = app
        .api()
        .update_agent(picky)
        .json(&json!({"chat_tools_enabled": false}))
        .send()
        .await
        .unwrap();
    assert_eq!(patched.status(), 200);
    let patched: Value = patched.json().await.unwrap();
    assert_eq!(patched["chat_tools_enabled"], false);
    assert_eq!(tool_names(&app, picky).await, ["ask_user"]);
    app.api()
        .update_agent(picky)
        .json(&json!({"tools_enabled": false}))
        .send()
        .await
        .unwrap();
    assert!(tool_names(&app, picky).await.is_empty());
}

#[actix_web::test]
async fn enable_tools_false_turns_tools_off_for_that_message_only() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    app.upstream
        .script([Reply::text("No tools."), Reply::text("Tools again.")]);
    app.send(
        &chat,
        json!({"content": "first", "enableTools": false,
               "web_search_options": {"x_tools": ["calculator"]}}),
    )
    .await;
    assert!(offered(&app, 0).is_empty(), "{:?}", offered(&app, 0));
    app.send(
        &chat,
        json!({"content": "second", "web_search_options": {"x_tools": ["calculator"]}}),
    )
    .await;
    let second = offered(&app, 1);
    assert!(
        second.contains(&"calculator".to_string()) && second.contains(&"save_memory".to_string()),
        "{second:?}"
    );
}

#[actix_web::test]
async fn an_agents_prompt_model_and_tools_reach_the_model_in_its_chats_and_by_x_agent_id() {
    let app = spawn_app().await;
    let agent = create_agent(
        &app,
        json!({"name": "Calc", "system_prompt": "You are a careful calculator.",
               "model": "agent-model", "enabled_tools": ["calculator", "browse_url"]}),
    )
    .await;
    let id = agent["id"].as_str().unwrap();
    let chat: Value = app
        .chat_api()
        .create_chat()
        .json(&json!({"agent_id": id}))
        .read_json()
        .await;
    app.upstream.script([
        Reply::tool_call("c1", "calculator", json!({"expression": "6*7"})),
        Reply::text("42."),
        Reply::text("Via /v1."),
    ]);
    // No enableTools: an agent that names its tools has them on.
    app.send(
        chat["id"].as_str().unwrap(),
        json!({"content": "six times seven?"}),
    )
    .await;
    let received = app.upstream.received();
    assert_eq!(received[0].body["model"], "agent-model");
    assert_eq!(
        received[0].body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .lines()
            .next(),
        Some("You are a careful calculator.")
    );
    // In its chat, the chat's own tools stay beside those it names.
    assert_eq!(
        offered(&app, 0),
        with_chat_tools(&["calculator"], &["browse_url"])
    );
    assert!(
        received[1].body.to_string().contains("42"),
        "the calculator ran"
    );

    // /v1 with x_agent_id: the agent's prompt and tools, the request's own model.
    let response = app
        .openai()
        .chat_completions()
        .json(&json!({"model": "request-model", "x_agent_id": id,
                    "messages": [{"role": "user", "content": "hi"}]}))
        .call()
        .await;
    assert_eq!(response.status(), 200);
    let body = &app.upstream.received()[2].body;
    assert_eq!(body["model"], "request-model");
    assert_eq!(
        body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .lines()
            .next(),
        Some("You are a careful calculator.")
    );
    // A /v1 turn is stored in a chat too, so it has the chat's tools as well.
    assert_eq!(
        offered(&app, 2),
        with_chat_tools(&["calculator"], &["browse_url"])
    );
    let key = app.create_user_with_key("mallory").await;
    let theirs = app
        .as_key(&key)
        .openai()
        .chat_completions()
        .json(&json!({"x_agent_id": id, "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(theirs.status(), 404);
}

#[actix_web::test]
async fn seed_001_tool_names_thinking_events_and_tool_messages_in_history() {
    use actix_web::{App, HttpResponse, HttpServer, web};
    let server = HttpServer::new(|| {
        App::new().route(
            "/article",
            web::get().to(|| async {
                HttpResponse::Ok()
                    .content_type("text/html")
                    .body("<html><body><h1>Hooks</h1><p>React hooks let functions hold state.</p></body></html>")
            }),
        )
    })
    .workers(1)
    .bind("127.0.0.1:0")
    .unwrap();
    let site = server.addrs()[0].to_string();
    actix_web::rt::spawn(server.run());
    let allowed = site.clone();
    let app = crate::helpers::spawn_app_with(move |config| {
        config.tools.ssrf_allow_list = vec![allowed];
    })
    .await;
    let agent = create_agent(
        &app,
        json!({"name": "Reader", "enabled_tools": ["browse_url", "search_knowledge"]}),
    )
    .await;
    let chat = app.new_chat_with(&json!({"agent_id": agent["id"]})).await;
    let url = format!("http://{site}/article");
    app.upstream.script([
        Reply::tool_call("tc_1", "browse_url", json!({"url": url})).and_tool_call(
            "tc_2",
            "search_knowledge",
            json!({"query": "React tutorials"}),
        ),
        Reply::text("Hooks hold state."),
    ]);
    let frames = app
        .send(
            &chat,
            json!({"content": "Find React tutorials and summarize the best one"}),
        )
        .await;
    let kinds: Vec<String> = frames
        .iter()
        .map(crate::sse::Frame::kind)
        .filter(|k| {
            matches!(
                k.as_str(),
                "thinking" | "tool_call" | "tool_result" | "content"
            )
        })
        .collect();
    let mut compact = kinds.clone();
    compact.dedup();
    assert_eq!(
        compact,
        [
            "thinking",
            "tool_call",
            "tool_result",
            "thinking",
            "content"
        ],
        "a thinking event before each model call: {kinds:?}"
    );
    let thinking: Vec<Value> = frames
        .iter()
        .map(crate::sse::Frame::json)
        .filter(|j| j["type"] == "thinking")
        .collect();
    assert_eq!(thinking[1]["iteration"], 2);
    assert_eq!(
        offered(&app, 0),
        with_chat_tools(&[], &["browse_url", "search_knowledge"])
    );

    // The messages API: the exchange as docs/spec.md#tool-messages shapes it, before the answer.
    let listed: Value = app.chat_api().messages(&chat).read_json().await;
    let data = listed["data"].as_array().unwrap();
    let roles: Vec<&str> = data.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "tool", "assistant"]);
    assert_eq!(data[1]["content"], Value::Null);
    assert_eq!(
        data[1]["toolCalls"],
        json!([{"id": "tc_1", "name": "browse_url", "arguments": {"url": url}},
               {"id": "tc_2", "name": "search_knowledge", "arguments": {"query": "React tutorials"}}])
    );
    assert_eq!(data[2]["toolCallId"], "tc_1");
    // browse_url (fetch_url's one-page mode, docs/spec.md#tool-aliases) gives the page's text.
    let page = data[2]["content"].as_str().unwrap();
    assert!(
        page.contains("React hooks let functions hold state."),
        "{page}"
    );
    assert_eq!(data[3]["toolCallId"], "tc_2");
    assert!(data[3]["content"].is_string());
    assert_eq!(data[4]["content"], "Hooks hold state.");
    // What the model was sent next is what the history says.
    let sent = &app.upstream.received()[1].body["messages"];
    let tool_message = sent
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["tool_call_id"] == "tc_1")
        .unwrap();
    assert_eq!(tool_message["content"], data[2]["content"]);
}

/// An agent whose `enabled_tools` is `["calculator"]` still offers every chat's own tools
/// (docs/spec.md#which-tools-a-run-has: always injected in chat context), and the model can use
/// them; `chat_tools_enabled: false` is how an agent turns them off.
#[actix_web::test]
async fn an_agent_naming_only_the_calculator_still_offers_the_chat_tools() {
    let app = spawn_app().await;
    let agent = create_agent(
        &app,
        json!({"name": "Calc", "enabled_tools": ["calculator"]}),
    )
    .await;
    assert_eq!(agent["chat_tools_enabled"], true, "on by default: {agent}");
    let chat = app.new_chat_with(&json!({"agent_id": agent["id"]})).await;
    app.upstream.script([
        Reply::tool_call(
            "m1",
            "save_memory",
            json!({"content": "The user likes exact answers."}),
        ),
        Reply::text("Noted."),
    ]);
    app.send_text(&chat, "remember that I like exact answers")
        .await;
    assert_eq!(offered(&app, 0), with_chat_tools(&["calculator"], &[]));
    let memories: Value = app.chat_api().memories(&chat).read_json().await;
    assert!(
        memories.to_string().contains("exact answers"),
        "save_memory ran: {memories}"
    );

    let quiet = create_agent(
        &app,
        json!({"name": "Quiet", "enabled_tools": ["calculator"], "chat_tools_enabled": false}),
    )
    .await;
    let chat = app.new_chat_with(&json!({"agent_id": quiet["id"]})).await;
    app.upstream.script([Reply::text("Hi.")]);
    app.send_text(&chat, "hello").await;
    assert_eq!(offered(&app, 2), ["calculator"]);
}

#[actix_web::test]
async fn creates_racing_for_the_last_agents_stop_at_the_cap_and_the_list_pages_past_it() {
    let app = spawn_app_with(|config| config.agent.max_agents_per_user = 5).await;
    // The default agent (made on first use) is one of the five.
    let before: Value = app.api().agents().read_json().await;
    assert_eq!(before["total"], 1, "{before}");
    race_to_the_cap(4, "too_many_agents", |i| {
        app.api()
            .create_agent()
            .json(&json!({"name": format!("racer {i}")}))
    })
    .await;
    let ids = read_every_page(|| app.api().agents(), "agents").await;
    let mut distinct = ids.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 5, "{ids:?}");
}
