//! Several model servers (`[[llm.providers]]`): two fake upstreams, each a provider; requests,
//! chats and the picker's choices are routed by model name, an unknown model is refused before
//! anything is stored, and a server that is down is marked without breaking the other.

use colloquy::config::{Config, ProviderConfig};
use reqwest::Method;
use secrecy::SecretString;
use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::{FakeUpstream, Reply};
use crate::helpers::{TestApp, error_body, spawn_app_with};

pub(crate) fn provider(id: &str, base_url: &str, models: &[&str]) -> ProviderConfig {
    ProviderConfig {
        id: id.into(),
        base_url: base_url.into(),
        api_key: Some(SecretString::from(format!("{id}-secret"))),
        models: models.iter().map(|m| m.to_string()).collect(),
        context_length: None,
        context_lengths: Default::default(),
        connect_timeout_secs: None,
        first_byte_timeout_secs: None,
        read_timeout_secs: None,
    }
}

/// An app whose provider `a` is its own fake upstream (declaring `alpha`) and `b` the
/// returned one (discovering its models: `beta`).
async fn two_servers(adjust: impl FnOnce(&mut Config, &str)) -> (TestApp, FakeUpstream) {
    let b = FakeUpstream::start().await;
    b.serve_models(&["beta"]);
    let b_url = b.base_url.clone();
    let app = spawn_app_with(|config| {
        config.llm.model = "alpha".into();
        config.llm.providers = vec![
            provider("a", &config.llm.base_url, &["alpha"]),
            provider("b", &b_url, &[]),
        ];
        adjust(config, &b_url);
    })
    .await;
    (app, b)
}

fn completions(received: &[crate::fake_upstream::Recorded]) -> Vec<&Value> {
    received
        .iter()
        .filter(|r| r.path == "/v1/chat/completions")
        .map(|r| &r.body)
        .collect()
}

async fn complete(app: &TestApp, model: &str) -> reqwest::Response {
    app.openai()
        .chat_completions()
        .json(&json!({"model": model, "messages": [{"role": "user", "content": "hi"}]}))
        .call()
        .await
}

#[actix_web::test]
async fn each_model_goes_to_its_own_server_and_the_model_list_has_both() {
    let (app, b) = two_servers(|_, _| {}).await;
    app.upstream.script([Reply::text("From A.")]);
    b.script([Reply::text("From B.")]);

    let listed: Value = app.openai().models().read_json().await;
    let ids: Vec<(&str, &str)> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["id"].as_str().unwrap(), m["owned_by"].as_str().unwrap()))
        .collect();
    assert_eq!(ids, [("alpha", "a"), ("beta", "b")]);

    let alpha: Value = complete(&app, "alpha").await.json().await.unwrap();
    assert_eq!(alpha["choices"][0]["message"]["content"], "From A.");
    let beta: Value = complete(&app, "beta").await.json().await.unwrap();
    assert_eq!(beta["choices"][0]["message"]["content"], "From B.");

    let to_a = app.upstream.received();
    let to_b = b.received();
    assert_eq!(completions(&to_a).len(), 1);
    assert_eq!(completions(&to_a)[0]["model"], "alpha");
    assert_eq!(completions(&to_b).len(), 1);
    assert_eq!(completions(&to_b)[0]["model"], "beta");
    let b_auth = to_b
        .iter()
        .find(|r| r.path == "/v1/chat/completions")
        .and_then(|r| r.authorization.clone());
    assert_eq!(
        b_auth.as_deref(),
        Some("Bearer b-secret"),
        "each server gets its own key"
    );
}

#[actix_web::test]
async fn an_unknown_model_is_a_400_naming_the_available_ones_and_stores_nothing() {
    let (app, b) = two_servers(|_, _| {}).await;
    let chat = app.new_chat().await;
    let response = app
        .openai()
        .chat_completions()
        .json(&json!({"model": "gamma", "x_chat_id": chat,
                    "messages": [{"role": "user", "content": "hi"}]}))
        .call()
        .await;
    assert_eq!(response.status(), 400);
    let error = error_body(response).await;
    assert_eq!(error["code"], "model_not_found");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("gamma") && message.contains("alpha") && message.contains("beta"),
        "{message}"
    );
    let tree: Value = app.chat_api().tree(&chat).read_json().await;
    assert_eq!(tree["data"].as_array().map(Vec::len), Some(0), "{tree}");
    assert!(completions(&app.upstream.received()).is_empty());
    assert!(completions(&b.received()).is_empty());

    let patched = app
        .chat_api()
        .update_chat(&chat)
        .json(&json!({"model": "gamma"}))
        .send()
        .await
        .unwrap();
    assert_eq!(patched.status(), 400, "the picker cannot choose it either");
}

