//! `execute_sql`'s closed doors, against the real PostgreSQL `COLLOQUY_TEST_POSTGRES_URL`
//! names (skipped with a note when unset) and real SQLite files: a privileged role makes its
//! database unavailable unless the operator allows it; calls that reach outside the read-only
//! transaction (`COPY`, large objects, `dblink`, other sessions) are refused before they are
//! sent, and leave no file behind; a second statement is `sql_multiple_statements` on both
//! databases; long PostgreSQL values are cut in the server.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use sea_orm::sqlx::postgres::PgConnection;
use sea_orm::sqlx::{self, AssertSqlSafe, Connection};
use serde_json::{Value, json};

use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, spawn_app_with};
use crate::sql::{
    READ_ONLY_GRANTS, Role, SeededPostgres, agent_chat, assert_refused, create_agent, declared,
    described, tool_results,
};

/// Runs `queries` (call id, SQL) as execute_sql calls of one model turn in `chat`, and gives
/// their results by call id.
pub async fn call_all(
    app: &TestApp,
    chat: &str,
    queries: &[(&str, &str)],
) -> HashMap<String, Value> {
    let mut calls = queries.iter();
    let (id, query) = calls.next().expect("at least one query");
    let mut reply = Reply::tool_call(id, "execute_sql", json!({ "query": query }));
    for (id, query) in calls {
        reply = reply.and_tool_call(id, "execute_sql", json!({ "query": query }));
    }
    let before = app.upstream.received().len();
    app.upstream.script([reply, Reply::text("Done.")]);
    app.send(chat, json!({"content": "Go."})).await;
    tool_results(app, before + 1)
}

/// A directory the PostgreSQL server (another OS user) may write into, so a file it is made to
/// write would appear there.
fn open_directory() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    dir
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect()
}

/// An app declaring `url` as "shop", an agent over it, and a chat of that agent's.
async fn shop_chat(url: &str, allow_privileged_role: bool) -> (TestApp, String, String) {
    shop_chat_within(url, allow_privileged_role, 2_000).await
}

/// `shop_chat` with a statement timeout of `timeout_ms`.
pub async fn shop_chat_within(
    url: &str,
    allow_privileged_role: bool,
    timeout_ms: u64,
) -> (TestApp, String, String) {
    let url = url.to_string();
    let app = spawn_app_with(move |config| {
        let mut shop = declared("shop", &url, timeout_ms);
        shop.allow_privileged_role = allow_privileged_role;
        config.sql.databases = vec![shop];
    })
    .await;
    let agent = create_agent(
        &app,
        json!({"name": "Analyst", "enabled_tools": ["execute_sql"]}),
    )
    .await;
    let agent = agent["id"].as_str().unwrap().to_string();
    let chat = agent_chat(&app, &agent).await;
    (app, agent, chat)
}

