//! The blanket `Tool` impl (the schema derived from `Args` and adjusted by `parameters`, bad
//! arguments refused as before, behaviour forwarded), and the converted built-in tools still
//! sending the definitions they sent as dynamic tools.

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::*;
use crate::config::{Config, EmailConfig, ToolsConfig};
use crate::tools::schema::set_keyword;
use crate::tools::{INVALID_ARGUMENTS, ToolError};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EchoArgs {
    /// What to echo.
    text: String,
    /// How many times.
    times: Option<u8>,
}

/// A tool overriding every optional behaviour.
struct Echo;

impl TypedTool for Echo {
    type Args = EchoArgs;

    fn name(&self) -> &str {
        "echo"
    }
    fn description(&self) -> Cow<'_, str> {
        "Echo the text.".into()
    }
    fn parameters(&self, mut parameters: Value) -> Value {
        set_keyword(&mut parameters, "/properties/text", "maxLength", 12);
        parameters
    }
    fn progress(&self) -> Option<ProgressKind> {
        Some(ProgressKind::Other)
    }
    fn own_events(&self) -> bool {
        true
    }
    fn call_message(&self, args: Option<&EchoArgs>) -> String {
        match args {
            Some(args) => format!("Echoing {}", args.text),
            None => "Echoing".into(),
        }
    }
    fn cacheable(&self) -> bool {
        true
    }
    fn pauses(&self) -> bool {
        true
    }
    fn call(&self, args: EchoArgs) -> ToolFuture {
        let times = usize::from(args.times.unwrap_or(1));
        Box::pin(async move { Ok(json!(args.text.repeat(times))) })
    }
    fn call_with_id(&self, call_id: &str, args: EchoArgs) -> ToolFuture {
        let call_id = call_id.to_string();
        Box::pin(async move { Ok(json!({"call": call_id, "text": args.text})) })
    }
    fn sized(&self, size: SearchContextSize) -> Option<SharedTool> {
        let _ = size;
        Some(Arc::new(Minimal))
    }
    fn context_size(&self) -> Option<SearchContextSize> {
        Some(SearchContextSize::High)
    }
    fn cache_scope(&self) -> &str {
        "scope"
    }
    fn result_limit(&self) -> Option<usize> {
        Some(7)
    }
}

#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

/// A tool overriding nothing it need not.
struct Minimal;

impl TypedTool for Minimal {
    type Args = NoArgs;

    fn name(&self) -> &str {
        "minimal"
    }
    fn description(&self) -> Cow<'_, str> {
        "Does nothing.".into()
    }
    fn progress(&self) -> Option<ProgressKind> {
        None
    }
    fn call(&self, _: NoArgs) -> ToolFuture {
        Box::pin(async { Ok(Value::Null) })
    }
}

#[test]
fn the_definition_is_the_schema_derived_from_the_arguments_as_parameters_adjusts_it() {
    let definition = Tool::definition(&Echo);
    assert_eq!(definition.function.name, "echo");
    assert_eq!(
        definition.function.description.as_deref(),
        Some("Echo the text.")
    );
    let mut expected = parameters_for::<EchoArgs>();
    assert_eq!(
        expected["properties"]["text"]["description"],
        "What to echo."
    );
    assert!(expected["properties"]["text"].get("maxLength").is_none());
    expected["properties"]["text"]["maxLength"] = json!(12);
    assert_eq!(definition.function.parameters, Some(expected));

    let minimal = Tool::definition(&Minimal);
    assert_eq!(
        minimal.function.parameters,
        Some(parameters_for::<NoArgs>()),
        "without `parameters`, the derived schema as it is"
    );
    assert_eq!(
        super::definition::<EchoArgs>("echo", "Echo the text.", |derived| Echo.parameters(derived)),
        definition,
        "what `describe` functions build is the instance's definition"
    );
}

#[tokio::test]
async fn arguments_that_do_not_parse_are_refused_as_invalid_before_the_call() {
    let bad = json!({"text": "hi", "loud": true});
    let expected = parse_arguments::<EchoArgs>(bad.clone()).err().unwrap();
    for err in [
        Echo.run(bad.clone()).await.unwrap_err(),
        Echo.run_call("call_1", bad).await.unwrap_err(),
        Echo.run(json!({"text": 3})).await.unwrap_err(),
        Echo.run(json!("not an object")).await.unwrap_err(),
    ] {
        assert_eq!(err.code, INVALID_ARGUMENTS, "{err:?}");
        assert_eq!(
            err.suggestion,
            ToolError::invalid_arguments("").suggestion,
            "the same error as parsing by hand gave"
        );
    }
    let err = Echo
        .run(json!({"text": "hi", "loud": true}))
        .await
        .unwrap_err();
    assert_eq!(err, expected);
    assert!(err.message.contains("unknown field `loud`"), "{err:?}");
}

