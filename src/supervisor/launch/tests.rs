//! Launching over fake research tools and a real SQLite file (the upstream is unreachable):
//! which tools a run is offered, the checks on client tools, `tool_choice` and
//! `max_iterations`, and a chat turn from ownership and size checks to its stored question,
//! its registered log and its end.

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use entities::ids::{ChatId, RunId, UserId};
use serde_json::json;

use super::*;
use crate::agent::test_support::{Behaviour, FakeTool};
use crate::chat::session::GetActivePath;
use crate::error::AppError;
use crate::run::events::{RunEvent, StopReason};
use crate::supervisor::ChatSupervisor;
use crate::tools::chat_context::SessionSlot;

struct Fixture {
    _dir: tempfile::TempDir,
    launcher: Launcher,
    principal: Principal,
    chat: ChatId,
}

async fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config {
        data_dir: dir.path().to_path_buf(),
        ..Config::default()
    };
    // Nothing listens there: a run fails at once, after its set-up is done.
    config.llm.base_url = "http://127.0.0.1:9/v1".into();
    config.llm.max_retries = 0;
    config.llm.connect_timeout_secs = 1;
    let db = crate::db::connect(&config).await.unwrap();
    crate::db::migrate(&db).await.unwrap();
    let accounts = crate::auth::Accounts::new(db.clone(), 1, 1);
    let user = accounts
        .create_user(crate::auth::NewUser {
            username: "launcher",
            password: None,
            is_admin: false,
        })
        .await
        .unwrap();
    let chats = crate::chat::Chats::new(db.clone());
    let chat = chats.create(&user.id, None, false).await.unwrap().id;
    let embedder: crate::retrieval::embed::SharedEmbedder =
        Arc::new(crate::retrieval::embed::hash::HashEmbedder::default());
    let supervisor = ChatSupervisor::new(
        db.clone(),
        crate::chat::group_commit::GroupCommit::start(&db, Duration::from_secs(5), None).unwrap(),
        Duration::from_secs(600),
        Duration::from_secs(600),
        embedder.clone(),
    );
    let research: Vec<crate::tools::SharedTool> = ["web_search", "fetch_url", "calculator"]
        .into_iter()
        .map(|name| FakeTool::new(name, Behaviour::Echo).research().shared().0)
        .collect();
    let storage = crate::storage::Storage::directory(&config.data_dir);
    let browsers = crate::tools::browser::Browsers::new(&config, storage.clone()).unwrap();
    let config_tools = config.tools.clone();
    let fetcher = Arc::new(
        crate::tools::fetch::Fetcher::new(&config_tools, Duration::from_secs(60)).unwrap(),
    );
    let remote_mcp = Arc::new(crate::tools::mcp::remote::RemoteMcp::new(
        &config.mcp,
        fetcher.clone(),
        Duration::from_secs(5),
    ));
    let workspace =
        crate::documents::Workspace::new(db.clone(), &config, embedder.clone(), storage.clone());
    let metrics = Arc::new(crate::metrics::Metrics::new());
    let containers = crate::tools::code_interpreter::Containers::new(
        &config.code_interpreter,
        db.clone(),
        storage.clone(),
        workspace.clone(),
        metrics.clone(),
    );
    let launcher = Launcher {
        turn_cache: crate::chat::turn_cache::TurnCache::enabled(),
        remote_mcp,
        llm: crate::llm::LlmClient::new(&config.llm).unwrap(),
        workspace,
        attachments: crate::chat::attachments::Attachments::new(
            db.clone(),
            storage,
            config.attachments.clone(),
        ),
        tool_cache: crate::agent::tool_cache::new_tool_cache(Duration::from_secs(60)),
        ask_user: Arc::new(crate::tools::ask_user::AskUser::new(
            config.ask_user.clone(),
        )),
        rate_limiter: Arc::new(crate::agent::rate_limit::ToolRateLimiter::new(60)),
        config: Arc::new(config),
        chats,
        agents: crate::chat::agents::Agents::new(db.clone()),
        metrics,
        db,
        embedder,
        sessions: supervisor.registry(),
        runs: supervisor.runs(),
        supervisor: supervisor.start(),
        tools: Arc::new(research),
        mcp: crate::tools::mcp::McpRegistry::default(),
        sql: crate::tools::sql::SqlDatabases::default(),
        email: None,
        browsers,
        containers,
        fetcher,
    };
    Fixture {
        _dir: dir,
        launcher,
        principal: accounts.acting_as(&user.id).await.unwrap(),
        chat,
    }
}