#[actix_web::test]
async fn a_superuser_role_makes_its_database_unavailable_and_allowed_it_still_cannot_reach_files() {
    let Some(shop) = SeededPostgres::create().await else {
        return;
    };
    let superuser = Role::create(&shop.url, "super", "SUPERUSER", "").await;
    let reader_of_files = Role::create(
        &shop.url,
        "files",
        "",
        &format!("{READ_ONLY_GRANTS} GRANT pg_read_server_files TO {{role}};"),
    )
    .await;
    // A superuser whose sessions start as the reader (`ALTER ROLE … SET role`): `RESET ROLE`
    // would take the superuser back.
    let disguised = Role::create(&shop.url, "disguised", "SUPERUSER", "").await;
    let mut admin = shop.connect().await;
    sqlx::raw_sql(AssertSqlSafe(format!(
        "ALTER ROLE {} SET role = '{}'",
        disguised.name, shop.reader.name
    )))
    .execute(&mut admin)
    .await
    .unwrap();
    admin.close().await.unwrap();
    let dir = open_directory();
    let target = |name: &str| dir.path().join(name).display().to_string();
    let copy_to_file = format!("COPY (SELECT 'x') TO '{}'", target("copied"));
    let copy_to_program = format!(
        "COPY (SELECT 'x') TO PROGRAM 'touch {}'",
        target("programmed")
    );
    let export = format!(
        "SELECT lo_export(lo_from_bytea(0, 'x'), '{}')",
        target("exported")
    );

    let (app, agent, chat) = shop_chat(&superuser.url, false).await;
    let tool = described(&app, &agent, "is a superuser").await;
    assert!(
        tool["description"]
            .as_str()
            .unwrap()
            .contains("the database is unavailable"),
        "{tool}"
    );
    let results = call_all(
        &app,
        &chat,
        &[
            ("read", "SELECT name FROM customers ORDER BY id"),
            ("copy", &copy_to_file),
        ],
    )
    .await;
    assert_refused(&results["read"], "sql_privileged_role", "is a superuser");
    assert_refused(
        &results["read"],
        "sql_privileged_role",
        "allow_privileged_role",
    );
    assert_refused(&results["copy"], "sql_refused_function", "COPY is refused");
    drop(app);

    let (app, _, chat) = shop_chat(&reader_of_files.url, false).await;
    let results = call_all(&app, &chat, &[("read", "SELECT count(*) FROM customers")]).await;
    assert_refused(
        &results["read"],
        "sql_privileged_role",
        "is a member of pg_read_server_files",
    );
    drop(app);

    let (app, _, chat) = shop_chat(&disguised.url, false).await;
    let results = call_all(&app, &chat, &[("read", "SELECT current_user")]).await;
    assert_refused(&results["read"], "sql_privileged_role", "is a superuser");
    drop(app);

    let (app, _, chat) = shop_chat(&superuser.url, true).await;
    let results = call_all(
        &app,
        &chat,
        &[
            ("read", "SELECT name FROM customers ORDER BY id"),
            ("copy", &copy_to_file),
            ("program", &copy_to_program),
            ("export", &export),
        ],
    )
    .await;
    assert_eq!(
        results["read"]["rows"],
        json!([["Ada"], ["Grace"], ["Edsger"]]),
        "allowed, the privileged role reads: {results:?}"
    );
    assert_refused(&results["copy"], "sql_refused_function", "COPY is refused");
    assert_refused(
        &results["program"],
        "sql_refused_function",
        "COPY is refused",
    );
    assert_refused(&results["export"], "sql_refused_function", "lo_export");
    assert_eq!(
        files_in(dir.path()),
        Vec::<PathBuf>::new(),
        "no file written"
    );
    drop(app);

    let admin_url = shop.admin_url.clone();
    shop.drop_database().await;
    superuser.drop_role(&admin_url).await;
    disguised.drop_role(&admin_url).await;
    reader_of_files.drop_role(&admin_url).await;
}

