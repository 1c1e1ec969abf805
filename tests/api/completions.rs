//! `/v1/chat/completions`: streaming and not, with server-side tools, ephemeral and stored.

use entities::ids::ChatId;
use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::{error_body, spawn_app};
use crate::sse::{Frame, content, read_all};

#[actix_web::test]
async fn a_non_streaming_completion_accumulates_progress_events_in_metadata() {
    let app = spawn_app().await;
    app.upstream.script([
        Reply::tool_call("c1", "calculator", json!({"expression": "2^10"})),
        Reply::text("It is 1024."),
    ]);
    let response = app
        .openai()
        .chat_completions()
        .json(
            &json!({"model": "fake-model", "messages": [{"role": "user", "content": "2^10?"}],
                    "web_search_options": {"x_tools": ["calculator"]}}),
        )
        .call()
        .await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(body["choices"][0]["message"]["content"], "It is 1024.");
    assert_eq!(body["choices"][0]["finish_reason"], "stop");
    assert_eq!(body["usage"]["total_tokens"], 28 + 15);
    assert!(
        body.get("metadata").is_none(),
        "OpenAI's metadata is a map of strings; the event lists are elsewhere"
    );
    let research = body["x_metadata"]["x_research"].as_array().unwrap();
    let types: Vec<&str> = research
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "x_research.calculating",
            "x_research.result",
            "x_research.complete"
        ]
    );
    // A plain request runs in a fresh chat of its own, which the client may continue; it is
    // not in the chat list (the UI's) until someone opens it there.
    let chat_id = body["x_chat_id"]
        .as_str()
        .expect("the chat's id")
        .to_string();
    let chats = entities::chats::Entity::find().all(&app.db).await.unwrap();
    assert_eq!(chats.len(), 1);
    assert_eq!(chats[0].id, chat_id.as_str());
    assert!(chats[0].ephemeral);
    let listed: Value = app.chat_api().list_chats().read_json().await;
    assert_eq!(listed["data"], json!([]));
    let sent = &app.upstream.received()[0].body;
    assert_eq!(
        sent["messages"].as_array().unwrap().last().unwrap()["content"],
        "2^10?"
    );

    // `store: false`: nothing is stored, and the upstream gets the messages as they are.
    app.upstream.script([Reply::text("Four.")]);
    let response = app
        .openai()
        .chat_completions()
        .json(
            &json!({"model": "fake-model", "messages": [{"role": "user", "content": "2+2?"}],
                    "store": false}),
        )
        .call()
        .await;
    let body: Value = response.json().await.unwrap();
    assert!(body.get("x_chat_id").is_none(), "{body}");
    assert_eq!(
        entities::chats::Entity::find()
            .all(&app.db)
            .await
            .unwrap()
            .len(),
        1
    );
    let sent = &app.upstream.received()[2].body;
    assert_eq!(
        sent["messages"],
        json!([{"role": "user", "content": "2+2?"}])
    );
    assert!(
        sent.get("tools").is_none(),
        "no chat tools without a chat: {sent}"
    );
}

use sea_orm::EntityTrait;

#[actix_web::test]
async fn a_streaming_completion_speaks_openai_chunks_with_typed_x_events() {
    let app = spawn_app().await;
    app.upstream.script([
        Reply::tool_call("c1", "calculator", json!({"expression": "1+2"})),
        Reply::text("Three."),
    ]);
    let response = app
        .openai()
        .chat_completions()
        .json(
            &json!({"messages": [{"role": "user", "content": "1+2"}], "stream": true,
                    "web_search_options": {"x_tools": ["calculator"], "max_iterations": 3}}),
        )
        .call()
        .await;
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let frames = read_all(response).await;
    assert!(
        frames.iter().all(|f| f.event.is_none()),
        "no named events on /v1"
    );
    let kinds: Vec<String> = frames.iter().map(Frame::kind).collect();
    assert_eq!(kinds.first().unwrap(), "chunk", "role chunk first");
    assert_eq!(frames[0].json()["choices"][0]["delta"]["role"], "assistant");
    for expected in [
        "x_research.calculating",
        "x_research.result",
        "x_research.complete",
        "x_chat.metadata",
    ] {
        assert!(
            kinds.iter().any(|k| k == expected),
            "{expected} missing from {kinds:?}"
        );
    }
    assert_eq!(kinds.last().unwrap(), "[DONE]");
    assert_eq!(content(&frames), "Three.");
    let finish = frames
        .iter()
        .map(Frame::json)
        .find(|j| j["choices"][0]["finish_reason"].is_string())
        .unwrap();
    assert_eq!(finish["choices"][0]["finish_reason"], "stop");
    assert_eq!(finish["object"], "chat.completion.chunk");
    // Every line is a chunk a strict client parses, with the one choice the quickstart loop
    // reads; typed lines carry an empty delta.
    for frame in frames.iter().filter(|f| f.data != "[DONE]") {
        let json = frame.json();
        assert_eq!(json["object"], "chat.completion.chunk", "{json}");
        assert!(
            json["id"].is_string() && json["created"].is_number(),
            "{json}"
        );
        assert_eq!(json["choices"].as_array().map(Vec::len), Some(1), "{json}");
        assert!(json["choices"][0]["delta"].is_object(), "{json}");
        if json["type"].is_string() {
            assert_eq!(json["choices"][0]["delta"], json!({}), "{json}");
        }
    }
    assert!(
        frames.iter().all(|f| f.json().get("usage").is_none()),
        "no usage unless asked for"
    );
}