fn log() -> Arc<RunLog> {
    Arc::new(RunLog::new(
        RunId::generate(),
        None,
        UserId::from_string("u"),
        "model".into(),
    ))
}

/// The run `options` ask for, outside any chat, for project "p".
fn outside_chat(launcher: &Launcher, options: &RunOptions) -> Result<plan::Plan, Refusal> {
    plan(launcher, "p", log(), options, None, false)
}

fn research(x_tools: Option<&[&str]>) -> RunOptions {
    RunOptions {
        tools_enabled: true,
        web_search: Some(WebSearchOptions {
            x_tools: x_tools.map(|names| names.iter().map(|n| n.to_string()).collect()),
            ..WebSearchOptions::default()
        }),
        ..RunOptions::default()
    }
}

fn names(plan: &plan::Plan) -> Vec<&str> {
    let mut names: Vec<&str> = plan.tools.iter().map(|t| t.name()).collect();
    names.sort_unstable();
    names
}

fn refusal(result: Result<plan::Plan, Refusal>) -> String {
    match result {
        Err(refusal) => {
            assert!(matches!(
                AppError::from(refusal.clone()),
                AppError::InvalidRequest(_)
            ));
            refusal.to_string()
        }
        Ok(_) => panic!("accepted"),
    }
}

#[actix::test]
async fn a_run_outside_a_chat_gets_only_the_research_tools_it_asked_for() {
    let fixture = fixture().await;
    let launcher = &fixture.launcher;
    let none = outside_chat(launcher, &RunOptions::default());
    assert!(names(&none.unwrap()).is_empty(), "tools are opt-in");
    let defaults = outside_chat(launcher, &research(None)).unwrap();
    assert_eq!(names(&defaults), ["calculator", "fetch_url", "web_search"]);
    let calculator = outside_chat(launcher, &research(Some(&["calculator"]))).unwrap();
    assert_eq!(names(&calculator), ["calculator"]);
    assert_eq!(calculator.project, "p");
    assert!(calculator.session.is_none());
}

#[actix::test]
async fn a_run_in_a_chat_also_gets_the_chat_tools_and_file_search_only_with_documents() {
    let fixture = fixture().await;
    let launcher = &fixture.launcher;
    let session = launcher.sessions.session_unclustered(&fixture.chat);
    let in_chat = || {
        Arc::new(RunLog::new(
            RunId::generate(),
            Some(fixture.chat.clone()),
            fixture.principal.user_id().clone(),
            "model".into(),
        ))
    };
    let without = plan(
        launcher,
        "p",
        in_chat(),
        &RunOptions::default(),
        Some(SessionSlot::of(session.clone())),
        false,
    )
    .unwrap();
    let mut expected: Vec<&str> = chat_tool_names()
        .filter(|name| *name != "file_search")
        .collect();
    expected.sort_unstable();
    assert_eq!(names(&without), expected);
    let with = plan(
        launcher,
        "p",
        in_chat(),
        &RunOptions::default(),
        Some(SessionSlot::of(session)),
        true,
    )
    .unwrap();
    assert!(names(&with).contains(&"file_search"));
}

/// The names of every chat's own tools, from the table of tools.
fn chat_tool_names() -> impl Iterator<Item = &'static str> {
    crate::tools::registry::FAMILIES
        .iter()
        .filter(|family| family.origin == crate::tools::registry::Origin::Chat)
        .flat_map(|family| family.names.iter().copied())
}