#[actix_web::test]
async fn a_server_down_is_marked_and_leaves_the_other_usable() {
    let (app, b) = two_servers(|_, _| {}).await;
    // Known while it was up; then it goes away.
    let models: Value = app.chat_api().models().read_json().await;
    assert_eq!(models["data"][1]["available"], true, "{models}");
    b.stop().await;
    // Lists are kept a few seconds; the probe sees the server gone once they are stale.
    let models = crate::helpers::eventually(
        "the picker marks beta unavailable",
        std::time::Duration::from_secs(15),
        || async {
            let models: Value = app.chat_api().models().call().await.json().await.ok()?;
            (models["data"][1]["available"] == false).then_some(models)
        },
    )
    .await;
    assert_eq!(models["data"][0]["id"], "alpha");
    assert_eq!(models["data"][0]["available"], true);
    assert_eq!(models["data"][1]["id"], "beta", "{models}");

    let ready = app
        .anonymous(Method::GET, "/health/ready")
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 200, "the other server still serves");
    let ready: Value = ready.json().await.unwrap();
    assert_eq!(ready["status"], "degraded");
    assert_eq!(ready["providers"]["a"], "ok");
    assert_eq!(ready["providers"]["b"], "unreachable");

    app.upstream.script([Reply::text("Still here.")]);
    let alpha: Value = complete(&app, "alpha").await.json().await.unwrap();
    assert_eq!(alpha["choices"][0]["message"]["content"], "Still here.");
    let beta = complete(&app, "beta").await;
    assert_eq!(beta.status(), 502);
    assert_eq!(error_body(beta).await["code"], "upstream_unreachable");
}

#[actix_web::test]
async fn colliding_names_are_listed_with_their_provider_and_routed_by_it() {
    let (app, b) = two_servers(|config, b_url| {
        config.llm.providers = vec![
            provider("a", &config.llm.base_url, &["alpha", "shared"]),
            provider("b", b_url, &["shared"]),
        ];
    })
    .await;
    let listed: Value = app.openai().models().read_json().await;
    let ids: Vec<&str> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["alpha", "a/shared", "b/shared"]);
    b.script([Reply::text("B's shared.")]);
    let answer: Value = complete(&app, "b/shared").await.json().await.unwrap();
    assert_eq!(answer["choices"][0]["message"]["content"], "B's shared.");
    assert_eq!(
        completions(&b.received())[0]["model"],
        "shared",
        "the server gets its own name for the model"
    );
}