#[actix_web::test]
async fn usage_is_streamed_once_when_asked_for_and_an_error_ends_with_finish_reason_error() {
    let app = spawn_app().await;
    app.upstream.script([Reply::text("Fine.")]);
    let frames = read_all(
        app.openai()
            .chat_completions()
            .json(
                &json!({"messages": [{"role": "user", "content": "hi"}], "stream": true,
                    "stream_options": {"include_usage": true}}),
            )
            .call()
            .await,
    )
    .await;
    let with_usage: Vec<Value> = frames
        .iter()
        .filter(|f| f.data != "[DONE]")
        .map(Frame::json)
        .filter(|j| j.get("usage").is_some())
        .collect();
    assert_eq!(with_usage.len(), 1, "usage on one line: {with_usage:?}");
    assert_eq!(with_usage[0]["type"], "x_chat.metadata");
    assert_eq!(with_usage[0]["choices"], json!([]));
    assert!(with_usage[0]["usage"]["total_tokens"].as_u64().unwrap() > 0);

    app.upstream
        .script([Reply::text("This answer breaks off").cut_after(2)]);
    let frames = read_all(
        app.openai()
            .chat_completions()
            .json(&json!({"messages": [{"role": "user", "content": "hi"}], "stream": true}))
            .call()
            .await,
    )
    .await;
    assert!(frames.iter().any(|f| f.kind() == "error"));
    let finish = frames
        .iter()
        .filter(|f| f.data != "[DONE]")
        .map(Frame::json)
        .find(|j| j["choices"][0]["finish_reason"].is_string())
        .unwrap();
    assert_eq!(finish["choices"][0]["finish_reason"], "error");
}

#[actix_web::test]
async fn x_chat_id_runs_inside_a_stored_chat_and_store_true_keeps_an_ephemeral_one() {
    let app = spawn_app().await;
    let chat = app.create_chat("Via OpenAI").await;
    let chat_id = chat["id"].as_str().unwrap();
    app.upstream.script([
        Reply::text("first"),
        Reply::text("second"),
        Reply::text("stored"),
    ]);
    for question in ["q1", "q2"] {
        let response = app
            .openai()
            .chat_completions()
            .json(
                &json!({"messages": [{"role": "user", "content": question}], "x_chat_id": chat_id}),
            )
            .call()
            .await;
        assert_eq!(response.status(), 200);
    }
    let second = &app.upstream.received()[1].body["messages"];
    assert_eq!(
        second,
        &json!([{"role": "user", "content": "q1"}, {"role": "assistant", "content": "first"},
                {"role": "user", "content": "q2"}])
    );

    let stored = app
        .openai()
        .chat_completions()
        .json(
            &json!({"messages": [{"role": "system", "content": "Be terse."},
                                 {"role": "user", "content": "keep me"}], "store": true}),
        )
        .call()
        .await;
    let stored: Value = stored.json().await.unwrap();
    let stored_id = stored["x_chat_id"].as_str().unwrap();
    let messages: Value = app.chat_api().messages(stored_id).read_json().await;
    let roles: Vec<&str> = messages["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant"]);

    let eve = app.create_user_with_key("eve").await;
    let foreign = app
        .as_key(&eve)
        .openai()
        .chat_completions()
        .json(&json!({"messages": [{"role": "user", "content": "hi"}], "x_chat_id": chat_id}))
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 404);
}

