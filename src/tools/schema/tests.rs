//! The generated schemas' shape, and `check_arguments`: what it refuses, naming the field, and
//! what it fills in.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::*;
use crate::config::{AskUserConfig, ToolsConfig};
use crate::tools::SharedTool;
use crate::tools::ask_user::AskUser;
use crate::tools::calculator::Calculator;
use crate::tools::code_search::CodeSearch;
use crate::tools::fetch::Fetcher;
use crate::tools::fetch_url::FetchUrl;
use crate::tools::gitlab_code_search::GitlabCodeSearch;
use crate::tools::web_search::{Unavailable, WebSearch};

/// A schema like the spec's `get_weather` example (docs/spec.md#tool-schemas), with a default, an
/// enum, a range and a format.
fn weather() -> Value {
    json!({
        "type": "object",
        "properties": {
            "location": {"type": "string", "minLength": 1, "maxLength": 20},
            "units": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
            "days": {"type": "integer", "minimum": 1, "maximum": 7},
            "email": {"type": "string", "format": "email"}
        },
        "required": ["location"],
        "additionalProperties": false
    })
}

fn check(mut arguments: Value) -> Result<Value, ToolError> {
    check_arguments("get_weather", &weather(), &mut arguments).map(|()| arguments)
}

fn refusal(arguments: Value) -> String {
    let err = check(arguments).unwrap_err();
    assert_eq!(err.code, "INVALID_ARGUMENTS");
    assert!(
        err.suggestion.starts_with("Call get_weather again"),
        "{}",
        err.suggestion
    );
    err.message
}

#[test]
fn a_missing_required_property_is_named() {
    let message = refusal(json!({"units": "celsius"}));
    assert!(
        message.contains("\"location\" is a required property"),
        "{message}"
    );
}

#[test]
fn a_wrong_type_names_the_field_by_its_path() {
    let message = refusal(json!({"location": 42}));
    assert!(
        message.contains("/location: 42 is not of type"),
        "{message}"
    );
}

#[test]
fn a_value_outside_the_enum_is_refused() {
    let message = refusal(json!({"location": "Oslo", "units": "kelvin"}));
    assert!(message.contains("/units: "), "{message}");
    assert!(message.contains("kelvin"), "{message}");
}

#[test]
fn ranges_and_lengths_are_enforced() {
    let message = refusal(json!({"location": "Oslo", "days": 8}));
    assert!(
        message.contains("/days: 8 is greater than the maximum of 7"),
        "{message}"
    );
    let message = refusal(json!({"location": ""}));
    assert!(message.contains("/location: "), "{message}");
    let long = "x".repeat(5_000);
    let message = refusal(json!({ "location": long }));
    assert!(message.contains("longer than 20 characters"), "{message}");
    assert!(
        message.len() < 400,
        "the long value is quoted short: {message}"
    );
}

#[test]
fn an_unknown_property_is_refused_by_name() {
    let message = refusal(json!({"location": "Oslo", "city": "Oslo"}));
    assert!(message.contains("'city' was unexpected"), "{message}");
}

#[test]
fn formats_are_checked() {
    let message = refusal(json!({"location": "Oslo", "email": "not an address"}));
    assert!(message.contains("/email: "), "{message}");
    assert!(check(json!({"location": "Oslo", "email": "a@example.com"})).is_ok());
}

#[test]
fn defaults_are_filled_in_and_optional_nulls_left_out() {
    let checked = check(json!({"location": "Oslo", "days": null})).unwrap();
    assert_eq!(checked, json!({"location": "Oslo", "units": "celsius"}));
    let given = check(json!({"location": "Oslo", "units": "fahrenheit"})).unwrap();
    assert_eq!(given["units"], "fahrenheit", "a given value is kept");
    let message = refusal(json!({ "location": null }));
    assert!(message.contains("/location: null"), "{message}");
}

#[test]
fn a_schema_that_does_not_compile_leaves_calls_unchecked() {
    let broken = json!({"type": "object", "properties": {"a": {"type": "no such type"}}});
    let mut arguments = json!({"a": 1});
    assert!(check_arguments("odd", &broken, &mut arguments).is_ok());
}

