//! Unit tests of the configuration: defaults, the TOML file and the environment over them,
//! validation, secrets kept out of `Debug`.

use std::path::{Path, PathBuf};

use super::*;
use secrecy::ExposeSecret;

#[test]
fn defaults_match_the_seeds() {
    let config = Config::default();
    assert_eq!(config.bind, "127.0.0.1:8080");
    assert_eq!(config.llm.base_url, "http://127.0.0.1:11434/v1");
    assert_eq!(config.agent.max_iterations, 5);
    assert_eq!(config.agent.max_iterations_ceiling, 8);
    assert_eq!(config.agent.tool_timeout_secs, 15);
    assert_eq!(config.tools.rate_limit_per_minute, 45);
    assert_eq!(config.tools.fetch_budget_chars, 24_000);
    assert_eq!(config.documents.max_files_per_chat, 50);
    assert_eq!(config.documents.max_text_chars, 500_000);
    assert_eq!(config.deep_think.max_subtasks, 7);
    assert!(config.validate().is_ok());
}

#[test]
fn web_search_defaults_to_duckduckgo_and_a_searxng_url_selects_searxng() {
    let config = Config::default();
    assert_eq!(
        config.tools.search_provider(),
        WebSearchProvider::DuckDuckGo
    );
    assert_eq!(
        config.tools.duckduckgo_api_url,
        "https://api.duckduckgo.com"
    );
    assert_eq!(
        config.tools.duckduckgo_html_url,
        "https://html.duckduckgo.com"
    );
    assert_eq!(config.tools.brave_api_url, "https://api.search.brave.com");
    let searxng =
        Config::from_toml_str("[tools]\nweb_search_url = \"http://127.0.0.1:8888\"\n").unwrap();
    assert_eq!(searxng.tools.search_provider(), WebSearchProvider::Searxng);
    let named = Config::from_toml_str(
        "[tools]\nweb_search_provider = \"duckduckgo\"\nweb_search_url = \"http://127.0.0.1:8888\"\n",
    )
    .unwrap();
    assert_eq!(named.tools.search_provider(), WebSearchProvider::DuckDuckGo);
    let none = Config::from_toml_str("[tools]\nweb_search_provider = \"none\"\n").unwrap();
    assert_eq!(none.tools.search_provider(), WebSearchProvider::Disabled);
}

#[test]
fn a_web_search_provider_without_what_it_needs_is_refused() {
    let err = Config::from_toml_str("[tools]\nweb_search_provider = \"brave\"\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid configuration: tools.web_search_provider = \"brave\" needs \
         tools.brave_api_key (COLLOQUY_TOOLS__BRAVE_API_KEY), a Brave Search API key"
    );
    let err = Config::from_toml_str("[tools]\nweb_search_provider = \"searxng\"\n").unwrap_err();
    assert!(
        err.to_string().contains("needs tools.web_search_url"),
        "{err}"
    );
    let err = Config::from_toml_str("[tools]\nweb_search_provider = \"bing\"\n").unwrap_err();
    assert!(err.to_string().contains("web_search_provider"), "{err}");
    let err = Config::from_toml_str("[tools]\nweb_search_url = \"searx.local\"\n").unwrap_err();
    assert!(
        err.to_string().contains("tools.web_search_url must be"),
        "{err}"
    );
}

#[test]
#[allow(clippy::result_large_err)] // figment's Jail API fixes the closure's error type
fn the_web_search_provider_and_its_key_come_from_the_environment() {
    figment::Jail::expect_with(|jail| {
        jail.set_env("COLLOQUY_TOOLS__WEB_SEARCH_PROVIDER", "brave");
        jail.set_env("COLLOQUY_TOOLS__BRAVE_API_KEY", "BSA-secret-key");
        let config = Config::load(None).expect("loads");
        assert_eq!(config.tools.search_provider(), WebSearchProvider::Brave);
        let key = config.tools.brave_api_key.as_ref().unwrap();
        assert_eq!(key.expose_secret(), "BSA-secret-key");
        assert!(!format!("{config:?}").contains("BSA-secret-key"));
        Ok(())
    });
}

#[test]
fn toml_overrides_defaults_and_secrets_are_redacted() {
    let config = Config::from_toml_str(
        r#"
            bind = "0.0.0.0:9000"
            [llm]
            api_key = "sk-very-secret"
            model = "qwen"
            [agent]
            max_iterations = 3
            "#,
    )
    .unwrap();
    assert_eq!(config.bind, "0.0.0.0:9000");
    assert_eq!(config.llm.model, "qwen");
    assert_eq!(config.agent.max_iterations, 3);
    assert_eq!(
        config.agent.tool_timeout_secs, 15,
        "untouched fields keep defaults"
    );
    let key = config.llm.api_key.as_ref().unwrap();
    assert_eq!(key.expose_secret(), "sk-very-secret");
    assert!(!format!("{config:?}").contains("sk-very-secret"));
}

#[test]
fn impossible_limits_are_refused() {
    let err = Config::from_toml_str("[agent]\nmax_iterations = 9\n").unwrap_err();
    assert!(err.to_string().contains("max_iterations"), "{err}");
    let err = Config::from_toml_str("[agent]\nmax_iterations = \"many\"\n").unwrap_err();
    assert!(err.to_string().contains("max_iterations"), "{err}");
    let err = Config::from_toml_str("public_url = \"chat.example\"\n").unwrap_err();
    assert!(err.to_string().contains("public_url"), "{err}");
    let err = Config::from_toml_str("[browser]\nmax_memory_mb = 0\n").unwrap_err();
    assert!(err.to_string().contains("max_memory_mb"), "{err}");
    let bounded = Config::from_toml_str("[browser]\nmax_memory_mb = 512\n").unwrap();
    assert_eq!(bounded.browser.max_memory_mb, 512);
    assert_eq!(Config::default().browser.max_memory_mb, 1024);
}

