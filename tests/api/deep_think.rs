//! Deep Think end to end: the real server, a fake SearXNG and fake pages on 127.0.0.1, and a
//! fake upstream scripting the plan, each sub-task's tool calls and notes (routed by the
//! sub-task's query, so concurrent sub-tasks get their own replies) and the synthesis.

use std::time::{Duration, Instant};

use actix_web::{App, HttpResponse, HttpServer, web};
use sea_orm::EntityTrait;
use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, eventually, spawn_app_with};
use crate::sse::{Frame, content, read_all, read_until};

/// A fake SearXNG (`/search`), pages it lists (`/a`, `/b`, `/c`), and a small site (`/site`
/// linking to `/site/one`, `/site/two`, `/site/three`).
pub async fn start_web() -> String {
    let page = |title: &'static str, body: &'static str| {
        move || async move {
            HttpResponse::Ok().content_type("text/html").body(format!(
                "<html><head><title>{title}</title></head><body><h1>{title}</h1><p>{body}</p></body></html>"
            ))
        }
    };
    let server = HttpServer::new(move || {
        App::new()
            .route(
                "/search",
                web::get().to(|req: actix_web::HttpRequest| async move {
                    let base = format!("http://{}", req.connection_info().host());
                    HttpResponse::Ok().json(json!({
                        "answers": [], "infoboxes": [],
                        "results": [
                            {"url": format!("{base}/a"), "title": "Alpha page", "content": "alpha snippet"},
                            {"url": format!("{base}/b"), "title": "Beta page", "content": "beta snippet"},
                            {"url": format!("{base}/c"), "title": "Gamma page", "content": "gamma snippet"}
                        ]
                    }))
                }),
            )
            .route("/a", web::get().to(page("Alpha", "ALPHA-RAW-PAGE-TEXT gold rose.")))
            .route("/b", web::get().to(page("Beta", "Gold peaked in March.")))
            .route("/c", web::get().to(page("Gamma", "Central banks bought gold.")))
            .route(
                "/site",
                web::get().to(|| async {
                    HttpResponse::Ok().content_type("text/html").body(
                        "<html><body><h1>Acme docs</h1><p>Welcome to Acme.</p>\
                         <a href=\"/site/one\">Pricing</a> <a href=\"/site/two\">Features</a>\
                         <a href=\"/site/three\">Support</a></body></html>",
                    )
                }),
            )
            .route("/site/one", web::get().to(page("Pricing", "Acme costs 10 dollars.")))
            .route("/site/two", web::get().to(page("Features", "Acme has rockets.")))
            .route("/site/three", web::get().to(page("Support", "Acme answers email.")))
    })
    .workers(1)
    .bind("127.0.0.1:0")
    .unwrap();
    let address = server.addrs()[0];
    actix_web::rt::spawn(server.run());
    format!("http://{address}")
}

async fn deep_app(web: &str, adjust: impl FnOnce(&mut colloquy::config::Config)) -> TestApp {
    let (search, site) = (
        web.to_string(),
        web.trim_start_matches("http://").to_string(),
    );
    spawn_app_with(move |config| {
        config.tools.web_search_url = Some(search);
        config.tools.ssrf_allow_list = vec![site];
        adjust(config);
    })
    .await
}

const QUESTION: &str = "How is the gold market doing?";

fn plan(tasks: &[&str]) -> Reply {
    let subtasks: Vec<Value> = tasks
        .iter()
        .enumerate()
        .map(|(i, query)| json!({"id": (i + 1).to_string(), "query": query, "tools": ["web_search", "fetch_url", "calculator"]}))
        .collect();
    Reply::text(&json!({"title": "Gold research", "subtasks": subtasks}).to_string())
}

/// The marker that routes a sub-task's requests: its brief says "Your part: {query}".
fn part(query: &str) -> String {
    format!("Your part: {query}")
}

/// One note for each of these sub-tasks.
fn notes(app: &TestApp, queries: &[&str]) {
    for query in queries {
        app.upstream
            .script_for(&part(query), [Reply::text(&format!("- note on {query}"))]);
    }
}

/// Three 500s for each of these sub-tasks: each fails after the client's retries.
fn failures(app: &TestApp, queries: &[&str]) {
    for query in queries {
        app.upstream
            .script_for(&part(query), (0..3).map(|_| Reply::status(500, "down")));
    }
}

/// Sends the question with Deep Think on in a new chat through the chat API.
async fn deep_in_chat(app: &TestApp) -> Vec<Frame> {
    let chat = app.new_chat().await;
    app.send(
        &chat,
        json!({"content": QUESTION, "web_search_options": {"x_deep_think": true}}),
    )
    .await
}

