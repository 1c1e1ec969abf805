//! Unit tests of the statement check and the wrapped PostgreSQL query: one statement as each
//! database's tokenizer reads text, calls refused however they are spelt (and literals,
//! comments and look-alike names left alone), and the wrap that cuts long values in the server.

use super::super::postgres_cut::{Shape, wrap};
use super::super::table::MAX_VALUE_CHARS;
use super::*;

#[test]
fn one_statement_passes_and_a_second_is_found_outside_literals_identifiers_and_comments() {
    for (sql, first) in [
        ("SELECT 1", "SELECT 1"),
        ("SELECT 1;", "SELECT 1"),
        ("SELECT 1; -- done\n  ", "SELECT 1"),
        ("SELECT 1; /* ; */ ;", "SELECT 1"),
        ("SELECT ';' AS x", "SELECT ';' AS x"),
        ("SELECT 'it''s; fine'", "SELECT 'it''s; fine'"),
        ("SELECT \"a;b\" FROM t", "SELECT \"a;b\" FROM t"),
        ("SELECT `a;b`, [c;d] FROM t", "SELECT `a;b`, [c;d] FROM t"),
        ("-- a ; comment\nSELECT 2", "-- a ; comment\nSELECT 2"),
        ("SELECT 'é;' || 'ü'; ", "SELECT 'é;' || 'ü'"),
    ] {
        assert_eq!(single(sql, Dialect::Sqlite), Ok(first), "{sql}");
    }
    for sql in [
        "SELECT 1; SELECT 2",
        "SELECT 1;DELETE FROM t",
        "SELECT ';'; DROP TABLE t",
        "SELECT 1; -- fine\nPRAGMA query_only = OFF",
    ] {
        assert_eq!(
            single(sql, Dialect::Sqlite),
            Err(StatementProblem::Several),
            "{sql}"
        );
    }
    for sql in ["", "  ", ";;", "-- nothing", "/* nothing */ ;"] {
        for dialect in [Dialect::Sqlite, Dialect::Postgres] {
            assert_eq!(
                single(sql, dialect),
                Err(StatementProblem::Empty),
                "{sql:?}"
            );
            assert!(!holds_code(sql, dialect), "{sql:?}");
        }
    }
}

#[test]
fn postgres_statements_are_split_as_postgres_reads_its_literals_and_comments() {
    for (sql, first) in [
        ("SELECT $$;$$", "SELECT $$;$$"),
        ("SELECT $tag$ ; $$ ; $tag$;", "SELECT $tag$ ; $$ ; $tag$"),
        ("SELECT E'\\';' AS x", "SELECT E'\\';' AS x"),
        ("SELECT 1 /* /* ; */ ; */", "SELECT 1 /* /* ; */ ; */"),
        ("SELECT a[1] FROM t;", "SELECT a[1] FROM t"),
    ] {
        assert_eq!(single(sql, Dialect::Postgres), Ok(first), "{sql}");
    }
    for sql in [
        "SELECT 1; SELECT 2",
        "SELECT E'\\''; DELETE FROM t",
        "SELECT $a$x$a$; DELETE FROM t",
        "SELECT [1; DELETE FROM t --]",
    ] {
        assert_eq!(
            single(sql, Dialect::Postgres),
            Err(StatementProblem::Several),
            "{sql}"
        );
    }
}