/// Every built-in tool that needs no chat, as a default configuration builds it.
fn built_in_tools() -> Vec<SharedTool> {
    let config = ToolsConfig {
        gitlab_api_url: Some("http://127.0.0.1:9/api/v4".into()),
        ..ToolsConfig::default()
    };
    let fetcher = Arc::new(Fetcher::new(&config, Duration::from_secs(60)).unwrap());
    let gitlab = GitlabCodeSearch::new(&config).unwrap();
    vec![
        Arc::new(Calculator::new(&config)),
        Arc::new(WebSearch::new(
            Arc::new(Unavailable),
            Arc::clone(&fetcher),
            &config,
        )),
        Arc::new(FetchUrl::new(fetcher, &config)),
        Arc::new(CodeSearch::new(&config)),
        Arc::new(gitlab),
        Arc::new(AskUser::new(AskUserConfig::default())),
    ]
}

#[test]
fn every_built_in_schema_is_an_object_schema_with_the_seed_argument_names() {
    let code_host = [
        "query",
        "repository",
        "path",
        "paths",
        "language",
        "max_results",
    ];
    let expected: [(&str, &[&str], &[&str]); 6] = [
        ("calculator", &["expression"], &["expression"]),
        ("web_search", &["query"], &["query"]),
        (
            "fetch_url",
            &["url", "urls", "discover_links", "max_follow"],
            &[],
        ),
        ("code_search", &code_host, &[]),
        ("gitlab_code_search", &code_host, &[]),
        (
            "ask_user",
            &[
                "question",
                "options",
                "allow_free_text",
                "multi_select",
                "style",
                "fields",
            ],
            &["question"],
        ),
    ];
    let tools = built_in_tools();
    assert_eq!(tools.len(), expected.len());
    for (tool, (name, properties, required)) in tools.iter().zip(expected) {
        assert_eq!(tool.name(), name);
        let parameters = tool.definition().function.parameters.unwrap();
        assert_eq!(parameters["type"], "object", "{name}");
        assert_eq!(parameters["additionalProperties"], false, "{name}");
        for clutter in ["$schema", "$defs", "title", "definitions"] {
            assert!(parameters.get(clutter).is_none(), "{name} has {clutter}");
        }
        let mut names: Vec<&str> = parameters["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        names.sort_unstable();
        let mut wanted = properties.to_vec();
        wanted.sort_unstable();
        assert_eq!(names, wanted, "{name}");
        let mut needed: Vec<&str> = parameters["required"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|n| n.as_str().unwrap())
            .collect();
        needed.sort_unstable();
        assert_eq!(needed, required, "{name}");
        jsonschema::meta::validate(&parameters)
            .unwrap_or_else(|err| panic!("{name}'s parameters are not a valid schema: {err}"));
        assert!(
            jsonschema::validator_for(&parameters).is_ok(),
            "{name} compiles"
        );
        let described = parameters["properties"]
            .as_object()
            .unwrap()
            .values()
            .all(|p| p["description"].is_string());
        assert!(described, "{name}: every property is described");
    }
}

#[test]
fn configured_limits_and_defaults_reach_the_generated_schema() {
    let tools = built_in_tools();
    let parameters = |name: &str| -> Value {
        tools
            .iter()
            .find(|t| t.name() == name)
            .unwrap()
            .definition()
            .function
            .parameters
            .unwrap()
    };
    let config = ToolsConfig::default();
    let calculator = parameters("calculator");
    assert_eq!(
        calculator["properties"]["expression"]["maxLength"],
        config.calculator_max_chars
    );
    let fetch = parameters("fetch_url");
    assert_eq!(fetch["properties"]["discover_links"]["default"], false);
    assert_eq!(fetch["properties"]["max_follow"]["default"], 0);
    assert_eq!(
        fetch["properties"]["max_follow"]["maximum"],
        config.fetch_max_follow
    );
    assert!(
        fetch["properties"]["max_follow"].get("format").is_none(),
        "no Rust integer widths"
    );
    let ask = parameters("ask_user");
    assert_eq!(
        ask["properties"]["style"]["enum"],
        json!(["default", "confirm", "rating", "form"])
    );
    assert_eq!(ask["properties"]["allow_free_text"]["default"], true);
    assert_eq!(
        ask["properties"]["fields"]["items"]["additionalProperties"],
        false
    );
    assert_eq!(
        ask["properties"]["options"]["type"], "array",
        "not nullable"
    );
    let mut arguments = json!({"url": "https://example.com"});
    check_arguments("fetch_url", &fetch, &mut arguments).unwrap();
    assert_eq!(
        arguments,
        json!({"url": "https://example.com", "discover_links": false, "max_follow": 0})
    );
}