/// The chat's (first) stored answer.
async fn stored_answer(app: &TestApp, chat: &str) -> Value {
    let tree: Value = app.chat_api().tree(chat).read_json().await;
    tree["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["role"] == "assistant")
        .cloned()
        .expect("an answer")
}

/// The standard run: three sub-tasks (a web search, a page read, a note with no tools) and a
/// synthesis that cites a source that does not exist and links pages the run never saw.
fn script_standard(app: &TestApp, web: &str) {
    app.upstream.script([
        plan(&["gold price history", "central bank buying", "mining output"]),
        Reply::text(
            "# Gold research\n\nGold rose [1]. Banks bought gold [3]. An invented claim [9]. \
             See [this study](https://invented.example/x) and https://also-invented.example/y \
             for more.\n\n## Sources\n1. https://invented.example/x",
        ),
    ]);
    app.upstream.script_for(
        &part("gold price history"),
        [
            Reply::tool_call("call_s", "web_search", json!({"query": "gold price"})),
            Reply::text(&format!(
                "- Gold rose 10% in 2025 ({web}/a)\n- Prices peaked in March ({web}/b)"
            )),
        ],
    );
    app.upstream.script_for(
        &part("central bank buying"),
        [
            Reply::tool_call("call_f", "fetch_url", json!({"url": format!("{web}/c")})),
            Reply::text(&format!("- Central banks bought 1,000 t ({web}/c)")),
        ],
    );
    app.upstream.script_for(
        &part("mining output"),
        [Reply::text("- Mine output was flat.")],
    );
}

fn deep(question: &str) -> Value {
    json!({"model": "fake-model", "stream": true,
           "messages": [{"role": "user", "content": question}],
           "web_search_options": {"x_deep_think": true}})
}

/// The standard run's events, in the order of docs/spec.md#deep-think-events (consecutive
/// content chunks as one).
const STANDARD_ORDER: [&str; 16] = [
    "x_deep_think.plan_created",
    "x_deep_think.subtask_started",
    "x_research.searching",
    "x_research.result",
    "x_deep_think.subtask_completed",
    "x_deep_think.subtask_started",
    "x_research.reading",
    "x_research.result",
    "x_deep_think.subtask_completed",
    "x_deep_think.subtask_started",
    "x_deep_think.subtask_completed",
    "x_deep_think.artifact_created",
    "x_deep_think.synthesizing",
    "content",
    "x_deep_think.completed",
    "[DONE]",
];

/// The Deep Think, research, content and end events of a stream, consecutive repeats as one.
fn order(frames: &[Frame]) -> Vec<String> {
    let mut kinds: Vec<String> = frames
        .iter()
        .map(Frame::kind)
        .filter(|k| {
            k.starts_with("x_deep_think.")
                || matches!(
                    k.as_str(),
                    "x_research.searching"
                        | "x_research.reading"
                        | "x_research.result"
                        | "content"
                        | "[DONE]"
                )
        })
        .collect();
    kinds.dedup();
    kinds
}

/// The `x_deep_think.*` events of a stream, as JSON.
fn deep_events(frames: &[Frame]) -> Vec<Value> {
    frames
        .iter()
        .map(Frame::json)
        .filter(|j| {
            j["type"]
                .as_str()
                .is_some_and(|t| t.starts_with("x_deep_think."))
        })
        .collect()
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e["type"] == format!("x_deep_think.{kind}"))
        .collect()
}

/// Requests the planner made (its instructions start "You plan research").
fn planning_requests(app: &TestApp) -> Vec<Value> {
    app.upstream
        .received()
        .into_iter()
        .filter(|r| {
            r.body["messages"][0]["content"]
                .as_str()
                .is_some_and(|c| c.starts_with("You plan research"))
        })
        .map(|r| r.body)
        .collect()
}

#[actix_web::test]
async fn a_deep_think_run_streams_seed_000s_events_in_order_over_chat_completions() {
    let web = start_web().await;
    let app = deep_app(&web, |_| {}).await;
    script_standard(&app, &web);
    let response = app
        .openai()
        .chat_completions()
        .json(&deep(QUESTION))
        .call()
        .await;
    assert_eq!(response.status(), 200);
    let frames = read_all(response).await;
    assert_eq!(order(&frames), STANDARD_ORDER);
    let events = deep_events(&frames);
    let created = of_type(&events, "plan_created")[0];
    assert_eq!(created["title"], "Gold research");
    assert_eq!(created["total_subtasks"], 3);
    let started = of_type(&events, "subtask_started");
    assert_eq!(started[1]["subtask_id"], "2");
    assert_eq!(started[1]["subtask_query"], "central bank buying");
    assert_eq!(started[1]["subtask_index"], 1);
    assert_eq!(started[1]["total_subtasks"], 3);
    let done = of_type(&events, "subtask_completed");
    assert!(done.iter().all(|e| e["status"] == "completed"), "{done:?}");
    assert_eq!(done[0]["subtask_id"], "1");
    assert_eq!(
        of_type(&events, "synthesizing")[0]["message"],
        "Synthesizing final report..."
    );
    let completed = of_type(&events, "completed")[0];
    assert_eq!(completed["title"], "Gold research");
    let name = completed["artifact_name"].as_str().unwrap();
    assert!(
        name.starts_with("deep-think-")
            && name.ends_with(".md")
            && name.len() == "deep-think-20261124-101500.md".len(),
        "{name}"
    );
    let usage = &completed["tokens"];
    assert!(usage["total"].as_u64().is_some(), "{completed}");
    assert_eq!(
        usage["total"].as_u64().unwrap(),
        usage["planning"].as_u64().unwrap()
            + usage["research"].as_u64().unwrap()
            + usage["synthesis"].as_u64().unwrap()
    );
    let text = content(&frames);
    assert!(text.starts_with("# Gold research"), "{text}");
    assert!(text.contains("## Sources"), "{text}");

    // The plan was asked for with a JSON schema; each sub-task had only its research tools
    // and saw its own brief; the synthesis saw the notes and the numbered sources, not pages.
    let plans = planning_requests(&app);
    assert_eq!(plans.len(), 1);
    assert_eq!(plans[0]["response_format"]["type"], "json_schema");
    assert_eq!(
        plans[0]["response_format"]["json_schema"]["schema"]["properties"]["subtasks"]["maxItems"],
        7
    );
    let received = app.upstream.received();
    let synthesis = &received.last().unwrap().body;
    let brief = synthesis["messages"][1]["content"].as_str().unwrap();
    assert!(brief.contains("Gold rose 10% in 2025"), "{brief}");
    assert!(
        brief.contains(&format!("[1] Alpha page — {web}/a")),
        "{brief}"
    );
    assert!(
        !brief.contains("ALPHA-RAW-PAGE-TEXT"),
        "raw pages stay out: {brief}"
    );
    assert!(synthesis.get("tools").is_none());
    let first_subtask = received
        .iter()
        .find(|r| r.body.to_string().contains(&part("gold price history")))
        .unwrap();
    let mut tools: Vec<&str> = first_subtask.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    tools.sort_unstable();
    assert_eq!(
        tools,
        ["calculator", "fetch_url", "web_search"],
        "its plan's tools only"
    );
}