#[actix::test]
async fn an_agent_naming_its_tools_keeps_the_chat_tools_unless_it_turns_them_off() {
    let fixture = fixture().await;
    let launcher = &fixture.launcher;
    let session = launcher.sessions.session_unclustered(&fixture.chat);
    let owner = fixture.principal.user_id();
    let agent = |chat_tools: Option<bool>| {
        let fields = crate::chat::agents::AgentFields {
            name: Some("Calc".into()),
            enabled_tools: Some(Some(vec!["calculator".into(), "ask_user".into()])),
            chat_tools_enabled: chat_tools,
            ..Default::default()
        };
        launcher.agents.create(owner, fields)
    };
    let planned = |agent: crate::chat::agents::Agent| {
        let log = Arc::new(RunLog::new(
            RunId::generate(),
            Some(fixture.chat.clone()),
            owner.clone(),
            "model".into(),
        ));
        let options = RunOptions {
            agent: Some(agent),
            ..RunOptions::default()
        };
        let planned = plan(
            launcher,
            "p",
            log,
            &options,
            Some(SessionSlot::of(session.clone())),
            true,
        )
        .unwrap();
        let names: Vec<String> = names(&planned).into_iter().map(String::from).collect();
        names
    };
    let kept = planned(agent(None).await.unwrap());
    let mut expected: Vec<&str> = chat_tool_names().chain(["calculator"]).collect();
    expected.sort_unstable();
    assert_eq!(kept, expected, "the chat tools stay beside the named ones");
    let off = planned(agent(Some(false)).await.unwrap());
    assert_eq!(off, ["ask_user", "calculator"], "only the named chat tool");
}

#[actix::test]
async fn client_tools_may_not_take_a_server_tools_name_or_each_others() {
    let fixture = fixture().await;
    let launcher = &fixture.launcher;
    let client = |names: &[&str]| RunOptions {
        client_tools: names
            .iter()
            .map(|name| {
                crate::llm::wire::ToolDefinition::function(name, "", json!({"type": "object"}))
            })
            .collect(),
        ..research(None)
    };
    let clash = outside_chat(launcher, &client(&["web_search"]));
    assert!(refusal(clash).contains("web_search"));
    let twice = outside_chat(launcher, &client(&["lookup", "lookup"]));
    assert!(refusal(twice).contains("lookup"));
    let fine = outside_chat(launcher, &client(&["lookup"]));
    assert_eq!(fine.unwrap().client_tools.len(), 1);
    let mut deep = client(&["lookup"]);
    deep.web_search = Some(WebSearchOptions {
        x_deep_think: Some(true),
        ..WebSearchOptions::default()
    });
    assert_eq!(
        outside_chat(launcher, &deep).err(),
        Some(Refusal::DeepThinkWithClientTools)
    );
}

#[actix::test]
async fn tool_choice_must_name_an_offered_tool_and_iterations_stay_within_their_bounds() {
    let fixture = fixture().await;
    let launcher = &fixture.launcher;
    let choosing = |choice: serde_json::Value, options: RunOptions| {
        let mut template = ChatRequest::new("model", Vec::new());
        template.tool_choice = Some(choice);
        RunOptions {
            template: Some(template),
            ..options
        }
    };
    let forced = json!({"type": "function", "function": {"name": "fetch_url"}});
    let offered = choosing(forced.clone(), research(None));
    assert!(outside_chat(launcher, &offered).is_ok());
    let missing = choosing(forced, research(Some(&["calculator"])));
    let refused = outside_chat(launcher, &missing);
    assert!(refusal(refused).contains("fetch_url"));
    let required = choosing(json!("required"), RunOptions::default());
    let refused = outside_chat(launcher, &required);
    assert!(refusal(refused).contains("required"));

    let iterations = |n: u32| RunOptions {
        web_search: Some(WebSearchOptions {
            max_iterations: Some(n),
            ..WebSearchOptions::default()
        }),
        ..RunOptions::default()
    };
    let zero = outside_chat(launcher, &iterations(0));
    assert!(refusal(zero).contains("max_iterations"));
    let huge = outside_chat(launcher, &iterations(10_000)).unwrap();
    assert_eq!(
        huge.max_iterations,
        launcher.config.agent.max_iterations_ceiling
    );
    let default = outside_chat(launcher, &RunOptions::default());
    assert_eq!(
        default.unwrap().max_iterations,
        launcher.config.agent.max_iterations
    );
}

