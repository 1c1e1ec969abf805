//! The code interpreter in the app (issue 46): a chat's settings turn it on, and its call's
//! card shows the code, what it printed, the chart it drew and the file it wrote (a download
//! link to `/v1/containers/…/content` the page's session may fetch), live and after a reload.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;

const CODE: &str = "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\n\
plt.savefig('/mnt/data/chart.png')\nprint('mean=2.0')";

#[actix_web::test]
async fn a_chat_with_the_code_interpreter_on_shows_the_code_its_output_chart_and_file() {
    let app = crate::browser::browser_app(|_| {}).await;
    let chat = app.new_chat().await;
    app.upstream.script([
        Reply::tool_call("c1", "code_interpreter", json!({"code": CODE})),
        // The answer waits, so the scenario sees the card while the run goes on.
        Reply::text("The mean is 2.0; the chart is below.").delay(Duration::from_secs(3)),
        // The next turn's code fails: its card shows the error.
        Reply::tool_call(
            "c2",
            "code_interpreter",
            json!({"code": "print('before')\n1 / 0"}),
        ),
        Reply::text("Dividing by zero fails."),
    ]);
    crate::browser::run_scenario(
        &app,
        "code_interpreter",
        &[("CHAT_ID", chat.clone()), ("CODE", CODE.to_string())],
    )
    .await;

    // The settings' checkbox put the tool in the request: the model was offered it.
    let completions: Vec<Value> = app
        .upstream
        .received()
        .into_iter()
        .filter(|r| r.path == "/v1/chat/completions")
        .map(|r| r.body)
        .collect();
    let offered: Vec<&str> = completions[0]["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str())
                .collect()
        })
        .unwrap_or_default();
    assert!(offered.contains(&"code_interpreter"), "{offered:?}");
    // The call ran once, in the chat's container, and wrote the chart the page downloaded.
    let result_of = |call: &str| -> Value {
        let message = completions
            .iter()
            .flat_map(|body| body["messages"].as_array().cloned().unwrap_or_default())
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == call)
            .unwrap_or_else(|| panic!("{call}'s result went back to the model"));
        serde_json::from_str(message["content"].as_str().unwrap()).unwrap()
    };
    let result = result_of("c1");
    assert!(
        result["logs"].as_str().unwrap().contains("mean=2.0"),
        "{result}"
    );
    let container = result["container_id"].as_str().unwrap();
    let files: Value = app
        .request(Method::GET, &format!("/v1/containers/{container}/files"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        files["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["path"] == "/mnt/data/chart.png"),
        "{files}"
    );
    // The second call's code raised: a result with the error, which the card showed.
    let failed = result_of("c2");
    assert!(
        failed["error"]
            .as_str()
            .is_some_and(|e| e.contains("ZeroDivisionError")),
        "{failed}"
    );
    // The chart is also kept with the answer, which the page showed after its reload.
    let messages: Value = app.chat_api().messages(&chat).read_json().await;
    let answer = messages["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| {
            m["role"] == "assistant"
                && m["content"]
                    .as_str()
                    .is_some_and(|c| c.starts_with("The mean"))
        })
        .expect("the answer is stored")
        .clone();
    assert!(
        answer["parts"]
            .as_array()
            .is_some_and(|parts| parts.iter().any(|p| p["type"] == "image")),
        "{answer}"
    );
}