#[actix_web::test]
async fn the_saved_report_cites_only_sources_the_run_saw_and_is_a_part_of_the_answer() {
    let web = start_web().await;
    let app = deep_app(&web, |_| {}).await;
    script_standard(&app, &web);
    let chat = app.new_chat().await;
    let frames = app
        .send(
            &chat,
            json!({"content": QUESTION, "web_search_options": {"x_deep_think": true}}),
        )
        .await;
    assert_eq!(order(&frames), STANDARD_ORDER, "the chat API's stream");
    let events = deep_events(&frames);
    let name = of_type(&events, "completed")[0]["artifact_name"]
        .as_str()
        .unwrap()
        .to_string();
    let structured = of_type(&events, "artifact_created");
    assert_eq!(structured.len(), 1);
    assert_eq!(structured[0]["artifact_type"], "findings_list");
    assert_eq!(structured[0]["artifact_title"], "Gold research: findings");

    let listed: Value = app.chat_api().artifacts(&chat).read_json().await;
    let artifacts = listed["artifacts"].as_array().expect("artifacts");
    let report = artifacts
        .iter()
        .find(|a| a["identifier"] == name)
        .expect("the report artifact");
    assert_eq!(report["type"], "text/markdown");
    let raw = app
        .chat_api()
        .artifact_raw(&chat, report["id"].as_str().unwrap())
        .call()
        .await
        .text()
        .await
        .unwrap();
    assert!(raw.starts_with("# Gold research"), "{raw}");
    assert!(raw.contains("Gold rose [1]."), "{raw}");
    assert!(raw.contains("Banks bought gold [3]."), "{raw}");
    assert!(
        !raw.contains("[9]"),
        "a citation of no source is removed: {raw}"
    );
    assert!(!raw.contains("invented.example"), "{raw}");
    let sources = &raw[raw.find("## Sources").expect("a Sources list")..];
    let urls: Vec<&str> = sources
        .split(['(', ')'])
        .filter(|s| s.starts_with("http"))
        .collect();
    assert_eq!(urls, [format!("{web}/a"), format!("{web}/c")], "{sources}");
    let findings = artifacts
        .iter()
        .find(|a| a["identifier"].as_str().unwrap().ends_with("-findings.md"))
        .expect("the findings list");
    assert_eq!(findings["title"], "Gold research: findings");

    // The answer is the checked report, with the artifact as its part.
    let answer = stored_answer(&app, &chat).await;
    assert_eq!(answer["content"].as_str().unwrap(), raw);
    let parts = answer["parts"].as_array().expect("message parts");
    assert!(parts.iter().any(|p| p["identifier"] == name), "{parts:?}");
}

#[actix_web::test]
async fn a_plan_of_nine_sub_tasks_is_cut_to_seven() {
    let web = start_web().await;
    let app = deep_app(&web, |_| {}).await;
    let queries: Vec<String> = (1..=9).map(|n| format!("angle number {n}")).collect();
    let refs: Vec<&str> = queries.iter().map(String::as_str).collect();
    app.upstream
        .script([plan(&refs), Reply::text("# Gold research\n\nDone.")]);
    for query in &queries {
        app.upstream
            .script_for(&part(query), [Reply::text(&format!("- note on {query}"))]);
    }
    let response = app
        .openai()
        .chat_completions()
        .json(&deep(QUESTION))
        .call()
        .await;
    let events = deep_events(&read_all(response).await);
    let created = of_type(&events, "plan_created")[0];
    assert_eq!(created["total_subtasks"], 7);
    assert_eq!(created["proposed_subtasks"], 9);
    assert_eq!(of_type(&events, "subtask_started").len(), 7);
    let asked = app.upstream.received();
    assert!(
        !asked
            .iter()
            .any(|r| r.body.to_string().contains(&part("angle number 8")))
    );
    assert_eq!(of_type(&events, "completed").len(), 1);
}