#[actix::test]
async fn a_chat_turn_is_checked_stored_registered_and_ended_even_when_the_model_is_down() {
    let fixture = fixture().await;
    let launcher = &fixture.launcher;
    let send = |content: String| Turn::Send {
        parent_id: None,
        content,
        images: Vec::new(),
    };

    let stranger = Principal::for_test(UserId::from_string("someone-else"), "stranger", false);
    let foreign = launch_chat_turn(
        launcher,
        &stranger,
        &fixture.chat,
        send("hi".into()),
        RunOptions::default(),
        crate::supervisor::turn::Caller::WhenDurable,
    )
    .await;
    assert!(matches!(foreign, Err(AppError::NotFound("chat"))));

    let too_long = "x".repeat(launcher.config.http.max_message_chars + 1);
    let refused = launch_chat_turn(
        launcher,
        &fixture.principal,
        &fixture.chat,
        send(too_long),
        RunOptions::default(),
        crate::supervisor::turn::Caller::WhenDurable,
    )
    .await;
    assert!(matches!(
        refused,
        Err(AppError::TooLarge {
            code: "message_too_long",
            ..
        })
    ));
    let session = launcher.sessions.session_unclustered(&fixture.chat);
    assert!(session.send(GetActivePath).await.unwrap().is_empty());

    let log = launch_chat_turn(
        launcher,
        &fixture.principal,
        &fixture.chat,
        send("hello".into()),
        RunOptions::default(),
        crate::supervisor::turn::Caller::WhenDurable,
    )
    .await
    .unwrap();
    assert!(
        launcher.runs.get(&log.run_id).is_some(),
        "subscribers can find it"
    );
    let question = session.send(GetActivePath).await.unwrap();
    assert_eq!(question[0].content.as_deref(), Some("hello"));
    assert_eq!(log.user_message_id(), Some(question[0].id.clone()));

    let end = tokio::time::timeout(Duration::from_secs(30), async {
        use futures_util::StreamExt;
        let mut events = Box::pin(log.subscribe(0));
        let mut last = None;
        while let Some((_, event)) = events.next().await {
            last = Some(event);
        }
        last
    })
    .await
    .expect("the run ends");
    match end.as_deref() {
        Some(RunEvent::Finished {
            stop_reason, error, ..
        }) => {
            assert_eq!(*stop_reason, StopReason::UpstreamError);
            assert!(error.is_some());
        }
        other => panic!("ended with {other:?}"),
    }
}

/// The table of tools names every built-in tool a run can be given: what an agent naming every
/// name is offered in a chat holds only the table's names, one tool per name, and each family
/// this server can build is there with all its names.
#[actix::test]
async fn every_tool_a_run_can_be_given_is_in_the_table_once() {
    use crate::tools::registry::{self, FAMILIES, Kind};
    let fixture = fixture().await;
    let everything = tools::every_nameable(&fixture.launcher);
    let names: Vec<&str> = everything.iter().map(|t| t.name()).collect();
    for name in &names {
        assert!(registry::is_builtin(name), "{name} is not in the table");
        assert_eq!(
            names.iter().filter(|n| *n == name).count(),
            1,
            "{name} twice"
        );
    }
    // This fixture has no code search tokens, database, email, Chromium or image server.
    let unconfigured = [
        Kind::CodeSearch,
        Kind::GitlabCodeSearch,
        Kind::ExecuteSql,
        Kind::SendEmail,
        Kind::Browser,
        Kind::GenerateImage,
    ];
    for family in FAMILIES.iter().filter(|f| !unconfigured.contains(&f.kind)) {
        for name in family.names {
            assert!(
                names.contains(name),
                "{name} ({:?}) is built: {names:?}",
                family.kind
            );
        }
    }
}