#[actix_web::test]
async fn a_writer_role_cannot_write_through_dblink_nor_end_other_sessions() {
    let Some(shop) = SeededPostgres::create().await else {
        return;
    };
    let mut admin = shop.connect().await;
    sqlx::raw_sql("CREATE EXTENSION IF NOT EXISTS dblink")
        .execute(&mut admin)
        .await
        .unwrap();
    admin.close().await.unwrap();
    let writer = Role::create(
        &shop.url,
        "writer",
        "",
        &format!(
            "{READ_ONLY_GRANTS} GRANT INSERT ON ALL TABLES IN SCHEMA public TO {{role}}; \
             GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {{role}};"
        ),
    )
    .await;
    // Another session of the same role, which pg_terminate_backend would end.
    let mut other_session = PgConnection::connect(&writer.url).await.unwrap();

    let (app, _, chat) = shop_chat(&writer.url, false).await;
    let insert = format!(
        "SELECT dblink_exec('dbname={} user={}', 'INSERT INTO customers (name) VALUES (''Mallory'')')",
        shop.name, writer.name
    );
    let results = call_all(
        &app,
        &chat,
        &[
            ("read", "SELECT count(*) AS n FROM customers"),
            ("dblink", &insert),
            (
                "schema",
                "SELECT * FROM public.DBLINK('dbname=x', 'SELECT 1') AS t(n int)",
            ),
            (
                "terminate",
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE usename = current_user AND pid <> pg_backend_pid()",
            ),
            ("cancel", "SELECT \"pg_cancel_backend\"(0)"),
            (
                "do",
                "DO $$ BEGIN PERFORM pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE usename = current_user AND pid <> pg_backend_pid(); END $$",
            ),
            ("file", "SELECT pg_catalog.pg_read_file('/etc/passwd')"),
            ("two", "SELECT 1; DELETE FROM customers"),
        ],
    )
    .await;
    assert_eq!(results["read"]["rows"], json!([[3]]), "{results:?}");
    assert_refused(&results["dblink"], "sql_refused_function", "dblink_exec");
    assert_refused(&results["schema"], "sql_refused_function", "dblink");
    assert_refused(
        &results["terminate"],
        "sql_refused_function",
        "pg_terminate_backend",
    );
    assert_refused(
        &results["cancel"],
        "sql_refused_function",
        "pg_cancel_backend",
    );
    assert_refused(&results["file"], "sql_refused_function", "pg_read_file");
    assert_refused(&results["do"], "sql_refused_function", "DO is refused");
    assert_refused(
        &results["two"],
        "sql_multiple_statements",
        "more than one statement",
    );
    let alive: i32 = sqlx::query_scalar("SELECT 1")
        .fetch_one(&mut other_session)
        .await
        .expect("the other session was not ended");
    assert_eq!(alive, 1);
    other_session.close().await.unwrap();
    assert_eq!(shop.count("customers").await, 3, "nothing inserted");
    drop(app);

    let admin_url = shop.admin_url.clone();
    shop.drop_database().await;
    writer.drop_role(&admin_url).await;
}

#[actix_web::test]
async fn long_postgres_values_are_cut_in_the_server_and_marked_truncated() {
    let Some(shop) = SeededPostgres::create().await else {
        return;
    };
    let (app, _, chat) = shop_chat(&shop.reader.url, false).await;
    let results = call_all(
        &app,
        &chat,
        &[
            ("text", "SELECT repeat('é', 5000) AS long, 'short' AS short"),
            (
                "bytes",
                "SELECT decode(repeat('ab', 3000), 'hex') AS raw -- a comment",
            ),
            (
                "json",
                "SELECT jsonb_build_object('k', repeat('x', 20000)) AS doc, \
                 '{\"a\": 1}'::json AS small, ARRAY[1, 2] AS numbers",
            ),
            ("show", "SHOW statement_timeout"),
            ("values", "VALUES (repeat('y', 2001))"),
        ],
    )
    .await;
    let text = &results["text"];
    assert_eq!(text["truncated"], true, "{text}");
    let long = text["rows"][0][0].as_str().unwrap();
    assert!(long.starts_with(&"é".repeat(2_000)), "{long:.40}");
    assert!(long.ends_with("… [3000 more characters]"), "{long:.40}");
    assert_eq!(text["rows"][0][1], "short");
    let raw = results["bytes"]["rows"][0][0].as_str().unwrap();
    assert!(raw.starts_with("\\xabab"), "{raw:.40}");
    assert!(raw.ends_with("… [2000 more bytes]"), "{raw:.40}");
    let json = &results["json"];
    let doc = json["rows"][0][0].as_str().unwrap();
    assert!(doc.starts_with("{\"k\": \"xxx"), "{doc:.40}");
    assert!(doc.ends_with("more characters]"), "{doc:.40}");
    assert_eq!(json["rows"][0][1], json!({"a": 1}));
    assert_eq!(json["rows"][0][2], json!([1, 2]));
    assert_eq!(results["show"]["rows"], json!([["2s"]]), "{results:?}");
    assert_eq!(results["values"]["columns"], json!(["column1"]));
    assert!(
        results["values"]["rows"][0][0]
            .as_str()
            .unwrap()
            .ends_with("… [1 more characters]")
    );
    drop(app);
    shop.drop_database().await;
}