#[actix_web::test]
async fn bad_completion_requests_are_clear_4xx_errors() {
    let app = spawn_app().await;
    for (body, needle) in [
        (json!({"messages": []}), "messages must not be empty"),
        (
            json!({"messages": [{"role": "assistant", "content": "hi"}]}),
            "last message",
        ),
        (
            json!({"messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function"}]}),
            "client-side tools",
        ),
        (
            json!({"messages": [{"role": "user", "content": "hi"}], "web_search_options": {"max_iterations": 0}}),
            "max_iterations",
        ),
        (json!({"messages": "hi"}), "invalid type"),
        (
            json!({"messages": [{"role": "wizard", "content": "hi"}]}),
            "unknown variant",
        ),
    ] {
        let response = app.openai().chat_completions().json(&body).call().await;
        assert_eq!(response.status(), 400, "{body}");
        let error = error_body(response).await;
        assert!(
            error["message"].as_str().unwrap().contains(needle),
            "{error} lacks {needle}"
        );
    }
    assert!(app.upstream.received().is_empty());
}

#[actix_web::test]
async fn an_upstream_failure_on_a_non_streaming_request_is_a_gateway_error() {
    let app = spawn_app().await;
    app.upstream.script([
        Reply::status(500, "a"),
        Reply::status(500, "b"),
        Reply::status(500, "c"),
    ]);
    let response = app
        .openai()
        .chat_completions()
        .json(&json!({"messages": [{"role": "user", "content": "hi"}]}))
        .call()
        .await;
    assert_eq!(response.status(), 502);
    error_body(response).await;
}

#[actix_web::test]
async fn an_unknown_model_is_the_clients_error_not_a_gateway_error() {
    let app = spawn_app().await;
    app.upstream
        .script([Reply::status(404, "model 'nope' not found")]);
    let response = app
        .openai()
        .chat_completions()
        .json(&json!({"model": "nope", "messages": [{"role": "user", "content": "hi"}]}))
        .call()
        .await;
    assert_eq!(response.status(), 400);
    let error = error_body(response).await;
    assert_eq!(error["code"], "upstream_rejected");
    assert!(error["message"].as_str().unwrap().contains("not found"));
}

#[actix_web::test]
async fn the_responses_api_takes_x_tools_from_web_search_preview() {
    let app = spawn_app().await;
    app.upstream.script([
        Reply::tool_call("c1", "calculator", json!({"expression": "6*7"})),
        Reply::text("42."),
        Reply::tool_call("c2", "calculator", json!({"expression": "1+1"})),
        Reply::text("Two."),
    ]);
    let response = app
        .openai()
        .create_response()
        .json(
            &json!({"model": "fake-model", "input": "6*7?", "instructions": "Be exact.",
                    "tools": [{"type": "web_search_preview", "x_tools": ["calculator"]}]}),
        )
        .call()
        .await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["object"], "response");
    assert_eq!(body["status"], "completed");
    assert_eq!(body["output"][0]["content"][0]["type"], "output_text");
    assert_eq!(body["output_text"], "42.");
    // Keyed by tool (seed 003, issue 47): the calculator's events under its name, and
    // `x_research` holding only the research summary, which is no one tool's.
    assert_eq!(
        body["x_metadata"]["calculator"][0]["type"],
        "x_research.calculating"
    );
    let summary: Vec<&str> = body["x_metadata"]["x_research"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(summary, ["x_research.complete"]);
    assert_eq!(
        body["metadata"],
        json!({}),
        "OpenAI's metadata: the request's"
    );
    let first = &app.upstream.received()[0].body;
    assert_eq!(
        first["messages"][0],
        json!({"role": "system", "content": "Be exact."})
    );
    let offered: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    // A stored response is a chat turn: the chat's own tools come with it.
    assert!(offered.contains(&"calculator"), "{offered:?}");
    assert!(
        !offered.contains(&"web_search") && !offered.contains(&"fetch_url"),
        "only the x_tools named: {offered:?}"
    );

    let streamed = app
        .openai().create_response().json(&json!({"input": [{"role": "user", "content": [{"type": "input_text", "text": "1+1?"}]}],
                    "stream": true, "x_events": true,
                    "tools": [{"type": "web_search_preview", "x_tools": ["calculator"]}]})).call()
        .await;
    let frames = read_all(streamed).await;
    let events: Vec<&str> = frames.iter().filter_map(|f| f.event.as_deref()).collect();
    assert_eq!(events.first(), Some(&"response.created"));
    assert_eq!(events.last(), Some(&"response.completed"));
    // Asked for with `x_events`, Colloquy's own progress events come too.
    assert!(events.contains(&"x_research.calculating"), "{events:?}");
    assert!(events.contains(&"response.output_text.delta"));
    let completed = frames.last().unwrap().json();
    assert_eq!(completed["response"]["output_text"], "Two.");

    let unsupported = app
        .openai()
        .create_response()
        .json(&json!({"input": "hi", "tools": [{"type": "function", "name": "f"}]}))
        .call()
        .await;
    assert_eq!(unsupported.status(), 400);
}

