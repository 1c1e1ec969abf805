//! Routing by model name over declared models (no server is asked: nothing here refreshes).

use super::*;
use crate::config::{LlmConfig, ProviderConfig};

fn provider(id: &str, models: &[&str]) -> ProviderConfig {
    ProviderConfig {
        id: id.into(),
        // Port 9 (discard) is closed: nothing here may reach a server.
        base_url: "http://127.0.0.1:9/v1".into(),
        api_key: None,
        models: models.iter().map(|m| m.to_string()).collect(),
        context_length: None,
        context_lengths: Default::default(),
        connect_timeout_secs: None,
        first_byte_timeout_secs: None,
        read_timeout_secs: None,
    }
}

fn client(providers: Vec<ProviderConfig>, model: &str) -> LlmClient {
    LlmClient::new(&LlmConfig {
        model: model.into(),
        providers,
        ..LlmConfig::default()
    })
    .unwrap()
}

fn routed(client: &LlmClient, model: &str) -> Option<(String, String)> {
    client
        .route(model)
        .map(|(provider, name)| (provider.id.clone(), name))
}

#[test]
fn a_declared_model_goes_to_its_provider_and_a_prefix_picks_one_of_two() {
    let client = client(
        vec![
            provider("local", &["small", "shared"]),
            provider("big", &["large", "shared"]),
        ],
        "small",
    );
    let pair = |p: &str, m: &str| Some((p.to_string(), m.to_string()));
    assert_eq!(routed(&client, "small"), pair("local", "small"));
    assert_eq!(routed(&client, "large"), pair("big", "large"));
    assert_eq!(routed(&client, "big/shared"), pair("big", "shared"));
    assert_eq!(
        routed(&client, "shared"),
        pair("local", "shared"),
        "the first serving it"
    );
    assert_eq!(routed(&client, "nope"), None);
    assert_eq!(routed(&client, "big/"), None);
    let ids: Vec<String> = client.known().into_iter().map(|e| e.id).collect();
    assert_eq!(ids, ["small", "local/shared", "large", "big/shared"]);
}

#[test]
fn the_llm_section_alone_takes_any_model_name() {
    let client = client(Vec::new(), "llama3.2");
    assert_eq!(
        routed(&client, "anything:7b"),
        Some(("default".into(), "anything:7b".into()))
    );
    assert_eq!(client.default_model(), "llama3.2");
}

#[test]
fn the_default_model_is_one_a_provider_declares() {
    let declared = client(vec![provider("a", &["x", "y"])], "y");
    assert_eq!(declared.default_model(), "y");
    let undeclared = client(vec![provider("a", &["x", "y"])], "llama3.2");
    assert_eq!(undeclared.default_model(), "x");
}

#[test]
fn an_unknown_model_names_the_available_ones() {
    let err = LlmError::UnknownModel {
        model: "gpt-9".into(),
        available: vec!["small".into(), "large".into()],
    };
    assert_eq!(err.status(), actix_web::http::StatusCode::BAD_REQUEST);
    assert_eq!(err.code(), "model_not_found");
    assert_eq!(
        err.public_message(),
        "no model server serves the model \"gpt-9\"; available: small, large"
    );
}