#[actix_web::test]
async fn a_malformed_plan_is_repaired_and_an_unreadable_one_replaced_by_the_fallback() {
    let web = start_web().await;
    let app = deep_app(&web, |_| {}).await;
    // Repaired: in a code fence, under "tasks", numeric ids, "question" for the query, an
    // unknown tool.
    app.upstream.script([
        Reply::text(
            "Here is my plan:\n```json\n{\"tasks\": [{\"id\": 1, \"question\": \"first angle\", \
             \"tools\": [\"teleport\"]}, {\"id\": 2, \"question\": \"second angle\"}, \
             {\"id\": 3, \"question\": \"third angle\"}]}\n```",
        ),
        Reply::text("# Report\n\nDone."),
    ]);
    notes(&app, &["first angle", "second angle", "third angle"]);
    let events = deep_events(
        &read_all(
            app.openai()
                .chat_completions()
                .json(&deep(QUESTION))
                .call()
                .await,
        )
        .await,
    );
    let created = of_type(&events, "plan_created")[0];
    assert_eq!(created["plan_source"], "repaired");
    assert_eq!(created["title"], QUESTION);
    assert_eq!(created["subtasks"][0]["id"], "1");
    assert_eq!(created["subtasks"][0]["query"], "first angle");
    let tools = created["subtasks"][0]["tools"].as_array().unwrap();
    assert!(
        tools.contains(&json!("web_search")) && !tools.contains(&json!("teleport")),
        "an unknown tool is dropped, and none left means every research tool: {tools:?}"
    );
    assert_eq!(
        planning_requests(&app).len(),
        1,
        "repaired without asking again"
    );

    // Two answers that hold no plan: asked once more, then the fallback plan.
    let app = deep_app(&web, |_| {}).await;
    app.upstream.script([
        Reply::text("I would rather not plan."),
        Reply::text("{\"subtasks\": []}"),
        Reply::text("# Report\n\nDone."),
    ]);
    for angle in ["background", "recent developments", "evidence"] {
        app.upstream.script_for(angle, [Reply::text("- a note")]);
    }
    let events = deep_events(
        &read_all(
            app.openai()
                .chat_completions()
                .json(&deep(QUESTION))
                .call()
                .await,
        )
        .await,
    );
    let created = of_type(&events, "plan_created")[0];
    assert_eq!(created["plan_source"], "fallback");
    assert_eq!(created["total_subtasks"], 3);
    assert!(
        created["subtasks"][0]["query"]
            .as_str()
            .unwrap()
            .starts_with(QUESTION)
    );
    let plans = planning_requests(&app);
    assert_eq!(plans.len(), 2);
    let retry = plans[1]["messages"].as_array().unwrap();
    assert!(
        retry.last().unwrap()["content"]
            .as_str()
            .unwrap()
            .starts_with("That plan cannot be used"),
        "{retry:?}"
    );
    assert_eq!(of_type(&events, "completed").len(), 1);
}

#[actix_web::test]
async fn a_sub_task_ends_when_its_token_budget_is_spent() {
    let web = start_web().await;
    let app = deep_app(&web, |config| config.deep_think.subtask_token_budget = 50).await;
    app.upstream.script([
        plan(&["spend a lot", "second angle", "third angle"]),
        Reply::text("# Report\n\nDone."),
    ]);
    // Each tool call reports 28 tokens: the second passes 50, and the sub-task ends there.
    app.upstream.script_for(
        &part("spend a lot"),
        [
            Reply::tool_call("c1", "calculator", json!({"expression": "1+1"})),
            Reply::tool_call("c2", "calculator", json!({"expression": "2+2"})),
            Reply::tool_call("c3", "calculator", json!({"expression": "3+3"})),
        ],
    );
    notes(&app, &["second angle", "third angle"]);
    let events = deep_events(
        &read_all(
            app.openai()
                .chat_completions()
                .json(&deep(QUESTION))
                .call()
                .await,
        )
        .await,
    );
    let done = of_type(&events, "subtask_completed");
    assert_eq!(done[0]["status"], "budget_exhausted");
    assert_eq!(done[0]["tokens"], 56);
    assert_eq!(done[1]["status"], "completed");
    let spent = app
        .upstream
        .received()
        .iter()
        .filter(|r| r.body.to_string().contains(&part("spend a lot")))
        .count();
    assert_eq!(spent, 2, "no model call after the budget was spent");
    assert_eq!(of_type(&events, "completed").len(), 1);
}