#[actix_web::test]
async fn the_calculator_holds_expressions_to_the_configured_length() {
    let app = crate::helpers::spawn_app_with(|config| config.tools.calculator_max_chars = 10).await;
    app.upstream.script([
        Reply::tool_call("c1", "calculator", json!({"expression": "1 + 2 + 3 + 4"})),
        Reply::text("That was too long for the calculator."),
    ]);

    let response = app
        .openai()
        .chat_completions()
        .json(
            &json!({"messages": [{"role": "user", "content": "Add them up"}],
                    "web_search_options": {"x_tools": ["calculator"]}}),
        )
        .call()
        .await;

    assert_eq!(response.status(), 200);
    let received = app.upstream.received();
    let offered = &received[0].body["tools"][0]["function"];
    assert_eq!(offered["name"], "calculator");
    let description = offered["parameters"]["properties"]["expression"]["description"]
        .as_str()
        .unwrap();
    assert!(
        description.contains("at most 10 characters"),
        "{description}"
    );
    let messages = received[1].body["messages"].as_array().unwrap().clone();
    let tool_message = messages.iter().find(|m| m["role"] == "tool").unwrap();
    let result: Value = serde_json::from_str(tool_message["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        result["code"], "INVALID_ARGUMENTS",
        "the schema refuses it first"
    );
    let error = result["error"].as_str().unwrap();
    assert!(
        error.contains("/expression: \"1 + 2 + 3 + 4\" is longer than 10 characters"),
        "{error}"
    );
}

#[actix_web::test]
async fn usage_the_upstream_did_not_report_is_estimated_and_says_so() {
    let app = spawn_app().await;
    app.upstream.script([
        Reply::text("Paris is the capital of France.").without_usage(),
        Reply::text("Measured."),
    ]);
    let ask = |content: &str| json!({"model": "fake-model", "messages": [{"role": "user", "content": content}]});
    let estimated: Value = app
        .openai()
        .chat_completions()
        .json(&ask("What is the capital of France?"))
        .read_json()
        .await;
    let usage = &estimated["usage"];
    assert_eq!(usage["estimated"], true, "{estimated}");
    assert_eq!(usage["completion_tokens"], 7, "{usage}");
    assert!(usage["prompt_tokens"].as_u64().unwrap() >= 11, "{usage}");

    let measured: Value = app
        .openai()
        .chat_completions()
        .json(&ask("Again?"))
        .read_json()
        .await;
    assert_eq!(measured["usage"]["prompt_tokens"], 10);
    assert!(measured["usage"].get("estimated").is_none(), "{measured}");
}

#[actix_web::test]
async fn tool_choice_forces_the_first_call_only_and_is_checked() {
    let app = spawn_app().await;
    app.upstream.script([
        Reply::tool_call("c1", "calculator", json!({"expression": "6*7"})),
        Reply::text("It is 42."),
    ]);
    let forced = json!({"type": "function", "function": {"name": "calculator"}});
    let response = app
        .openai()
        .chat_completions()
        .json(
            &json!({"model": "fake-model", "messages": [{"role": "user", "content": "6*7?"}],
                    "tool_choice": forced,
                    "web_search_options": {"x_tools": ["calculator"]}}),
        )
        .call()
        .await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["choices"][0]["message"]["content"], "It is 42.");
    let sent = app.upstream.received();
    assert_eq!(
        sent[0].body["tool_choice"], forced,
        "the first call is forced"
    );
    assert!(
        sent[1].body.get("tool_choice").is_none(),
        "after the tool round the model may answer: {}",
        sent[1].body
    );

    for (choice, says) in [
        (json!("sometimes"), "tool_choice must be"),
        (
            json!({"type": "function", "function": {"name": "web_search"}}),
            "not among this request's tools",
        ),
        (json!("required"), "needs tools"),
    ] {
        let tools = if choice == "required" {
            json!(null)
        } else {
            json!({"x_tools": ["calculator"]})
        };
        // Without a chat (store: false) a request with no web_search_options has no tools.
        let refused = app
            .openai()
            .chat_completions()
            .json(&json!({"model": "fake-model", "store": false,
                        "messages": [{"role": "user", "content": "hi"}],
                        "tool_choice": choice, "web_search_options": tools}))
            .call()
            .await;
        assert_eq!(refused.status(), 400, "{choice}");
        let error = error_body(refused).await;
        assert!(
            error["message"].as_str().unwrap().contains(says),
            "{choice}: {error}"
        );
    }
    assert_eq!(
        app.upstream.received().len(),
        2,
        "nothing refused reached the model"
    );
}

