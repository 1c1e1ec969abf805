//! `execute_sql` against real databases: a fresh PostgreSQL database seeded on the server
//! `COLLOQUY_TEST_POSTGRES_URL` names (skipped with a note when it is unset; CI sets it), and a
//! seeded SQLite file. An agent's chat answers from a query; writes, a second statement and a
//! statement past the timeout are error results with the database's own message, and the data
//! is unchanged. Colloquy's own database cannot be declared; agents enabling the tool without
//! a database are refused when saved.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use colloquy::config::{Config, SqlDatabaseConfig};
use sea_orm::sqlx::postgres::PgConnection;
use sea_orm::sqlx::sqlite::SqliteConnection;
use sea_orm::sqlx::{self, AssertSqlSafe, Connection};
use secrecy::SecretString;
use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, error_body, eventually, spawn_app, spawn_app_with};
use crate::sse::content;

const POSTGRES_URL_VAR: &str = "COLLOQUY_TEST_POSTGRES_URL";

const POSTGRES_SEED: &str = "
    CREATE TYPE order_state AS ENUM ('placed', 'shipped');
    CREATE TABLE customers (id serial PRIMARY KEY, name text NOT NULL, city text);
    CREATE TABLE orders (id serial PRIMARY KEY, customer_id int REFERENCES customers,
                         total numeric(10, 2), state order_state);
    INSERT INTO customers (name, city) VALUES ('Ada', 'London'), ('Grace', 'Arlington'),
                                              ('Edsger', 'Nuenen');
    INSERT INTO orders (customer_id, total, state) VALUES (1, 12.50, 'shipped'),
                                                          (2, 99.99, 'placed');
";

/// A login role made for one test, with `attributes` (`SUPERUSER`, …) and `grants` run in the
/// seeded database; dropped by `drop_role`.
pub struct Role {
    pub name: String,
    pub url: String,
}

impl Role {
    pub async fn create(database_url: &str, kind: &str, attributes: &str, grants: &str) -> Self {
        let name = format!("colloquy_{kind}_{}", uuid::Uuid::new_v4().simple());
        let mut admin = PgConnection::connect(database_url).await.unwrap();
        let grants = grants.replace("{role}", &name);
        sqlx::raw_sql(AssertSqlSafe(format!(
            "CREATE ROLE {name} LOGIN {attributes}; {grants}"
        )))
        .execute(&mut admin)
        .await
        .unwrap();
        admin.close().await.unwrap();
        let mut url = url::Url::parse(database_url).unwrap();
        url.set_username(&name).unwrap();
        Self {
            name,
            url: url.to_string(),
        }
    }

    pub async fn drop_role(self, admin_url: &str) {
        let mut admin = PgConnection::connect(admin_url).await.unwrap();
        sqlx::raw_sql(AssertSqlSafe(format!("DROP ROLE IF EXISTS {}", self.name)))
            .execute(&mut admin)
            .await
            .unwrap();
        admin.close().await.unwrap();
    }
}

/// The grants of a role that may only read the seeded tables.
pub const READ_ONLY_GRANTS: &str = "GRANT USAGE ON SCHEMA public TO {role}; \
                                GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role};";

/// A database made for one test on the test server, with a role that may only read it
/// (`reader`, as README says to declare one); both dropped by `drop_database`.
pub struct SeededPostgres {
    pub admin_url: String,
    pub name: String,
    pub url: String,
    pub reader: Role,
}

impl SeededPostgres {
    /// A fresh database with `POSTGRES_SEED` in it; `None` (after a note) without a server.
    pub async fn create() -> Option<Self> {
        let Ok(admin_url) = std::env::var(POSTGRES_URL_VAR) else {
            println!("skipped: {POSTGRES_URL_VAR} is not set");
            return None;
        };
        let name = format!("colloquy_sql_{}", uuid::Uuid::new_v4().simple());
        let mut admin = PgConnection::connect(&admin_url)
            .await
            .expect("the test server");
        sqlx::raw_sql(AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut admin)
            .await
            .unwrap();
        admin.close().await.unwrap();
        let mut url = url::Url::parse(&admin_url).unwrap();
        url.set_path(&name);
        let url = url.to_string();
        let mut connection = PgConnection::connect(&url).await.unwrap();
        sqlx::raw_sql(POSTGRES_SEED)
            .execute(&mut connection)
            .await
            .unwrap();
        connection.close().await.unwrap();
        let reader = Role::create(&url, "reader", "", READ_ONLY_GRANTS).await;
        Some(Self {
            admin_url,
            name,
            url,
            reader,
        })
    }

