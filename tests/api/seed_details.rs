//! The specification's remaining wire details (docs/spec.md; issue 30, points 4 and 5), each
//! against the real server: `search_context_size` scaling a search's page text, `file_search` named
//! in `x_tools`, `x_research.tool_call` for every tool without its own events, the finished item on
//! `response.file_search_call.completed`, research tokens apart in `x_chat.metadata`, the log line
//! of a truncated document, agents naming tools the server does not have, and the 404 of an unknown
//! vector store.

use std::sync::{Arc, Mutex};

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use serde_json::{Value, json};

use crate::client::Call;
use crate::documents::{settled, upload};
use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, captured_log, error_body, spawn_app, spawn_app_with};
use crate::sse::{Frame, read_all};

/// Characters of each fake page: more than the largest budget, so every size cuts it.
const PAGE_CHARS: usize = 40_000;

/// A SearXNG answering every query with two results, and the two long pages they point at.
async fn start_search_engine() -> (String, Arc<Mutex<usize>>) {
    let searches = Arc::new(Mutex::new(0));
    let counted = web::Data::new(searches.clone());
    let server = HttpServer::new(move || {
        App::new()
            .app_data(counted.clone())
            .route(
                "/search",
                web::get().to(
                    |req: HttpRequest, count: web::Data<Arc<Mutex<usize>>>| async move {
                        *count.lock().unwrap() += 1;
                        let base = format!("http://{}", req.connection_info().host());
                        HttpResponse::Ok().json(json!({"query": "q", "results": [
                            {"url": format!("{base}/one"), "title": "One", "content": "first"},
                            {"url": format!("{base}/two"), "title": "Two", "content": "second"}
                        ]}))
                    },
                ),
            )
            .route(
                "/{page}",
                web::get().to(|| async {
                    HttpResponse::Ok()
                        .content_type("text/plain")
                        .body("word ".repeat(PAGE_CHARS / 5))
                }),
            )
    })
    .workers(1)
    .bind("127.0.0.1:0")
    .unwrap();
    let address = server.addrs()[0];
    actix_web::rt::spawn(server.run());
    (format!("http://{address}"), searches)
}