#[actix_web::test]
async fn openai_parameters_reach_the_upstream_or_are_refused_by_name() {
    let app = spawn_app().await;
    app.upstream.script([Reply::text("{\"colour\": \"red\"}")]);
    let schema = json!({"type": "json_schema", "json_schema": {"name": "colour", "strict": true,
        "schema": {"type": "object", "properties": {"colour": {"type": "string"}},
                   "required": ["colour"], "additionalProperties": false}}});
    let response = app
        .openai()
        .chat_completions()
        .json(&json!({"model": "fake-model",
                    "messages": [{"role": "user", "content": "A colour as JSON"}],
                    "response_format": schema, "seed": 7, "presence_penalty": 0.5,
                    "frequency_penalty": 0.25, "logit_bias": {"50256": -100}, "user": "u-1",
                    "parallel_tool_calls": false, "n": 1, "service_tier": "auto",
                    "x_custom": "not for the upstream"}))
        .call()
        .await;
    assert_eq!(response.status(), 200);
    let sent = app.upstream.received()[0].body.clone();
    assert_eq!(sent["response_format"], schema);
    for (field, value) in [
        ("seed", json!(7)),
        ("presence_penalty", json!(0.5)),
        ("frequency_penalty", json!(0.25)),
        ("logit_bias", json!({"50256": -100})),
        ("user", json!("u-1")),
        ("parallel_tool_calls", json!(false)),
        ("service_tier", json!("auto")),
    ] {
        assert_eq!(sent[field], value, "{field} forwarded: {sent}");
    }
    assert!(
        sent.get("x_custom").is_none() && sent.get("n").is_none(),
        "{sent}"
    );

    for (body, says) in [
        (json!({"n": 2}), "n must be 1"),
        (json!({"logprobs": true}), "logprobs"),
        (json!({"top_logprobs": 3}), "top_logprobs"),
        (json!({"functions": [{"name": "f"}]}), "functions"),
    ] {
        let mut request = json!({"messages": [{"role": "user", "content": "hi"}]});
        for (key, value) in body.as_object().unwrap() {
            request[key] = value.clone();
        }
        let refused = app.openai().chat_completions().json(&request).call().await;
        assert_eq!(refused.status(), 400, "{body}");
        let error = error_body(refused).await;
        assert!(
            error["message"].as_str().unwrap().contains(says),
            "{body}: {error}"
        );
    }
    assert_eq!(
        app.upstream.received().len(),
        1,
        "nothing refused reached the model"
    );
}

#[actix_web::test]
async fn an_image_only_message_a_prefill_and_a_large_inline_image_are_accepted() {
    let app = spawn_app().await;
    app.upstream.script([
        Reply::text("A cat."),
        Reply::text(" world!"),
        Reply::text("A big picture."),
    ]);
    // A PNG's signature, then filler: the type is judged by the bytes.
    let image = |bytes: usize| {
        use base64::Engine;
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        png.resize(bytes, 7);
        let data = base64::engine::general_purpose::STANDARD.encode(png);
        json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{data}")}})
    };
    let only_image = json!({"messages": [{"role": "user", "content": [image(64)]}]});
    let response = app
        .openai()
        .chat_completions()
        .json(&only_image)
        .call()
        .await;
    assert_eq!(response.status(), 200, "{:?}", response.text().await);
    let sent = app.upstream.received()[0].body.clone();
    assert_eq!(
        sent["messages"].as_array().unwrap().last().unwrap()["content"][0]["type"],
        "image_url"
    );

    let prefill = json!({"messages": [{"role": "user", "content": "Say hello world"},
                                      {"role": "assistant", "content": "Hello"}]});
    let response = app.openai().chat_completions().json(&prefill).call().await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["choices"][0]["message"]["content"], " world!");
    let sent = app.upstream.received()[1].body.clone();
    assert_eq!(
        sent["messages"].as_array().unwrap().last().unwrap()["role"],
        "assistant"
    );
    let mut stored = prefill.clone();
    stored["store"] = json!(true);
    let refused = app.openai().chat_completions().json(&stored).call().await;
    assert_eq!(refused.status(), 400);

    // A 5 MB photo (about 7 MB of JSON) fits /v1's own limit; 40 MB does not.
    let big = json!({"messages": [{"role": "user", "content": [
        {"type": "text", "text": "What is this?"}, image(5 * 1024 * 1024)]}]});
    let response = app.openai().chat_completions().json(&big).call().await;
    assert_eq!(response.status(), 200);
    let huge = json!({"messages": [{"role": "user", "content": [image(40 * 1024 * 1024)]}]});
    let response = app.openai().chat_completions().json(&huge).call().await;
    assert_eq!(response.status(), 413);
    // Elsewhere the JSON limit stays small.
    let chat = app.create_chat("Small").await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let response = app
        .chat_api()
        .send_message(&chat)
        .json(&json!({"content": "x".repeat(5 * 1024 * 1024)}))
        .call()
        .await;
    assert_eq!(response.status(), 413);
}