#[actix_web::test]
async fn a_failing_sub_task_is_reported_and_the_synthesis_uses_the_others() {
    let web = start_web().await;
    let app = deep_app(&web, |_| {}).await;
    app.upstream.script([
        plan(&["works one", "breaks", "works two"]),
        Reply::text("# Report\n\nFrom two of three."),
    ]);
    app.upstream
        .script_for(&part("works one"), [Reply::text("- first note")]);
    app.upstream.script_for(
        &part("breaks"),
        [
            Reply::status(500, "exploded"),
            Reply::status(500, "exploded"),
            Reply::status(500, "exploded"),
        ],
    );
    app.upstream
        .script_for(&part("works two"), [Reply::text("- second note")]);
    let frames = deep_in_chat(&app).await;
    let events = deep_events(&frames);
    let done = of_type(&events, "subtask_completed");
    let statuses: Vec<&str> = done.iter().map(|e| e["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["completed", "failed", "completed"]);
    assert!(
        done[1]["error"].as_str().unwrap().contains("model server"),
        "{:?}",
        done[1]
    );
    let synthesis = app.upstream.received().last().unwrap().body.clone();
    let brief = synthesis["messages"][1]["content"].as_str().unwrap();
    assert!(
        brief.contains("second note") && brief.contains("This sub-task failed"),
        "{brief}"
    );
    assert_eq!(crate::sse::finished(&frames)["stop_reason"], "completed");
    assert_eq!(content(&frames).lines().next(), Some("# Report"));
}

#[actix_web::test]
async fn when_every_sub_task_fails_the_run_says_so_and_still_saves_what_it_has() {
    let web = start_web().await;
    let app = deep_app(&web, |_| {}).await;
    app.upstream.script([plan(&["one", "two", "three"])]);
    failures(&app, &["one", "two", "three"]);
    let frames = deep_in_chat(&app).await;
    let events = deep_events(&frames);
    assert_eq!(
        of_type(&events, "error")[0]["message"],
        "every sub-task failed; the report lists what happened"
    );
    let finished = crate::sse::finished(&frames);
    assert_eq!(finished["stop_reason"], "upstream_error");
    let text = content(&frames);
    assert!(text.contains("every sub-task failed"), "{text}");
    let name = of_type(&events, "completed")[0]["artifact_name"].clone();
    assert!(name.is_string(), "the report is saved all the same");
    assert!(
        !app.upstream
            .received()
            .iter()
            .any(|r| r.body["messages"][0]["content"]
                .as_str()
                .is_some_and(|c| c.starts_with("You write research reports"))),
        "no synthesis over nothing"
    );
}

#[actix_web::test]
async fn a_question_naming_a_site_explores_it_before_planning() {
    let web = start_web().await;
    let app = deep_app(&web, |_| {}).await;
    app.upstream.script([
        plan(&["pricing", "features", "support"]),
        Reply::text("# Acme\n\nDone."),
    ]);
    notes(&app, &["pricing", "features", "support"]);
    let question = format!("What does {web}/site offer?");
    let frames = read_all(
        app.openai()
            .chat_completions()
            .json(&deep(&question))
            .call()
            .await,
    )
    .await;
    let kinds: Vec<String> = frames.iter().map(Frame::kind).collect();
    let at = |kind: &str| kinds.iter().position(|k| k == kind).unwrap();
    assert!(at("x_deep_think.discovery_started") < at("x_research.reading"));
    assert!(at("x_research.reading") < at("x_deep_think.discovery_completed"));
    assert!(at("x_deep_think.discovery_completed") < at("x_deep_think.plan_created"));
    let events = deep_events(&frames);
    let started = of_type(&events, "discovery_started")[0];
    assert_eq!(started["mode"], "target_focused");
    let completed = of_type(&events, "discovery_completed")[0];
    assert_eq!(
        completed["pages_fetched"], 4,
        "the site and three followed links"
    );
    let site_map = completed["site_map"].as_str().unwrap();
    assert!(site_map.contains(&format!("{web}/site/one")), "{site_map}");
    let plans = planning_requests(&app);
    let brief = plans[0]["messages"][1]["content"].as_str().unwrap();
    assert!(
        brief.contains("Acme costs 10 dollars"),
        "the plan is built on the site: {brief}"
    );
}

#[actix_web::test]
async fn with_concurrency_three_three_sub_tasks_run_at_once() {
    let web = start_web().await;
    let app = deep_app(&web, |config| config.deep_think.concurrency = 3).await;
    app.upstream.script([
        plan(&["left", "middle", "right"]),
        Reply::text("# Report\n\nDone."),
    ]);
    for query in ["left", "middle", "right"] {
        app.upstream.script_for(
            &part(query),
            [Reply::text(&format!("- {query} note")).delay(Duration::from_millis(600))],
        );
    }
    let frames = read_all(
        app.openai()
            .chat_completions()
            .json(&deep(QUESTION))
            .call()
            .await,
    )
    .await;
    assert_eq!(app.upstream.max_in_flight(), 3);
    let kinds: Vec<String> = frames.iter().map(Frame::kind).collect();
    let last_start = kinds
        .iter()
        .rposition(|k| k == "x_deep_think.subtask_started")
        .unwrap();
    let first_done = kinds
        .iter()
        .position(|k| k == "x_deep_think.subtask_completed")
        .unwrap();
    assert!(last_start < first_done, "{kinds:?}");
    assert_eq!(of_type(&deep_events(&frames), "subtask_completed").len(), 3);
}

#[actix_web::test]
async fn sequential_by_default() {
    let web = start_web().await;
    let app = deep_app(&web, |_| {}).await;
    app.upstream.script([
        plan(&["left", "middle", "right"]),
        Reply::text("# Report\n\nDone."),
    ]);
    for query in ["left", "middle", "right"] {
        app.upstream.script_for(
            &part(query),
            [Reply::text("- note").delay(Duration::from_millis(200))],
        );
    }
    read_all(
        app.openai()
            .chat_completions()
            .json(&deep(QUESTION))
            .call()
            .await,
    )
    .await;
    assert_eq!(app.upstream.max_in_flight(), 1);
}

async fn start_in_chat(app: &TestApp, chat: &str) -> (reqwest::Response, String) {
    let response = app
        .chat_api()
        .send_message(chat)
        .json(&json!({"content": QUESTION, "web_search_options": {"x_deep_think": true}}))
        .call()
        .await;
    assert_eq!(response.status(), 200);
    let run_id = response.headers()["x-run-id"].to_str().unwrap().to_string();
    (response, run_id)
}

#[actix_web::test]
async fn cancel_while_planning_stops_the_run_and_its_upstream_request() {
    let web = start_web().await;
    let app = deep_app(&web, |_| {}).await;
    app.upstream
        .script([plan(&["a", "b", "c"]).delay(Duration::from_secs(8))]);
    let chat = app.new_chat().await;
    let (response, run_id) = start_in_chat(&app, &chat).await;
    eventually("the plan request", Duration::from_secs(5), || async {
        (app.upstream.received().len() == 1).then_some(())
    })
    .await;
    let started = Instant::now();
    let cancel = app
        .chat_api()
        .cancel_run(&chat, &run_id)
        .json(&json!({}))
        .call()
        .await;
    assert!(cancel.status().is_success());
    let frames = read_all(response).await;
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(crate::sse::finished(&frames)["stop_reason"], "cancelled");
    assert!(of_type(&deep_events(&frames), "plan_created").is_empty());
    actix_web::rt::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(app.upstream.received().len(), 1, "nothing after the cancel");
}

#[actix_web::test]
async fn cancel_during_concurrent_sub_tasks_drops_every_upstream_stream() {
    let web = start_web().await;
    let app = deep_app(&web, |config| config.deep_think.concurrency = 3).await;
    app.upstream.script([plan(&["left", "middle", "right"])]);
    for query in ["left", "middle", "right"] {
        app.upstream.script_for(
            &part(query),
            [Reply::text(&"word ".repeat(60)).event_gap(Duration::from_millis(200))],
        );
    }
    let chat = app.new_chat().await;
    let (response, run_id) = start_in_chat(&app, &chat).await;
    eventually(
        "three sub-task requests",
        Duration::from_secs(5),
        || async { (app.upstream.received().len() == 4).then_some(()) },
    )
    .await;
    let cancel = app
        .chat_api()
        .cancel_run(&chat, &run_id)
        .json(&json!({}))
        .call()
        .await;
    assert!(cancel.status().is_success());
    let frames = read_all(response).await;
    assert_eq!(crate::sse::finished(&frames)["stop_reason"], "cancelled");
    let events = deep_events(&frames);
    assert_eq!(of_type(&events, "subtask_started").len(), 3);
    assert!(
        of_type(&events, "subtask_completed").is_empty()
            && of_type(&events, "synthesizing").is_empty(),
        "nothing is reported after the cancel: {events:?}"
    );
    eventually("the streams dropped", Duration::from_secs(5), || async {
        (app.upstream.abandoned_streams() == 3).then_some(())
    })
    .await;
    assert_eq!(
        app.upstream.received().len(),
        4,
        "no synthesis after the cancel"
    );
}

#[actix_web::test]
async fn a_restart_mid_run_continues_from_the_next_sub_task() {
    let web = start_web().await;
    let app = deep_app(&web, |_| {}).await;
    app.upstream.script([plan(&["first", "second", "third"])]);
    app.upstream
        .script_for(&part("first"), [Reply::text("- first note")]);
    // The first process never gets past the second sub-task; the continuation does.
    app.upstream.script_for(
        &part("second"),
        [
            Reply::text("- lost").delay(Duration::from_secs(30)),
            Reply::text("- second note"),
        ],
    );
    app.upstream
        .script_for(&part("third"), [Reply::text("- third note")]);
    let chat = app.new_chat().await;
    let (response, run_id) = start_in_chat(&app, &chat).await;
    let before = read_until(response, |f| {
        f.json()["type"] == "x_deep_think.subtask_started" && f.json()["subtask_index"] == 1
    })
    .await;
    let last_seen = before.iter().filter_map(|f| f.id).max().unwrap();
    let db = app.db.clone();
    let run = run_id.clone();
    eventually("the first checkpoint", Duration::from_secs(5), || {
        let (db, run) = (db.clone(), run.clone());
        async move {
            let row = entities::runs::Entity::find_by_id(entities::ids::RunId::from_string(run))
                .one(&db)
                .await
                .unwrap()?;
            (row.deep_think?["findings"].as_array()?.len() == 1).then_some(())
        }
    })
    .await;
    // The old process can write nothing more: as if it died.
    app.close_database().await;
    // The continuation starts with the new process: its replies are queued first.
    app.upstream.script([Reply::text("# Report\n\nContinued.")]);
    let asked_before = app.upstream.received().len();
    let app = app.restart().await;

    // Re-attaching with the last id seen gets the continuation.
    let response = app
        .chat_api()
        .run_events(&chat, &run_id)
        .with_query(&format!("after={last_seen}"))
        .call()
        .await;
    assert_eq!(response.status(), 200);
    let frames = read_all(response).await;
    let events = deep_events(&frames);
    let done = of_type(&events, "subtask_completed");
    let ids: Vec<&str> = done
        .iter()
        .map(|e| e["subtask_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["1", "2", "3"],
        "the first replayed, the rest run: {events:?}"
    );
    assert_eq!(crate::sse::finished(&frames)["stop_reason"], "completed");
    let asked_after: Vec<String> = app.upstream.received()[asked_before..]
        .iter()
        .map(|r| r.body.to_string())
        .collect();
    assert!(
        !asked_after.iter().any(|b| b.contains("You plan research")),
        "no second plan"
    );
    assert!(
        !asked_after.iter().any(|b| b.contains(&part("first"))),
        "the first is not redone"
    );
    assert!(asked_after.iter().any(|b| b.contains(&part("second"))));
    let synthesis = asked_after.last().unwrap();
    assert!(
        synthesis.contains("first note") && synthesis.contains("third note"),
        "{synthesis}"
    );

    let answer = stored_answer(&app, &chat).await;
    assert!(answer["content"].as_str().unwrap().starts_with("# Report"));
}

#[actix_web::test]
async fn the_responses_api_starts_deep_think_from_web_search_preview() {
    let web = start_web().await;
    let app = deep_app(&web, |_| {}).await;
    script_standard(&app, &web);
    let response = app
        .openai()
        .create_response()
        .json(&json!({"model": "fake-model", "input": QUESTION,
                    "tools": [{"type": "web_search_preview", "x_deep_think": true}]}))
        .call()
        .await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    let text = body["output"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|item| item["content"].as_array().cloned().unwrap_or_default())
        .filter_map(|part| part["text"].as_str().map(str::to_string))
        .collect::<String>();
    assert!(text.starts_with("# Gold research"), "{body}");
    assert_eq!(planning_requests(&app).len(), 1);
}

/// For the closing note: a scripted 5-sub-task run with usage counted as a real server
/// reports it; prints the tokens per phase (`cargo test --test api deep_think::tokens -- --nocapture`).
#[actix_web::test]
async fn tokens_per_phase_of_a_five_sub_task_run() {
    let web = start_web().await;
    let app = deep_app(&web, |_| {}).await;
    let queries = ["history", "supply", "demand", "prices", "outlook"];
    app.upstream.script([
        plan(&queries).counted(),
        Reply::text("# Gold\n\nA report of some length [1] with several paragraphs.").counted(),
    ]);
    for query in queries {
        app.upstream.script_for(
            &part(query),
            [
                Reply::tool_call("s", "web_search", json!({"query": query})).counted(),
                Reply::text(&format!("- {query}: a finding ({web}/a)")).counted(),
            ],
        );
    }
    let frames = read_all(
        app.openai()
            .chat_completions()
            .json(&deep(QUESTION))
            .call()
            .await,
    )
    .await;
    let events = deep_events(&frames);
    let usage = &of_type(&events, "completed")[0]["tokens"];
    let per_task: Vec<u64> = of_type(&events, "subtask_completed")
        .iter()
        .map(|e| e["tokens"].as_u64().unwrap())
        .collect();
    println!("deep think tokens: {usage} per sub-task {per_task:?}");
    assert_eq!(per_task.len(), 5);
    assert_eq!(
        per_task.iter().sum::<u64>(),
        usage["research"].as_u64().unwrap()
    );
    assert!(usage["planning"].as_u64().unwrap() > 0);
    assert!(usage["synthesis"].as_u64().unwrap() > 0);
}

#[actix_web::test]
async fn x_chat_metadata_counts_the_plan_and_the_sub_tasks_as_research_and_the_synthesis_as_the_answer()
 {
    let web = start_web().await;
    let app = deep_app(&web, |_| {}).await;
    script_standard(&app, &web);
    let frames = deep_in_chat(&app).await;
    let tokens = of_type(&deep_events(&frames), "completed")[0]["tokens"].clone();
    let usage = frames
        .iter()
        .map(Frame::json)
        .find(|j| j["type"] == "x_chat.metadata")
        .expect("x_chat.metadata")["usage"]
        .clone();
    let count = |value: &Value| value.as_u64().unwrap();
    assert_eq!(
        count(&usage["research"]["total_tokens"]),
        count(&tokens["planning"]) + count(&tokens["research"]),
        "{usage} {tokens}"
    );
    assert_eq!(
        count(&usage["answer"]["total_tokens"]),
        count(&tokens["synthesis"]),
        "{usage} {tokens}"
    );
    assert!(count(&usage["answer"]["total_tokens"]) > 0);
    assert_eq!(count(&usage["total_tokens"]), count(&tokens["total"]));
}

#[actix_web::test]
async fn an_upstream_that_refuses_the_plan_schema_is_asked_without_it() {
    let web = start_web().await;
    let app = deep_app(&web, |_| {}).await;
    app.upstream.script([
        Reply::status(400, "response_format json_schema is not supported"),
        plan(&["one", "two", "three"]),
        Reply::text("# Report\n\nDone."),
    ]);
    notes(&app, &["one", "two", "three"]);
    let events = deep_events(
        &read_all(
            app.openai()
                .chat_completions()
                .json(&deep(QUESTION))
                .call()
                .await,
        )
        .await,
    );
    assert_eq!(of_type(&events, "plan_created")[0]["plan_source"], "model");
    let plans = planning_requests(&app);
    assert_eq!(plans.len(), 2);
    assert!(plans[0].get("response_format").is_some());
    assert!(plans[1].get("response_format").is_none());
}

#[actix_web::test]
async fn a_model_server_that_cannot_plan_is_a_fatal_error() {
    let web = start_web().await;
    let app = deep_app(&web, |_| {}).await;
    app.upstream.script([
        Reply::status(500, "down"),
        Reply::status(500, "down"),
        Reply::status(500, "down"),
    ]);
    let frames = deep_in_chat(&app).await;
    let events = deep_events(&frames);
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["x_deep_think.error"]);
    assert!(
        events[0]["message"]
            .as_str()
            .unwrap()
            .contains("model server")
    );
    assert_eq!(
        crate::sse::finished(&frames)["stop_reason"],
        "upstream_error"
    );
}

#[actix_web::test]
async fn the_whole_run_budget_keeps_its_reserve_for_the_synthesis() {
    let web = start_web().await;
    // 40 tokens, 15 % kept back: sub-tasks may start until 34 are spent. The plan and each
    // note cost 15.
    let app = deep_app(&web, |config| config.deep_think.token_budget = 40).await;
    app.upstream.script([
        plan(&["one", "two", "three"]),
        Reply::text("# Report\n\nFrom what there was."),
    ]);
    notes(&app, &["one", "two", "three"]);
    let frames = read_all(
        app.openai()
            .chat_completions()
            .json(&deep(QUESTION))
            .call()
            .await,
    )
    .await;
    let events = deep_events(&frames);
    let done = of_type(&events, "subtask_completed");
    let statuses: Vec<&str> = done.iter().map(|e| e["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["completed", "completed", "failed"]);
    assert_eq!(done[2]["error"], "the run's token budget is spent");
    assert!(
        !app.upstream
            .received()
            .iter()
            .any(|r| r.body.to_string().contains(&part("three"))),
        "the third never asked the model"
    );
    assert!(
        content(&frames).starts_with("# Report"),
        "the synthesis had its reserve"
    );
}

#[actix_web::test]
async fn a_run_cut_off_too_often_is_not_continued_again_but_recovered_as_interrupted() {
    use sea_orm::{ActiveModelTrait, Set};
    let web = start_web().await;
    let app = deep_app(&web, |_| {}).await;
    app.upstream.script([Reply::text("An ordinary answer.")]);
    let chat = app.new_chat().await;
    app.send_text(&chat, "hello").await;
    let question = stored_answer(&app, &chat).await["parent_id"]
        .as_str()
        .unwrap()
        .to_string();
    let me: Value = app.auth().me().read_json().await;
    let checkpoint = json!({
        "question": QUESTION, "model": "fake-model", "project": "p", "owner_is_admin": true,
        "tools": ["web_search"],
        "plan": {"title": "T", "subtasks": [{"id": "1", "query": "one", "tools": ["web_search"]}],
                 "proposed": null, "source": "model"},
        "discovery": null, "findings": [],
        "planning_usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        "planning_iterations": 1, "resumptions": 3
    });
    let run_id = entities::ids::RunId::generate();
    entities::runs::ActiveModel {
        id: Set(run_id.clone()),
        chat_id: Set(entities::ids::ChatId::from_string(chat.clone())),
        user_id: Set(entities::ids::UserId::from_string(
            me["id"].as_str().unwrap(),
        )),
        status: Set(entities::runs::RunStatus::Running),
        user_message_id: Set(Some(entities::ids::MessageId::from_string(question))),
        iterations: Set(1),
        input_tokens: Set(0),
        output_tokens: Set(0),
        created_at: Set(chrono::Utc::now()),
        deep_think: Set(Some(checkpoint)),
        ..Default::default()
    }
    .insert(&app.db)
    .await
    .unwrap();
    let asked = app.upstream.received().len();
    let app = app.restart().await;
    let row = entities::runs::Entity::find_by_id(run_id)
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.status, entities::runs::RunStatus::Interrupted);
    actix_web::rt::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        app.upstream.received().len(),
        asked,
        "nothing was continued"
    );
}

#[actix_web::test]
async fn each_deep_think_role_asks_the_model_configured_for_it_on_its_own_server() {
    let web = start_web().await;
    let writer = crate::fake_upstream::FakeUpstream::start().await;
    let writer_url = writer.base_url.clone();
    let app = deep_app(&web, |config| {
        config.llm.providers = vec![
            crate::providers::provider("a", &config.llm.base_url, &["fake-model", "planner"]),
            crate::providers::provider("b", &writer_url, &["writer"]),
        ];
        config.deep_think.planner_model = Some("planner".into());
        config.deep_think.synthesis_model = Some("writer".into());
    })
    .await;
    app.upstream.script([plan(&["one", "two", "three"])]);
    notes(&app, &["one", "two", "three"]);
    writer.script([Reply::text("# Gold research\n\nWritten by the writer.")]);
    let chat = app.new_chat().await;
    app.send(
        &chat,
        json!({"content": QUESTION, "web_search_options": {"x_deep_think": true}}),
    )
    .await;
    let models = |received: Vec<crate::fake_upstream::Recorded>| -> Vec<String> {
        received
            .into_iter()
            .filter(|r| r.path == "/v1/chat/completions")
            .map(|r| r.body["model"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    let on_a = models(app.upstream.received());
    assert_eq!(on_a[0], "planner", "the plan: {on_a:?}");
    assert!(
        on_a[1..].iter().all(|m| m == "fake-model"),
        "the sub-tasks use the run's model: {on_a:?}"
    );
    assert_eq!(models(writer.received()), ["writer"], "the synthesis");
    let answer = stored_answer(&app, &chat).await;
    assert!(
        answer["content"]
            .as_str()
            .unwrap()
            .contains("Written by the writer."),
        "{answer}"
    );
}

#[actix_web::test]
async fn the_sub_tasks_ask_the_subtask_model_on_its_own_server() {
    let web = start_web().await;
    let researcher = crate::fake_upstream::FakeUpstream::start().await;
    let researcher_url = researcher.base_url.clone();
    let app = deep_app(&web, |config| {
        config.llm.providers = vec![
            crate::providers::provider("a", &config.llm.base_url, &["fake-model"]),
            crate::providers::provider("r", &researcher_url, &["researcher"]),
        ];
        config.deep_think.subtask_model = Some("researcher".into());
    })
    .await;
    app.upstream.script([
        plan(&["one", "two", "three"]),
        Reply::text("# Gold research\n\nWritten on A."),
    ]);
    for query in ["one", "two", "three"] {
        researcher.script_for(&part(query), [Reply::text(&format!("- note on {query}"))]);
    }
    let chat = app.new_chat().await;
    app.send(
        &chat,
        json!({"content": QUESTION, "web_search_options": {"x_deep_think": true}}),
    )
    .await;
    let models = |received: Vec<crate::fake_upstream::Recorded>| -> Vec<String> {
        received
            .into_iter()
            .filter(|r| r.path == "/v1/chat/completions")
            .map(|r| r.body["model"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    assert_eq!(
        models(researcher.received()),
        ["researcher", "researcher", "researcher"],
        "one request per sub-task, on the researcher's server"
    );
    assert_eq!(
        models(app.upstream.received()),
        ["fake-model", "fake-model"],
        "the plan and the synthesis stay on the run's model"
    );
    let answer = stored_answer(&app, &chat).await;
    assert!(
        answer["content"]
            .as_str()
            .unwrap()
            .contains("Written on A."),
        "{answer}"
    );
}