    pub async fn connect(&self) -> PgConnection {
        PgConnection::connect(&self.url).await.unwrap()
    }

    pub async fn count(&self, table: &str) -> i64 {
        let mut connection = self.connect().await;
        let count: i64 = sqlx::query_scalar(AssertSqlSafe(format!("SELECT count(*) FROM {table}")))
            .fetch_one(&mut connection)
            .await
            .unwrap();
        connection.close().await.unwrap();
        count
    }

    pub async fn drop_database(self) {
        let mut admin = PgConnection::connect(&self.admin_url).await.unwrap();
        sqlx::raw_sql(AssertSqlSafe(format!(
            "DROP DATABASE {} WITH (FORCE)",
            self.name
        )))
        .execute(&mut admin)
        .await
        .unwrap();
        admin.close().await.unwrap();
        self.reader.drop_role(&self.admin_url).await;
    }
}

pub fn declared(id: &str, url: &str, timeout_ms: u64) -> SqlDatabaseConfig {
    SqlDatabaseConfig {
        id: id.into(),
        url: SecretString::from(url.to_string()),
        max_rows: 200,
        timeout_ms,
        allow_privileged_role: false,
    }
}

pub async fn create_agent(app: &TestApp, body: Value) -> Value {
    let response = app.api().create_agent().json(&body).call().await;
    assert_eq!(response.status(), 201, "{:?}", response.text().await);
    response.json().await.unwrap()
}

/// The agent's chat-tools listing.
pub async fn listed_tools(app: &TestApp, agent: &str) -> Vec<Value> {
    let listed: Value = app.api().agent_tools(agent).read_json().await;
    listed["tools"].as_array().unwrap().clone()
}

/// `execute_sql` as the agent's listing shows it, once its description lists `table_line`
/// (the tables are read in the background at start-up).
pub async fn described(app: &TestApp, agent: &str, table_line: &str) -> Value {
    eventually(
        "the database's tables in execute_sql's description",
        Duration::from_secs(20),
        || async {
            listed_tools(app, agent)
                .await
                .into_iter()
                .find(|t| t["name"] == "execute_sql")
                .filter(|t| t["description"].as_str().unwrap().contains(table_line))
        },
    )
    .await
}

/// A chat of `agent`'s.
pub async fn agent_chat(app: &TestApp, agent: &str) -> String {
    app.new_chat_with(&json!({"agent_id": agent})).await
}

/// The tool results upstream request `index` carried, by call id, parsed.
pub fn tool_results(app: &TestApp, index: usize) -> HashMap<String, Value> {
    let received = app.upstream.received();
    received[index].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            let content = m["content"].as_str().unwrap();
            let parsed = serde_json::from_str(content).unwrap_or_else(|_| json!(content));
            (m["tool_call_id"].as_str().unwrap().to_string(), parsed)
        })
        .collect()
}

/// Asserts the result is an error with `code` whose message holds `words`.
pub fn assert_refused(result: &Value, code: &str, words: &str) {
    assert_eq!(result["code"], code, "{result}");
    let message = result["error"].as_str().unwrap_or_default();
    assert!(message.contains(words), "{words:?} in {result}");
}