fn weather_tool() -> Value {
    json!({"type": "function", "function": {"name": "get_weather",
        "description": "The weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"]}}})
}

#[actix_web::test]
async fn a_client_tool_call_is_returned_and_its_result_continues_the_conversation() {
    let app = spawn_app().await;
    app.upstream.script([
        Reply::tool_call("call_w", "get_weather", json!({"city": "Oslo"})),
        Reply::text("It is sunny in Oslo."),
    ]);
    let asked = json!({"role": "user", "content": "Weather in Oslo?"});
    let response = app
        .openai()
        .chat_completions()
        .json(
            &json!({"model": "fake-model", "messages": [asked], "tools": [weather_tool()],
                    "web_search_options": {"x_tools": ["calculator"]}}),
        )
        .call()
        .await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    let choice = &body["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls", "{body}");
    assert!(choice["message"]["content"].is_null());
    let call = &choice["message"]["tool_calls"][0];
    assert_eq!(call["id"], "call_w");
    assert_eq!(call["type"], "function");
    assert_eq!(call["function"]["name"], "get_weather");
    let arguments: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"city": "Oslo"}));
    let offered: Vec<String> = app.upstream.received()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(offered.contains(&"calculator".into()) && offered.contains(&"get_weather".into()));

    // The client ran it: the conversation goes on from the tool's result, as SDKs send it.
    let mut assistant = choice["message"].clone();
    assistant["content"] = Value::Null;
    let response = app
        .openai()
        .chat_completions()
        .json(
            &json!({"model": "fake-model", "tools": [weather_tool()], "messages": [
                asked, assistant,
                {"role": "tool", "tool_call_id": "call_w", "content": "{\"sky\": \"clear\"}"}]}),
        )
        .call()
        .await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(
        body["choices"][0]["message"]["content"],
        "It is sunny in Oslo."
    );
    assert_eq!(body["choices"][0]["finish_reason"], "stop");
    let sent = app.upstream.received()[1].body["messages"].clone();
    assert_eq!(
        sent[1]["content"], "",
        "a null content is sent as \"\": {sent}"
    );
    assert_eq!(sent[1]["tool_calls"][0]["id"], "call_w");
    assert_eq!(sent[2]["role"], "tool");
    assert_eq!(sent[2]["tool_call_id"], "call_w");
}

#[actix_web::test]
async fn a_streamed_client_tool_call_arrives_as_tool_call_deltas() {
    let app = spawn_app().await;
    app.upstream.script([Reply::tool_call(
        "call_w",
        "get_weather",
        json!({"city": "Oslo"}),
    )]);
    let frames = read_all(
        app.openai()
            .chat_completions()
            .json(
                &json!({"messages": [{"role": "user", "content": "Weather?"}], "stream": true,
                    "tools": [weather_tool()]}),
            )
            .call()
            .await,
    )
    .await;
    let chunks: Vec<Value> = frames
        .iter()
        .filter(|f| f.data != "[DONE]")
        .map(Frame::json)
        .collect();
    let delta = chunks
        .iter()
        .find(|c| c["choices"][0]["delta"]["tool_calls"].is_array())
        .expect("a tool_calls delta");
    let call = &delta["choices"][0]["delta"]["tool_calls"][0];
    assert_eq!(call["index"], 0);
    assert_eq!(call["id"], "call_w");
    assert_eq!(call["function"]["name"], "get_weather");
    let finish = chunks
        .iter()
        .find(|c| c["choices"][0]["finish_reason"].is_string())
        .unwrap();
    assert_eq!(finish["choices"][0]["finish_reason"], "tool_calls");
}

#[actix_web::test]
async fn client_tools_that_cannot_be_served_are_refused_by_name() {
    let app = spawn_app().await;
    let chat = app.create_chat("Stored").await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let calculator = json!({"type": "function", "function": {"name": "calculator"}});
    for (extra, says) in [
        (
            json!({"tools": [calculator], "web_search_options": {"x_tools": ["calculator"]}}),
            "server-side tools",
        ),
        (json!({"tools": [weather_tool(), weather_tool()]}), "twice"),
        (
            json!({"tools": [{"type": "function", "function": {"name": "bad name!"}}]}),
            "letters, digits",
        ),
        // Tool results in a chat where no call waits for them.
        (
            json!({"x_chat_id": chat, "messages": [
                {"role": "user", "content": "hi"},
                {"role": "tool", "tool_call_id": "call_x", "content": "42"}]}),
            "no tool calls waiting",
        ),
        // ... and where there is no chat to continue.
        (
            json!({"store": true, "messages": [
                {"role": "user", "content": "hi"},
                {"role": "tool", "tool_call_id": "call_x", "content": "42"}]}),
            "waiting client tool calls",
        ),
    ] {
        let mut request = json!({"messages": [{"role": "user", "content": "hi"}]});
        for (key, value) in extra.as_object().unwrap() {
            request[key] = value.clone();
        }
        let refused = app.openai().chat_completions().json(&request).call().await;
        assert_eq!(refused.status(), 400, "{extra}");
        let error = error_body(refused).await;
        assert!(
            error["message"].as_str().unwrap().contains(says),
            "{extra}: {error}"
        );
    }
    assert!(app.upstream.received().is_empty());
}

