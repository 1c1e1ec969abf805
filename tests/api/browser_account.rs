//! The account, agents and export pages in a real browser (issue 35 points 3, 5 and 6): each
//! test arranges the server and the fake upstream, runs its `tests/browser/` scenario, then
//! checks what the server saw — the key the page made used by the official OpenAI Python SDK,
//! the agent's two tools the only ones offered, the imported chat the same tree.

use std::process::Command;

use serde_json::{Value, json};

use crate::browser::{browser_app, run_scenario};
use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::TestApp;
use crate::openai_python::python_with_openai;
use crate::sse::read_all;

#[actix_web::test]
async fn an_api_key_made_on_the_account_page_works_with_the_openai_python_sdk() {
    let python = tokio::task::spawn_blocking(python_with_openai)
        .await
        .unwrap();
    let app = browser_app(|_| {}).await;
    let out = app.data_dir.path().join("account-scenario.json");
    run_scenario(&app, "account", &[("OUT_FILE", out.display().to_string())]).await;
    let handed: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let account: Value = app.auth().account().read_json().await;
    assert_eq!(
        account["time_zone"], "Europe/Paris",
        "the page saved the zone"
    );
    let key = handed["key"].as_str().unwrap();
    // The page's own example, with the key in place of YOUR_KEY.
    let example = handed["example"].as_str().unwrap().replace("YOUR_KEY", key);

    app.upstream
        .script([Reply::text("Hello from your script.")]);
    let mut command = Command::new(python);
    command.args(["-c", &example]);
    let output = actix_web::rt::task::spawn_blocking(move || {
        crate::subprocess::output_within(
            command,
            "the account page's Python example",
            crate::subprocess::CLIENT_LIMIT,
        )
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(stdout.trim(), "Hello from your script.");

    let keys: Value = app.auth().api_keys().read_json().await;
    let used = keys["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "my script")
        .expect("the page's key");
    assert!(
        used["last_used_at"].is_string(),
        "its use is recorded: {used}"
    );
    let me: Value = app.auth().me().read_json().await;
    assert_eq!(me["display_name"], "Ada Admin");
}

#[actix_web::test]
async fn a_password_changed_on_the_account_page_signs_the_other_browser_out() {
    let app = browser_app(|_| {}).await;
    let made = app
        .auth()
        .create_user()
        .json(&json!({"username": "pat", "password": "old password 1"}))
        .call()
        .await;
    assert_eq!(made.status(), 201);
    run_scenario(&app, "account_password", &[]).await;
    let login = app
        .as_anonymous()
        .auth()
        .login()
        .json(&json!({"username": "pat", "password": "new password 2"}))
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), 200);
}

#[actix_web::test]
async fn an_agent_made_on_the_agents_page_with_two_tools_is_offered_those_and_the_chat_tools() {
    let app = browser_app(|_| {}).await;
    app.upstream
        .script([Reply::text("Answered by the researcher.")]);
    let kb = app
        .api()
        .create_knowledge_base()
        .json(&json!({"name": "Gold notes"}))
        .call()
        .await;
    assert_eq!(kb.status(), 201, "a knowledge base to choose");
    run_scenario(&app, "agents_page", &[]).await;
    let last = app
        .upstream
        .received()
        .into_iter()
        .rfind(|r| r.path == "/v1/chat/completions")
        .expect("the chat's request");
    let mut offered: Vec<&str> = last.body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str())
                .collect()
        })
        .unwrap_or_default();
    offered.sort();
    // The two it chose, and every chat's own tools beside them (always present).
    assert_eq!(
        offered,
        [
            "ask_user",
            "calculator",
            "create_artifact",
            "recall_memory",
            "save_memory",
            "update_artifact",
            "web_search"
        ]
    );
    let first = last.body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default();
    assert!(
        first.starts_with("Cite your sources, briefly."),
        "the edited instructions come first: {first}"
    );
    let agents: Value = app.api().agents().read_json().await;
    assert_eq!(agents["total"], 1, "deleted: only the default is left");
}

/// The tree of `chat` as shape: roles, texts, parents' positions, the active branch.
async fn shape(app: &TestApp, chat: &str) -> Vec<Value> {
    let tree: Value = app.chat_api().tree(chat).read_json().await;
    let nodes = tree["data"].as_array().unwrap().clone();
    let position = |id: &Value| nodes.iter().position(|n| &n["id"] == id);
    nodes
        .iter()
        .map(|n| {
            json!({"role": n["role"], "content": n["content"],
                   "parent": position(&n["parent_id"]), "active": n["on_active_branch"]})
        })
        .collect()
}

#[actix_web::test]
async fn a_chat_exported_and_imported_in_the_browser_has_the_same_tree() {
    let app = browser_app(|_| {}).await;
    let chat = app.create_chat("Trip plans").await["id"]
        .as_str()
        .unwrap()
        .to_string();
    app.upstream.script([
        Reply::tool_call(
            "call_1",
            "create_artifact",
            json!({"identifier": "packing-list", "title": "Packing list",
                   "type": "text/markdown", "content": "- socks\n"}),
        ),
        Reply::text("Lisbon, and here is a packing list."),
        Reply::text("Porto, for the wine."),
    ]);
    app.send_text(&chat, "Where should I go?").await;
    let path: Value = app.chat_api().messages(&chat).read_json().await;
    let answer = path["data"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "assistant")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let regen = app
        .chat_api()
        .regenerate(&chat, &answer)
        .send()
        .await
        .unwrap();
    assert_eq!(regen.status(), 200);
    read_all(regen).await;

    run_scenario(&app, "export", &[]).await;
    let chats: Value = app.chat_api().list_chats().read_json().await;
    let copy = chats["data"]
        .as_array()
        .unwrap()
        .iter()
        // Titled apart from the original it was exported from (issue 50).
        .find(|c| c["title"] == "Trip plans (imported)" && c["id"] != chat.as_str())
        .expect("the imported chat")["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(shape(&app, &copy).await, shape(&app, &chat).await);
}

#[actix_web::test]
async fn a_key_revoked_and_a_session_signed_out_on_the_account_page_stop_working() {
    let python = tokio::task::spawn_blocking(python_with_openai)
        .await
        .unwrap();
    let app = browser_app(|_| {}).await;
    let made = app
        .auth()
        .create_user()
        .json(&json!({"username": "pat", "password": "pat password 1"}))
        .call()
        .await;
    assert_eq!(made.status(), 201);
    let out = app.data_dir.path().join("account-actions.json");
    run_scenario(
        &app,
        "account_actions",
        &[("OUT_FILE", out.display().to_string())],
    )
    .await;
    let handed: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let key = handed["key"].as_str().unwrap();

    // The revoked key, with the official SDK: an authentication error (401).
    let script = format!(
        "import openai\n\
         client = openai.OpenAI(base_url={:?}, api_key={:?})\n\
         try:\n    client.models.list()\n    print('accepted')\n\
         except openai.AuthenticationError as err:\n    print('refused', err.status_code)\n",
        format!("{}/v1", app.address),
        key
    );
    let mut command = Command::new(python);
    command.args(["-c", &script]);
    let output = actix_web::rt::task::spawn_blocking(move || {
        crate::subprocess::output_within(
            command,
            "the SDK with a revoked key",
            crate::subprocess::CLIENT_LIMIT,
        )
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        stdout.trim(),
        "refused 401",
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