#[test]
fn calls_reaching_outside_the_transaction_are_refused_however_they_are_spelt() {
    let function = |name: &str| Some(Refused::Function(name.into()));
    let statement = |word: &str| Some(Refused::Statement(word.into()));
    for (sql, expected) in [
        ("COPY (SELECT 'x') TO '/tmp/x'", statement("COPY")),
        ("  copy t TO PROGRAM 'touch /tmp/x'", statement("COPY")),
        (
            "DO $$ BEGIN PERFORM pg_terminate_backend(1); END $$",
            statement("DO"),
        ),
        (
            "SELECT query_to_xml('SELECT lo_export(1, ''/tmp/x'')', true, false, '')",
            function("query_to_xml"),
        ),
        ("SELECT ts_stat('SELECT 1')", function("ts_stat")),
        (
            "SELECT lo_export(lo_from_bytea(0, 'x'), '/tmp/x')",
            function("lo_export"),
        ),
        (
            "SELECT pg_catalog.LO_IMPORT('/etc/passwd')",
            function("lo_import"),
        ),
        ("SELECT \"lo_export\"(1, '/tmp/x')", function("lo_export")),
        (
            "SELECT \"pg_catalog\".\"lo_unlink\" (1)",
            function("lo_unlink"),
        ),
        (
            "SELECT lo_put /* a comment */ (1, 0, 'x')",
            function("lo_put"),
        ),
        (
            "SELECT dblink_exec('dbname=x', 'DELETE FROM t')",
            function("dblink_exec"),
        ),
        (
            "SELECT * FROM DBLINK('dbname=x', 'SELECT 1') AS t(n int)",
            function("dblink"),
        ),
        (
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity",
            function("pg_terminate_backend"),
        ),
        ("SELECT Pg_Cancel_Backend(1)", function("pg_cancel_backend")),
        ("SELECT pg_reload_conf()", function("pg_reload_conf")),
        (
            "SELECT pg_read_file('/etc/passwd')",
            function("pg_read_file"),
        ),
        (
            "SELECT pg_read_binary_file('/etc/passwd')",
            function("pg_read_binary_file"),
        ),
        ("SELECT pg_ls_dir('.')", function("pg_ls_dir")),
        (
            "SELECT E'\\'' || lo_export(1, '/tmp/x') -- '",
            function("lo_export"),
        ),
        (
            "SELECT $$'$$, lo_export(1, '/tmp/x') -- '",
            function("lo_export"),
        ),
        (
            "SELECT 1 /* /* */ ' */, lo_export(1, '/tmp/x') -- '",
            function("lo_export"),
        ),
        (
            "SELECT U&\"lo\\005fexport\"(1, '/tmp/x')",
            Some(Refused::EscapedName),
        ),
        // Not calls: a literal, a comment, a quoted column, a column of that name.
        ("SELECT 'lo_export(1)', \"dblink\" FROM t", None),
        ("SELECT 1 -- pg_read_file('/etc/passwd')", None),
        ("SELECT $$ COPY lo_export( $$", None),
        ("SELECT lo_value, copy FROM t WHERE pg_read > 1", None),
        ("SELECT name FROM customers ORDER BY id", None),
        ("SELECT do, lower(name), log(2, 8) FROM t", None),
    ] {
        assert_eq!(refused(sql), expected, "{sql}");
    }
}

#[test]
fn a_postgres_query_is_wrapped_so_the_server_cuts_each_long_column_and_other_statements_are_not() {
    let wrapped = wrap(
        "SELECT id, name, photo, doc FROM t -- the last line",
        &[Shape::Whole, Shape::Text, Shape::Bytes, Shape::Structured],
    )
    .unwrap();
    assert_eq!(
        wrapped,
        format!(
            "SELECT c1, left(c2::text, {chars}), char_length(c2::text), \
             substring(c3 from 1 for {bytes}), octet_length(c3), \
             CASE WHEN octet_length(c4::text) <= {whole} THEN c4 END, left(c4::text, {chars}), \
             char_length(c4::text) FROM (SELECT * FROM (\nSELECT id, name, photo, doc FROM t -- \
             the last line\n) AS statement OFFSET 0) AS q(c1, c2, c3, c4)",
            chars = MAX_VALUE_CHARS,
            bytes = MAX_VALUE_CHARS / 2,
            whole = MAX_VALUE_CHARS * 4,
        )
    );
    for query in [
        "(SELECT 1)",
        "with x AS (SELECT 1) SELECT * FROM x",
        "VALUES (1)",
        "TABLE t",
    ] {
        assert!(wrap(query, &[Shape::Text]).is_some(), "{query}");
    }
    for other in [
        "SHOW statement_timeout",
        "EXPLAIN SELECT 1",
        "/* SELECT */ CALL p()",
    ] {
        assert_eq!(wrap(other, &[Shape::Text]), None, "{other}");
    }
    assert_eq!(wrap("SELECT FROM t", &[]), None, "no columns");
}