/// The last message the model was sent in request `index`: a tool's result.
fn tool_result_sent(app: &TestApp, index: usize) -> String {
    app.upstream.received()[index].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The names of the tools the model was offered in request `index`.
fn offered(app: &TestApp, index: usize) -> Vec<String> {
    app.upstream.received()[index].body["tools"]
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
async fn search_context_size_scales_the_page_text_a_search_brings_back() {
    let (engine, searches) = start_search_engine().await;
    let (url, site) = (
        engine.clone(),
        engine.trim_start_matches("http://").to_string(),
    );
    let app = spawn_app_with(move |config| {
        config.tools.web_search_url = Some(url);
        config.tools.ssrf_allow_list = vec![site];
    })
    .await;
    // The same query at each size: the result cache must not serve one size's pages to another.
    for (round, (size, share)) in [("low", 2_000), ("medium", 6_000), ("high", 12_000)]
        .into_iter()
        .enumerate()
    {
        app.upstream.script([
            Reply::tool_call("s1", "web_search", json!({"query": "gold price"})),
            Reply::text("Done."),
        ]);
        let response = app
            .openai()
            .chat_completions()
            .json(&json!({"model": "fake-model",
                        "messages": [{"role": "user", "content": "Gold?"}],
                        "web_search_options": {"search_context_size": size,
                                               "x_tools": ["web_search"]}}))
            .call()
            .await;
        assert_eq!(response.status(), 200, "{size}");
        let result: Value = serde_json::from_str(&tool_result_sent(&app, round * 2 + 1)).unwrap();
        let pages = result["fetched_pages"].as_array().unwrap();
        assert_eq!(pages.len(), 2, "{size}: {result}");
        for page in pages {
            let content = page["content"].as_str().unwrap();
            // Two pages share the budget (4,000 / 12,000 / 24,000 characters) equally.
            assert!(
                content.ends_with(&format!("[truncated to {share} characters]")),
                "{size}: {}",
                &content[content.len().saturating_sub(80)..]
            );
            assert!(content.chars().count() < share + 60, "{size}");
        }
    }
    assert_eq!(*searches.lock().unwrap(), 3, "one search per size");

    // A size the spec does not name (docs/spec.md#search_context_size) is refused with the
    // request, before any run.
    let refused = app
        .openai()
        .chat_completions()
        .json(
            &json!({"model": "fake-model", "messages": [{"role": "user", "content": "Gold?"}],
                    "web_search_options": {"search_context_size": "huge"}}),
        )
        .call()
        .await;
    assert_eq!(refused.status(), 400);
    assert!(
        error_body(refused).await["message"]
            .as_str()
            .unwrap()
            .contains("low")
    );
}

#[actix_web::test]
async fn naming_file_search_in_x_tools_offers_it_before_the_chat_has_documents() {
    let app = spawn_app().await;
    app.upstream.script([
        Reply::tool_call("f1", "file_search", json!({"query": "design spec"})),
        Reply::text("There is nothing uploaded yet."),
    ]);
    let response = app
        .openai()
        .chat_completions()
        .json(&json!({"model": "fake-model",
                    "messages": [{"role": "user", "content": "What does the spec say?"}],
                    "web_search_options": {"x_tools": ["file_search"]}}))
        .call()
        .await;
    assert_eq!(response.status(), 200);
    let tools = offered(&app, 0);
    assert!(tools.contains(&"file_search".to_string()), "{tools:?}");
    // Naming it alone is a valid choice, not a fallback to the default research tools.
    assert!(!tools.contains(&"web_search".to_string()), "{tools:?}");
    let result: Value = serde_json::from_str(&tool_result_sent(&app, 1)).unwrap();
    assert_eq!(result["results"], json!([]));
    assert!(
        result["note"]
            .as_str()
            .unwrap()
            .contains("no searchable documents"),
        "{result}"
    );

    // Not named (and no documents): not offered (docs/spec.md#x_tools).
    app.upstream.script([Reply::text("Hi.")]);
    app.openai()
        .chat_completions()
        .json(
            &json!({"model": "fake-model", "messages": [{"role": "user", "content": "Hi"}],
                "web_search_options": {"x_tools": ["calculator"]}}),
        )
        .call()
        .await;
    assert!(!offered(&app, 2).contains(&"file_search".to_string()));
}

#[actix_web::test]
async fn every_tool_without_its_own_events_is_announced_as_x_research_tool_call() {
    let app = spawn_app().await;
    app.upstream.script([
        Reply::tool_call(
            "m1",
            "save_memory",
            json!({"content": "The user drinks tea"}),
        )
        .and_tool_call(
            "a1",
            "create_artifact",
            json!({"identifier": "notes.md", "title": "Notes", "type": "text/markdown",
                       "content": "# Notes"}),
        )
        .and_tool_call("s1", "sleep", json!({"ms": 1})),
        Reply::text("Saved."),
    ]);
    let response = app
        .openai()
        .chat_completions()
        .json(&json!({"model": "fake-model", "stream": true,
                    "messages": [{"role": "user", "content": "Remember I drink tea"}],
                    "web_search_options": {"x_tools": ["sleep"]}}))
        .call()
        .await;
    assert_eq!(response.status(), 200);
    let lines: Vec<Value> = read_all(response).await.iter().map(Frame::json).collect();
    let announced: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "x_research.tool_call")
        .collect();
    let by_name = |name: &str| {
        announced
            .iter()
            .find(|l| l["tool_name"] == name)
            .unwrap_or_else(|| panic!("no x_research.tool_call for {name}: {announced:?}"))
    };
    // A chat tool with no event family of its own: `tool_name` and `message`
    // (docs/spec.md#research-events), and the old fields.
    let memory = by_name("save_memory");
    assert_eq!(memory["message"], "Saving a memory");
    assert_eq!(memory["name"], "save_memory");
    assert_eq!(
        serde_json::from_str::<Value>(memory["arguments"].as_str().unwrap()).unwrap(),
        json!({"content": "The user drinks tea"})
    );
    // A tool of the server's that is not one of the research kinds.
    assert_eq!(by_name("sleep")["message"], "Running sleep");
    // An artifact has its own events instead.
    assert!(
        !announced
            .iter()
            .any(|l| l["tool_name"] == "create_artifact")
    );
    assert!(lines.iter().any(|l| l["type"] == "x_artifact.created"));
    // Each announced call's end is reported too.
    let results: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "x_research.result")
        .map(|l| l["tool_call_id"].as_str().unwrap())
        .collect();
    assert!(
        results.contains(&"m1") && results.contains(&"s1"),
        "{results:?}"
    );
    assert!(!results.contains(&"a1"), "{results:?}");
}

