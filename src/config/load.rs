//! Loading and validation: defaults, then the TOML file, then the `COLLOQUY_*` environment
//! (the one place that reads it), then `Config::validate`; `ConfigError` for what can fail.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use figment::Figment;
use figment::providers::{Env, Format, Toml};

use super::{Config, EmailConfig};

/// The environment variable naming a TOML configuration file (same as `--config`).
pub const CONFIG_PATH_VAR: &str = "COLLOQUY_CONFIG";
/// The prefix of every configuration environment variable.
const ENV_PREFIX: &str = "COLLOQUY_";

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("could not read configuration: {0}")]
    Load(#[from] Box<figment::Error>),
    #[error("configuration file {0} does not exist")]
    MissingFile(PathBuf),
    #[error("invalid configuration: {0}")]
    Invalid(String),
}

impl Config {
    /// Loads defaults, then the TOML file (`explicit_path`, else `COLLOQUY_CONFIG`), then the
    /// environment.
    pub fn load(explicit_path: Option<&Path>) -> Result<Self, ConfigError> {
        let from_env = std::env::var_os(CONFIG_PATH_VAR).map(PathBuf::from);
        let path = explicit_path.map(Path::to_path_buf).or(from_env);
        let mut figment = Figment::new();
        if let Some(path) = path {
            if !path.exists() {
                return Err(ConfigError::MissingFile(path));
            }
            figment = figment.merge(Toml::file(path));
        }
        Self::extract(figment.merge(Self::env_provider()))
    }

    /// Loads from TOML text over the defaults, without the environment.
    pub fn from_toml_str(toml: &str) -> Result<Self, ConfigError> {
        Self::extract(Figment::new().merge(Toml::string(toml)))
    }

    fn env_provider() -> Env {
        Env::prefixed(ENV_PREFIX).ignore(&["config"]).split("__")
    }

    fn extract(figment: Figment) -> Result<Self, ConfigError> {
        let config: Config = figment.extract().map_err(Box::new)?;
        config.validate()?;
        Ok(config)
    }

