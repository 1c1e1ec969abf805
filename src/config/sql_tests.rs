//! `[sql]`: declared databases read from TOML with their defaults, their URLs kept secret, and
//! every refusal at start-up — Colloquy's own database above all, however its URL is spelt.

use super::super::{Config, ConfigError};
use super::*;

fn declaring(own: Option<&str>, databases: &str) -> Result<Config, ConfigError> {
    let mut toml = String::new();
    if let Some(own) = own {
        toml.push_str(&format!("[database]\nurl = \"{own}\"\n"));
    }
    toml.push_str(databases);
    Config::from_toml_str(&toml)
}

fn refusal(result: Result<Config, ConfigError>) -> String {
    match result {
        Err(ConfigError::Invalid(message)) => message,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn a_database_is_read_with_its_defaults_and_its_url_never_prints() {
    let config = declaring(
        None,
        "[[sql.databases]]\nid = \"shop\"\nurl = \"postgres://reader:s3cret@db.example:5432/shop\"\n",
    )
    .unwrap();
    let shop = &config.sql.databases[0];
    assert_eq!(shop.id, "shop");
    assert_eq!(shop.max_rows, 200);
    assert_eq!(shop.timeout_ms, 5_000);
    assert_eq!(config.sql.schema_refresh_secs, 600);
    assert!(!format!("{config:?}").contains("s3cret"));
}

#[test]
fn colloquys_own_sqlite_file_is_refused_however_its_path_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let own = Config {
        data_dir: dir.path().to_path_buf(),
        ..Config::default()
    };
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(dir.path(), &link).unwrap();
    for spelling in [
        format!("sqlite://{}/colloquy.db", dir.path().display()),
        format!("sqlite:{}/./colloquy.db?mode=ro", dir.path().display()),
        format!("sqlite://{}/colloquy.db", link.display()),
    ] {
        let mut config = own.clone();
        config.sql.databases = vec![database("own", &spelling)];
        let problem = config.validate().unwrap_err().to_string();
        assert!(
            problem.contains("Colloquy's own database"),
            "{spelling}: {problem}"
        );
    }
    let mut elsewhere = own.clone();
    elsewhere.sql.databases = vec![database(
        "shop",
        &format!("sqlite://{}/shop.db", dir.path().display()),
    )];
    assert!(elsewhere.validate().is_ok());
}

#[test]
fn a_hard_link_to_colloquys_own_sqlite_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let own = Config {
        data_dir: dir.path().to_path_buf(),
        ..Config::default()
    };
    std::fs::write(dir.path().join("colloquy.db"), b"").unwrap();
    let link = dir.path().join("innocent.db");
    std::fs::hard_link(dir.path().join("colloquy.db"), &link).unwrap();
    let symlink = elsewhere.path().join("other.db");
    std::os::unix::fs::symlink(&link, &symlink).unwrap();
    for path in [&link, &symlink] {
        let mut config = own.clone();
        config.sql.databases = vec![database("own", &format!("sqlite://{}", path.display()))];
        let problem = config.validate().unwrap_err().to_string();
        assert!(
            problem.contains("Colloquy's own database"),
            "{}: {problem}",
            path.display()
        );
    }
    let copy = elsewhere.path().join("copy.db");
    std::fs::copy(dir.path().join("colloquy.db"), &copy).unwrap();
    let mut config = own.clone();
    config.sql.databases = vec![database("copy", &format!("sqlite://{}", copy.display()))];
    assert!(config.validate().is_ok(), "a copy is another file");
}

fn database(id: &str, url: &str) -> SqlDatabaseConfig {
    SqlDatabaseConfig {
        id: id.into(),
        url: SecretString::from(url.to_string()),
        max_rows: 200,
        timeout_ms: 5_000,
        allow_privileged_role: false,
    }
}

#[test]
fn colloquys_own_postgres_database_is_refused_by_server_port_and_name() {
    let own = "postgres://colloquy:pw@localhost:5432/app";
    for same in [
        "postgres://reader:other@127.0.0.1/app",
        "postgresql://reader@LOCALHOST:5432/app?sslmode=disable",
        "postgres://reader@[::1]:5432/app",
    ] {
        let toml = format!("[[sql.databases]]\nid = \"x\"\nurl = \"{same}\"\n");
        let problem = refusal(declaring(Some(own), &toml));
        assert!(
            problem.contains("Colloquy's own database"),
            "{same}: {problem}"
        );
        assert!(
            !problem.contains("other") && !problem.contains("pw"),
            "{problem}"
        );
    }
    for other in [
        "postgres://reader@127.0.0.1/shop",
        "postgres://reader@127.0.0.1:5433/app",
        "postgres://reader@db.example/app",
    ] {
        let toml = format!("[[sql.databases]]\nid = \"x\"\nurl = \"{other}\"\n");
        assert!(declaring(Some(own), &toml).is_ok(), "{other}");
    }
}

#[test]
fn ids_urls_and_limits_out_of_bounds_are_refused_without_repeating_the_url() {
    let cases = [
        (
            "[[sql.databases]]\nid = \"Shop\"\nurl = \"sqlite:///tmp/a.db\"\n",
            "lowercase",
        ),
        (
            "[[sql.databases]]\nid = \"a\"\nurl = \"sqlite:///tmp/a.db\"\n\
             [[sql.databases]]\nid = \"a\"\nurl = \"sqlite:///tmp/b.db\"\n",
            "declared twice",
        ),
        (
            "[[sql.databases]]\nid = \"a\"\nurl = \"mysql://u:hidden@h/db\"\n",
            "postgres://",
        ),
        (
            "[[sql.databases]]\nid = \"a\"\nurl = \"sqlite::memory:\"\n",
            "SQLite file",
        ),
        (
            "[[sql.databases]]\nid = \"a\"\nurl = \"sqlite:///tmp/a.db\"\nmax_rows = 0\n",
            "max_rows",
        ),
        (
            "[[sql.databases]]\nid = \"a\"\nurl = \"sqlite:///tmp/a.db\"\ntimeout_ms = 15000\n",
            "agent.tool_timeout_secs",
        ),
        ("[sql]\nschema_refresh_secs = 0\n", "schema_refresh_secs"),
    ];
    for (toml, expected) in cases {
        let problem = refusal(declaring(None, toml));
        assert!(problem.contains(expected), "{toml}: {problem}");
        assert!(!problem.contains("hidden"), "{problem}");
    }
}