/// Every `type` of a Responses stream's events, with their payloads.
fn responses_events(frames: &[Frame]) -> Vec<Value> {
    frames.iter().map(Frame::json).collect()
}

#[actix_web::test]
async fn a_file_search_completed_event_carries_the_finished_item_with_its_results() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    let text = "API Key Authentication: every request carries a key in the Authorization \
        header with the Bearer scheme.";
    upload(&app, &chat, "spec.md", text.as_bytes().to_vec()).await;
    settled(&app, &chat).await;
    for (call, include) in [("fa", false), ("fb", true)] {
        app.upstream.script([
            Reply::tool_call(call, "file_search", json!({"query": "Bearer scheme"})),
            Reply::text("Use Bearer."),
        ]);
        let mut request = json!({"input": "Which scheme?", "x_chat_id": chat, "stream": true,
                                 "tools": [{"type": "file_search"}]});
        if include {
            request["include"] = json!(["file_search_call.results"]);
        }
        let response = app.openai().create_response().json(&request).call().await;
        assert_eq!(response.status(), 200);
        let events = responses_events(&read_all(response).await);
        let at = |kind: &str| {
            events
                .iter()
                .position(|e| e["type"] == kind)
                .unwrap_or_else(|| panic!("no {kind}"))
        };
        let completed = &events[at("response.file_search_call.completed")];
        assert_eq!(completed["item_id"], format!("fs_{call}"));
        assert_eq!(completed["output_index"], 0);
        let item = &completed["item"];
        assert_eq!(item["type"], "file_search_call");
        assert_eq!(item["id"], format!("fs_{call}"));
        assert_eq!(item["status"], "completed");
        assert_eq!(item["results"][0]["filename"], "spec.md");
        // The passages' text only when `include` asks for it.
        assert_eq!(
            item["results"][0]["chunk_text"]
                .as_str()
                .is_some_and(|t| t.contains("Bearer scheme")),
            include,
            "{item}"
        );
        // It is the item the search ends with, and comes just before it is done.
        let done = at("response.output_item.done");
        assert_eq!(done, at("response.file_search_call.completed") + 1);
        assert_eq!(&events[done]["item"], item);
    }
}

/// The usage of a stream's `x_chat.metadata` line.
fn metadata_usage(frames: &[Frame]) -> Value {
    frames
        .iter()
        .map(Frame::json)
        .find(|j| j["type"] == "x_chat.metadata")
        .expect("an x_chat.metadata line")["usage"]
        .clone()
}

