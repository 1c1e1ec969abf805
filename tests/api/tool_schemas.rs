//! Tool arguments checked against each tool's JSON Schema before it runs: a violation is fed
//! back as an `INVALID_ARGUMENTS` result naming the field, and the model corrects itself.

use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::spawn_app;

/// The tool result fed back in upstream request `request`.
fn fed_back(received: &[crate::fake_upstream::Recorded], request: usize) -> Value {
    let messages = received[request].body["messages"].as_array().unwrap();
    let tool = messages.iter().rev().find(|m| m["role"] == "tool").unwrap();
    serde_json::from_str(tool["content"].as_str().unwrap()).unwrap()
}

#[actix_web::test]
async fn a_schema_violation_is_an_error_result_the_scripted_model_then_corrects() {
    let app = spawn_app().await;
    app.upstream.script([
        Reply::tool_call("c1", "calculator", json!({"expr": "2+2"})),
        Reply::tool_call("c2", "calculator", json!({"expression": 4})),
        Reply::tool_call("c3", "calculator", json!({"expression": "2+2"})),
        Reply::text("2+2 is 4."),
    ]);

    let response = app
        .openai()
        .chat_completions()
        .json(
            &json!({"messages": [{"role": "user", "content": "What is 2+2?"}],
                    "web_search_options": {"x_tools": ["calculator"]}}),
        )
        .call()
        .await;

    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["choices"][0]["message"]["content"], "2+2 is 4.");
    let received = app.upstream.received();
    assert_eq!(received.len(), 4, "the loop went on after each refusal");
    let unknown = fed_back(&received, 1);
    assert_eq!(unknown["code"], "INVALID_ARGUMENTS", "{unknown}");
    let error = unknown["error"].as_str().unwrap();
    assert!(
        error.contains("\"expression\" is a required property"),
        "{error}"
    );
    assert!(error.contains("'expr' was unexpected"), "{error}");
    assert!(
        unknown["suggestion"]
            .as_str()
            .unwrap()
            .starts_with("Call calculator again"),
        "{unknown}"
    );
    let mistyped = fed_back(&received, 2);
    assert_eq!(mistyped["code"], "INVALID_ARGUMENTS");
    let error = mistyped["error"].as_str().unwrap();
    assert!(
        error.contains("/expression: 4 is not of type \"string\""),
        "{error}"
    );
    assert_eq!(
        fed_back(&received, 3),
        json!({"expression": "2+2", "result": 4.0})
    );
}