#[tokio::test]
async fn parsed_arguments_reach_call_and_call_with_id() {
    assert_eq!(
        Echo.run(json!({"text": "ab", "times": 2})).await.unwrap(),
        json!("abab")
    );
    assert_eq!(
        Echo.run_call("call_9", json!({"text": "ab"}))
            .await
            .unwrap(),
        json!({"call": "call_9", "text": "ab"})
    );
    assert_eq!(
        Minimal.run_call("call_9", json!({})).await.unwrap(),
        Value::Null,
        "without `call_with_id`, `call`"
    );
}

#[test]
fn behaviour_is_forwarded_and_defaults_are_the_dynamic_ones() {
    let echo: &dyn Tool = &Echo;
    assert_eq!(echo.name(), "echo");
    assert_eq!(echo.progress(), Some(ProgressKind::Other));
    assert!(echo.own_events() && echo.cacheable() && echo.pauses());
    assert_eq!(echo.call_message(&json!({"text": "hi"})), "Echoing hi");
    assert_eq!(
        echo.call_message(&json!({"text": 1})),
        "Echoing",
        "arguments that do not parse are announced without them"
    );
    assert_eq!(
        echo.sized(SearchContextSize::Low)
            .map(|t| t.name().to_string()),
        Some("minimal".to_string())
    );
    assert_eq!(echo.context_size(), Some(SearchContextSize::High));
    assert_eq!(echo.cache_scope(), "scope");
    assert_eq!(echo.result_limit(), Some(7));

    let minimal: &dyn Tool = &Minimal;
    assert_eq!(minimal.progress(), None);
    assert!(!minimal.own_events() && !minimal.cacheable() && !minimal.pauses());
    assert_eq!(minimal.call_message(&json!({})), "Running minimal");
    assert_eq!(minimal.call_message(&json!(null)), "Running minimal");
    assert!(minimal.sized(SearchContextSize::High).is_none());
    assert_eq!(minimal.context_size(), None);
    assert_eq!(minimal.cache_scope(), "");
    assert_eq!(minimal.result_limit(), None);
}

/// The parameters of a definition.
fn parameters(tool: &dyn Tool) -> Value {
    tool.definition().function.parameters.unwrap()
}

#[test]
fn the_calculator_sends_the_definition_it_sent_as_a_dynamic_tool() {
    let calculator = crate::tools::calculator::Calculator::new(&ToolsConfig::default());
    let definition = serde_json::to_value(calculator.definition()).unwrap();
    assert_eq!(
        definition,
        json!({"type": "function", "function": {
            "name": "calculator",
            "description": "Evaluate a mathematical expression exactly instead of guessing. \
                Operators: + - * / ^. Functions: sqrt, log (base 10), ln, sin, cos, tan, abs, \
                floor, ceil, round, min, max. Constants: pi, e.",
            "parameters": {
                "additionalProperties": false,
                "properties": {"expression": {
                    "description": "The expression, e.g. \"10000 * (1 + 0.05)^3\". It may be at \
                        most 1000 characters long.",
                    "maxLength": 1000,
                    "minLength": 1,
                    "type": "string",
                }},
                "required": ["expression"],
                "type": "object",
            },
        }})
    );
}