#[actix_web::test]
async fn an_agents_chat_answers_from_a_seeded_postgres_database_and_every_write_is_refused() {
    let Some(shop) = SeededPostgres::create().await else {
        return;
    };
    let url = shop.reader.url.clone();
    let app = spawn_app_with(|config| {
        config.sql.databases = vec![declared("shop", &url, 500)];
    })
    .await;
    let agent = create_agent(
        &app,
        json!({"name": "Analyst", "enabled_tools": ["execute_sql"]}),
    )
    .await;
    assert_eq!(agent["sql_database"], Value::Null, "the only database");
    let agent = agent["id"].as_str().unwrap();
    let tool = described(&app, agent, "customers(id integer, name text, city text)").await;
    let description = tool["description"].as_str().unwrap();
    assert!(
        description.contains("PostgreSQL database \"shop\""),
        "{description}"
    );
    assert!(
        description
            .contains("orders(id integer, customer_id integer, total numeric, state order_state)"),
        "{description}"
    );
    assert!(
        !description.contains(&shop.name),
        "the URL never shows: {description}"
    );
    assert_eq!(tool["parameters"]["required"], json!(["query"]));
    assert_eq!(tool["parameters"]["properties"]["query"]["type"], "string");

    let chat = agent_chat(&app, agent).await;
    app.upstream.script([
        Reply::tool_call(
            "q1",
            "execute_sql",
            json!({"query": "SELECT name, city FROM customers ORDER BY id"}),
        ),
        Reply::text("Ada lives in London."),
    ]);
    let frames = app
        .send(&chat, json!({"content": "Where does Ada live?"}))
        .await;
    assert_eq!(content(&frames), "Ada lives in London.");
    let offered = &app.upstream.received()[0].body["tools"];
    assert!(
        offered
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["function"]["name"] == "execute_sql"),
        "{offered}"
    );
    assert_eq!(
        tool_results(&app, 1)["q1"],
        json!({
            "columns": ["name", "city"],
            "rows": [["Ada", "London"], ["Grace", "Arlington"], ["Edsger", "Nuenen"]],
            "row_count": 3,
            "truncated": false,
        })
    );

    app.upstream.script([
        Reply::tool_call(
            "w1",
            "execute_sql",
            json!({"query": "INSERT INTO customers (name) VALUES ('Mallory')"}),
        )
        .and_tool_call("w2", "execute_sql", json!({"query": "DROP TABLE orders"}))
        .and_tool_call(
            "w3",
            "execute_sql",
            json!({"query": "SELECT 1; DELETE FROM customers"}),
        )
        .and_tool_call("w4", "execute_sql", json!({"query": "SELECT pg_sleep(5)"}))
        .and_tool_call(
            "w5",
            "execute_sql",
            json!({"query": "SELEC * FROM customers"}),
        ),
        Reply::text("None of that worked."),
    ]);
    let frames = app.send(&chat, json!({"content": "Change things."})).await;
    assert_eq!(
        content(&frames),
        "None of that worked.",
        "never a failed run"
    );
    let results = tool_results(&app, 3);
    assert_refused(
        &results["w1"],
        "sql_read_only",
        "cannot execute INSERT in a read-only transaction",
    );
    assert_refused(
        &results["w2"],
        "sql_read_only",
        "cannot execute DROP TABLE in a read-only transaction",
    );
    assert_refused(
        &results["w3"],
        "sql_multiple_statements",
        "more than one statement",
    );
    assert_refused(
        &results["w4"],
        "sql_timeout",
        "canceling statement due to statement timeout",
    );
    assert_refused(&results["w5"], "sql_syntax_error", "syntax error");
    assert_eq!(shop.count("customers").await, 3, "nothing changed");
    assert_eq!(shop.count("orders").await, 2, "the table is still there");

    app.upstream.script([
        Reply::tool_call(
            "t1",
            "execute_sql",
            json!({"query": "SELECT 7::int2 AS small, 9000000000::int8 AS big, 1.5::float8 AS ratio, \
                total, state, true AS flag, '\\x01ff'::bytea AS raw, DATE '2024-02-29' AS day, \
                TIMESTAMPTZ '2024-02-29 13:14:15+00' AS at, '{\"a\": [1, 2]}'::jsonb AS doc, \
                ARRAY[1, NULL]::int4[] AS numbers, NULL::text AS nothing, \
                'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid AS id, '12345678901234567890.5'::numeric AS huge \
                FROM orders WHERE id = 1"}),
        ),
        Reply::text("Typed."),
    ]);
    app.send(&chat, json!({"content": "Types?"})).await;
    let typed = &tool_results(&app, 5)["t1"];
    assert_eq!(
        typed["rows"][0],
        json!([7, 9_000_000_000i64, 1.5, 12.5, "shipped", true, "\\x01ff", "2024-02-29",
               "2024-02-29T13:14:15Z", {"a": [1, 2]}, [1, null], null,
               "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "12345678901234567890.5"]),
        "{typed}"
    );

    let metrics = app.get("/metrics").await.text().await.unwrap();
    let scrape = prometheus_parse::Scrape::parse(metrics.lines().map(|l| Ok(l.to_string())))
        .expect("Prometheus text format");
    let counted = |name: &str, label: (&str, &str)| -> f64 {
        scrape
            .samples
            .iter()
            .filter(|s| s.metric == name && s.labels.get("tool") == Some("execute_sql"))
            .filter(|s| s.labels.get(label.0) == Some(label.1))
            .map(|s| match s.value {
                prometheus_parse::Value::Counter(v) => v,
                _ => 0.0,
            })
            .sum()
    };
    assert_eq!(
        counted("colloquy_tool_calls_total", ("outcome", "success")),
        2.0
    );
    assert_eq!(
        counted("colloquy_tool_failures_total", ("code", "sql_read_only")),
        2.0
    );
    assert_eq!(
        counted("colloquy_tool_failures_total", ("code", "sql_timeout")),
        1.0
    );
    drop(app);
    shop.drop_database().await;
}

/// A SQLite file with a table of three rows.
pub async fn seeded_sqlite(dir: &Path) -> PathBuf {
    let path = dir.join("inventory.db");
    let mut connection =
        SqliteConnection::connect(&format!("sqlite://{}?mode=rwc", path.display()))
            .await
            .unwrap();
    sqlx::raw_sql(
        "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, stock INTEGER);
         INSERT INTO items (name, stock) VALUES ('kettle', 4), ('teapot', 0), ('cup', 12);",
    )
    .execute(&mut connection)
    .await
    .unwrap();
    connection.close().await.unwrap();
    path
}

pub async fn count_sqlite(path: &Path) -> i64 {
    let mut connection = SqliteConnection::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM items")
        .fetch_one(&mut connection)
        .await
        .unwrap();
    connection.close().await.unwrap();
    count
}

#[actix_web::test]
async fn an_agents_chat_answers_from_a_sqlite_file_and_writes_are_refused() {
    let files = tempfile::tempdir().unwrap();
    let path = seeded_sqlite(files.path()).await;
    let url = format!("sqlite://{}", path.display());
    let app = spawn_app_with(|config| {
        config.sql.databases = vec![declared("inventory", &url, 1_000)];
    })
    .await;
    let agent = create_agent(
        &app,
        json!({"name": "Stock", "enabled_tools": ["execute_sql", "calculator"]}),
    )
    .await;
    let agent = agent["id"].as_str().unwrap();
    let tool = described(&app, agent, "items(id integer, name text, stock integer)").await;
    assert!(
        tool["description"]
            .as_str()
            .unwrap()
            .contains("SQLite database \"inventory\""),
        "{tool}"
    );

    let chat = agent_chat(&app, agent).await;
    app.upstream.script([
        Reply::tool_call(
            "q1",
            "execute_sql",
            json!({"query": "SELECT name FROM items WHERE stock = 0"}),
        ),
        Reply::text("The teapot is out of stock."),
        Reply::tool_call(
            "w1",
            "execute_sql",
            json!({"query": "INSERT INTO items (name, stock) VALUES ('spoon', 1)"}),
        )
        .and_tool_call("w2", "execute_sql", json!({"query": "DROP TABLE items"}))
        .and_tool_call(
            "w3",
            "execute_sql",
            json!({"query": "SELECT 1; DELETE FROM items"}),
        )
        .and_tool_call(
            "w4",
            "execute_sql",
            json!({"query": "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) FROM n"}),
        ),
        Reply::text("Refused."),
    ]);
    let frames = app
        .send(&chat, json!({"content": "What is out of stock?"}))
        .await;
    assert_eq!(content(&frames), "The teapot is out of stock.");
    assert_eq!(
        tool_results(&app, 1)["q1"],
        json!({"columns": ["name"], "rows": [["teapot"]], "row_count": 1, "truncated": false})
    );
    let frames = app.send(&chat, json!({"content": "Change things."})).await;
    assert_eq!(content(&frames), "Refused.");
    let results = tool_results(&app, 3);
    assert_refused(
        &results["w1"],
        "sql_read_only",
        "attempt to write a readonly database",
    );
    assert_refused(
        &results["w2"],
        "sql_read_only",
        "attempt to write a readonly database",
    );
    assert_refused(
        &results["w3"],
        "sql_multiple_statements",
        "more than one statement",
    );
    assert_refused(&results["w4"], "sql_timeout", "interrupted");
    assert_eq!(count_sqlite(&path).await, 3, "nothing changed");
}

#[actix_web::test]
async fn colloquys_own_database_cannot_be_declared() {
    let data_dir = tempfile::tempdir().unwrap();
    let own_sqlite = Config {
        bind: "127.0.0.1:0".into(),
        data_dir: data_dir.path().to_path_buf(),
        sql: colloquy::config::SqlConfig {
            databases: vec![declared(
                "mine",
                &format!("sqlite://{}/colloquy.db", data_dir.path().display()),
                1_000,
            )],
            ..Default::default()
        },
        ..Config::default()
    };
    let own_postgres = Config {
        database: colloquy::config::DatabaseConfig {
            url: Some("postgres://colloquy:pw@127.0.0.1:5999/app".into()),
            ..Default::default()
        },
        sql: colloquy::config::SqlConfig {
            databases: vec![declared(
                "mine",
                "postgres://reader@localhost:5999/app",
                1_000,
            )],
            ..Default::default()
        },
        ..own_sqlite.clone()
    };
    for config in [own_sqlite, own_postgres] {
        let refused = colloquy::startup::Application::build(config)
            .await
            .err()
            .expect("start-up is refused");
        let message = format!("{refused:#}");
        assert!(message.contains("Colloquy's own database"), "{message}");
        assert!(!message.contains("pw@"), "{message}");
    }
    assert!(
        !data_dir.path().join("colloquy.db").exists(),
        "refused before anything was opened"
    );
}

#[actix_web::test]
async fn agents_enabling_execute_sql_without_a_database_to_query_are_refused_when_saved() {
    let bare = spawn_app().await;
    let response = bare
        .api()
        .create_agent()
        .json(&json!({"name": "Analyst", "enabled_tools": ["execute_sql"]}))
        .call()
        .await;
    assert_eq!(response.status(), 400);
    let error = error_body(response).await;
    assert_eq!(error["code"], "unknown_tool");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("execute_sql is not configured") && message.contains("[[sql.databases]]"),
        "{message}"
    );
    let response = bare
        .api()
        .create_agent()
        .json(&json!({"name": "A", "sql_database": "shop"}))
        .call()
        .await;
    assert_eq!(error_body(response).await["code"], "unknown_sql_database");

    let files = tempfile::tempdir().unwrap();
    let first = seeded_sqlite(files.path()).await;
    let second = files.path().join("second.db");
    std::fs::copy(&first, &second).unwrap();
    let app = spawn_app_with(|config| {
        config.sql.databases = vec![
            declared("first", &format!("sqlite://{}", first.display()), 1_000),
            declared("second", &format!("sqlite://{}", second.display()), 1_000),
        ];
    })
    .await;
    let refusals = [
        (
            json!({"name": "A", "enabled_tools": ["execute_sql"]}),
            "sql_database_required",
            "first, second",
        ),
        (
            json!({"name": "A", "enabled_tools": ["execute_sql"], "sql_database": "third"}),
            "unknown_sql_database",
            "\"third\" is not declared",
        ),
    ];
    for (body, code, words) in refusals {
        let response = app.api().create_agent().json(&body).call().await;
        assert_eq!(response.status(), 400, "{body}");
        let error = error_body(response).await;
        assert_eq!(error["code"], code, "{error}");
        assert!(
            error["message"].as_str().unwrap().contains(words),
            "{error}"
        );
    }
    let agent = create_agent(
        &app,
        json!({"name": "A", "enabled_tools": ["execute_sql"], "sql_database": "second"}),
    )
    .await;
    assert_eq!(agent["sql_database"], "second");
    let id = agent["id"].as_str().unwrap();
    let tool = described(&app, id, "items(").await;
    assert!(tool["description"].as_str().unwrap().contains("\"second\""));

    let patch = |body: Value| app.api().update_agent(id).json(&body).send();
    let response = patch(json!({"sql_database": null})).await.unwrap();
    assert_eq!(response.status(), 400, "still enabled, no longer named");
    assert_eq!(error_body(response).await["code"], "sql_database_required");
    let response = patch(json!({"enabled_tools": ["calculator"]}))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let names: Vec<Value> = listed_tools(&app, id)
        .await
        .into_iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(
        names,
        [
            "calculator",
            "create_artifact",
            "update_artifact",
            "save_memory",
            "recall_memory",
            "ask_user",
            "file_search"
        ],
        "not offered once not enabled (the chat's own tools stay)"
    );
    let response = patch(json!({"sql_database": null})).await.unwrap();
    assert_eq!(response.status(), 200, "nothing enables it now");

    let listed: Value = app.api().agents().read_json().await;
    let default = listed["agents"][0]["id"].as_str().unwrap().to_string();
    let names: Vec<Value> = listed_tools(&app, &default)
        .await
        .into_iter()
        .map(|t| t["name"].clone())
        .collect();
    assert!(
        !names.contains(&json!("execute_sql")),
        "only agents that name it get it: {names:?}"
    );
}

