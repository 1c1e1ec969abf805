//! Unit tests of `execute_sql`'s parts (the statement check has its own, `statement_tests.rs`):
//! values as JSON (PostgreSQL's binary `NUMERIC` among them), the caps, the schema listing, and
//! queries on a real SQLite file — read, refused writes, a second statement, the deadline, no
//! other file opened or made, no value past the cap built.

use std::time::Duration;

use sea_orm::sqlx::{self, ConnectOptions, Connection};
use serde_json::{Value, json};

use super::schema::{MAX_SCHEMA_CHARS, SchemaColumn, describe};
use super::statement::StatementProblem;
use super::table::{Limits, MAX_VALUE_CHARS, Table};
use super::{QueryError, Refusal, sqlite, value};

#[test]
fn long_text_and_bytes_are_cut_with_a_note_and_floats_json_cannot_hold_are_text() {
    let (short, cut) = value::text("héllo");
    assert_eq!((short, cut), (json!("héllo"), false));
    let long = "é".repeat(MAX_VALUE_CHARS + 5);
    let (cut_text, cut) = value::text(&long);
    assert!(cut);
    let cut_text = cut_text.as_str().unwrap();
    assert!(cut_text.starts_with(&"é".repeat(MAX_VALUE_CHARS)));
    assert!(cut_text.ends_with("… [5 more characters]"), "{cut_text}");

    assert_eq!(value::bytes(&[0x01, 0xab]), (json!("\\x01ab"), false));
    let (many, cut) = value::bytes(&vec![0u8; MAX_VALUE_CHARS]);
    assert!(cut && many.as_str().unwrap().ends_with("more bytes]"));

    assert_eq!(value::float(1.5).0, json!(1.5));
    assert_eq!(value::float(f64::NAN).0, json!("NaN"));
    assert_eq!(value::float(f64::NEG_INFINITY).0, json!("-Infinity"));
    assert_eq!(value::decimal("12.50").0, json!(12.5));
    assert_eq!(value::decimal("-0.001").0, json!(-0.001));
    assert_eq!(
        value::decimal("12345678901234567890.5").0,
        json!("12345678901234567890.5"),
        "more digits than a double holds stay exact, as text"
    );
}

/// PostgreSQL's binary NUMERIC: digit count, weight, sign, scale, base-10000 digits.
fn numeric(weight: i16, sign: u16, scale: u16, digits: &[u16]) -> Vec<u8> {
    let mut raw = Vec::new();
    raw.extend((digits.len() as u16).to_be_bytes());
    raw.extend(weight.to_be_bytes());
    raw.extend(sign.to_be_bytes());
    raw.extend(scale.to_be_bytes());
    for digit in digits {
        raw.extend(digit.to_be_bytes());
    }
    raw
}

#[test]
fn postgres_numeric_is_written_out_from_its_binary_form() {
    let cases = [
        (numeric(0, 0, 2, &[12, 5000]), "12.50"),
        (numeric(-1, 0x4000, 4, &[1]), "-0.0001"),
        (numeric(2, 0, 0, &[1]), "100000000"),
        (numeric(1, 0, 3, &[1, 2345, 6780]), "12345.678"),
        (numeric(0, 0, 0, &[]), "0"),
        (numeric(-2, 0, 6, &[1200]), "0.000012"),
        (numeric(-2, 0, 8, &[12]), "0.00000012"),
        (numeric(0, 0xC000, 0, &[]), "NaN"),
        (numeric(0, 0xD000, 0, &[]), "Infinity"),
    ];
    for (raw, written) in cases {
        assert_eq!(value::pg_numeric(&raw).as_deref(), Some(written));
    }
    let mut short = numeric(0, 0, 0, &[1, 2]);
    short.pop();
    assert_eq!(value::pg_numeric(&short), None, "a digit cut off");
    assert_eq!(value::pg_numeric(&numeric(0, 0, 0, &[10_000])), None);
    assert_eq!(value::pg_numeric(&numeric(0, 0x1234, 0, &[1])), None);
}

fn limits(max_rows: usize, max_bytes: usize) -> Limits {
    Limits {
        max_rows,
        max_bytes,
        timeout: Duration::from_secs(5),
    }
}