#[actix_web::test]
async fn a_client_tool_called_in_a_stored_chat_waits_for_its_result_across_a_restart() {
    let app = spawn_app().await;
    let chat = app.create_chat("Weather").await["id"]
        .as_str()
        .unwrap()
        .to_string();
    app.upstream.script([
        Reply::tool_call("call_c", "calculator", json!({"expression": "6*7"})),
        Reply {
            pieces: vec!["Let me look.".into()],
            ..Reply::tool_call("call_w", "get_weather", json!({"city": "Oslo"}))
        }
        .and_tool_call("call_t", "get_weather", json!({"city": "Turku"})),
    ]);
    let asked = json!({"role": "user", "content": "Weather in Oslo and Turku?"});
    let response = app
        .openai()
        .chat_completions()
        .json(
            &json!({"model": "fake-model", "x_chat_id": chat, "messages": [asked],
                    "tools": [weather_tool()],
                    "web_search_options": {"x_tools": ["calculator"]}}),
        )
        .call()
        .await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["choices"][0]["finish_reason"], "tool_calls", "{body}");
    assert_eq!(body["x_chat_id"], json!(chat));
    let calls = body["choices"][0]["message"]["tool_calls"].clone();
    assert_eq!(calls.as_array().unwrap().len(), 2, "{body}");
    // Not a question for the person: the UI's list of questions stays empty.
    let asks: Value = app
        .chat_api()
        .asks(&chat)
        .with_query("status=all")
        .read_json()
        .await;
    assert_eq!(asks["data"], json!([]), "{asks}");

    let app = app.restart().await;
    app.upstream
        .script([Reply::text("Oslo is sunny, Turku rainy.")]);
    let assistant = body["choices"][0]["message"].clone();
    let oslo = json!({"role": "tool", "tool_call_id": "call_w", "content": "sunny"});
    let turku = json!({"role": "tool", "tool_call_id": "call_t", "content": "rainy"});
    // Every waiting call needs its result, and only those.
    for (results, says) in [
        (json!([oslo]), "call_t is missing"),
        (
            json!([oslo, turku, {"role": "tool", "tool_call_id": "call_z", "content": "?"}]),
            "not one of the calls",
        ),
    ] {
        let mut messages = vec![asked.clone(), assistant.clone()];
        messages.extend(results.as_array().unwrap().iter().cloned());
        let refused = app
            .openai()
            .chat_completions()
            .json(&json!({"x_chat_id": chat, "messages": messages, "tools": [weather_tool()]}))
            .call()
            .await;
        assert_eq!(refused.status(), 400);
        let error = error_body(refused).await;
        assert!(error["message"].as_str().unwrap().contains(says), "{error}");
    }
    let frames = read_all(
        app.openai()
            .chat_completions()
            .json(
                &json!({"x_chat_id": chat, "stream": true, "tools": [weather_tool()],
                    "messages": [asked, assistant, turku, oslo]}),
            )
            .call()
            .await,
    )
    .await;
    let text: String = frames
        .iter()
        .filter(|f| f.data != "[DONE]")
        .filter_map(|f| {
            f.json()["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_string)
        })
        .collect();
    assert_eq!(text, "Oslo is sunny, Turku rainy.");
    // The model saw the server-side round, its own calls and both results, in call order.
    let received = app.upstream.received();
    let sent = received.last().unwrap().body["messages"].clone();
    let roles: Vec<&str> = sent
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles[roles.len() - 6..],
        ["user", "assistant", "tool", "assistant", "tool", "tool"],
        "{sent}"
    );
    let n = roles.len();
    assert_eq!(
        sent[n - 5]["tool_calls"][0]["function"]["name"],
        "calculator"
    );
    assert!(
        sent[n - 4]["content"].as_str().unwrap().contains("42"),
        "{sent}"
    );
    assert_eq!(sent[n - 3]["tool_calls"].as_array().unwrap().len(), 2);
    assert_eq!(sent[n - 3]["content"], "Let me look.");
    assert_eq!(sent[n - 2]["tool_call_id"], "call_w");
    assert_eq!(sent[n - 2]["content"], "sunny");
    assert_eq!(sent[n - 1]["tool_call_id"], "call_t");
    assert_eq!(sent[n - 1]["content"], "rainy");
    let offered = received.last().unwrap().body["tools"].clone();
    assert!(offered.to_string().contains("get_weather"), "{offered}");
    // The chat holds one answer, with what was said before the calls.
    let history: Value = app.chat_api().messages(&chat).read_json().await;
    let last = history["data"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "assistant", "{history}");
    assert_eq!(
        last["content"], "Let me look.\n\nOslo is sunny, Turku rainy.",
        "{history}"
    );
    // The results were delivered once.
    let again = app
        .openai()
        .chat_completions()
        .json(
            &json!({"x_chat_id": chat, "messages": [{"role": "tool", "tool_call_id": "call_w",
                    "content": "sunny"}]}),
        )
        .call()
        .await;
    assert_eq!(again.status(), 400);
}

