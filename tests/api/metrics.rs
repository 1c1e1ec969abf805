//! `GET /metrics`: Prometheus' text format, read back with a Prometheus text parser, counting
//! a scripted run's tool calls (by outcome and error code, with latency, size and tokens),
//! its HTTP requests and the run itself.

use serde_json::{Value, json};

use crate::fake_upstream::Reply;
use crate::helpers::spawn_app;

fn value(samples: &[prometheus_parse::Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    samples
        .iter()
        .filter(|s| s.metric == name)
        .filter(|s| labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
        .map(|s| match &s.value {
            prometheus_parse::Value::Counter(v)
            | prometheus_parse::Value::Gauge(v)
            | prometheus_parse::Value::Untyped(v) => *v,
            prometheus_parse::Value::Histogram(buckets) => {
                buckets.iter().map(|b| b.count).fold(0.0, f64::max)
            }
            prometheus_parse::Value::Summary(_) => 0.0,
        })
        .sum()
}

#[actix_web::test]
async fn metrics_count_a_scripted_runs_tool_calls_requests_and_run() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    app.upstream.script([
        Reply::tool_call("c1", "calculator", json!({"expression": "2^10"})).and_tool_call(
            "c2",
            "calculator",
            json!({"expression": "1/0"}),
        ),
        Reply::text("1024, and 1/0 has no value."),
    ]);
    app.send(
        &chat,
        json!({"content": "compute", "web_search_options": {"x_tools": ["calculator"]}}),
    )
    .await;
    let failed: Value = app.upstream.received()[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| serde_json::from_str::<Value>(m["content"].as_str().unwrap()).unwrap())
        .find(|r| r.get("error").is_some())
        .expect("the failed call's result");
    let code = failed["code"].as_str().unwrap().to_string();

    let response = app.get("/metrics").await;
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    let text = response.text().await.unwrap();
    let lines = text.lines().map(|l| Ok(l.to_string()));
    let scrape = prometheus_parse::Scrape::parse(lines).expect("Prometheus text format");
    let samples = &scrape.samples;
    let calc = [("tool", "calculator")];
    assert_eq!(
        value(
            samples,
            "colloquy_tool_calls_total",
            &[("tool", "calculator"), ("outcome", "success")]
        ),
        1.0
    );
    assert_eq!(
        value(
            samples,
            "colloquy_tool_calls_total",
            &[("tool", "calculator"), ("outcome", "failure")]
        ),
        1.0
    );
    assert_eq!(
        value(
            samples,
            "colloquy_tool_failures_total",
            &[("tool", "calculator"), ("code", &code)]
        ),
        1.0,
        "failures by the code the model was given ({code})"
    );
    assert_eq!(
        value(samples, "colloquy_tool_duration_seconds_count", &calc),
        2.0
    );
    assert_eq!(
        value(samples, "colloquy_tool_result_bytes_count", &calc),
        2.0
    );
    assert!(value(samples, "colloquy_tool_result_bytes_sum", &calc) > 10.0);
    assert!(value(samples, "colloquy_tool_result_tokens_total", &calc) > 2.0);
    assert_eq!(
        value(samples, "colloquy_runs_started_total", &[("kind", "run")]),
        1.0
    );
    assert_eq!(
        value(
            samples,
            "colloquy_runs_finished_total",
            &[("stop_reason", "completed")]
        ),
        1.0
    );
    assert_eq!(
        value(
            samples,
            "colloquy_http_requests_total",
            &[
                ("method", "POST"),
                ("route", "/chat/api/:chat_id/messages"),
                ("status", "200")
            ]
        ),
        1.0,
        "requests are counted by route pattern, not path"
    );
    assert!(!text.contains(&chat), "no chat id in any label");

    // The metrics are the server's: not for other users.
    let key = app.create_user_with_key("mallory").await;
    let refused = app
        .http
        .get(app.url("/metrics"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 403);
    let anonymous = app
        .anonymous(reqwest::Method::GET, "/metrics")
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
}