#[test]
fn rows_past_max_rows_or_the_byte_cap_are_left_out_and_marked_truncated() {
    let mut table = Table::new(vec!["n".into()], &limits(2, 10_000));
    assert!(table.push(vec![json!(1)], false));
    assert!(table.push(vec![json!(2)], false));
    assert!(!table.push(vec![json!(3)], false), "a third row is refused");
    let result = table.into_json();
    assert_eq!(
        result,
        json!({"columns": ["n"], "rows": [[1], [2]], "row_count": 2, "truncated": true})
    );

    let mut table = Table::new(vec!["text".into()], &limits(100, 300));
    let mut kept = 0;
    while table.push(vec![json!("x".repeat(50))], false) {
        kept += 1;
    }
    let result = table.into_json();
    assert!(
        result.to_string().len() <= 300,
        "{}",
        result.to_string().len()
    );
    assert_eq!(result["row_count"], kept);
    assert!(kept > 0 && result["truncated"] == true);

    let mut table = Table::new(vec!["v".into()], &limits(5, 10_000));
    table.push(vec![json!("cut")], true);
    assert_eq!(table.into_json()["truncated"], true, "a cut value counts");
}

#[test]
fn the_schema_listing_groups_columns_by_table_and_stays_bounded() {
    let column = |table: &str, name: &str, data_type: &str| SchemaColumn {
        table: table.into(),
        name: name.into(),
        data_type: data_type.into(),
    };
    let listing = describe(&[
        column("customers", "id", "INTEGER"),
        column("customers", "name", "text"),
        column("sales.orders", "total", "numeric"),
    ]);
    assert_eq!(
        listing,
        "customers(id integer, name text)\nsales.orders(total numeric)"
    );
    let many: Vec<SchemaColumn> = (0..2_000)
        .map(|i| column(&format!("table_{i}"), "id", "integer"))
        .collect();
    let listing = describe(&many);
    assert!(listing.len() <= MAX_SCHEMA_CHARS + 200, "{}", listing.len());
    assert!(
        listing.ends_with("look them up in the database's catalog."),
        "{listing}"
    );
    assert_eq!(describe(&[]), "(no tables are visible to this connection)");
}

/// A SQLite file with a table of three typed rows.
async fn seeded_sqlite() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shop.db");
    let mut connection = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(&path)
        .create_if_missing(true)
        .connect()
        .await
        .unwrap();
    sqlx::raw_sql(
        "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, price REAL, photo BLOB, note TEXT);
         INSERT INTO items VALUES (1, 'kettle', 24.5, x'cafe', NULL),
                                  (2, 'teapot', 31.0, NULL, 'blue'),
                                  (3, 'cup', 4.25, NULL, NULL);",
    )
    .execute(&mut connection)
    .await
    .unwrap();
    connection.close().await.unwrap();
    (dir, path)
}

async fn count_items(path: &std::path::Path) -> i64 {
    let result = sqlite::query(path, "SELECT count(*) AS n FROM items", &limits(10, 10_000))
        .await
        .unwrap();
    result["rows"][0][0].as_i64().unwrap()
}

#[tokio::test]
async fn a_sqlite_query_gives_typed_rows_and_its_schema_is_read() {
    let (_dir, path) = seeded_sqlite().await;
    let result = sqlite::query(
        &path,
        "SELECT id, name, price, photo, note FROM items ORDER BY id;",
        &limits(2, 10_000),
    )
    .await
    .unwrap();
    assert_eq!(
        result,
        json!({
            "columns": ["id", "name", "price", "photo", "note"],
            "rows": [[1, "kettle", 24.5, "\\xcafe", null], [2, "teapot", 31.0, null, "blue"]],
            "row_count": 2,
            "truncated": true,
        })
    );
    let empty = sqlite::query(
        &path,
        "SELECT name FROM items WHERE id > 10",
        &limits(2, 10_000),
    )
    .await
    .unwrap();
    assert_eq!(
        empty["columns"],
        json!(["name"]),
        "columns even without rows"
    );
    assert_eq!(empty["row_count"], 0);

    let columns = sqlite::schema(&path, Duration::from_secs(5)).await.unwrap();
    assert_eq!(
        describe(&columns),
        "items(id integer, name text, price real, photo blob, note text)"
    );
}