#[test]
fn ssrf_allow_list_entries_need_a_port() {
    let err = Config::from_toml_str("[tools]\nssrf_allow_list = [\"127.0.0.1\"]\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid configuration: tools.ssrf_allow_list entry \"127.0.0.1\" has no port: write \
         it as HOST:PORT (IPv6 as [ADDRESS]:PORT); an entry exempts one port, never a whole host"
    );
    let config =
        Config::from_toml_str("[tools]\nssrf_allow_list = [\"127.0.0.1:8081\", \"[::1]:8082\"]\n")
            .unwrap();
    assert_eq!(config.tools.ssrf_allow_list.len(), 2);
}

#[test]
fn default_database_is_a_sqlite_file_in_the_data_dir() {
    let config = Config {
        data_dir: PathBuf::from("/tmp/cq"),
        ..Config::default()
    };
    assert_eq!(
        config.database_url(),
        "sqlite:///tmp/cq/colloquy.db?mode=rwc"
    );
}

#[test]
#[allow(clippy::result_large_err)] // figment's Jail API fixes the closure's error type
fn environment_overrides_the_file_which_overrides_defaults() {
    figment::Jail::expect_with(|jail| {
        jail.create_file(
            "colloquy.toml",
            "bind = \"127.0.0.1:7000\"\n[llm]\nmodel = \"from-file\"\nbase_url = \"http://file:1/v1\"\n",
        )?;
        jail.set_env("COLLOQUY_CONFIG", "colloquy.toml");
        jail.set_env("COLLOQUY_LLM__BASE_URL", "http://env:2/v1");
        jail.set_env("COLLOQUY_LLM__API_KEY", "12345");
        jail.set_env("COLLOQUY_DATA_DIR", "/srv/colloquy");
        jail.set_env("COLLOQUY_DATABASE__URL", "postgres://u@h/db");
        jail.set_env("COLLOQUY_AUTH__BOOTSTRAP_API_KEY", "k");
        jail.set_env("COLLOQUY_AGENT__MAX_ITERATIONS", "4");
        let config = Config::load(None).expect("loads");
        assert_eq!(config.bind, "127.0.0.1:7000", "from the file");
        assert_eq!(config.llm.model, "from-file");
        assert_eq!(config.llm.base_url, "http://env:2/v1", "env beats the file");
        assert_eq!(
            config.llm.api_key.as_ref().unwrap().expose_secret(),
            "12345"
        );
        assert_eq!(config.data_dir, PathBuf::from("/srv/colloquy"));
        assert_eq!(config.database_url(), "postgres://u@h/db");
        assert_eq!(
            config
                .auth
                .bootstrap_api_key
                .as_ref()
                .unwrap()
                .expose_secret(),
            "k"
        );
        assert_eq!(config.agent.max_iterations, 4);
        Ok(())
    });
}

#[test]
#[allow(clippy::result_large_err)] // figment's Jail API fixes the closure's error type
fn a_missing_config_file_is_an_error() {
    figment::Jail::expect_with(|_| {
        let err = Config::load(Some(Path::new("/nonexistent/colloquy.toml"))).unwrap_err();
        assert!(matches!(err, ConfigError::MissingFile(_)));
        Ok(())
    });
}

#[test]
fn memories_and_documents_share_one_injection_threshold_unless_set_apart() {
    let shared = Config::default();
    assert_eq!(shared.retrieval.injection_threshold, 0.3);
    assert_eq!(shared.memory_injection_threshold(), 0.3);
    assert_eq!(shared.document_injection_threshold(), 0.3);
    let moved = Config::from_toml_str("[retrieval]\ninjection_threshold = 0.5\n").unwrap();
    assert_eq!(moved.memory_injection_threshold(), 0.5);
    assert_eq!(moved.document_injection_threshold(), 0.5);
    let apart = Config::from_toml_str(
        "[retrieval]\ninjection_threshold = 0.5\n[memory]\ninjection_threshold = 0.4\n",
    )
    .unwrap();
    assert_eq!(apart.memory_injection_threshold(), 0.4);
    assert_eq!(apart.document_injection_threshold(), 0.5);
    let err = Config::from_toml_str("[documents]\ninjection_threshold = 1.5\n").unwrap_err();
    assert!(err.to_string().contains("between 0 and 1"), "{err}");
}

#[test]
fn documents_stemming_names_a_language_or_none() {
    assert_eq!(
        Config::default().documents.stemming,
        super::StemmingLanguage::English
    );
    for (name, language) in [
        ("german", super::StemmingLanguage::German),
        ("none", super::StemmingLanguage::None),
        ("off", super::StemmingLanguage::None),
    ] {
        let config =
            Config::from_toml_str(&format!("[documents]\nstemming = \"{name}\"\n")).unwrap();
        assert_eq!(config.documents.stemming, language, "{name}");
    }
    assert!(Config::from_toml_str("[documents]\nstemming = \"klingon\"\n").is_err());
}