    /// Rejects combinations that cannot work, so a bad deployment fails at start-up.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |m: &str| Err(ConfigError::Invalid(m.into()));
        if self.bind.parse::<SocketAddr>().is_err() && !self.bind.contains(':') {
            return invalid("bind must be HOST:PORT");
        }
        if self.agent.max_iterations == 0
            || self.agent.max_iterations > self.agent.max_iterations_ceiling
        {
            return invalid(
                "agent.max_iterations must be between 1 and agent.max_iterations_ceiling",
            );
        }
        let deep = &self.deep_think;
        if deep.min_subtasks == 0 || deep.min_subtasks > deep.max_subtasks {
            return invalid("deep_think.min_subtasks must be between 1 and max_subtasks");
        }
        if deep.concurrency == 0 || deep.concurrency > deep.max_subtasks {
            return invalid("deep_think.concurrency must be between 1 and max_subtasks");
        }
        if deep.synthesis_reserve_percent >= 100 || deep.subtask_iterations == 0 {
            return invalid(
                "deep_think.synthesis_reserve_percent must be below 100 and subtask_iterations \
                 at least 1",
            );
        }
        for (setting, model) in self.deep_think.role_models() {
            if let Some(problem) = self.llm.undeclared_model(setting, model) {
                return Err(ConfigError::Invalid(problem));
            }
        }
        if self.cluster.lease_secs < 3 || self.cluster.lease_secs > 600 {
            return invalid("cluster.lease_secs must be between 3 and 600");
        }
        if self.cluster.forward_timeout_secs == Some(0) {
            return invalid("cluster.forward_timeout_secs must be at least 1");
        }
        if self.cluster.handover_retention_days == 0 || self.cluster.handover_retention_days > 3650
        {
            return invalid("cluster.handover_retention_days must be between 1 and 3650");
        }
        if let Some(Err(problem)) = self.storage.bucket_and_prefix() {
            return Err(ConfigError::Invalid(problem));
        }
        if self.cluster.forward_connect_timeout_secs == 0 {
            return invalid("cluster.forward_connect_timeout_secs must be at least 1");
        }
        if let Some(url) = &self.cluster.advertise_url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return invalid("cluster.advertise_url must be an http:// or https:// URL");
        }
        if self.documents.chunk_overlap_tokens >= self.documents.chunk_tokens {
            return invalid("documents.chunk_overlap_tokens must be smaller than chunk_tokens");
        }
        let thresholds = [
            self.retrieval.injection_threshold,
            self.memory_injection_threshold(),
            self.document_injection_threshold(),
        ];
        if !thresholds.iter().all(|t| (0.0..=1.0).contains(t)) {
            return invalid(
                "retrieval.injection_threshold (and memory.injection_threshold, \
                 documents.injection_threshold) must be between 0 and 1",
            );
        }
        let images = &self.attachments;
        if images.max_image_bytes == 0
            || images.max_images_per_message == 0
            || images.max_images_per_request < images.max_images_per_message
            || images.fetch_timeout_secs == 0
            || images.max_unsent_per_chat < images.max_images_per_message
        {
            return invalid(
                "attachments.max_image_bytes, max_images_per_message and fetch_timeout_secs \
                 must be at least 1, and max_images_per_request and max_unsent_per_chat at \
                 least max_images_per_message",
            );
        }
        let browser = &self.browser;
        if browser.max_sessions_per_chat == 0
            || browser.max_sessions < browser.max_sessions_per_chat
            || browser.idle_timeout_secs == 0
            || browser.action_timeout_secs == 0
            || browser.max_screenshot_bytes == 0
            || browser.max_response_bytes == 0
            || browser.max_memory_mb == 0
            || browser.viewport_width == 0
            || browser.viewport_height == 0
        {
            return invalid(
                "browser.max_sessions_per_chat, idle_timeout_secs, action_timeout_secs, \
                 max_screenshot_bytes, max_response_bytes, max_memory_mb and the viewport must be at least 1, \
                 and max_sessions at least max_sessions_per_chat",
            );
        }
        if let Some(problem) = self.code_interpreter.problem() {
            return invalid(problem);
        }
        if self.http.max_in_flight == 0 {
            return invalid("http.max_in_flight must be at least 1");
        }
        if self.database.max_connections == Some(0) {
            return invalid("database.max_connections must be at least 1");
        }
        if url::Url::parse(&self.llm.base_url).is_err() {
            return invalid("llm.base_url must be a URL");
        }
        if let Some(problem) = self.llm.providers_problem() {
            return invalid(&problem);
        }
        if self.auth.login_failures_per_account == 0
            || self.auth.login_failures_per_address == 0
            || self.auth.login_failure_window_secs == 0
        {
            return invalid(
                "auth.login_failures_* and login_failure_window_secs must be at least 1",
            );
        }
        if let Some(public_url) = &self.public_url {
            let web = url::Url::parse(public_url)
                .is_ok_and(|url| matches!(url.scheme(), "http" | "https") && url.has_host());
            if !web {
                return invalid("public_url must be an http:// or https:// URL");
            }
        }
        if let Some(problem) = self.tools.web_search_problem() {
            return invalid(&problem);
        }
        if let Err(err) = crate::ssrf::AllowList::parse(&self.tools.ssrf_allow_list) {
            return invalid(&err.to_string());
        }
        if let Some(problem) = self.mcp.problem() {
            return invalid(&problem);
        }
        let own_database = self.database_url();
        if let Some(problem) = self
            .sql
            .problem(&own_database, self.agent.tool_timeout_secs)
        {
            return invalid(&problem);
        }
        if let Some(problem) = self.email.as_ref().and_then(EmailConfig::problem) {
            return invalid(&problem);
        }
        Ok(())
    }
}