#[actix_web::test]
async fn x_chat_metadata_counts_the_tool_rounds_as_research_and_the_rest_as_the_answer() {
    let app = spawn_app().await;
    // The tool round costs 20 + 8 tokens, the answer 10 + 5 (the fake upstream's counts).
    let script = || {
        app.upstream.script([
            Reply::tool_call("c1", "calculator", json!({"expression": "6*7"})),
            Reply::text("42."),
        ]);
    };
    let expected = json!({
        "prompt_tokens": 30, "completion_tokens": 13, "total_tokens": 43,
        "research": {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28},
        "answer": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    });
    let question = json!({"content": "6*7?", "web_search_options": {"x_tools": ["calculator"]},
                          "enableTools": true});

    script();
    let chat = app.new_chat().await;
    assert_eq!(metadata_usage(&app.send(&chat, question).await), expected);

    script();
    let v1 = app
        .openai()
        .chat_completions()
        .json(&json!({"model": "fake-model", "stream": true,
                    "stream_options": {"include_usage": true},
                    "messages": [{"role": "user", "content": "6*7?"}],
                    "web_search_options": {"x_tools": ["calculator"]}}))
        .call()
        .await;
    assert_eq!(metadata_usage(&read_all(v1).await), expected);

    script();
    let responses = app
        .openai()
        .create_response()
        .json(&json!({"input": "6*7?", "stream": true, "x_events": true,
                    "tools": [{"type": "web_search_preview", "x_tools": ["calculator"]}]}))
        .call()
        .await;
    assert_eq!(metadata_usage(&read_all(responses).await), expected);

    // Without tools, everything is the answer.
    app.upstream.script([Reply::text("Hi.")]);
    let plain = app.send(&chat, json!({"content": "Hi"})).await;
    let usage = metadata_usage(&plain);
    assert_eq!(usage["research"]["total_tokens"], 0);
    assert_eq!(usage["answer"]["total_tokens"], usage["total_tokens"]);
}

#[actix_web::test]
async fn text_cut_at_the_limit_is_logged_with_the_document_and_both_lengths() {
    let app = spawn_app_with(|config| config.documents.max_text_chars = 1_000).await;
    let chat = app.new_chat().await;
    let filename = format!("long-{}.txt", uuid::Uuid::new_v4().simple());
    let response = upload(&app, &chat, &filename, "abcd ".repeat(600).into_bytes()).await;
    assert!(response.status().is_success());
    let list = settled(&app, &chat).await;
    let document = &list["documents"][0];
    assert!(document["warning"].as_str().unwrap().contains("truncated"));
    let artifact_id = document["artifact_id"].as_str().unwrap();
    let log = captured_log();
    let line = log
        .lines()
        .find(|l| l.contains("document text truncated") && l.contains(&filename))
        .unwrap_or_else(|| panic!("no truncation line for {filename}"));
    assert!(line.contains("WARN"), "{line}");
    assert!(
        line.contains(&format!("artifact_id={artifact_id}")),
        "{line}"
    );
    assert!(line.contains("document_id="), "{line}");
    assert!(line.contains("original_chars=3000"), "{line}");
    assert!(line.contains("kept_chars=1000"), "{line}");
    assert!(line.contains("original_bytes=3000"), "{line}");
}