#[test]
fn the_research_tools_send_the_definitions_they_sent_as_dynamic_tools() {
    let config = ToolsConfig {
        gitlab_api_url: Some("https://gitlab.example/api/v4".into()),
        ..ToolsConfig::default()
    };
    let fetcher =
        Arc::new(crate::tools::fetch::Fetcher::new(&config, Duration::from_secs(60)).unwrap());
    let fetch_url = crate::tools::fetch_url::FetchUrl::new(fetcher.clone(), &config);
    let definition = fetch_url.definition();
    assert!(
        definition
            .function
            .description
            .unwrap()
            .ends_with("Pages share a budget of 24000 characters.")
    );
    let fetch = parameters(&fetch_url);
    assert_eq!(fetch["properties"]["urls"]["maxItems"], 5);
    assert_eq!(
        fetch["properties"]["max_follow"],
        json!({"default": 0, "description": "How many discovered same-site links to fetch as \
            well. Only used with discover_links. From 0 to 3.", "maximum": 3, "minimum": 0,
            "type": "integer"})
    );

    let search = crate::tools::web_search::WebSearch::new(
        Arc::new(crate::tools::web_search::Unavailable),
        fetcher,
        &config,
    );
    assert_eq!(
        parameters(&search),
        json!({"additionalProperties": false, "properties": {"query": {
            "description": "The search query to look up on the web.", "maxLength": 500,
            "minLength": 1, "type": "string"}}, "required": ["query"], "type": "object"})
    );

    let github = crate::tools::code_search::CodeSearch::new(&config);
    let gitlab = crate::tools::gitlab_code_search::GitlabCodeSearch::new(&config).unwrap();
    let (github, gitlab) = (parameters(&github), parameters(&gitlab));
    assert!(
        github["properties"]["query"]["description"]
            .as_str()
            .unwrap()
            .starts_with("Code search query. Supports GitHub qualifiers")
    );
    assert!(
        gitlab["properties"]["repository"]["description"]
            .as_str()
            .unwrap()
            .starts_with("GitLab project to review or browse")
    );
    assert_eq!(github["properties"]["max_results"]["maximum"], 30);
    assert_eq!(gitlab["properties"]["max_results"]["maximum"], 20);
    assert_eq!(github["properties"]["paths"]["maxItems"], 10);
}

#[test]
fn the_chat_tools_send_the_definitions_they_sent_as_dynamic_tools() {
    let config = Config::default();
    let ask_user = crate::tools::ask_user::AskUser::new(config.ask_user.clone());
    let ask = parameters(&ask_user);
    assert_eq!(ask["properties"]["fields"]["maxItems"], 20);
    assert_eq!(
        ask["properties"]["fields"]["items"]["properties"]["placeholder"]["maxLength"],
        4000
    );
    assert_eq!(ask["properties"]["style"]["default"], "default");

    let create = crate::tools::artifacts::CreateArtifactTool::describe(&config);
    let create = create.function.parameters.unwrap();
    assert_eq!(
        create["properties"]["content"],
        json!({"description": "The full content. At most 1000000 bytes.",
               "maxLength": 1_000_000, "type": "string"})
    );
    let save = crate::tools::memory::SaveMemoryTool::describe(&config);
    assert_eq!(save.function.name, "save_memory");
    assert_eq!(
        save.function.parameters.unwrap()["properties"]["content"]["maxLength"],
        4000
    );
    let recall = crate::tools::memory::RecallMemoryTool::describe(&config);
    assert_eq!(
        recall.function.parameters.unwrap()["properties"]["query"]["maxLength"],
        4000
    );
    for definition in [
        crate::tools::file_search::FileSearchTool::describe(&config),
        crate::tools::search_knowledge::SearchKnowledgeTool::describe(&config),
    ] {
        let max_results = &definition.function.parameters.unwrap()["properties"]["max_results"];
        assert_eq!(
            max_results,
            &json!({"default": 5, "description": "Most passages to return.", "maximum": 20,
                    "minimum": 1, "type": "integer"})
        );
    }
}

#[tokio::test]
async fn send_email_is_described_without_an_agent_as_its_instances_are() {
    let email = EmailConfig {
        smtp_url: "smtp://localhost:2525".to_string().into(),
        from: "Bot <bot@example.org>".into(),
        allowed_recipients: vec!["ops@example.org".into()],
        confirm: true,
        max_per_hour: 7,
        user_max_per_hour: 14,
        server_max_per_hour: 70,
    };
    let mailer = crate::tools::email::Mailer::new(
        &email,
        sea_orm::DatabaseConnection::default(),
        Duration::from_secs(5),
    )
    .unwrap();
    let described = crate::tools::email::SendEmail::describe(&mailer);
    assert_eq!(
        described.function.description.as_deref(),
        Some(
            "Send a plain-text email to one recipient. Allowed recipients (nothing else is \
             accepted): ops@example.org. The user is asked to confirm each email before it is \
             sent. At most 7 emails an hour from this agent, and 14 from all of this user's \
             agents together."
        )
    );
    let tool = crate::tools::email::SendEmail::new(
        Arc::new(mailer),
        entities::ids::UserId::from_string("user_1"),
        entities::ids::AgentId::from_string("agent_1"),
    );
    assert_eq!(tool.definition(), described);
    assert_eq!(
        Tool::call_message(
            &tool,
            &json!({"to": "ops@example.org", "subject": "s", "body": "b"})
        ),
        "Sending an email to ops@example.org"
    );
    assert_eq!(Tool::call_message(&tool, &json!({})), "Sending an email");
}