#[actix_web::test]
async fn a_plain_request_gets_a_chat_so_seed_000s_artifact_flow_works_and_can_continue() {
    let app = spawn_app().await;
    app.upstream.script([
        Reply::tool_call(
            "call_create",
            "create_artifact",
            json!({"identifier": "fibonacci.py", "title": "Fibonacci Generator",
                   "type": "text/x-python", "language": "python",
                   "content": "def fib(n):\n    return n"}),
        ),
        Reply::text("I've created a Fibonacci function."),
        Reply::text("It returns n."),
    ]);
    let response = app
        .openai().chat_completions().json(&json!({"model": "fake-model", "stream": true, "messages": [
                {"role": "user", "content": "Create a Python function to calculate fibonacci numbers"}]})).call()
        .await;
    let chat = response.headers()["x-chat-id"]
        .to_str()
        .unwrap()
        .to_string();
    let frames = read_all(response).await;
    assert!(
        frames.iter().any(|f| f.kind() == "x_artifact.created"),
        "{frames:?}"
    );
    let listed: Value = app.chat_api().artifacts(&chat).read_json().await;
    assert_eq!(listed["artifacts"][0]["identifier"], "fibonacci.py");

    // The client continues in its chat, which remembers the turn.
    let response = app
        .openai().chat_completions().json(&json!({"x_chat_id": chat, "messages": [{"role": "user", "content": "What does it return?"}]})).call()
        .await;
    assert_eq!(response.status(), 200);
    let sent = app.upstream.received().last().unwrap().body.clone();
    let texts: Vec<&str> = sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(
        texts.contains(&"I've created a Fibonacci function."),
        "{texts:?}"
    );
}

#[actix_web::test]
async fn chats_of_plain_requests_are_swept_after_their_retention_unless_opened_in_the_ui() {
    use sea_orm::{ActiveModelTrait, IntoActiveModel, Set};
    let app = spawn_app().await;
    let mut made = Vec::new();
    for question in ["first?", "second?"] {
        app.upstream.script([Reply::text("ok")]);
        let body: Value = app
            .openai()
            .chat_completions()
            .json(&json!({"messages": [{"role": "user", "content": question}]}))
            .read_json()
            .await;
        made.push(body["x_chat_id"].as_str().unwrap().to_string());
    }
    // The second is opened in the UI (a browser session): it is kept, and listed.
    let session = app.admin_session().await;
    let opened = app
        .as_session(&session)
        .chat_api()
        .chat(&made[1])
        .send()
        .await
        .unwrap();
    assert_eq!(opened.status(), 200);
    let listed: Value = app.chat_api().list_chats().read_json().await;
    assert_eq!(listed["data"][0]["id"], made[1].as_str());

    let old = chrono::Utc::now() - chrono::Duration::days(31);
    for id in &made {
        let chat = entities::chats::Entity::find_by_id(ChatId::from_string(id.clone()))
            .one(&app.db)
            .await
            .unwrap()
            .unwrap();
        let mut active = chat.into_active_model();
        active.updated_at = Set(old);
        active.update(&app.db).await.unwrap();
    }
    assert_eq!(
        colloquy::startup::sweep_api_chats(&app.state)
            .await
            .unwrap(),
        1
    );
    let left: Vec<String> = entities::chats::Entity::find()
        .all(&app.db)
        .await
        .unwrap()
        .into_iter()
        .map(|chat| chat.id.into_string())
        .collect();
    assert_eq!(left, [made[1].clone()], "the unopened one is gone");
    let gone = app.chat_api().chat(&made[0]).call().await;
    assert_eq!(gone.status(), 404);
}