#[actix_web::test]
async fn a_run_paused_on_a_question_still_has_execute_sql_when_the_answer_resumes_it() {
    let files = tempfile::tempdir().unwrap();
    let path = seeded_sqlite(files.path()).await;
    let url = format!("sqlite://{}", path.display());
    let app = spawn_app_with(|config| {
        config.sql.databases = vec![declared("inventory", &url, 1_000)];
    })
    .await;
    let agent = create_agent(
        &app,
        json!({"name": "Stock", "enabled_tools": ["execute_sql", "ask_user"]}),
    )
    .await;
    let chat = agent_chat(&app, agent["id"].as_str().unwrap()).await;
    app.upstream.script([
        Reply::tool_call(
            "ask_1",
            "ask_user",
            json!({"question": "Which item?", "options": ["cup", "kettle"]}),
        ),
        Reply::tool_call(
            "q1",
            "execute_sql",
            json!({"query": "SELECT stock FROM items WHERE name = 'cup'"}),
        ),
        Reply::text("12 cups."),
    ]);
    let frames = app.send(&chat, json!({"content": "How many?"})).await;
    let correlation_id = frames
        .iter()
        .map(crate::sse::Frame::json)
        .find(|j| j["type"] == "x_ask_user.question")
        .expect("a question")["correlation_id"]
        .as_str()
        .unwrap()
        .to_string();
    let resumed = app
        .chat_api()
        .answer_ask(&chat, &correlation_id)
        .json(&json!({"answer": "cup"}))
        .call()
        .await;
    assert_eq!(resumed.status(), 200);
    let frames = crate::sse::read_all(resumed).await;
    assert_eq!(content(&frames), "12 cups.");
    let offered = &app.upstream.received()[1].body["tools"];
    assert!(
        offered
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["function"]["name"] == "execute_sql"),
        "{offered}"
    );
    assert_eq!(tool_results(&app, 2)["q1"]["rows"], json!([[12]]));
}