#[actix_web::test]
async fn an_agent_naming_tools_this_server_does_not_have_is_refused_with_their_names() {
    let app = spawn_app().await;
    // The spec's platform tools (docs/spec.md#platform-tools); no_such_tool is no tool at all;
    // execute_sql needs a declared database and send_email an [email] section.
    let refused = app
        .api()
        .create_agent()
        .json(&json!({"name": "Seed", "tools_enabled": true,
                    "enabled_tools": ["search_knowledge", "browse_url", "execute_sql", "send_email",
                        "no_such_tool"]}))
        .call()
        .await;
    assert_eq!(refused.status(), 400);
    let error = error_body(refused).await;
    assert_eq!(error["code"], "unknown_tool");
    let message = error["message"].as_str().unwrap();
    // The unknown names, and only them, then what may be named instead.
    assert!(
        message.contains("does not have: no_such_tool;"),
        "{message}"
    );
    assert!(
        message.contains("send_email is not configured on this server (it needs an [email]"),
        "{message}"
    );
    assert!(
        message.contains(
            "execute_sql is not configured on this server (it needs a [[sql.databases]] entry"
        ),
        "{message}"
    );
    assert!(
        message.contains("browse_url") && message.contains("calculator"),
        "{message}"
    );

    // A tool Colloquy has but this server does not configure says what it needs.
    let unconfigured = app
        .api()
        .create_agent()
        .json(&json!({"name": "Coder", "enabled_tools": ["code_search", "calculator"]}))
        .call()
        .await;
    assert_eq!(unconfigured.status(), 400);
    let error = error_body(unconfigured).await;
    assert_eq!(error["code"], "unknown_tool");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("code_search is not configured on this server (it needs tools.github_token)"),
        "{error}"
    );

    // Research tools, chat tools, the spec's aliases (docs/spec.md#tool-aliases) and the
    // server's other tools are accepted.
    let accepted = app
        .api()
        .create_agent()
        .json(
            &json!({"name": "Fine", "enabled_tools": ["calculator", "fetch_url", "file_search",
                    "save_memory", "browse_url", "search_knowledge", "sleep"]}),
        )
        .call()
        .await;
    assert_eq!(accepted.status(), 201);
    let agent: Value = accepted.json().await.unwrap();
    let id = agent["id"].as_str().unwrap();

    // An update naming an unknown tool is refused too, and changes nothing.
    let update = app
        .api()
        .update_agent(id)
        .json(&json!({"name": "Renamed", "enabled_tools": ["calculator", "nope"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(update.status(), 400);
    assert_eq!(error_body(update).await["code"], "unknown_tool");
    let kept: Value = app.api().agent(id).read_json().await;
    assert_eq!(kept["name"], "Fine");
    assert_eq!(kept["enabled_tools"], agent["enabled_tools"]);
}

#[actix_web::test]
async fn an_unknown_vector_store_is_404_saying_how_to_create_one() {
    let app = spawn_app().await;
    // The spec's Responses example, as written (docs/spec.md#request-shapes).
    let response = app
        .openai()
        .create_response()
        .json(
            &json!({"model": "my-model", "input": "Compare the uploaded design spec",
                    "tools": [{"type": "file_search", "vector_store_ids": ["vs_abc123"]}]}),
        )
        .call()
        .await;
    assert_eq!(response.status(), 404);
    let error = error_body(response).await;
    assert_eq!(error["code"], "not_found");
    let message = error["message"].as_str().unwrap();
    for needed in [
        "vs_abc123",
        "POST /v1/vector_stores",
        "POST /v1/files",
        "/files",
    ] {
        assert!(message.contains(needed), "{needed} in {message}");
    }
    let direct = app.openai().vector_store("vs_abc123").call().await;
    assert_eq!(direct.status(), 404);
    assert!(
        error_body(direct).await["message"]
            .as_str()
            .unwrap()
            .contains("POST /v1/vector_stores")
    );
}

#[actix_web::test]
async fn a_run_resumed_after_a_question_searches_with_the_size_it_was_asked_for() {
    let (engine, _) = start_search_engine().await;
    let (url, site) = (
        engine.clone(),
        engine.trim_start_matches("http://").to_string(),
    );
    let app = spawn_app_with(move |config| {
        config.tools.web_search_url = Some(url);
        config.tools.ssrf_allow_list = vec![site];
    })
    .await;
    let chat = app.new_chat().await;
    app.upstream.script([Reply::tool_call(
        "ask_1",
        "ask_user",
        json!({"question": "Which metal?", "options": ["Gold", "Silver"]}),
    )]);
    let frames = app
        .send(
            &chat,
            json!({"content": "Metal prices?",
                   "web_search_options": {"search_context_size": "low",
                                          "x_tools": ["web_search"]}}),
        )
        .await;
    let correlation_id = frames
        .iter()
        .map(|f| f.json())
        .find(|j| j["type"] == "x_ask_user.question")
        .expect("a question")["correlation_id"]
        .as_str()
        .unwrap()
        .to_string();

    app.upstream.script([
        Reply::tool_call("s1", "web_search", json!({"query": "gold price"})),
        Reply::text("Done."),
    ]);
    let resumed = app
        .chat_api()
        .answer_ask(&chat, &correlation_id)
        .json(&json!({"answer": "Gold"}))
        .call()
        .await;
    assert_eq!(resumed.status(), 200);
    crate::sse::read_all(resumed).await;
    let result: Value = serde_json::from_str(&tool_result_sent(&app, 2)).unwrap();
    let pages = result["fetched_pages"].as_array().unwrap();
    assert_eq!(pages.len(), 2, "{result}");
    for page in pages {
        // `low`: the two pages share 4,000 characters, as before the pause.
        let content = page["content"].as_str().unwrap();
        assert!(
            content.ends_with("[truncated to 2000 characters]"),
            "{}",
            &content[content.len().saturating_sub(80)..]
        );
    }
}