#[actix_web::test]
async fn a_chat_remembers_its_model_new_chats_start_with_the_default_and_answers_name_theirs() {
    let (app, b) = two_servers(|_, _| {}).await;
    let chat = app.new_chat().await;
    let patched = app
        .chat_api()
        .update_chat(&chat)
        .json(&json!({"model": "beta"}))
        .send()
        .await
        .unwrap();
    assert_eq!(patched.status(), 200);
    let got: Value = app.chat_api().chat(&chat).read_json().await;
    assert_eq!(got["model"], "beta");

    b.script([Reply::text("From B.")]);
    app.send_text(&chat, "hi").await;
    assert_eq!(completions(&b.received())[0]["model"], "beta");
    assert!(completions(&app.upstream.received()).is_empty());
    let tree: Value = app.chat_api().tree(&chat).read_json().await;
    let answer = tree["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .expect("an answer");
    assert_eq!(answer["content"], "From B.");
    assert_eq!(answer["model"], "beta");

    // The caller's default: new chats start with it.
    let set = app
        .chat_api()
        .set_default_model()
        .json(&json!({"model": "beta"}))
        .send()
        .await
        .unwrap();
    assert_eq!(set.status(), 200);
    let models: Value = app.chat_api().models().read_json().await;
    assert_eq!(models["default"], "beta");
    assert_eq!(models["server_default"], "alpha");
    let fresh = app.create_chat("Fresh").await;
    assert_eq!(fresh["model"], "beta");
    // An agent's model comes first.
    let agent: Value = app
        .api()
        .create_agent()
        .json(&json!({"name": "Small", "model": "alpha"}))
        .read_json()
        .await;
    let with_agent: Value = app
        .chat_api()
        .create_chat()
        .json(&json!({"agent_id": agent["id"]}))
        .read_json()
        .await;
    assert_eq!(with_agent["model"], "alpha", "{with_agent}");
    let refused = app
        .chat_api()
        .set_default_model()
        .json(&json!({"model": "gamma"}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
}

#[actix_web::test]
async fn an_agent_naming_an_unknown_model_is_a_400_on_create_and_patch_and_nothing_is_stored() {
    let (app, _b) = two_servers(|_, _| {}).await;
    let refused = app
        .api()
        .create_agent()
        .json(&json!({"name": "Ghost", "model": "gamma"}))
        .call()
        .await;
    assert_eq!(refused.status(), 400);
    let error = error_body(refused).await;
    assert_eq!(error["code"], "model_not_found");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("gamma") && message.contains("alpha") && message.contains("beta"),
        "{message}"
    );
    let listed: Value = app.api().agents().read_json().await;
    assert!(
        listed["agents"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["name"] != "Ghost"),
        "nothing stored: {listed}"
    );

    let agent: Value = app
        .api()
        .create_agent()
        .json(&json!({"name": "Real", "model": "beta"}))
        .read_json()
        .await;
    assert_eq!(agent["model"], "beta", "{agent}");
    let agent_id = agent["id"].as_str().unwrap();
    let patched = app
        .api()
        .update_agent(agent_id)
        .json(&json!({"model": "gamma", "name": "Renamed"}))
        .send()
        .await
        .unwrap();
    assert_eq!(patched.status(), 400);
    let error = error_body(patched).await;
    assert_eq!(error["code"], "model_not_found");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("gamma") && message.contains("alpha") && message.contains("beta"),
        "{message}"
    );
    let stored: Value = app.api().agent(agent_id).read_json().await;
    assert_eq!(stored["model"], "beta", "unchanged: {stored}");
    assert_eq!(
        stored["name"], "Real",
        "nothing of the refused PATCH: {stored}"
    );
    let to_default = app
        .api()
        .update_agent(agent_id)
        .json(&json!({"model": null}))
        .send()
        .await
        .unwrap();
    assert_eq!(to_default.status(), 200, "null: the server's default");
}

#[actix_web::test]
async fn an_agents_model_is_routed_to_the_second_server() {
    let (app, b) = two_servers(|_, _| {}).await;
    let agent: Value = app
        .api()
        .create_agent()
        .json(&json!({"name": "On B", "model": "beta"}))
        .read_json()
        .await;
    let chat = app.new_chat_with(&json!({"agent_id": agent["id"]})).await;
    b.script([Reply::text("From B, as the agent.")]);
    app.send_text(&chat, "hi").await;
    let to_b = b.received();
    assert_eq!(completions(&to_b).len(), 1, "the agent's turn went to B");
    assert_eq!(completions(&to_b)[0]["model"], "beta");
    assert!(completions(&app.upstream.received()).is_empty());
}

#[actix_web::test]
async fn with_providers_declared_embeddings_still_go_to_their_own_server() {
    let embeddings = FakeUpstream::start().await;
    let embeddings_url = embeddings.base_url.clone();
    let (app, b) = two_servers(|config, _| {
        config.memory.embedder = Some(colloquy::config::EmbedderKind::OpenAi);
        config.llm.embedding_base_url = Some(embeddings_url);
    })
    .await;
    let chat = app.new_chat().await;
    let saved = app
        .chat_api()
        .create_memory(&chat)
        .json(&json!({"content": "The user's cat is called Miso"}))
        .call()
        .await;
    assert_eq!(saved.status(), 201);
    let embedded = |received: Vec<crate::fake_upstream::Recorded>| {
        received
            .iter()
            .filter(|r| r.path == "/v1/embeddings")
            .count()
    };
    assert!(
        embedded(embeddings.received()) >= 1,
        "the embeddings server"
    );
    assert_eq!(embedded(app.upstream.received()), 0, "not provider a");
    assert_eq!(embedded(b.received()), 0, "not provider b");
}

#[actix_web::test]
async fn a_deep_think_role_model_no_running_server_serves_is_a_start_up_warning() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let down = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    let _app = spawn_app_with(|config| {
        config.llm.model = "alpha".into();
        config.llm.providers = vec![
            provider("a", &config.llm.base_url, &["alpha"]),
            provider("sleepy", &down, &[]),
        ];
        config.deep_think.subtask_model = Some("researcher-xyz".into());
    })
    .await;
    crate::helpers::eventually(
        "the start-up warning",
        std::time::Duration::from_secs(15),
        || async {
            crate::helpers::captured_log().lines().find_map(|line| {
                (line.contains("deep_think.subtask_model")
                    && line.contains("researcher-xyz")
                    && line.contains("sleepy"))
                .then(|| line.to_string())
            })
        },
    )
    .await;
}