fn refusal(result: Result<Value, QueryError>) -> (Refusal, String) {
    match result {
        Err(QueryError::Database { kind, message }) => (kind, message),
        other => panic!("expected the database's refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn sqlite_refuses_writes_second_statements_and_long_statements_and_nothing_changes() {
    let (_dir, path) = seeded_sqlite().await;
    let limits = limits(10, 10_000);
    for write in [
        "INSERT INTO items (name) VALUES ('spoon')",
        "DELETE FROM items",
        "DROP TABLE items",
        "CREATE TABLE more (x)",
    ] {
        let (kind, message) = refusal(sqlite::query(&path, write, &limits).await);
        assert_eq!(kind, Refusal::ReadOnly, "{write}: {message}");
        assert!(message.contains("readonly database"), "{message}");
    }
    // A setting one call changes does not reach the next: each call has its own connection.
    sqlite::query(&path, "PRAGMA query_only = OFF", &limits)
        .await
        .unwrap();
    let (kind, _) = refusal(sqlite::query(&path, "DELETE FROM items", &limits).await);
    assert_eq!(kind, Refusal::ReadOnly);

    let two = sqlite::query(&path, "SELECT 1; DELETE FROM items", &limits).await;
    assert_eq!(two, Err(QueryError::Statement(StatementProblem::Several)));

    let (kind, message) = refusal(sqlite::query(&path, "SELEC name FROM items", &limits).await);
    assert_eq!(kind, Refusal::Syntax);
    assert!(message.contains("syntax error"), "{message}");
    let (kind, message) = refusal(sqlite::query(&path, "SELECT nope FROM items", &limits).await);
    assert_eq!(kind, Refusal::Other);
    assert!(message.contains("no such column"), "{message}");

    let short = Limits {
        timeout: Duration::from_millis(200),
        ..limits.clone()
    };
    let started = std::time::Instant::now();
    let endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) \
                   SELECT max(i) FROM n";
    let (kind, message) = refusal(sqlite::query(&path, endless, &short).await);
    assert_eq!(kind, Refusal::Timeout);
    assert!(message.contains("interrupted"), "{message}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );

    assert_eq!(count_items(&path).await, 3, "nothing changed");
}

#[tokio::test]
async fn a_missing_sqlite_file_is_unavailable_and_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent.db");
    let result = sqlite::query(&path, "SELECT 1", &limits(10, 10_000)).await;
    assert!(
        matches!(result, Err(QueryError::Unavailable(_))),
        "{result:?}"
    );
    assert!(!path.exists());
}

#[tokio::test]
async fn sqlite_cannot_create_or_open_another_file_nor_load_an_extension() {
    let (dir, path) = seeded_sqlite().await;
    let limits = limits(10, 10_000);
    let target = |name: &str| dir.path().join(name).display().to_string();
    let attempts = [
        format!("VACUUM INTO '{}'", target("literal.db")),
        format!("VACUUM INTO '{}' || 'expression.db'", target("")),
        format!("VACUUM INTO 'file:{}?mode=rwc'", target("uri.db")),
        format!("ATTACH '{}' AS other", target("attached.db")),
        format!(
            "SELECT * FROM pragma_table_info('items') WHERE 0 = (SELECT count(*) FROM (SELECT load_extension('{}')))",
            target("extension")
        ),
        format!("SELECT load_extension('{}')", target("extension")),
    ];
    for sql in &attempts {
        let result = sqlite::query(&path, sql, &limits).await;
        assert!(
            matches!(result, Err(QueryError::Database { .. })),
            "{sql}: {result:?}"
        );
    }
    let mut files: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["shop.db"], "no file made beside the database");
    let (kind, message) =
        refusal(sqlite::query(&path, &format!("VACUUM INTO '{}'", target("x.db")), &limits).await);
    assert_eq!(kind, Refusal::ReadOnly, "{message}");
    assert!(message.contains("authorization denied"), "{message}");
    assert_eq!(count_items(&path).await, 3, "the database still reads");
}

#[tokio::test]
async fn sqlite_refuses_to_build_a_value_larger_than_the_result_may_hold() {
    let (_dir, path) = seeded_sqlite().await;
    let limits = limits(10, 10_000);
    // printf gives NULL for a string past the cap: it never builds it.
    let null = sqlite::query(&path, "SELECT printf('%.*c', 400000000, 'x')", &limits)
        .await
        .unwrap();
    assert_eq!(null["rows"], json!([[null]]), "{null}");
    for sql in [
        "SELECT zeroblob(400000000)",
        "SELECT printf('%.*c', 400000000, 'x') IS NULL AND length(hex(zeroblob(10000000))) > 0",
        "SELECT length(replace(hex(zeroblob(1000000)), '0', 'xx'))",
    ] {
        let started = std::time::Instant::now();
        let (kind, message) = refusal(sqlite::query(&path, sql, &limits).await);
        assert_eq!(kind, Refusal::TooBig, "{sql}: {message}");
        assert!(message.contains("bytes a result may hold"), "{message}");
        assert!(started.elapsed() < Duration::from_secs(5), "{sql}");
    }
    let cut = sqlite::query(&path, "SELECT printf('%.*c', 50000, 'x') AS long", &limits)
        .await
        .unwrap();
    assert_eq!(cut["truncated"], true, "{cut}");
    assert!(
        cut["rows"][0][0]
            .as_str()
            .unwrap()
            .ends_with("… [48000 more characters]")
    );
}
